/**
 * A child process for the crash test: writes, overwrites, deletes, copies
 * and completes multipart uploads on a few keys, in a loop, until it is
 * killed.
 *
 * It reports on stdout, one line each: `ready` once the bucket is open,
 * `begin <op> <key> <label>` before an operation (a copy names its source
 * key as the label) and `done` after it
 * resolved. Pipes are written synchronously on Linux, so what the parent
 * read is what happened before the kill.
 */
import { openBucket } from '../../../../src/index.js'
import { crashKeys } from './crash-keys.js'
import { mulberry32, payload, splitParts } from './payload.js'

async function main (): Promise<void> {
  const [dir, seedText, partSizeText] = process.argv.slice(2)
  if (dir === undefined || seedText === undefined || partSizeText === undefined) throw new Error('usage: crash-writer <dir> <seed> <partSize>')
  const seed = Number(seedText)
  const partSize = Number(partSizeText)
  const random = mulberry32(seed)
  const bucket = await openBucket(dir, { minPartSize: partSize })
  const say = (line: string): void => { process.stdout.write(`${line}\n`) }
  say('ready')

  for (let n = 1; ; n++) {
    const key = crashKeys[Math.floor(random() * crashKeys.length)] as string
    const label = `crash ${key} ${seed} ${n}`
    const roll = random()
    if (roll < 0.55) {
      // Half small (a body kept in the catalog row), half up to three parts' worth (a body file): overwrites change layout.
      const body = payload(label, 1 + Math.floor(random() * (random() < 0.5 ? 20 * 1024 : 3 * partSize)))
      say(`begin put ${key} ${label}`)
      await bucket.put(key, body, { customMetadata: { label } })
    } else if (roll < 0.7) {
      say(`begin delete ${key} ${label}`)
      await bucket.delete(key)
    } else if (roll < 0.82) {
      const others = crashKeys.filter(k => k !== key)
      const source = others[Math.floor(random() * others.length)] as string
      say(`begin copy ${key} ${source}`)
      await bucket.copy(source, key)
    } else {
      const body = payload(label, partSize * (1 + Math.floor(random() * 3)) + Math.floor(random() * partSize))
      say(`begin multipart ${key} ${label}`)
      const upload = await bucket.createMultipartUpload(key, { customMetadata: { label } })
      const parts = []
      for (const [index, part] of splitParts(body, partSize).entries()) parts.push(await upload.uploadPart(index + 1, part))
      await upload.complete(parts)
    }
    say('done')
  }
}

await main()
