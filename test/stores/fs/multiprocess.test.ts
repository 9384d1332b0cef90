/**
 * Several processes, one bucket directory (issue 2, section 3.2).
 *
 * Child processes (children/racer.ts) open the same directory and race, on
 * the parent's signal, conditional puts on one key: each round has exactly
 * one winner and leaves the winner's body. Plain puts of distinct bodies
 * leave one whole body. A write resolved in one process is seen by a read
 * started afterwards in another, and an upload created in one process is
 * usable from the others at once.
 *
 * Where more than one SQLite driver loads (node:sqlite and libsql on Node
 * 22.13+ and 24), the children take turns at them, so processes on
 * different drivers share the catalog in every test here.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { openBucket, type Bucket } from '../../../src/index.js'
import type { RacerCommand, RacerReply } from './children/racer.js'
import { labelOf, md5Hex, multipartEtag, payload } from './children/payload.js'
import { testdir } from '../../testdir.js'

const racerScript = fileURLToPath(new URL('./children/racer.js', import.meta.url))
const sqliteModule = new URL('../../../src/stores/fs/sqlite.js', import.meta.url).href

/** The SQLite drivers that load in this Node (FSBUCKET_SQLITE_DRIVER refuses one that does not). */
const drivers = ['node:sqlite', 'libsql'].filter(driver => spawnSync(process.execPath,
  ['--input-type=module', '-e', `await import(${JSON.stringify(sqliteModule)})`],
  { env: { ...process.env, FSBUCKET_SQLITE_DRIVER: driver } }).status === 0)
const KiB = 1024
const minPartSize = 64 * KiB

/** The children of one test and the replies they owe. */
class Racers {
  readonly #children: ChildProcess[] = []
  readonly #pending = new Map<number, (reply: RacerReply) => void>()
  #nextId = 1

  /** The SQLite driver each child runs, in the children's order. */
  readonly drivers: string[] = []

  static async start (count: number, dir: string): Promise<Racers> {
    const racers = new Racers()
    await Promise.all(Array.from({ length: count }, async (_, index) => {
      const driver = drivers[index % drivers.length] ?? ''
      const child = spawn(process.execPath, [racerScript, dir, String(minPartSize)],
        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, FSBUCKET_SQLITE_DRIVER: driver } })
      racers.#children[index] = child
      const [ready] = await once(child, 'message') as [RacerReply]
      if (ready.id !== 0) throw new Error('racer did not start')
      racers.drivers[index] = ready.driver ?? ''
      child.on('message', (reply: RacerReply) => racers.#pending.get(reply.id)?.(reply))
    }))
    return racers
  }

  get size (): number { return this.#children.length }

  async send (index: number, command: Omit<RacerCommand, 'id'>): Promise<RacerReply> {
    const child = this.#children[index]
    if (child === undefined) throw new Error(`no racer ${index}`)
    const id = this.#nextId++
    const reply = new Promise<RacerReply>(resolve => this.#pending.set(id, resolve))
    child.send({ id, ...command })
    const answer = await reply
    this.#pending.delete(id)
    if (answer.error !== undefined) throw Object.assign(new Error(`racer ${index}: ${answer.error.message}`), { code: answer.error.code })
    return answer
  }

  /** Sends every child its command for one round, timed to start together. */
  async race (command: (index: number) => Omit<RacerCommand, 'id' | 'at'>): Promise<RacerReply[]> {
    const at = Date.now() + 40
    return await Promise.all(this.#children.map((_, index) => this.send(index, { ...command(index), at })))
  }

  async stop (): Promise<void> {
    await Promise.all(this.#children.map(async (child, index) => {
      const exited = once(child, 'exit')
      await this.send(index, { op: 'exit', key: '' }).catch(() => {})
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }))
  }
}

async function setUp (t: Test, count: number): Promise<{ bucket: Bucket, racers: Racers }> {
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir, { minPartSize })
  const racers = await Racers.start(count, dir)
  t.same([...new Set(racers.drivers)].sort(), [...drivers].sort(), `the children run each SQLite driver that loads here (${drivers.join(', ')})`)
  t.teardown(async () => {
    await racers.stop()
    await bucket.close()
  })
  return { bucket, racers }
}

async function bytesOf (bucket: Bucket, key: string): Promise<Buffer> {
  const got = await bucket.get(key)
  if (got === null || !('body' in got)) throw new Error(`no body for ${key}`)
  return Buffer.from(await got.arrayBuffer())
}

t.test('create-only puts: exactly one winner per round', async t => {
  const { bucket, racers } = await setUp(t, 4)
  for (let round = 0; round < 12; round++) {
    const key = `race/create/${round}`
    const replies = await racers.race(index => ({ op: 'createOnly', key, label: `create-${round}-${index}`, size: 16 * KiB - 1 + index }))
    const winners = replies.flatMap((reply, index) => reply.won === true ? [index] : [])
    t.equal(winners.length, 1, `round ${round}: one winner among ${racers.size}`)
    const winner = winners[0] ?? -1
    const bytes = await bytesOf(bucket, key)
    t.equal(labelOf(bytes), `create-${round}-${winner}`, `round ${round}: the winner's body is stored, whole`)
    t.equal(md5Hex(bytes), replies[winner]?.etag, `round ${round}: with the winner's etag`)
    t.same((await bucket.head(key))?.customMetadata, { writer: `create-${round}-${winner}` }, `round ${round}: and its metadata`)
  }
})

