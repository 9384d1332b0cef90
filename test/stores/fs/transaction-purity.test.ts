/**
 * No file-system call inside a catalog write transaction: the filesystem
 * store prepares files before the transaction (bodies, part links) and
 * publishes the readable view after it, so a slow disk never holds the
 * write lock that every writer of the bucket, in every process, waits for.
 * Every node:fs function is wrapped to note calls made while a transaction
 * runs; a workload of every kind of write must make none.
 */
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import path from 'node:path'
import t from 'tap'
import { BucketEngine } from '../../../src/bucket/index.js'
import { Catalog } from '../../../src/stores/fs/catalog.js'
import { FsStore } from '../../../src/stores/fs/store.js'
import { KeyView } from '../../../src/stores/fs/view.js'
import { testdir } from '../../testdir.js'

const calls: string[] = []
let inside = false

function wrap (target: Record<string, unknown>, prefix: string): () => void {
  const originals = new Map<string, unknown>()
  for (const [name, value] of Object.entries(target)) {
    if (typeof value !== 'function' || /^[A-Z]/.test(name) || name === 'watch' || name === 'watchFile') continue
    originals.set(name, value)
    target[name] = function (this: unknown, ...args: unknown[]) {
      if (inside) calls.push(`${prefix}${name}(${String(args[0])})`)
      return (value as (...a: unknown[]) => unknown).apply(this, args)
    }
  }
  return () => { for (const [name, value] of originals) target[name] = value }
}

t.test('writes make no file-system call inside a catalog write transaction', async t => {
  const write = Catalog.prototype.write
  Catalog.prototype.write = async function <T>(this: Catalog, fn: () => T): Promise<T> {
    return await write.call(this, () => {
      inside = true
      try { return fn() } finally { inside = false }
    }) as T
  }
  const unwrapSync = wrap(fs as unknown as Record<string, unknown>, 'fs.')
  const unwrapPromises = wrap(fs.promises as unknown as Record<string, unknown>, 'fs.promises.')
  syncBuiltinESMExports()
  t.teardown(() => {
    Catalog.prototype.write = write
    unwrapSync()
    unwrapPromises()
    syncBuiltinESMExports()
  })

  const dir = path.join(testdir(t), 'bucket')
  const bucket = new BucketEngine(await FsStore.open(dir, { fsync: true }), { minPartSize: 1 })
  t.teardown(async () => { await bucket.close() })
  await bucket.put('a/b.txt', 'one')
  await bucket.put('a/b.txt', 'two') // an overwrite replaces the view's file
  await bucket.put('large.bin', new Uint8Array(300_000))
  await Promise.all(Array.from({ length: 8 }, async (_, i) => await bucket.put(`group/${i}`, `grouped ${i}`)))
  t.equal(await bucket.put('a/b.txt', 'three', { onlyIf: { etagMatches: 'nope' } }), null)
  const upload = await bucket.createMultipartUpload('multi.bin')
  const one = await upload.uploadPart(1, 'part one')
  const again = await upload.uploadPart(1, 'part one again')
  const two = await upload.uploadPart(2, 'part two')
  t.not(one.etag, again.etag)
  await upload.complete([again, two])
  const aborted = await bucket.createMultipartUpload('gone.bin')
  await aborted.uploadPart(1, 'x')
  await aborted.abort()
  await bucket.delete(['a/b.txt', 'large.bin', 'multi.bin', ...Array.from({ length: 8 }, (_, i) => `group/${i}`)])
  t.equal(await bucket.retire(), true)
  t.equal(await bucket.get('a/b.txt'), null)
  t.same(calls, [], 'no file-system call while the write lock was held')
  t.ok(fs.existsSync(path.join(dir, '.fsbucket', 'catalog.db')), 'the wrapped calls reached the disk')
})

t.test('the check itself notices a file-system call of a store module in a transaction', async t => {
  // The store's modules import node:fs functions by name: the wrapping must reach those bindings too.
  const dir = testdir(t)
  fs.writeFileSync(path.join(dir, 'body'), 'bytes')
  const view = new KeyView(dir)
  const unwrap = wrap(fs as unknown as Record<string, unknown>, 'fs.')
  syncBuiltinESMExports()
  const before = calls.length
  inside = true
  try {
    t.equal(view.show('shown.txt', path.join(dir, 'body')), true)
  } finally {
    inside = false
    unwrap()
    syncBuiltinESMExports()
  }
  t.ok(calls.length > before, 'the link was noticed')
  calls.length = before
})
