/**
 * What the handles a registry hands out answer once closed, on the
 * filesystem store and in memory: one its user closed is refused with
 * `ERR_USE_AFTER_CLOSE` (as any bucket handle: test/conformance/bucket-close.ts),
 * and the registry's next `open` gives a new one; one whose bucket was
 * deleted (through this registry, or another process's) answers 10006 on
 * every call, also after its user closes it; a registry's `close()` closes
 * its handles as their user would.
 */
import t, { type Test } from 'tap'
import { openMemoryRegistry, openRegistry, type Bucket, type BucketObjectBody, type BucketRegistry } from '../../src/index.js'
import { expectCode } from '../conformance/bucket.js'
import { expectClosed } from '../conformance/bucket-close.js'
import { testdir } from '../testdir.js'

const registries: Array<[string, (t: Test) => Promise<BucketRegistry>]> = [
  ['filesystem', async t => await openRegistry(testdir(t), { fsync: false })],
  ['memory', async () => openMemoryRegistry()]
]

/** Every call of a deleted bucket's handle answers 10006, named after the call. */
async function answersNoSuchBucket (t: Test, bucket: Bucket): Promise<void> {
  await expectCode(t, () => bucket.head('k'), 10006, 'head')
  await expectCode(t, () => bucket.get('k'), 10006, 'get')
  await expectCode(t, () => bucket.put('k', 'late'), 10006, 'put')
  await expectCode(t, () => bucket.list(), 10006, 'list')
  await expectCode(t, () => bucket.delete('k'), 10006, 'delete')
  await expectCode(t, () => bucket.createMultipartUpload('k'), 10006, 'createMultipartUpload')
}

for (const [store, open] of registries) {
  t.test(`${store}: a handle its user closed is refused, and the registry opens a new one`, async t => {
    const registry = await open(t)
    t.teardown(() => registry.close())
    await registry.create('photos')
    const first = await registry.open('photos')
    await first!.put('cat', 'meow')
    await first!.close()
    await expectClosed(t, () => first!.put('dog', 'woof'), 'put')
    await expectClosed(t, () => first!.get('cat'), 'get')
    const [second, third] = await Promise.all([registry.open('photos'), registry.open('photos')])
    t.not(second, first, 'a new handle')
    t.equal(third, second, 'one new handle for the callers that found it closed together')
    t.equal(await (await second!.get('cat') as BucketObjectBody).text(), 'meow')
    await second!.put('dog', 'woof')
    t.equal(await registry.open('photos'), second, 'kept as the handle from then on')
  })

  t.test(`${store}: a handle whose bucket was deleted answers 10006, also once its user closed it`, async t => {
    const registry = await open(t)
    t.teardown(() => registry.close())
    await registry.create('gone')
    const bucket = await registry.open('gone')
    await bucket!.put('k', 'v')
    await bucket!.delete('k')
    await registry.delete('gone')
    await answersNoSuchBucket(t, bucket!)
    await bucket!.close()
    await answersNoSuchBucket(t, bucket!)
  })

  t.test(`${store}: a registry's close() closes its handles as their user would`, async t => {
    const registry = await open(t)
    await registry.create('photos')
    const bucket = await registry.open('photos')
    await registry.close()
    await expectClosed(t, () => bucket!.head('k'), 'head')
  })
}

t.test('filesystem: a handle on a bucket another process deleted answers 10006 once this registry sees it gone', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  const other = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await registry.close(); await other.close() })
  await registry.create('shared')
  const bucket = await registry.open('shared')
  await other.delete('shared')
  t.equal(await registry.open('shared'), null, 'seen gone')
  await answersNoSuchBucket(t, bucket!)
})

t.test('filesystem: opens racing to replace the handle of a bucket another process deleted and created again share one new handle', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  const other = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await registry.close(); await other.close() })
  await registry.create('again')
  const old = await registry.open('again')
  await other.delete('again')
  // Creation dates are milliseconds: the new bucket must be told from the old.
  await new Promise(resolve => setTimeout(resolve, 5))
  await other.create('again')
  await (await other.open('again'))!.put('k', 'new')
  // As the doors open it: with the bucket's info in hand, so the opens meet at the handle in the same turn.
  const info = await registry.info('again')
  const opened = await Promise.all([registry.open('again', info!), registry.open('again', info!), registry.open('again', info!)])
  t.not(opened[0], old, 'a new handle')
  t.equal(opened[1], opened[0], 'the same for every caller (none made beside it and left unclosed)')
  t.equal(opened[2], opened[0])
  t.equal(await (await opened[0]!.get('k') as BucketObjectBody).text(), 'new', 'and it answers for the new bucket')
  t.equal(await registry.open('again'), opened[0], 'kept as the handle from then on')
  await answersNoSuchBucket(t, old!)
})