t.test('puts on the current etag: exactly one winner per round', async t => {
  const { bucket, racers } = await setUp(t, 4)
  const key = 'race/compare-and-swap'
  let current = (await bucket.put(key, payload('initial', 1000)))?.etag
  for (let round = 0; round < 12; round++) {
    const expected = current
    const replies = await racers.race(index => ({ op: 'ifMatch', key, etag: expected, label: `swap-${round}-${index}`, size: 16 * KiB - 1 + index }))
    const winners = replies.flatMap((reply, index) => reply.won === true ? [index] : [])
    t.equal(winners.length, 1, `round ${round}: one winner among ${racers.size}`)
    const winner = winners[0] ?? -1
    const bytes = await bytesOf(bucket, key)
    t.equal(labelOf(bytes), `swap-${round}-${winner}`, `round ${round}: the winner's body is stored, whole`)
    current = md5Hex(bytes)
    t.equal(current, replies[winner]?.etag, `round ${round}: with the winner's etag`)
  }
})

t.test('plain concurrent puts leave one whole body', async t => {
  const { bucket, racers } = await setUp(t, 4)
  const key = 'race/plain'
  for (let round = 0; round < 6; round++) {
    const replies = await racers.race(index => ({ op: 'plain', key, label: `plain-${round}-${index}`,
      // Odd rounds mix bodies kept in the catalog row (the first racer's) with body files (the others').
      size: round % 2 === 0 ? 1024 * KiB + 4099 * index : 8 * KiB * (index + 1) + index }))
    const bytes = await bytesOf(bucket, key)
    const label = labelOf(bytes)
    const writer = replies.findIndex((_, index) => label === `plain-${round}-${index}`)
    t.ok(writer >= 0, `round ${round}: the stored body is one writer's whole payload (${label ?? 'not a whole payload'})`)
    const head = await bucket.head(key)
    t.equal(head?.etag, md5Hex(bytes), `round ${round}: its bytes hash to its etag`)
    t.equal(head?.etag, replies[writer]?.etag, `round ${round}: the etag that writer was given`)
    t.equal(head?.size, bytes.byteLength, `round ${round}: size agrees`)
    t.same(head?.customMetadata, { writer: label }, `round ${round}: metadata agrees with the bytes`)
  }
})

t.test('a resolved write is visible to a later read in another process', async t => {
  const { bucket, racers } = await setUp(t, 3)
  const key = 'visible/key'
  for (let round = 0; round < 30; round++) {
    const writer = round % racers.size
    const reader = (round + 1) % racers.size
    if (round % 5 === 4) {
      await racers.send(writer, { op: 'delete', key })
      t.equal((await racers.send(reader, { op: 'get', key })).etag, null, `round ${round}: a delete is seen at once`)
      t.equal(await bucket.head(key), null, `round ${round}: also by the parent`)
      continue
    }
    const written = await racers.send(writer, { op: 'put', key, label: `visible-${round}`, size: 100 + round })
    const read = await racers.send(reader, { op: 'get', key })
    t.equal(read.etag, written.etag, `round ${round}: the reader sees the writer's etag`)
    t.equal(read.bytesMd5, written.etag, `round ${round}: and its bytes`)
    t.equal(read.writer, `visible-${round}`, `round ${round}: and its metadata`)
  }
})

t.test('an upload created in one process is usable from the others at once', async t => {
  const { bucket, racers } = await setUp(t, 3)
  const key = 'shared/upload'
  const { uploadId } = await racers.send(0, { op: 'create', key, label: 'mpu' })
  if (uploadId === undefined) throw new Error('no upload id')
  const [first, second] = await Promise.all([
    racers.send(1, { op: 'part', key, uploadId, partNumber: 1, label: 'part-1', size: minPartSize }),
    racers.send(2, { op: 'part', key, uploadId, partNumber: 2, label: 'part-2', size: 1000 })
  ])
  if (first?.part === undefined || second?.part === undefined) throw new Error('parts missing')
  t.equal(await bucket.head(key), null, 'the upload in progress is invisible')
  const completed = await racers.send(0, { op: 'complete', key, uploadId, parts: [first.part, second.part] })
  const expected = [payload('part-1', minPartSize), payload('part-2', 1000)]
  t.equal(completed.etag, multipartEtag(expected), 'completed with the parts uploaded elsewhere')
  t.same(await bytesOf(bucket, key), Buffer.concat(expected), 'the object reads as the parts in order')
  t.same((await bucket.head(key))?.customMetadata, { writer: 'mpu' }, 'with the metadata given at create')
})
