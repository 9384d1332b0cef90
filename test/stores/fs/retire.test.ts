/**
 * Deleting a bucket never loses an acknowledged write: emptiness is judged
 * and writes are closed in one critical section, seen by every handle; a
 * write racing the delete never brings the bucket's directory back.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { openBucket, openRegistry } from '../../../src/index.js'
import { FsRegistryStorage } from '../../../src/stores/fs/registry-storage.js'
import { testdir } from '../../testdir.js'

t.test('a retired bucket refuses writes from every handle', async t => {
  const dir = path.join(testdir(t), 'b')
  const one = await openBucket(dir, { fsync: false })
  const other = await openBucket(dir, { fsync: false }) // as another process would
  t.teardown(async () => { await one.close(); await other.close() })
  await other.put('k', 'v')
  t.equal(await one.retire(), false, 'a bucket holding an object is not retired')
  await other.delete('k')
  const upload = await other.createMultipartUpload('in-progress')
  t.equal(await one.retire(), true, 'uploads in progress do not count')
  await t.rejects(other.put('late', 'write'), { code: 10006 }, 'a put after the retirement fails')
  await t.rejects(other.createMultipartUpload('late'), { code: 10006 })
  await t.rejects(upload.uploadPart(1, 'x'), { code: 10006 })
  t.equal(await other.head('late'), null)
})

t.test('the registry refuses to delete a bucket that a racing put filled', async t => {
  const data = testdir(t)
  const registry = await openRegistry(data, { fsync: false })
  t.teardown(async () => await registry.close())
  await registry.create('race')
  const writer = await openBucket(path.join(data, 'race'), { fsync: false })
  t.teardown(async () => await writer.close())
  await writer.put('k', 'v')
  await t.rejects(registry.delete('race'), { code: 10008 })
  t.ok(await writer.head('k'), 'the object is still there')
})

t.test('a store opened for a bucket deleted meanwhile is NoSuchBucket, and its directory is not brought back', async t => {
  const data = testdir(t)
  const one = await FsRegistryStorage.open(data, { fsync: false })
  const two = await FsRegistryStorage.open(data, { fsync: false }) // as another process would
  await one.createPlace('race')
  // The other process saw the bucket, then this one deleted it before the store was opened.
  t.equal(two.placeExists('race'), true)
  await one.removePlace('race')
  two.placeExists = () => true
  await t.rejects(two.openStore('race'), { code: 10006 })
  t.notOk(existsSync(path.join(data, 'race')), 'no directory of the deleted bucket')
})
