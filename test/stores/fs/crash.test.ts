/**
 * Crash safety (issue 2, section 3.1): a child process writing, deleting
 * and copying in a loop (children/crash-writer.ts) is killed with SIGKILL
 * at random moments, again and again, on the same bucket directory.
 *
 * After every kill each key must read as exactly the object the writer last
 * acknowledged or the one it was writing when killed (or nothing, for a
 * delete): bytes whole, hashing to the etag, metadata naming the same write.
 * List shows exactly the keys that read as objects. At the end, the sweeper
 * removes every leftover of the interrupted writes (from `.fsbucket/tmp/` and
 * the bodies in `.fsbucket/blobs/` that no object names), and the objects
 * survive the sweep.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { openBucket, type Bucket } from '../../../src/index.js'
import { crashKeys } from './children/crash-keys.js'
import { labelOf, md5Hex, multipartEtag, splitParts } from './children/payload.js'
import { testdir } from '../../testdir.js'

const writerScript = fileURLToPath(new URL('./children/crash-writer.js', import.meta.url))
const partSize = 64 * 1024
const kills = Number(process.env.CRASH_KILLS ?? 30)

let state = 7919
function random (): number {
  state = (state * 1103515245 + 12345) >>> 0
  return state / 4294967296
}

interface Operation { op: string, key: string, label: string }

/** Runs one writer until it is killed; returns what it acknowledged and what was in flight. */
async function runAndKill (dir: string, seed: number): Promise<{ acknowledged: Operation[], inFlight?: Operation, ready: boolean }> {
  const child = spawn(process.execPath, [writerScript, dir, String(seed), String(partSize)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const acknowledged: Operation[] = []
  let inFlight: Operation | undefined
  let ready = false
  let buffered = ''
  let onReady = (): void => {}
  const readyOrExit = new Promise<void>(resolve => { onReady = resolve })
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk
    let newline
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      if (line === 'ready') {
        ready = true
        onReady()
      } else if (line === 'done' && inFlight !== undefined) {
        acknowledged.push(inFlight)
        inFlight = undefined
      } else if (line.startsWith('begin ')) {
        const [, op = '', key = '', ...label] = line.split(' ')
        inFlight = { op, key, label: label.join(' ') }
      }
    }
  })
  const exited = once(child, 'exit')
  const closed = once(child.stdout, 'close')
  exited.then(onReady, onReady)
  // Mostly kill a running writer; sometimes kill it while it is still opening the bucket.
  if (random() < 0.8) await readyOrExit
  await new Promise(resolve => setTimeout(resolve, Math.floor(random() * 250)))
  child.kill('SIGKILL')
  await exited
  await closed
  return { acknowledged, inFlight, ready }
}

/** What a key reads as: null, or the label of a whole, self-consistent object. */
async function observe (t: Test, bucket: Bucket, key: string): Promise<string | null> {
  const head = await bucket.head(key)
  const got = await bucket.get(key)
  if (got === null || head === null) {
    t.equal(head, null, `${key}: head and get agree that it is missing`)
    t.equal(got, null, `${key}: get agrees with head`)
    return null
  }
  if (!('body' in got)) throw new Error('get without body')
  const bytes = new Uint8Array(await got.arrayBuffer())
  const label = labelOf(bytes)
  const problems: string[] = []
  if (label === undefined) problems.push('bytes are not one whole payload')
  if (got.size !== bytes.byteLength) problems.push(`size ${got.size} but ${bytes.byteLength} bytes`)
  if (got.customMetadata.label !== label) problems.push(`metadata names ${got.customMetadata.label}, bytes name ${label}`)
  if (head.etag !== got.etag || head.version !== got.version) problems.push('head and get disagree')
  const multipart = /-(\d+)$/.exec(got.etag)
  if (multipart === null) {
    if (got.etag !== md5Hex(bytes)) problems.push(`etag ${got.etag} is not the MD5 of the bytes`)
  } else if (got.etag !== multipartEtag(splitParts(bytes, partSize))) {
    problems.push(`multipart etag ${got.etag} does not match the bytes`)
  }
  if (problems.length > 0) t.fail(`${key}: ${problems.join('; ')}`)
  return label ?? '(torn)'
}

