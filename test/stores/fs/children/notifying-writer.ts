/**
 * A child process for the outbox crash test: puts new keys into bucket
 * `events` of a data directory (fsync on, as a server runs), one after the
 * other, until it is killed. The bucket has a notification rule, so each
 * put writes its message in its own transaction.
 *
 * It reports on stdout `ready` once the bucket is open, `begin <key>` before
 * a put and `done <key>` once it was acknowledged. Pipes are written
 * synchronously on Linux, so what the parent read is what happened before
 * the kill.
 */
import { openRegistry } from '../../../../src/index.js'

async function main (): Promise<void> {
  const [dataDir] = process.argv.slice(2)
  if (dataDir === undefined) throw new Error('usage: notifying-writer <dataDir>')
  const registry = await openRegistry(dataDir, { fsync: true })
  const bucket = await registry.open('events')
  if (bucket === null) throw new Error('no bucket events')
  const say = (line: string): void => { process.stdout.write(`${line}\n`) }
  say('ready')
  for (let n = 0; ; n++) {
    const key = `k-${process.pid}-${n}`
    say(`begin ${key}`)
    await bucket.put(key, `body of ${key}`)
    say(`done ${key}`)
  }
}

await main()
