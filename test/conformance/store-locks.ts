/**
 * Bucket locks in the conformance suite of every store (port.ts, guarantee
 * 4): the rules a store keeps, the writes a retained record refuses (commit,
 * copy onto it, completing an upload onto it, delete) with the record left
 * as it was, what stays writable (new keys under a locked prefix, keys
 * outside it, records whose retention ran out), the instant each write is
 * judged at (the engine's, from its options), retirement refused, rules
 * seen at once by a second handle, and a rule set while overwrites are in
 * flight: none lands after the rule's commit.
 */
import type { Test } from 'tap'
import { ALWAYS, type BucketStore, type LockRule, type StoredObject, type StoredUpload } from '../../src/bucket/port.js'
import { testdir } from '../testdir.js'
import { patternBytes } from './bucket.js'
import { absent, always, bytesOf, chunksOf, code, put, record } from './store.js'
import type { StoreUnderTest } from './store.js'

const DAY_S = 86_400
const forever = (prefix?: string): LockRule => ({ id: `forever-${prefix ?? 'all'}`, enabled: true, ...(prefix === undefined ? {} : { prefix }), condition: { type: 'Indefinite' } })

/** A record uploaded at `uploaded` (ms). */
function uploadedAt (key: string, size: number, uploaded: number): StoredObject {
  return { ...record(key, size), uploaded }
}

