/**
 * The readable view after a crash in the middle of a commit of several
 * keys: a batch delete commits every row in one transaction and only then
 * hides the keys' view entries. A process killed in between
 * (children/batch-delete-crash.ts kills itself the moment the commit has
 * resolved) must not leave view files of objects the catalog no longer
 * has: the keys recorded with the commit (`view_intents`) are published by
 * the next process that opens the store, or by a sweep of one already open.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { openBucket, type Bucket } from '../../../src/index.js'
import { Database } from '../../../src/stores/fs/sqlite.js'
import { batchBody, batchKey } from './children/batch-keys.js'
import { testdir } from '../../testdir.js'

const childScript = fileURLToPath(new URL('./children/batch-delete-crash.js', import.meta.url))
const KEYS = 50
const DELETED = 40

/** Runs the child on `dir` and checks that it died by its own SIGKILL, right after the delete's commit. */
async function crashAfterBatchCommit (t: Test, dir: string, keys = KEYS, deleted = DELETED): Promise<void> {
  const child = spawn(process.execPath, [childScript, dir, String(keys), String(deleted)], { stdio: ['ignore', 'inherit', 'inherit'] })
  const [code, signal] = await once(child, 'exit') as [number | null, NodeJS.Signals | null]
  t.equal(signal, 'SIGKILL', `the child was killed right after the commit (exit code ${String(code)})`)
}

/** The contents of the key's view file, or null when there is none. */
async function shown (dir: string, key: string): Promise<Buffer | null> {
  return await readFile(path.join(dir, ...key.split('/'))).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null
    throw err
  })
}

/** The keys among the first `count` that the view still shows. */
async function shownKeys (dir: string, from: number, to: number): Promise<string[]> {
  const found: string[] = []
  for (let i = from; i < to; i++) if (await shown(dir, batchKey(i)) !== null) found.push(batchKey(i))
  return found
}

/** The ids still recorded in the catalog as owed to the view (null when the catalog has no such table). */
function recordedIntents (dir: string): number | null {
  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'))
  try {
    const table = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'view_intents'").get()
    return table === undefined ? null : db.prepare<[], { n: number }>('SELECT count(*) AS n FROM view_intents').get()?.n ?? null
  } finally {
    db.close()
  }
}

async function checkViewFollowsCatalog (t: Test, dir: string, bucket: Bucket): Promise<void> {
  t.same(await shownKeys(dir, 0, DELETED), [], 'no deleted key is left in the view')
  for (let i = DELETED; i < KEYS; i++) {
    t.same(await shown(dir, batchKey(i)), batchBody(i), `${batchKey(i)} (kept) is still shown, whole`)
  }
  const listed = (await bucket.list({ prefix: 'batch/' })).objects.map(o => o.key).sort()
  t.same(listed, Array.from({ length: KEYS - DELETED }, (_, i) => batchKey(DELETED + i)).sort(), 'the catalog holds the kept keys only')
  t.equal(recordedIntents(dir), 0, 'nothing is left owed to the view')
}

t.test('a batch delete killed after its commit: the next process to open the store fixes the view', async t => {
  const dir = testdir(t)
  await crashAfterBatchCommit(t, dir)
  // The crash really came between the commit and the view: deleted keys are still shown before anyone opens the store.
  t.ok((await shownKeys(dir, 0, DELETED)).length > 0, 'the crash left deleted keys in the view')
  const bucket = await openBucket(dir)
  t.teardown(async () => await bucket.close())
  await checkViewFollowsCatalog(t, dir, bucket)
})

t.test('a batch delete killed after its commit: a store already open fixes the view at its next sweep', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir)
  t.teardown(async () => await bucket.close())
  await crashAfterBatchCommit(t, dir)
  t.ok((await shownKeys(dir, 0, DELETED)).length > 0, 'the crash left deleted keys in the view')
  await bucket.sweep()
  await checkViewFollowsCatalog(t, dir, bucket)
})

t.test('a single delete records nothing: one key stays at most one write behind, at no extra cost', async t => {
  const dir = testdir(t)
  await crashAfterBatchCommit(t, dir, 2, 1)
  t.equal(recordedIntents(dir), 0, 'no intent recorded for a delete of one key')
})

t.test('a catalog made before view intents opens, gains the table, and batch deletes keep the view', async t => {
  const dir = testdir(t)
  {
    const bucket = await openBucket(dir)
    for (let i = 0; i < KEYS; i++) await bucket.put(batchKey(i), batchBody(i))
    await bucket.close()
  }
  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'))
  db.exec('DROP TABLE view_intents')
  db.close()
  t.equal(recordedIntents(dir), null, 'the catalog has no view_intents table')
  const bucket = await openBucket(dir)
  t.teardown(async () => await bucket.close())
  t.equal(recordedIntents(dir), 0, 'opening adds the table')
  await bucket.delete(Array.from({ length: DELETED }, (_, i) => batchKey(i)))
  await checkViewFollowsCatalog(t, dir, bucket)
})
