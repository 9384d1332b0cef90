/**
 * Lifecycle rules carried out by the engine's sweep over a store (the same
 * tests for every store): expiries through the store's delete, with the
 * version judged (a rewritten object stays), transitions that keep bytes,
 * etag and metadata, disabled rules and other prefixes untouched, uploads
 * under a rule's prefix aborted, and one sweeper at a time where two
 * handles share a store.
 */
import type { Test } from 'tap'
import { BucketEngine } from '../../src/bucket/bucket.js'
import type { BucketStore, DeleteOptions } from '../../src/bucket/port.js'
import { testdir } from '../testdir.js'
import { bytesOf, put, record, type StoreUnderTest } from './store.js'

const DAY_MS = 86_400_000
const uploaded = 1_700_000_000_000

const lifecycle = {
  rules: [
    { id: 'logs-1d', enabled: true, conditions: { prefix: 'logs/' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } },
    { id: 'ia-2d', enabled: true, conditions: {}, storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Age', maxAge: 2 * 86400 } }] },
    { id: 'off', enabled: false, conditions: { prefix: 'keep/' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 1 } } },
    { id: 'uploads-1d', enabled: true, conditions: { prefix: 'big/' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 86400 } } }
  ]
}

async function putText (store: BucketStore, id: string, text: string): Promise<void> {
  await put(store, id, Buffer.from(text), undefined, record(id, Buffer.byteLength(text)))
}

