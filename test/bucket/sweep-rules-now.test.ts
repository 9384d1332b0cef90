/**
 * A sweep acts on lifecycle rules as they stand, not as they stood when it
 * began: the registry reads a bucket's rules when its turn comes, and the
 * engine judges each batch again by the rules read just before acting on
 * it. A rule disabled during a long sweep (a pass over many buckets, or a
 * bucket of millions of keys) acts on nothing from the next batch on.
 */
import t from 'tap'
import { createRegistry, type Bucket } from '../../src/bucket/index.js'
import { MemoryRegistryStorage } from '../../src/stores/memory/registry-storage.js'

const DAY = 86_400
const rule = (enabled: boolean, action: Record<string, unknown>): Record<string, unknown> =>
  ({ rules: [{ id: 'r', enabled, conditions: {}, ...action }] })
const expire = (enabled: boolean): Record<string, unknown> => rule(enabled, { deleteObjectsTransition: { condition: { type: 'Age', maxAge: DAY } } })
const later = Date.now() + 10 * DAY * 1000

async function bucketOf (keys: number): Promise<Bucket> {
  const registry = createRegistry(new MemoryRegistryStorage())
  await registry.create('logs')
  const bucket = (await registry.open('logs'))!
  for (let i = 0; i < keys; i++) await bucket.put(`k${String(i).padStart(5, '0')}`, 'x')
  return bucket
}

async function count (bucket: Bucket, storageClass?: string): Promise<number> {
  let n = 0
  let cursor: string | undefined
  do {
    const page = await bucket.list({ cursor, include: ['httpMetadata'] })
    n += page.objects.filter(o => storageClass === undefined || o.storageClass === storageClass).length
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor !== undefined)
  return n
}

/** The document `first` on the first read, `then` on every later one: a change landing during the sweep. */
function changing (first: unknown, then: unknown): () => Promise<unknown> {
  let reads = 0
  return async () => (reads++ === 0 ? first : then)
}

t.test('expiries: a batch is carried out only while the rules read just before it still ask for it', async t => {
  const bucket = await bucketOf(2500)
  const report = await bucket.sweep({ lifecycle: expire(true), lifecycleNow: changing(expire(true), expire(false)), now: later })
  t.equal(report.expiredObjects, 1000, 'the first batch of 1,000, judged before the rule was disabled')
  t.equal(await count(bucket), 1500, 'the rest stays')
  const unchanged = await bucket.sweep({ lifecycle: expire(true), lifecycleNow: async () => expire(true), now: later })
  t.equal(unchanged.expiredObjects, 1500, 'rules that did not change act on every batch')
})

t.test('transitions and upload aborts likewise', async t => {
  const move = (enabled: boolean): Record<string, unknown> => rule(enabled, { storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Age', maxAge: DAY } }] })
  const bucket = await bucketOf(1500)
  const report = await bucket.sweep({ lifecycle: move(true), lifecycleNow: changing(move(true), move(false)), now: later })
  t.equal(report.transitionedObjects, 1000, 'the first page, judged before the rule was disabled')
  t.equal(await count(bucket, 'InfrequentAccess'), 1000)

  // A rule with a prefix (a whole-bucket one sets the upload age the registry reads when the bucket's turn comes).
  const abort = (enabled: boolean): Record<string, unknown> =>
    ({ rules: [{ id: 'r', enabled, conditions: { prefix: 'big' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: DAY } } }] })
  const uploads = await bucketOf(0)
  await uploads.createMultipartUpload('big')
  const kept = await uploads.sweep({ lifecycle: abort(true), lifecycleNow: async () => abort(false), now: later, uploadMaxAgeMs: 30 * DAY * 1000 })
  t.equal(kept.abortedUploads, 0, 'an abort rule disabled before the uploads were judged aborts nothing')
  const aborted = await uploads.sweep({ lifecycle: abort(true), lifecycleNow: async () => abort(true), now: later, uploadMaxAgeMs: 30 * DAY * 1000 })
  t.equal(aborted.abortedUploads, 1, 'one still enabled aborts it')
})

t.test('the registry\'s sweep reads each bucket\'s rules when its turn comes: a rule disabled while another bucket is swept acts on nothing', async t => {
  const registry = createRegistry(new MemoryRegistryStorage())
  for (const name of ['aaa', 'zzz']) {
    await registry.create(name)
    await (await registry.open(name))!.put('keep-me', 'x')
    await registry.updateSettings(name, { lifecycle: expire(true) })
  }
  // The first bucket's turn is when the second's rule is disabled (and acknowledged).
  const open = registry.open.bind(registry)
  registry.open = async (name, known) => {
    if (name === 'aaa') await registry.updateSettings('zzz', { lifecycle: expire(false) })
    return await open(name, known)
  }
  const report = await registry.sweep({ now: new Date(later) })
  t.equal(report.expiredObjects, 1, 'aaa\'s object, under its rule')
  t.not(await (await open('zzz'))!.head('keep-me'), null, 'zzz\'s object stays: its rule was disabled before its turn')
})

t.test('rules that cannot be read again mid-sweep act on nothing more in that bucket, and the pass goes on to the next', async t => {
  const registry = createRegistry(new MemoryRegistryStorage())
  for (const name of ['aaa', 'zzz']) {
    await registry.create(name)
    const bucket = (await registry.open(name))!
    for (let i = 0; i < 1500; i++) await bucket.put(`k${i}`, 'x')
    await registry.updateSettings(name, { lifecycle: expire(true) })
  }
  // aaa's rules read at its turn, then a failure on every read again (a damaged file, a catalog out of reach).
  const info = registry.info.bind(registry)
  let reads = 0
  let failing = true
  registry.info = async name => {
    if (failing && name === 'aaa' && reads++ > 0) throw new Error('the settings cannot be read')
    return await info(name)
  }
  const report = await registry.sweep({ now: new Date(later) })
  failing = false
  t.equal(report.expiredObjects, 1500, 'aaa\'s batch judged before the failure is dropped too; zzz is swept whole')
  t.equal(await count((await registry.open('aaa'))!), 1500, 'aaa keeps its objects')
  t.equal(await count((await registry.open('zzz'))!), 0, 'zzz, swept after, lost its expired objects')
})

