/**
 * The outbox survives a crash: a child process putting keys into a bucket
 * with a notification rule (children/notifying-writer.ts) is SIGKILLed
 * right after an acknowledgement, several times. Afterwards a consumer
 * pulling the queue finds a message for every put the child had
 * acknowledged, and exactly one message for each object stored (the put in
 * flight at the kill has both or neither): no acknowledged write loses its
 * message, and no message tells of a write that did not happen.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { addRules, openRegistry, Queues, type BucketRegistry } from '../../../src/index.js'
import { testdir } from '../../testdir.js'

const writerScript = fileURLToPath(new URL('./children/notifying-writer.js', import.meta.url))

/** Runs the writer until it has acknowledged `acks` puts, kills it then; the keys it acknowledged. */
async function runAndKill (dataDir: string, acks: number): Promise<string[]> {
  const child = spawn(process.execPath, [writerScript, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] })
  const acknowledged: string[] = []
  let buffered = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk
    let newline
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      if (line.startsWith('done ')) {
        acknowledged.push(line.slice(5))
        // Killed at once after the acknowledgement: nothing after it gets to run.
        if (acknowledged.length === acks) child.kill('SIGKILL')
      }
    }
  })
  const [code, signal] = await once(child, 'exit') as [number | null, string | null]
  t.equal(signal, 'SIGKILL', `the writer was killed (exit ${String(code)})`)
  return acknowledged
}

async function allKeys (registry: BucketRegistry): Promise<string[]> {
  const bucket = await registry.open('events')
  const keys: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await bucket!.list({ cursor, limit: 1000 })
    keys.push(...page.objects.map(o => o.key))
    if (!page.truncated) return keys
    cursor = page.cursor
  }
}

t.test('no acknowledged write loses its message to a SIGKILL', async t => {
  const dataDir = testdir(t)
  const setup = await openRegistry(dataDir, { fsync: true })
  await setup.create('events')
  const queues = new Queues(setup)
  const queue = await queues.create('events-queue')
  await setup.changeNotifications('events', current => addRules(current, queue!.queue_id, 'a'.repeat(32), [{ prefix: '', suffix: '', actions: ['PutObject'] }], new Date()))
  await setup.close()

  const acknowledged: string[] = []
  for (const acks of [1, 7, 25, 60]) acknowledged.push(...await runAndKill(dataDir, acks))

  const registry = await openRegistry(dataDir, { fsync: true })
  t.teardown(async () => { await registry.close() })
  const consumer = new Queues(registry)
  const record = await consumer.get(queue!.queue_id)
  const told: string[] = []
  for (;;) {
    const { messages } = await consumer.pull(record!, 100, 60_000)
    if (messages.length === 0) break
    told.push(...messages.map(m => JSON.parse(m.body).object.key as string))
    await consumer.settle(record!, messages.map(m => m.lease_id), [])
  }
  const stored = await allKeys(registry)
  const missing = acknowledged.filter(key => !told.includes(key))
  t.same(missing, [], `every acknowledged put (${acknowledged.length}) has its message`)
  t.same(told.slice().sort(), stored.slice().sort(), 'one message for each stored object, none for a write that did not happen')
  t.equal(new Set(told).size, told.length, 'no message twice')
})