export function lifecycleConformance (t: Test, sut: StoreUnderTest): void {
  t.test(`${sut.name}: lifecycle rules carried out by a sweep`, async t => {
    t.test('expiry, transition, disabled rules and other prefixes', async t => {
      const store = await sut.open(testdir(t))
      const engine = new BucketEngine(store)
      t.teardown(async () => { await engine.close() })
      for (const id of ['logs/a', 'logs/b', 'keep/c', 'other']) await putText(store, id, `body of ${id}`)

      const early = await engine.sweep({ lifecycle, now: uploaded + DAY_MS - 1 })
      t.equal(early.expiredObjects, 0, 'nothing expires a millisecond early')
      t.not(await store.head('logs/a'), null)

      const day1 = await engine.sweep({ lifecycle, now: uploaded + DAY_MS })
      t.equal(day1.expiredObjects, 2, 'the logs/ objects expire at their age')
      t.equal(day1.transitionedObjects, 0, 'no transition is due yet')
      t.equal(await store.head('logs/a'), null)
      t.equal(await store.head('logs/b'), null)

      const before = await store.head('keep/c')
      const day2 = await engine.sweep({ lifecycle, now: uploaded + 2 * DAY_MS })
      t.equal(day2.transitionedObjects, 2, 'every remaining object moves to InfrequentAccess')
      t.equal(day2.expiredObjects, 0, 'the disabled rule deletes nothing')
      const after = await store.head('keep/c')
      t.equal(after?.storageClass, 'InfrequentAccess')
      t.equal(after?.etag, before?.etag, 'the etag is kept')
      t.equal(after?.uploaded, before?.uploaded, 'the upload time is kept')
      t.same(after?.customMetadata, before?.customMetadata, 'the metadata is kept')
      t.same(after?.httpMetadata, before?.httpMetadata)
      t.equal((await bytesOf(store, 'keep/c'))?.toString(), 'body of keep/c', 'the bytes are kept')

      const day3 = await engine.sweep({ lifecycle, now: uploaded + 3 * DAY_MS })
      t.equal(day3.transitionedObjects, 0, 'never transitioned twice, never back to Standard')
      t.equal((await store.head('other'))?.storageClass, 'InfrequentAccess')
    })

    t.test('expiry wins over a transition due at the same time', async t => {
      const store = await sut.open(testdir(t))
      const engine = new BucketEngine(store)
      t.teardown(async () => { await engine.close() })
      await putText(store, 'logs/x', 'x')
      const report = await engine.sweep({ lifecycle, now: uploaded + 5 * DAY_MS })
      t.equal(report.expiredObjects, 1)
      t.equal(report.transitionedObjects, 0, 'the expired object is not transitioned first')
    })

    t.test('an expiry is a delete with its cause and judged version: an object rewritten since stays', async t => {
      const store = await sut.open(testdir(t))
      const calls: Array<{ ids: string[], options?: DeleteOptions }> = []
      const original = store.delete.bind(store)
      store.delete = async (ids, options) => {
        calls.push({ ids, options })
        // The object is rewritten between the walk that judged it and its deletion.
        await putText(store, 'logs/raced', 'new body')
        return await original(ids, options)
      }
      const engine = new BucketEngine(store)
      t.teardown(async () => { await engine.close() })
      await putText(store, 'logs/raced', 'old body')
      await putText(store, 'logs/plain', 'plain')
      const report = await engine.sweep({ lifecycle, now: uploaded + DAY_MS })
      t.equal(report.expiredObjects, 1, 'only the object removed counts as expired')
      t.equal(calls.length, 1, 'one batch')
      t.same(calls[0].ids.sort(), ['logs/plain', 'logs/raced'])
      t.equal(calls[0].options?.cause, 'lifecycle', 'the delete carries its cause')
      t.equal((await bytesOf(store, 'logs/raced'))?.toString(), 'new body', 'the rewritten object stays')
      t.equal(await store.head('logs/plain'), null, 'the other goes')
    })

    t.test('a delete answers what it removed and what a lock kept; a record rewritten since it was judged is neither, locked or not', async t => {
      const store = await sut.open(testdir(t))
      t.teardown(async () => { await store.close() })
      for (const id of ['held/same', 'held/rewritten', 'free/same', 'free/rewritten']) await putText(store, id, 'old')
      const versions = new Map<string, string>()
      for (const id of ['held/same', 'held/rewritten', 'free/same', 'free/rewritten', 'absent']) versions.set(id, (await store.head(id))?.version ?? 'none')
      for (const id of ['held/rewritten', 'free/rewritten']) await putText(store, id, 'new')
      await store.setLockRules([{ id: 'hold', enabled: true, prefix: 'held/', condition: { type: 'Indefinite' } }])
      const outcome = await store.delete([...versions.keys()], { cause: 'lifecycle', versions })
      t.same(outcome, { retained: ['held/same'], removed: 1 }, 'one removed, one retained; the rewritten ones and the absent one are neither')
      t.equal(await store.head('free/same'), null)
      for (const id of ['held/same', 'held/rewritten', 'free/rewritten']) t.not(await store.head(id), null, `${id} stays`)
    })

    t.test('a bucket lock wins over an expiry, not over a transition: a retained object stays, and may move to InfrequentAccess', async t => {
      const store = await sut.open(testdir(t))
      const engine = new BucketEngine(store)
      t.teardown(async () => { await engine.close() })
      for (const id of ['logs/held', 'logs/free', 'keep/held']) await putText(store, id, `body of ${id}`)
      await store.setLockRules([
        { id: 'hold-logs', enabled: true, prefix: 'logs/held', condition: { type: 'Indefinite' } },
        { id: 'hold-keep', enabled: true, prefix: 'keep/', condition: { type: 'Indefinite' } }
      ])
      const report = await engine.sweep({ lifecycle, now: uploaded + 2 * DAY_MS })
      t.equal(report.expiredObjects, 1, 'only the object no rule retains expires')
      t.equal(await store.head('logs/free'), null)
      t.equal((await bytesOf(store, 'logs/held'))?.toString(), 'body of logs/held', 'the retained object is kept as it was')
      t.equal((await store.head('logs/held'))?.storageClass, 'InfrequentAccess', 'and moves as its transition is due, though its expiry is held back')
      t.equal(report.transitionedObjects, 2, 'both retained objects moved')
      const again = await engine.sweep({ lifecycle, now: uploaded + 3 * DAY_MS })
      t.same([again.expiredObjects, again.transitionedObjects], [0, 0], 'once')
      const moved = await store.head('keep/held')
      t.equal(moved?.storageClass, 'InfrequentAccess', 'a retained object moves to InfrequentAccess (no overwrite: the same bytes, etag and upload time)')
      t.equal((await bytesOf(store, 'keep/held'))?.toString(), 'body of keep/held')
      t.same((await store.delete(['keep/held'])).retained, ['keep/held'], 'and the lock goes on retaining it')
    })

    t.test('uploads under an abort rule\'s prefix are aborted at their age', async t => {
      const store = await sut.open(testdir(t))
      const engine = new BucketEngine(store, { clock: () => new Date(uploaded) })
      t.teardown(async () => { await engine.close() })
      const big = await engine.createMultipartUpload('big/one')
      const small = await engine.createMultipartUpload('small/one')
      const early = await engine.sweep({ lifecycle, now: uploaded + DAY_MS - 1, uploadMaxAgeMs: 7 * DAY_MS })
      t.equal(early.abortedUploads, 0, 'nothing is aborted a millisecond early')
      const report = await engine.sweep({ lifecycle, now: uploaded + DAY_MS, uploadMaxAgeMs: 7 * DAY_MS })
      t.equal(report.abortedUploads, 1)
      t.equal(await store.getUpload(big.uploadId), null, 'the upload under big/ is aborted')
      t.not(await store.getUpload(small.uploadId), null, 'the other lives until the bucket\'s age')
    })

    if (sut.supports.sharedHandles) {
      t.test('two handles sweeping at once: one carries the rules out', async t => {
        const dir = testdir(t)
        const first = new BucketEngine(await sut.open(dir))
        const second = new BucketEngine(await sut.open(dir))
        t.teardown(async () => { await first.close(); await second.close() })
        const store = await sut.open(dir)
        t.teardown(async () => { await store.close() })
        for (let i = 0; i < 300; i++) await putText(store, `logs/${String(i).padStart(4, '0')}`, 'x')
        const reports = await Promise.all([first, second].map(async engine => await engine.sweep({ lifecycle, now: uploaded + DAY_MS })))
        t.equal(reports.reduce((n, r) => n + (r.expiredObjects ?? 0), 0), 300, 'each object expired once, by one sweeper')
        t.equal((await store.list({ prefix: 'logs/', limit: 10, withMetadata: false })).entries.length, 0)
      })
    }
  })
}
