/**
 * Cross-process file locks (../../../src/stores/fs/file-lock.ts): a lock
 * held elsewhere is waited for, with the retries asked; a lock whose
 * directory is gone fails at once, not after them. A delete of a bucket that
 * another process (here another registry on the same directory) deleted
 * while this one was opening it answers 10006 at once, rather than after
 * the 19 s of retries of the store's open lock in the bucket's vanished
 * directory.
 */
import { mkdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { openRegistry } from '../../../src/index.js'
import { lockFile } from '../../../src/stores/fs/file-lock.js'
import { testdir } from '../../testdir.js'

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

t.test('a lock held elsewhere is waited for, and taken once released', async t => {
  const dir = testdir(t)
  const held = await lockFile(dir, { lockfilePath: path.join(dir, 'x.lock'), realpath: false, stale: 10_000 })
  setTimeout(() => { void held() }, 150)
  const started = Date.now()
  const release = await lockFile(dir, { lockfilePath: path.join(dir, 'x.lock'), realpath: false, stale: 10_000, retries: { retries: 100, minTimeout: 10, maxTimeout: 50 } })
  t.ok(Date.now() - started >= 100, 'waited for the holder')
  await release()
})

t.test('a lock held elsewhere fails with ELOCKED once the retries are spent', async t => {
  const dir = testdir(t)
  const held = await lockFile(dir, { lockfilePath: path.join(dir, 'x.lock'), realpath: false, stale: 10_000 })
  t.teardown(held)
  await t.rejects(lockFile(dir, { lockfilePath: path.join(dir, 'x.lock'), realpath: false, stale: 10_000, retries: { retries: 3, minTimeout: 5, maxTimeout: 10 } }), { code: 'ELOCKED' })
})

t.test('a lock whose directory is gone fails at once (ENOENT), not after the retries', async t => {
  const dir = path.join(testdir(t), 'gone')
  const started = Date.now()
  await t.rejects(lockFile(dir, { lockfilePath: path.join(dir, 'init.lock'), realpath: false, stale: 10_000, retries: { retries: 100, minTimeout: 10, maxTimeout: 200 } }), { code: 'ENOENT' })
  t.ok(Date.now() - started < 1000, `failed in ${Date.now() - started} ms`)
})

t.test('a lock whose directory vanishes while it is waited for fails at once', async t => {
  const dir = path.join(testdir(t), 'vanishing')
  mkdirSync(dir)
  // Held, never released: the directory goes with it (as a bucket deleted by another process).
  await lockFile(dir, { lockfilePath: path.join(dir, 'init.lock'), realpath: false, stale: 10_000, onCompromised: () => {} })
  const waiting = lockFile(dir, { lockfilePath: path.join(dir, 'init.lock'), realpath: false, stale: 10_000, retries: { retries: 100, minTimeout: 10, maxTimeout: 200 } })
  await sleep(100)
  rmSync(dir, { recursive: true })
  const removed = Date.now()
  await t.rejects(waiting, { code: 'ENOENT' })
  t.ok(Date.now() - removed < 1000, `failed ${Date.now() - removed} ms after the directory went`)
})

t.test('a delete racing another registry\'s delete of one bucket answers 10006 at once', async t => {
  const dataDir = testdir(t)
  const winner = await openRegistry(dataDir, { fsync: false })
  const loser = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await winner.close(); await loser.close() })
  await winner.create('photos')
  await winner.open('photos') // a handle in use: its delete needs no open
  // The loser's delete is caught opening the bucket's store (its open lock held, as by a third process opening it).
  const root = path.join(dataDir, 'photos', '.fsbucket')
  const held = await lockFile(root, { lockfilePath: path.join(root, 'init.lock'), realpath: false, stale: 10_000, onCompromised: () => {} })
  const losing = loser.delete('photos').then(() => 'deleted', (err: { code?: number }) => err.code)
  await sleep(200)
  await winner.delete('photos')
  const deleted = Date.now()
  t.equal(await losing, 10006, 'the loser is told NoSuchBucket')
  t.ok(Date.now() - deleted < 3000, `the loser answered ${Date.now() - deleted} ms after the winner`)
  await held().catch(() => {})
  t.equal(await winner.info('photos'), null)
  t.equal(await loser.info('photos'), null)
})
