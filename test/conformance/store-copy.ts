/**
 * The store port's `copy`, in the conformance suite of every store: the
 * copy's record and bytes, the source's and the destination's conditions,
 * copies of multipart objects and onto the source itself, independence of
 * the copy from later writes to the source, and atomicity against racing
 * deletes and overwrites of the source and racing copies to one key.
 */
import type { Test } from 'tap'
import type { BucketStore, CopyBuilder, StoredObject } from '../../src/bucket/port.js'
import { testdir } from '../testdir.js'
import { patternBytes } from './bucket.js'
import { absent, always, bytesOf, chunksOf, code, put, read, record, type StoreUnderTest } from './store.js'

/** A copy of whatever the source is, under a fresh version. */
function copyOf (key: string, change: Partial<StoredObject> = {}): CopyBuilder {
  return source => ({ ...source, key, version: record(key, 0).version, uploaded: source.uploaded + 1, ...change })
}

export function copyConformance (t: Test, sut: StoreUnderTest): void {
  async function fresh (tt: Test): Promise<BucketStore> {
    const store = await sut.open(testdir(tt))
    tt.teardown(async () => { await store.close() })
    return store
  }

  t.test(`${sut.name}: copy makes the builder's record over the source's bytes`, async t => {
    const store = await fresh(t)
    const bytes = patternBytes(200_000, 7)
    await put(store, 'src', bytes)
    const source = await store.head('src')
    let seen: StoredObject | undefined
    const outcome = await store.copy('src', 'dst', s => { seen = s; return copyOf('dst', { customMetadata: { new: 'yes' } })(s) }, always)
    t.same(seen, source, 'the builder sees the source record')
    t.equal(outcome.status, 'copied')
    const copied = (outcome as { object: StoredObject }).object
    t.same(await store.head('dst'), copied)
    t.same(copied.customMetadata, { new: 'yes' })
    t.equal(copied.etag, source?.etag)
    t.same(await bytesOf(store, 'dst'), Buffer.from(bytes))
    const reader = await store.open('dst')
    t.same(await read(reader!.stream(150_000, 10)), Buffer.from(bytes.subarray(150_000, 150_010)), 'a range of the copy')
    t.same(await store.head('src'), source, 'the source is unchanged')
    const listed = await store.list({ prefix: '', limit: 10, withMetadata: false })
    t.same(listed.entries.map(e => 'id' in e ? e.id : e.prefix), ['dst', 'src'])
  })

  t.test(`${sut.name}: copy answers no-source, source-refused and refused, changing nothing`, async t => {
    const store = await fresh(t)
    t.same(await store.copy('missing', 'dst', copyOf('dst'), always), { status: 'no-source' })
    await put(store, 'src', Buffer.from('source'))
    await put(store, 'dst', Buffer.from('destination'))
    const source = await store.head('src')
    const before = await store.head('dst')
    t.same(await store.copy('src', 'dst', () => null, always), { status: 'source-refused', source })
    const judged: Array<StoredObject | null> = []
    t.same(await store.copy('src', 'dst', copyOf('dst'), current => { judged.push(current); return current === null }), { status: 'refused' })
    t.same(judged, [before], 'the precondition sees the destination')
    t.same(await store.head('dst'), before)
    t.same(await bytesOf(store, 'dst'), Buffer.from('destination'))
    t.same(await store.copy('src', 'new', copyOf('new'), absent).then(o => o.status), 'copied', 'create-only onto a free key')
    t.same(await bytesOf(store, 'new'), Buffer.from('source'))
  })

  t.test(`${sut.name}: a copy onto its source replaces the record and keeps the bytes`, async t => {
    const store = await fresh(t)
    const bytes = patternBytes(50_000, 8)
    await put(store, 'self', bytes)
    const outcome = await store.copy('self', 'self', copyOf('self', { httpMetadata: { contentType: 'image/png' } }), always)
    t.equal(outcome.status, 'copied')
    t.same((await store.head('self'))?.httpMetadata, { contentType: 'image/png' })
    t.same(await bytesOf(store, 'self'), Buffer.from(bytes))
  })

  t.test(`${sut.name}: a copy of a multipart object reads the same, across parts`, async t => {
    const store = await fresh(t)
    const upload = { uploadId: 'upload-0123456789abcdef', key: 'multi', created: 1000, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
    await store.createUpload('multi', upload)
    const one = patternBytes(70_000, 9)
    const two = patternBytes(3000, 10)
    await store.putPart(upload.uploadId, { partNumber: 1, etag: 'e1', size: one.length }, await store.stage(chunksOf(one)))
    await store.putPart(upload.uploadId, { partNumber: 2, etag: 'e2', size: two.length }, await store.stage(chunksOf(two)))
    await store.completeUpload(upload.uploadId, 'multi', () => ({ object: record('multi', one.length + two.length, 'multi-2'), partNumbers: [1, 2] }))
    t.equal((await store.copy('multi', 'copy', copyOf('copy'), always)).status, 'copied')
    await store.delete(['multi'])
    t.same(await bytesOf(store, 'copy'), Buffer.concat([one, two]))
    const reader = await store.open('copy')
    t.same(await read(reader!.stream(69_995, 10)), Buffer.concat([one, two]).subarray(69_995, 70_005))
  })

  t.test(`${sut.name}: a copy keeps its bytes when the source is overwritten or deleted, and the other way round`, async t => {
    const store = await fresh(t)
    const first = patternBytes(100_000, 11)
    await put(store, 'a', first)
    await store.copy('a', 'b', copyOf('b'), always)
    await store.copy('a', 'c', copyOf('c'), always)
    await put(store, 'a', Buffer.from('second'))
    t.same(await bytesOf(store, 'b'), Buffer.from(first), 'after an overwrite of the source')
    await store.delete(['a'])
    t.same(await bytesOf(store, 'b'), Buffer.from(first), 'after a delete of the source')
    await store.delete(['b'])
    t.same(await bytesOf(store, 'c'), Buffer.from(first), 'after a delete of another copy')
  })

  t.test(`${sut.name}: a copy racing a delete of its source copies it whole or finds no source`, async t => {
    const store = await fresh(t)
    const counts = { copied: 0, 'no-source': 0 }
    for (let round = 0; round < 20; round++) {
      const bytes = patternBytes(20_000 + round, round)
      await put(store, 'src', bytes)
      const later = async (): Promise<void> => {
        for (let turn = 0; turn < round % 8; turn++) await new Promise(resolve => setImmediate(resolve))
        await store.delete(['src'])
      }
      const [outcome] = await Promise.all([store.copy('src', `dst${round}`, copyOf(`dst${round}`), always), later()])
      t.ok(outcome.status === 'copied' || outcome.status === 'no-source', outcome.status)
      counts[outcome.status as keyof typeof counts]++
      const got = await bytesOf(store, `dst${round}`)
      if (outcome.status === 'copied') t.same(got, Buffer.from(bytes), `round ${round}: the copy is whole`)
      else t.equal(got, null, `round ${round}: no copy`)
    }
    t.equal(await store.head('src'), null)
    t.comment(`${counts.copied} copied, ${counts['no-source']} found no source`)
  })

  t.test(`${sut.name}: a copy racing overwrites of its source copies one version whole`, async t => {
    const store = await fresh(t)
    const versions = Array.from({ length: 6 }, (_, i) => Buffer.from(patternBytes(30_000, 20 + i)))
    await put(store, 'src', versions[0], always, record('src', versions[0].length, 'v0'))
    for (let round = 0; round < 5; round++) {
      const next = versions[round + 1]
      const [outcome] = await Promise.all([
        store.copy('src', 'dst', copyOf('dst'), always),
        put(store, 'src', next, always, record('src', next.length, `v${round + 1}`))
      ])
      t.equal(outcome.status, 'copied')
      const copied = (outcome as { object: StoredObject }).object
      const index = Number(copied.etag.slice(1))
      t.same(await bytesOf(store, 'dst'), versions[index], `round ${round}: bytes of the version the record names (v${index})`)
    }
  })

  t.test(`${sut.name}: of racing create-only copies to one key exactly one wins`, async t => {
    const store = await fresh(t)
    for (let i = 0; i < 6; i++) await put(store, `s${i}`, Buffer.from(`source ${i}`))
    const outcomes = await Promise.all(Array.from({ length: 6 }, async (_, i) => await store.copy(`s${i}`, 'one', copyOf('one'), absent)))
    t.equal(outcomes.filter(o => o.status === 'copied').length, 1)
    t.equal(outcomes.filter(o => o.status === 'refused').length, 5)
    const winner = outcomes.findIndex(o => o.status === 'copied')
    t.same(await bytesOf(store, 'one'), Buffer.from(`source ${winner}`))
  })

  t.test(`${sut.name}: copy into a retired store fails with 10006`, async t => {
    const store = await fresh(t)
    await put(store, 'k', Buffer.from('v'))
    await store.delete(['k'])
    t.equal(await store.retire(), true)
    t.equal(await code(store.copy('k', 'j', copyOf('j'), always)), 10006)
  })

  if (sut.supports.leftovers) {
    t.test(`${sut.name}: copies leave no leftover, and the sweeper keeps every copy's bytes`, async t => {
      const store = await fresh(t)
      await put(store, 'a', patternBytes(10_000, 30))
      await store.copy('a', 'b', copyOf('b'), always)
      await store.copy('a', 'b', copyOf('b'), () => false)
      await store.copy('a', 'a', copyOf('a'), always)
      t.equal((await store.sweep(0, Date.now() + 60_000)).removedLeftovers, 0)
      t.same(await bytesOf(store, 'a'), Buffer.from(patternBytes(10_000, 30)))
      t.same(await bytesOf(store, 'b'), Buffer.from(patternBytes(10_000, 30)))
    })
  }
}
