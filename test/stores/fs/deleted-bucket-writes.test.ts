/**
 * A bucket deleted by another process (here: another registry or handle on
 * the same data directory, which shares nothing with this one but the
 * files): a write of this process racing the delete, or made after it
 * through a handle opened before, answers 10006 (404 at the doors), never
 * a storage failure, and writes nothing into a bucket of the same name
 * created since; and this process lets go of the deleted bucket's catalog
 * without being asked about that bucket again.
 */
import { mkdirSync, readdirSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t, { type Test } from 'tap'
import { openBucket, openRegistry } from '../../../src/index.js'
import { gateway, auth } from '../../http/gateway-fixture.js'
import { filesUnder, heldBody } from '../../held-body.js'
import { testdir } from '../../testdir.js'

const large = Buffer.alloc(100_000, 'x') // a body received into a file, not kept in the catalog

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void


/** Waits until `done()` holds, collecting garbage meanwhile (libsql's closed connections keep their files until then). */
/** A registry on a new data directory with bucket `name`, and a library handle on that bucket: both closed by the test's end. */
async function registryAndHandle (t: Test, name: string): Promise<{ data: string, registry: Awaited<ReturnType<typeof openRegistry>>, handle: Awaited<ReturnType<typeof openBucket>> }> {
  const data = testdir(t)
  const registry = await openRegistry(data, { fsync: false })
  t.teardown(async () => await registry.close())
  await registry.create(name)
  const handle = await openBucket(path.join(data, name), { fsync: false })
  t.teardown(async () => await handle.close())
  return { data, registry, handle }
}

async function until (what: string, done: () => boolean, ms = 5000): Promise<void> {
  for (const deadline = Date.now() + ms; !done();) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${ms} ms`)
    gc()
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

t.test('a put whose body is still arriving when another process deletes the bucket answers 404 (10006)', async t => {
  const { app, dataDir } = await gateway(t)
  const other = await openRegistry(dataDir, { fsync: false }) // as another worker would
  t.teardown(async () => await other.close())
  const { payload, release } = heldBody(large, 50_000)
  const answer = app.inject({ method: 'PUT', url: '/photos/late', headers: { ...auth, 'content-length': String(large.length) }, payload })
  const blobs = path.join(dataDir, 'photos', '.fsbucket', 'blobs')
  await until('the body file', () => filesUnder(blobs).length > 0)
  await other.delete('photos')
  release()
  const put = await answer
  t.equal(put.statusCode, 404, put.body)
  t.equal(put.json().errors[0].code, 10006)
  t.equal(await other.info('photos'), null, 'the bucket stays deleted')
})

t.test('a put through a handle on a bucket another process deleted fails with 10006 and brings nothing back', async t => {
  const { data, registry, handle } = await registryAndHandle(t, 'gone')
  await handle.head('k')
  await registry.delete('gone')
  await t.rejects(handle.put('small', 'x'), { code: 10006 })
  await t.rejects(handle.put('large', large), { code: 10006 }, 'a body kept in a file too')
  t.same(readdirSync(data).filter(name => !name.startsWith('.')), [], 'no directory of the deleted bucket')
})

t.test('a handle on a deleted bucket writes nothing into the bucket of that name created since', async t => {
  const { data, registry, handle } = await registryAndHandle(t, 'again')
  // The old handle made (and remembers) a blobs/ directory, as a process that wrote there would.
  await handle.put('before', large)
  await handle.delete('before')
  await registry.delete('again')
  await registry.create('again')
  const fresh = await registry.open('again')
  await fresh!.put('new', 'y')
  const blobs = path.join(data, 'again', '.fsbucket', 'blobs')
  const hex = '0123456789abcdef'
  // Directories the new bucket would have made for its own bodies, one of them the old handle's.
  for (const a of hex) for (const b of hex) mkdirSync(path.join(blobs, a + b), { recursive: true })
  const made = readdirSync(blobs).length
  const { payload: body, release } = heldBody(large, 50_000)
  let answered = false
  const put = handle.put('large', body).finally(() => { answered = true })
  put.catch(() => {}) // observed below
  await until('the put to answer or its body to reach a file', () => answered || filesUnder(blobs).length > 0)
  t.same(filesUnder(blobs), [], 'no body file of the old handle in the new bucket, even while it arrives')
  release()
  await t.rejects(put, { code: 10006 })
  await t.rejects(handle.put('small', 'x'), { code: 10006 })
  t.same(filesUnder(blobs), [])
  t.equal(readdirSync(blobs).length, made, 'no directory made or removed')
  t.same((await fresh!.list()).objects.map(o => o.key), ['new'])
})

t.test('a handle on a deleted bucket makes no directory in the bucket of that name created since', async t => {
  const { data, registry, handle } = await registryAndHandle(t, 'again')
  await handle.head('k')
  await registry.delete('again')
  await registry.create('again')
  await (await registry.open('again'))!.head('k') // the new bucket's store, with its blobs/
  const blobs = path.join(data, 'again', '.fsbucket', 'blobs')
  await t.rejects(handle.put('large', large), { code: 10006 })
  t.same(readdirSync(blobs), [], 'no blobs/ directory made by the old handle')
})

const fdSupported = process.platform === 'linux' ? false : 'needs /proc'

/** Descriptors of this process open on files of deleted buckets' directories. */
function deletedBucketDescriptors (): string[] {
  const fds = readdirSync('/proc/self/fd')
  return fds.map(fd => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } }).filter(file => file.includes('/.deleted-'))
}

t.test('a process lets go of a bucket another process deleted, without a request for it', { skip: fdSupported }, async t => {
  const data = testdir(t)
  const here = await openRegistry(data, { fsync: false })
  const other = await openRegistry(data, { fsync: false }) // as another worker would
  t.teardown(async () => { await here.close(); await other.close() })
  await here.create('gone')
  await here.create('recreated')
  await here.create('kept')
  // In a function of its own, so that no variable of this test holds the engine.
  const use = async (name: string): Promise<void> => {
    const bucket = await here.open(name)
    await bucket!.put('k', 'v')
    await bucket!.delete('k')
  }
  await use('gone')
  await use('recreated')
  const kept = await here.open('kept')
  await kept!.put('k', 'v')
  await other.delete('gone')
  await other.delete('recreated')
  await other.create('recreated')
  await other.updateSettings('kept', { public: true }) // a change of settings: the same bucket
  t.ok(deletedBucketDescriptors().length > 0, 'the deleted buckets\' catalogs are open here')
  await until('the deleted buckets\' files to be closed', () => deletedBucketDescriptors().length === 0)
  t.same(deletedBucketDescriptors(), [])
  t.equal(await kept!.put('k2', 'v2') !== null, true, 'a bucket whose settings changed stays open')
  t.same((await (await here.open('recreated'))!.list()).objects, [], 'a bucket created again opens afresh')
})