export function lockConformance (t: Test, sut: StoreUnderTest): void {
  async function fresh (tt: Test, dir = testdir(tt)): Promise<BucketStore> {
    const store = await sut.open(dir)
    tt.teardown(async () => { await store.close() })
    return store
  }

  t.test(`${sut.name}: lock rules are kept as set, and replaced whole`, async t => {
    const dir = testdir(t)
    const store = await fresh(t, dir)
    t.same(await store.lockRules(), [], 'none at first')
    const rules: LockRule[] = [forever('a/'), { id: 'age', enabled: false, condition: { type: 'Age', maxAgeSeconds: 60 } }, { id: 'date', enabled: true, prefix: 'd', condition: { type: 'Date', date: '2030-01-01T00:00:00.000Z' } }]
    await store.setLockRules(rules)
    t.same(await store.lockRules(), rules)
    if (sut.supports.sharedHandles) t.same(await (await fresh(t, dir)).lockRules(), rules, 'another handle reads them')
    await store.setLockRules([])
    t.same(await store.lockRules(), [], 'cleared')
  })

  t.test(`${sut.name}: a retained record refuses overwrite, copy onto it, completion onto it and delete, and stays as it was`, async t => {
    const store = await fresh(t)
    const bytes = Buffer.from(patternBytes(40_000, 3))
    await put(store, 'keep/a', bytes)
    await put(store, 'keep/b', Buffer.from('b'))
    await put(store, 'free/a', Buffer.from('free'))
    await store.setLockRules([forever('keep/')])
    const before = await store.head('keep/a')

    t.equal(await code(put(store, 'keep/a', Buffer.from('new'))), 10913, 'an unconditional overwrite')
    t.equal(await code(put(store, 'keep/a', Buffer.from('new'), current => current !== null)), 10913, 'a conditional overwrite whose condition holds')
    t.equal(await put(store, 'keep/a', Buffer.from('new'), absent), false, 'a failed condition answers as before')
    t.equal(await code(store.copy('free/a', 'keep/a', source => ({ ...source, key: 'keep/a', version: record('keep/a', 0).version }), always)), 10913, 'a copy onto it')
    const upload = { uploadId: 'upload-0123456789abcdef', key: 'keep/a', created: 1000, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
    await store.createUpload('keep/a', upload)
    t.equal(await store.putPart(upload.uploadId, { partNumber: 1, etag: 'e1', size: 4 }, await store.stage(chunksOf(Buffer.from('part')))), true)
    t.equal(await code(store.completeUpload(upload.uploadId, 'keep/a', () => ({ object: record('keep/a', 4, 'multi-1'), partNumbers: [1] }))), 10913, 'completing an upload onto it')
    t.same(await store.getUpload(upload.uploadId), upload, 'the upload stays')
    t.same(await store.delete(['keep/a', 'free/a', 'nothing', 'keep/b']), { retained: ['keep/a', 'keep/b'], removed: 1 }, 'delete answers the retained ids, in the order given, and the count it removed')

    t.same(await store.head('keep/a'), before, 'the record is unchanged')
    t.same(await bytesOf(store, 'keep/a'), bytes, 'and so are its bytes')
    t.not(await store.head('keep/b'), null)
    t.equal(await store.head('free/a'), null, 'the other ids are deleted')

    t.equal(await put(store, 'keep/new', Buffer.from('created')), true, 'a new key under the prefix is created')
    t.equal(await code(put(store, 'keep/new', Buffer.from('again'))), 10913, 'and retained from then on')
    t.equal(await put(store, 'free/b', Buffer.from('x')), true)
    t.equal(await put(store, 'free/b', Buffer.from('y')), true, 'keys outside the prefix stay writable')
    t.equal((await store.copy('keep/a', 'free/c', source => ({ ...source, key: 'free/c', version: record('free/c', 0).version }), always)).status, 'copied', 'a retained record is a source like any')

    await store.setLockRules([{ ...forever('keep/'), enabled: false }])
    t.equal(await put(store, 'keep/a', Buffer.from('now')), true, 'a disabled rule retains nothing')
    t.same(await store.delete(['keep/a', 'keep/b']), { retained: [], removed: 2 })
    t.same(await bytesOf(store, 'keep/a'), null)
  })

  t.test(`${sut.name}: retention by age and by date runs out`, async t => {
    const store = await fresh(t)
    const now = Date.now()
    await put(store, 'old', Buffer.from('o'), always, uploadedAt('old', 1, now - 2 * DAY_S * 1000))
    await put(store, 'young', Buffer.from('y'), always, uploadedAt('young', 1, now))
    await store.setLockRules([{ id: 'day', enabled: true, condition: { type: 'Age', maxAgeSeconds: DAY_S } }])
    t.equal(await put(store, 'old', Buffer.from('o2')), true, 'uploaded two days ago: a day of retention ran out')
    t.equal(await code(put(store, 'young', Buffer.from('y2'))), 10913, 'uploaded now: retained')
    await store.setLockRules([{ id: 'past', enabled: true, condition: { type: 'Date', date: new Date(now - 1000).toISOString() } }])
    t.same((await store.delete(['young'])).retained, [], 'a date gone by retains nothing')
    await put(store, 'young', Buffer.from('y'))
    await store.setLockRules([{ id: 'future', enabled: true, condition: { type: 'Date', date: new Date(now + DAY_S * 1000).toISOString() } }])
    t.same((await store.delete(['young', 'old'])).retained, ['young', 'old'], 'until a date to come, whatever the age')
  })

  t.test(`${sut.name}: locks are judged at the instant a write gives (its options' now), not at the store's own time`, async t => {
    const store = await fresh(t)
    const HOUR = 3_600_000
    const real = Date.now()
    const upload = (key: string): StoredUpload => ({ uploadId: `upload-${key.replace('/', '-')}-0123456789abcdef`, key, created: 1000, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' })
    /** What a write answered, or the code it threw. */
    const outcome = async (promise: Promise<unknown>): Promise<unknown> => await promise.catch((err: { code?: unknown }) => err.code)
    /** Writes each of the four ways onto `prefix` + its key, judged at `now`: what each answered. */
    const writeAll = async (prefix: string, now: number): Promise<unknown[]> => {
      const staged = await store.stage(chunksOf(Buffer.from('new')), record(`${prefix}put`, 3).version)
      return [
        await outcome(store.commit(`${prefix}put`, uploadedAt(`${prefix}put`, 3, now), staged, ALWAYS, { now })),
        await outcome(store.copy('source', `${prefix}copy`, source => ({ ...source, key: `${prefix}copy`, version: record('c', 0).version, uploaded: now }), always, { now }).then(copy => copy.status)),
        await outcome(store.completeUpload(upload(`${prefix}complete`).uploadId, `${prefix}complete`, () => ({ object: uploadedAt(`${prefix}complete`, 4, now), partNumbers: [1] }), { now }).then(object => object?.key)),
        (await store.delete([`${prefix}delete`], { now })).retained
      ]
    }
    await put(store, 'source', Buffer.from('source'))
    for (const [prefix, uploaded] of [['ahead/', real], ['behind/', real - 2 * HOUR]] as const) {
      for (const key of ['put', 'copy', 'complete', 'delete']) await put(store, prefix + key, Buffer.from(key), always, uploadedAt(prefix + key, key.length, uploaded))
      await store.createUpload(`${prefix}complete`, upload(`${prefix}complete`))
      t.equal(await store.putPart(upload(`${prefix}complete`).uploadId, { partNumber: 1, etag: 'e1', size: 4 }, await store.stage(chunksOf(Buffer.from('part')))), true)
    }
    await store.setLockRules([{ id: 'hour', enabled: true, condition: { type: 'Age', maxAgeSeconds: 3600 } }])

    // Uploaded an hour and a half before the instant given: the hour of retention ran out then, though not by the store's time.
    t.same(await writeAll('ahead/', real + 90 * 60_000), [true, 'copied', 'ahead/complete', []], 'overwrite, copy onto, completion onto and delete land')
    t.equal(await store.head('ahead/delete'), null)
    t.equal((await store.head('ahead/put'))?.uploaded, real + 90 * 60_000)

    // Uploaded a minute before the instant given: retained, though its hour ran out by the store's time.
    const before = await Promise.all(['put', 'copy', 'complete', 'delete'].map(async key => await store.head(`behind/${key}`)))
    t.same(await writeAll('behind/', real - 2 * HOUR + 60_000), [10913, 10913, 10913, ['behind/delete']], 'each is refused')
    t.same(await Promise.all(['put', 'copy', 'complete', 'delete'].map(async key => await store.head(`behind/${key}`))), before, 'and every record stays as it was')
    t.not(await store.getUpload(upload('behind/complete').uploadId), null, 'the upload too')
  })

  t.test(`${sut.name}: a store with lock rules refuses retirement (10914), even empty`, async t => {
    const store = await fresh(t)
    await store.setLockRules([forever('x/')])
    t.equal(await code(store.retire()), 10914)
    t.equal(await put(store, 'k', Buffer.from('still writable')), true, 'and goes on taking writes')
    await store.setLockRules([])
    t.same((await store.delete(['k'])).retained, [])
    t.equal(await store.retire(), true)
    t.equal(await code(store.setLockRules([forever()])), 10006, 'a retired store takes no rules')
  })

  if (sut.supports.sharedHandles) {
    t.test(`${sut.name}: rules set through one handle bind the writes of another at once`, async t => {
      const dir = testdir(t)
      const store = await fresh(t, dir)
      const other = await fresh(t, dir)
      await put(other, 'k', Buffer.from('v'))
      t.equal(await put(other, 'k', Buffer.from('w')), true, 'the other handle has written (and seen no rules) before')
      await store.setLockRules([forever()])
      // ALWAYS (the engine's unconditional write, which a store may commit without judging the row it replaces) and a judged one.
      t.equal(await code(put(other, 'k', Buffer.from('x'), ALWAYS)), 10913, 'unconditional overwrite')
      t.equal(await code(put(other, 'k', Buffer.from('x'))), 10913, 'overwrite')
      t.same((await other.delete(['k'])).retained, ['k'], 'delete')
      t.same(await bytesOf(store, 'k'), Buffer.from('w'))
      await store.setLockRules([])
      t.equal(await put(other, 'k', Buffer.from('y')), true, 'cleared rules free it through the other handle too')
    })
  }

  t.test(`${sut.name}: no overwrite or delete in flight lands after a rule's commit`, async t => {
    const dir = testdir(t)
    const store = await fresh(t, dir)
    const handles = sut.supports.sharedHandles ? [store, await fresh(t, dir)] : [store]
    // `k` is only ever overwritten; `d` is written and deleted in turns (it may be absent when the rule lands).
    await put(store, 'k', Buffer.from('first'))
    let stop = false
    const outcomes = { written: 0, refused: 0 }
    const writer = async (handle: BucketStore, n: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const text = `writer ${n} write ${i}`
        try {
          if (n % 3 === 2 && i % 2 === 1) await handle.delete(['d'])
          else if (await put(handle, n % 3 === 2 ? 'd' : 'k', Buffer.from(text), n % 2 === 0 ? ALWAYS : always, uploadedAt('k', text.length, Date.now()))) outcomes.written++
        } catch (err) {
          if ((err as { code?: unknown }).code !== 10913) throw err
          outcomes.refused++
        }
        // A store whose writes settle in microtasks (memory) would never let the timers below run.
        await new Promise(resolve => setImmediate(resolve))
      }
    }
    const writers = Array.from({ length: 6 }, async (_, n) => await writer(handles[n % handles.length], n))
    // Let the writers get going, then set the rule while they run.
    while (outcomes.written < 20) await new Promise(resolve => setImmediate(resolve))
    await handles[handles.length - 1].setLockRules([forever()])
    const [kAtRule, dAtRule] = [await store.head('k'), await store.head('d')]
    // Every writer meets the rule before they stop.
    const deadline = Date.now() + 10_000
    while (outcomes.refused < 20 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 1))
    stop = true
    await Promise.all(writers)
    t.ok(outcomes.refused >= 20, 'writes after the rule were refused')
    t.same(await store.head('k'), kAtRule, 'the key is as it was when the rule committed')
    if (dAtRule !== null) t.same(await store.head('d'), dAtRule, 'the key written and deleted in turns too')
  })
}