async function filesUnder (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return []
    throw err
  })
  return entries.filter(entry => !entry.isDirectory()).map(entry => path.join(entry.parentPath ?? entry.path, entry.name))
}

t.test(`a writer killed ${kills} times leaves every key whole`, async t => {
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir, { minPartSize: partSize })
  t.teardown(() => bucket.close())
  const current = new Map<string, string | null>(crashKeys.map(key => [key, null]))
  let acknowledgedTotal = 0
  let killedMidOperation = 0

  for (let round = 0; round < kills; round++) {
    const { acknowledged, inFlight } = await runAndKill(dir, round + 1)
    acknowledgedTotal += acknowledged.length
    for (const { op, key, label } of acknowledged) {
      // A copy names its source: the key reads as the source did, or stays as it was when there was none.
      if (op === 'copy') current.set(key, current.get(label) ?? current.get(key) ?? null)
      else current.set(key, op === 'delete' ? null : label)
    }
    const copiedFrom = inFlight?.op === 'copy' ? current.get(inFlight.label) ?? null : null
    if (inFlight !== undefined) killedMidOperation++

    const present: string[] = []
    for (const key of crashKeys) {
      const seen = await observe(t, bucket, key)
      const allowed = [current.get(key) ?? null]
      if (inFlight?.key === key && inFlight.op === 'copy') {
        if (copiedFrom !== null) allowed.push(copiedFrom)
      } else if (inFlight?.key === key) allowed.push(inFlight.op === 'delete' ? null : inFlight.label)
      if (!allowed.includes(seen)) {
        t.fail(`round ${round}: ${key} reads as ${String(seen)}, expected one of ${allowed.map(String).join(' | ')}`)
      }
      current.set(key, seen)
      if (seen !== null) present.push(key)
    }
    const listed = await bucket.list()
    const listedKeys = listed.objects.map(o => o.key)
    if (JSON.stringify(listedKeys) !== JSON.stringify(present.sort())) {
      t.same(listedKeys, present, `round ${round}: list shows exactly the keys that read as objects`)
    }
  }
  t.comment(`${acknowledgedTotal} operations acknowledged, ${killedMidOperation} kills during an operation`)
  t.ok(acknowledgedTotal >= kills, 'the writers got work done between kills')
  t.ok(killedMidOperation > 0, 'some kills landed during an operation')
  t.pass('every key read as the previous or the new object after every kill')

  const before = new Map<string, string | null>()
  for (const key of crashKeys) before.set(key, await observe(t, bucket, key))
  await bucket.sweep({ leftoverGraceMs: 0 })
  t.same(await filesUnder(path.join(dir, '.fsbucket', 'tmp')), [], 'after the sweep .fsbucket/tmp/ holds no files')
  // Bodies are named by version (`<version>` or `<version>.<part>`): after the sweep each belongs to a live object.
  const versions = new Set<string>()
  for (const key of crashKeys) {
    const head = await bucket.head(key)
    if (head !== null) versions.add(head.version)
  }
  const strays = (await filesUnder(path.join(dir, '.fsbucket', 'blobs'))).filter(file => !versions.has(path.basename(file).split('.')[0]))
  t.same(strays, [], 'after the sweep .fsbucket/blobs/ holds only the bodies of live objects')
  for (const key of crashKeys) t.equal(await observe(t, bucket, key), before.get(key), `${key} is unchanged by the sweep`)
  const listed = await bucket.list()
  t.same(listed.objects.map(o => o.key), [...before].flatMap(([key, label]) => label === null ? [] : [key]), 'list after the sweep')

  for (const key of crashKeys) {
    const put = await bucket.put(key, 'after the crashes')
    t.equal(put?.etag, md5Hex(Buffer.from('after the crashes')), `${key}: writable again (no lock left behind)`)
  }
})
