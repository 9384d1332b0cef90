/**
 * The conformance suite of the store port (src/bucket/port.ts): the same
 * tests run against every store, each store declaring what it supports
 * (like abstract-level's suite). Call `storeConformance(t, store)` from a
 * test file; every subtest works in its own directory and closes what it
 * opens. It checks the port's three guarantees (atomic conditional commit,
 * invisible staged bodies, pinned readers), lists, uploads, retirement and
 * the sweeper, against the port alone, with no engine in between.
 * store-copy.ts adds the tests of `copy`.
 */
import { Readable } from 'node:stream'
import type { Test } from 'tap'
import type { BucketStore, Precondition, StoredObject } from '../../src/bucket/port.js'
import { testdir } from '../testdir.js'
import { patternBytes } from './bucket.js'

export interface StoreUnderTest {
  name: string
  /** Opens the store of a bucket kept in `dir` (a fresh directory per subtest, unless a test reopens it). */
  open: (dir: string) => Promise<BucketStore>
  supports: {
    /** A second handle on the same bucket (as another process opens it) shares its records and its retirement. */
    sharedHandles: boolean
    /** Records and bytes survive `close` and a new `open`. */
    persistence: boolean
    /** The sweeper finds and removes bodies staged but never committed. */
    leftovers: boolean
  }
}

export const always: Precondition = () => true
export const absent: Precondition = current => current === null

export function record (key: string, size: number, etag = `etag-${key}-${size}`, version = `${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`.padEnd(32, '0').slice(0, 32)): StoredObject {
  return {
    key,
    version,
    size,
    etag,
    uploaded: 1_700_000_000_000,
    storageClass: 'Standard',
    httpMetadata: { contentType: 'text/plain' },
    customMetadata: { who: key },
    checksums: { md5: etag }
  }
}

export async function read (readable: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of readable) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks)
}

export function chunksOf (bytes: Uint8Array): AsyncIterable<Uint8Array> {
  return Readable.from([bytes.subarray(0, Math.floor(bytes.length / 2)), bytes.subarray(Math.floor(bytes.length / 2))])
}

/** Stages and commits `bytes` as `id`; the commit's answer. */
export async function put (store: BucketStore, id: string, bytes: Uint8Array, precondition: Precondition = always, object = record(id, bytes.length)): Promise<boolean> {
  const staged = await store.stage(chunksOf(bytes), object.version)
  return await store.commit(id, object, staged, precondition)
}

export async function bytesOf (store: BucketStore, id: string): Promise<Buffer | null> {
  const reader = await store.open(id)
  if (reader === null) return null
  return await read(reader.stream(0, reader.object.size))
}

export async function code (promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
    return 'resolved'
  } catch (err) {
    return (err as { code?: unknown }).code
  }
}

export function storeConformance (t: Test, sut: StoreUnderTest): void {
  async function fresh (tt: Test, dir = testdir(tt)): Promise<BucketStore> {
    const store = await sut.open(dir)
    tt.teardown(async () => { await store.close() })
    return store
  }

  t.test(`${sut.name}: a staged body is invisible until a commit names it`, async t => {
    const store = await fresh(t)
    const bytes = patternBytes(100_000, 1)
    const object = record('a', bytes.length)
    const staged = await store.stage(chunksOf(bytes), object.version)
    t.equal(staged.size, bytes.length)
    t.equal(await store.head('a'), null)
    t.same((await store.list({ prefix: '', limit: 10, withMetadata: false })).entries, [])
    t.equal(await store.commit('a', object, staged, always), true)
    t.same(await store.head('a'), object)
    t.same(await bytesOf(store, 'a'), Buffer.from(bytes))
    const reader = await store.open('a')
    t.same(await read(reader!.stream(70_000, 20)), Buffer.from(bytes.subarray(70_000, 70_020)), 'a range of the body')
  })

  t.test(`${sut.name}: overwrites move a key between small, large and empty bodies, and delete it`, async t => {
    const dir = testdir(t)
    const store = await fresh(t, dir)
    const other = sut.supports.sharedHandles ? await fresh(t, dir) : store
    // Sizes on both sides of any threshold under which a store keeps a body with its record.
    const sizes = [1024, 300 * 1024, 0, 16 * 1024, 16 * 1024 + 1, 5, 128 * 1024, 32 * 1024, 64 * 1024, 17]
    for (const [n, size] of sizes.entries()) {
      const bytes = Buffer.from(patternBytes(size, n + 10))
      t.equal(await put(store, 'k', bytes), true)
      t.same(await bytesOf(store, 'k'), bytes, `${size} bytes read back`)
      t.same(await bytesOf(other, 'k'), bytes, `${size} bytes read back through another handle`)
      const reader = await other.open('k')
      const from = Math.floor(size / 3)
      t.same(await read(reader!.stream(from, Math.min(7, size - from))), bytes.subarray(from, from + Math.min(7, size - from)), `a range of ${size} bytes`)
    }
    const last = await other.open('k') // pinned before the delete
    await store.delete(['k'])
    t.equal(await store.head('k'), null)
    t.equal(await other.open('k'), null)
    t.same(await read(last!.stream(0, 17)), Buffer.from(patternBytes(17, sizes.length + 9)), 'a reader opened before the delete still reads')
    if (sut.supports.leftovers) t.equal((await store.sweep(0, Date.now() + 60_000)).removedLeftovers, 0, 'no body left behind by the overwrites')
  })

  t.test(`${sut.name}: openNow, where a store has it, answers as open does, with the bytes, or leaves it to open`, async t => {
    const dir = testdir(t)
    const store = await fresh(t, dir)
    const other = sut.supports.sharedHandles ? await fresh(t, dir) : store
    if (store.openNow === undefined) {
      t.pass('no openNow')
      return
    }
    t.equal(store.openNow('none'), null, 'no object: null')
    for (const [n, size] of [1024, 0, 16 * 1024 + 1, 64 * 1024, 300 * 1024].entries()) {
      const bytes = Buffer.from(patternBytes(size, n + 30))
      t.equal(await put(other, 'k', bytes), true)
      const now = store.openNow('k')
      // What openNow is for: a small body is answered at once; a larger one may be left to open.
      if (size <= 1024) t.not(now, undefined, `${size} bytes: answered at once`)
      if (now === undefined) continue
      t.same(now?.object, await store.head('k'), `${size} bytes: the current record, written through another handle`)
      t.same(now?.bytes, bytes, `${size} bytes: held, whole`)
      t.same(await read(now!.stream(0, size)), bytes, `${size} bytes: and streamed`)
    }
    await other.delete(['k'])
    t.equal(store.openNow('k'), null, 'deleted: null')
  })

  t.test(`${sut.name}: the precondition sees the current record; a refused commit changes nothing`, async t => {
    const store = await fresh(t)
    // A store may judge a guess first and judge again on the row as it is: the last judgement counts.
    let seen: StoredObject | null | undefined
    t.equal(await put(store, 'k', Buffer.from('first'), current => { seen = current; return current === null }), true)
    t.equal(seen, null)
    const first = await store.head('k')
    t.equal(await put(store, 'k', Buffer.from('second'), current => { seen = current; return current?.etag === 'nope' }), false)
    t.same(seen, first)
    t.same(await store.head('k'), first)
    t.same(await bytesOf(store, 'k'), Buffer.from('first'))
    t.equal(await put(store, 'k', Buffer.from('third'), current => current?.etag === first?.etag), true)
    t.same(await bytesOf(store, 'k'), Buffer.from('third'))
  })

  t.test(`${sut.name}: of racing create-only commits exactly one wins`, async t => {
    const store = await fresh(t)
    const outcomes = await Promise.all(Array.from({ length: 12 }, async (_, i) => await put(store, 'race', Buffer.from(`writer ${i}`), absent)))
    t.equal(outcomes.filter(Boolean).length, 1)
    const winner = outcomes.indexOf(true)
    t.same(await bytesOf(store, 'race'), Buffer.from(`writer ${winner}`))
  })

  t.test(`${sut.name}: an opened reader keeps its bytes across an overwrite and a delete`, async t => {
    const store = await fresh(t)
    for (const [id, size] of [['small', 1000], ['large', 300_000]] as const) {
      const before = patternBytes(size, 2)
      await put(store, id, before)
      const reader = await store.open(id)
      await put(store, id, patternBytes(size, 3))
      await store.delete([id])
      t.equal(await store.head(id), null)
      t.same(await read(reader!.stream(0, size)), Buffer.from(before), `${id}: the opened version`)
    }
  })

  t.test(`${sut.name}: delete removes records and ignores unknown ids`, async t => {
    const store = await fresh(t)
    await put(store, 'x', Buffer.from('x'))
    await put(store, 'y', Buffer.from('y'))
    await store.delete(['x', 'never'])
    t.equal(await store.head('x'), null)
    t.equal(await store.open('x'), null)
    t.same(await bytesOf(store, 'y'), Buffer.from('y'))
  })

  // The engine lets these through to lookups (keys.ts); a store that cannot hold them answers "absent", never an error.
  t.test(`${sut.name}: lookups by ids holding U+0000 answer absent`, async t => {
    const store = await fresh(t)
    await put(store, 'a', Buffer.from('a'))
    const id = 'a\u0000b'
    t.equal(await store.head(id), null)
    t.equal(await store.open(id), null)
    await store.delete([id, 'a\u0000'])
    t.same(await bytesOf(store, 'a'), Buffer.from('a'), 'the neighbour is untouched')
    const listed = await store.list({ prefix: 'a\u0000', delimiter: '\u0000', limit: 10, withMetadata: false })
    t.same(listed.entries, [])
    const after = await store.list({ prefix: '', delimiter: '\u0000', after: Buffer.from(id), limit: 10, withMetadata: false })
    t.same(after.entries, [])
    t.same((await store.listUploads({ prefix: 'a\u0000', limit: 10 })), [])
  })

  t.test(`${sut.name}: list pages in UTF-8 byte order, with prefix, delimiter, after and limit`, async t => {
    const store = await fresh(t)
    const ids = ['😀', 'z', 'a/c', 'é', 'a', 'b', 'a/b', 'a/b/c']
    for (const id of ids) await put(store, id, Buffer.from(id))
    const sorted = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
    const all = await store.list({ prefix: '', limit: 100, withMetadata: true })
    t.same(all.entries.map(e => 'id' in e ? e.id : e.prefix), sorted)
    t.equal(all.truncated, false)
    const first = all.entries[0] as { object: StoredObject }
    t.same(first.object.customMetadata, { who: 'a' }, 'metadata when asked for')
    const bare = await store.list({ prefix: '', limit: 100, withMetadata: false })
    t.same((bare.entries[0] as { object: StoredObject }).object.customMetadata, {}, 'no metadata otherwise')
    t.equal((bare.entries[0] as { object: StoredObject }).object.etag, first.object.etag)
    const delimited = await store.list({ prefix: '', delimiter: '/', limit: 100, withMetadata: false })
    t.same(delimited.entries.map(e => 'id' in e ? e.id : `prefix ${e.prefix}`), ['a', 'prefix a/', 'b', 'z', 'é', '😀'])
    const prefixed = await store.list({ prefix: 'a/', delimiter: '/', limit: 100, withMetadata: false })
    t.same(prefixed.entries.map(e => 'id' in e ? e.id : `prefix ${e.prefix}`), ['a/b', 'prefix a/b/', 'a/c'])
    const page = await store.list({ prefix: '', limit: 2, withMetadata: false })
    t.same(page.entries.map(e => 'id' in e ? e.id : e.prefix), sorted.slice(0, 2))
    t.equal(page.truncated, true)
    const next = await store.list({ prefix: '', limit: 100, after: Buffer.from(sorted[1]), withMetadata: false })
    t.same(next.entries.map(e => 'id' in e ? e.id : e.prefix), sorted.slice(2))
  })

  t.test(`${sut.name}: uploads keep parts, complete into an object, and go away`, async t => {
    const store = await fresh(t)
    const upload = { uploadId: 'upload-0123456789abcdef', key: 'big', created: 1000, httpMetadata: {}, customMetadata: { a: 'b' }, storageClass: 'Standard' as const }
    await store.createUpload('big', upload)
    t.same(await store.getUpload(upload.uploadId), upload)
    t.equal(await store.getUpload('upload-ffffffffffffffff'), null)
    const one = patternBytes(70_000, 4)
    const two = patternBytes(5000, 5)
    const stagePart = async (bytes: Uint8Array): Promise<Awaited<ReturnType<BucketStore['stage']>>> => await store.stage(chunksOf(bytes))
    t.equal(await store.putPart(upload.uploadId, { partNumber: 1, etag: 'old', size: 3, uploaded: 2000 }, await stagePart(Buffer.from('old'))), true)
    t.equal(await store.putPart(upload.uploadId, { partNumber: 1, etag: 'e1', size: one.length, uploaded: 3000 }, await stagePart(one)), true, 'a part uploaded again replaces the first')
    t.equal(await store.putPart(upload.uploadId, { partNumber: 2, etag: 'e2', size: two.length, uploaded: 2500, checksums: { crc32: '0a1b2c3d' } }, await stagePart(two)), true)
    const kept = [{ partNumber: 1, etag: 'e1', size: one.length, uploaded: 3000 }, { partNumber: 2, etag: 'e2', size: two.length, uploaded: 2500, checksums: { crc32: '0a1b2c3d' } }]
    t.same(await store.listParts(upload.uploadId, 0, 10), kept, 'a part keeps its checksums and its upload time (the replacement\'s)')
    t.same(await store.listParts(upload.uploadId, 1, 10), kept.slice(1), 'after a part number')
    t.equal(await store.putPart('upload-ffffffffffffffff', { partNumber: 1, etag: 'x', size: 1 }, await stagePart(Buffer.from('x'))), false, 'no such upload')

    t.equal(await code(store.completeUpload(upload.uploadId, 'big', () => { throw Object.assign(new Error('refused'), { code: 10025 }) })), 10025)
    t.same(await store.getUpload(upload.uploadId), upload, 'a refused completion keeps the upload')

    let given: unknown
    // The checksums record as the engine writes it for a completed upload: kept as it is.
    const object = { ...record('big', one.length + two.length, 'multi-2'), checksums: { crc64nvme: '0123456789abcdef', multipart: { parts: 2, partSize: one.length, composite: { algorithm: 'crc32' as const, hex: 'deadbeef' } } } }
    const completed = await store.completeUpload(upload.uploadId, 'big', (u, parts) => {
      given = { upload: u, parts: [...parts.values()] }
      return { object, partNumbers: [1, 2] }
    })
    t.same(completed, object)
    t.same(given, { upload, parts: kept })
    t.same(await store.head('big'), object)
    t.same(await bytesOf(store, 'big'), Buffer.concat([one, two]))
    const reader = await store.open('big')
    t.same(await read(reader!.stream(69_990, 20)), Buffer.concat([one, two]).subarray(69_990, 70_010), 'a range across parts')
    t.equal(await store.getUpload(upload.uploadId), null, 'completed uploads are gone')
    t.equal(await store.completeUpload(upload.uploadId, 'big', () => ({ object, partNumbers: [] })), null)
    // An abort that comes after the completion removed nothing: it says so (the engine answers it NoSuchUpload), and the object stays whole.
    t.equal(await store.abortUpload(upload.uploadId), false, 'aborting a completed upload removes nothing')
    t.same(await bytesOf(store, 'big'), Buffer.concat([one, two]), 'and leaves the object whole')

    const other = { ...upload, uploadId: 'upload-abcdefabcdefabcd' }
    await store.createUpload('big', other)
    t.equal(await store.abortUpload(other.uploadId), true, 'an abort removes the upload')
    t.equal(await store.abortUpload(other.uploadId), false, 'a second finds none')
    t.equal(await store.abortUpload('upload-ffffffffffffffff'), false, 'nor an unknown id')
    t.equal(await store.getUpload(other.uploadId), null)
    t.equal(await store.putPart(other.uploadId, { partNumber: 1, etag: 'x', size: 1 }, await stagePart(Buffer.from('x'))), false)
  })

  t.test(`${sut.name}: a part kept without its upload time lists with its upload's creation time`, async t => {
    const store = await fresh(t)
    const upload = { uploadId: 'upload-0123456789abcdef', key: 'k', created: 1234, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
    await store.createUpload('k', upload)
    t.equal(await store.putPart(upload.uploadId, { partNumber: 1, etag: 'e1', size: 1 }, await store.stage(chunksOf(Buffer.from('x')))), true)
    t.same(await store.listParts(upload.uploadId, 0, 10), [{ partNumber: 1, etag: 'e1', size: 1, uploaded: 1234 }])
  })

  t.test(`${sut.name}: retire is refused while an object is stored, then every write fails with 10006`, async t => {
    const store = await fresh(t)
    await put(store, 'k', Buffer.from('v'))
    t.equal(await store.retire(), false)
    await put(store, 'k', Buffer.from('again'))
    await store.delete(['k'])
    const upload = { uploadId: 'upload-0123456789abcdef', key: 'u', created: 1000, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
    await store.createUpload('u', upload)
    t.equal(await store.retire(), true, 'uploads in progress do not count')
    t.equal(await code(put(store, 'k', Buffer.from('late'))), 10006, 'commit')
    t.equal(await code(store.delete(['k'])), 10006, 'delete')
    t.equal(await code(store.createUpload('u2', { ...upload, uploadId: 'upload-ffffffffffffffff' })), 10006, 'createUpload')
    t.equal(await code(store.putPart(upload.uploadId, { partNumber: 1, etag: 'x', size: 1 }, await store.stage(chunksOf(Buffer.from('x'))))), 10006, 'putPart')
    t.equal(await code(store.completeUpload(upload.uploadId, 'u', () => ({ object: record('u', 0), partNumbers: [] }))), 10006, 'completeUpload')
    t.equal(await code(store.abortUpload(upload.uploadId)), 10006, 'abortUpload')
    t.equal(await code(store.retire()), 10006, 'retire')
    t.equal(await store.head('k'), null, 'reads still answer')
    t.same((await store.list({ prefix: '', limit: 10, withMetadata: false })).entries, [])
  })

  t.test(`${sut.name}: the sweeper aborts uploads created before the given time`, async t => {
    const store = await fresh(t)
    const base = { key: 'u', httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
    await store.createUpload('u', { ...base, uploadId: 'upload-old0000000000000', created: 1000 })
    await store.createUpload('u', { ...base, uploadId: 'upload-new0000000000000', created: 5000 })
    const report = await store.sweep(2000, 0)
    t.equal(report.abortedUploads, 1)
    t.equal(await store.getUpload('upload-old0000000000000'), null)
    t.not(await store.getUpload('upload-new0000000000000'), null)
  })

  if (sut.supports.leftovers) {
    t.test(`${sut.name}: the sweeper removes bodies staged but never committed, once old enough`, async t => {
      const store = await fresh(t)
      // Larger than a body a store may keep in its catalog row: a put's body left behind as a file.
      await store.stage(chunksOf(Buffer.from(patternBytes(256 * 1024, 3))), 'f'.repeat(32))
      await store.stage(chunksOf(Buffer.from('abandoned part')))
      await put(store, 'kept', Buffer.from('kept'))
      t.equal((await store.sweep(0, 0)).removedLeftovers, 0, 'nothing is old enough yet')
      t.equal((await store.sweep(0, Date.now() + 60_000)).removedLeftovers, 2)
      t.same(await bytesOf(store, 'kept'), Buffer.from('kept'), 'live bodies stay')
    })
  }

  if (sut.supports.sharedHandles) {
    t.test(`${sut.name}: two handles on one bucket share records and retirement`, async t => {
      const dir = testdir(t)
      const one = await fresh(t, dir)
      const two = await fresh(t, dir)
      await put(one, 'k', Buffer.from('from one'))
      t.same(await bytesOf(two, 'k'), Buffer.from('from one'))
      t.equal(await put(two, 'k', Buffer.from('from two'), absent), false, 'the precondition sees the other handle\'s record')
      await two.delete(['k'])
      t.equal(await one.head('k'), null)
      t.equal(await one.retire(), true)
      t.equal(await code(put(two, 'k', Buffer.from('late'))), 10006, 'the other handle is retired too')
    })
  }

  if (sut.supports.persistence) {
    t.test(`${sut.name}: records and bytes survive close and open`, async t => {
      const dir = testdir(t)
      const first = await sut.open(dir)
      await put(first, 'k', patternBytes(100_000, 6))
      const object = await first.head('k')
      await first.close()
      const again = await fresh(t, dir)
      t.same(await again.head('k'), object)
      t.same(await bytesOf(again, 'k'), Buffer.from(patternBytes(100_000, 6)))
    })
  }
}
