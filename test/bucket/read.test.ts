/**
 * The engine's read decision (`bucket.read`), which every door translates:
 * a table of requests and their outcomes, run on the memory and the
 * filesystem store.
 */
import type { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import { BucketEngine, openBucket, type Bucket, type BucketReadOptions, type BucketReadOutcome } from '../../src/index.js'
import { MemoryStore } from '../../src/stores/memory/store.js'
import { testdir } from '../testdir.js'
import { patternBytes } from '../conformance/bucket.js'

async function bodyOf (outcome: BucketReadOutcome): Promise<Buffer | null> {
  if (!('body' in outcome) || outcome.body === null) return null
  if (Buffer.isBuffer(outcome.body)) return outcome.body
  const chunks: Buffer[] = []
  for await (const chunk of outcome.body as Readable) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks)
}

const stores: Array<[string, (t: Test) => Promise<Bucket>]> = [
  ['memory', async () => new BucketEngine(new MemoryStore())],
  ['fs', async t => await openBucket(testdir(t), { fsync: false })]
]

for (const [name, open] of stores) {
  t.test(`${name}: read outcomes`, async t => {
    const bucket = await open(t)
    t.teardown(async () => { await bucket.close() })
    const ten = Buffer.from('0123456789')
    const stored = await bucket.put('ten', ten)
    await bucket.put('empty', '')
    const large = Buffer.from(patternBytes(200_000, 7))
    await bucket.put('large', large)
    const etag = stored!.httpEtag
    const future = new Date(Date.now() + 3600_000).toUTCString()
    const lastModified = stored!.uploaded.toUTCString()

    const cases: Array<[string, string, BucketReadOptions, string, Buffer | null, { offset: number, length: number } | null]> = [
      ['missing', 'nope', {}, 'not-found', null, null],
      ['whole', 'ten', {}, 'found', ten, null],
      ['range object', 'ten', { range: { offset: 2, length: 3 } }, 'partial', Buffer.from('234'), { offset: 2, length: 3 }],
      ['range header', 'ten', { range: 'bytes=2-4' }, 'partial', Buffer.from('234'), { offset: 2, length: 3 }],
      ['suffix header', 'ten', { range: 'bytes=-3' }, 'partial', Buffer.from('789'), { offset: 7, length: 3 }],
      ['end past the end is clamped', 'ten', { range: 'bytes=5-999999' }, 'partial', Buffer.from('56789'), { offset: 5, length: 5 }],
      ['a huge end is clamped', 'ten', { range: `bytes=8-${'9'.repeat(300)}` }, 'partial', Buffer.from('89'), { offset: 8, length: 2 }],
      ['a huge offset is unsatisfiable', 'ten', { range: `bytes=${'9'.repeat(300)}-` }, 'range-not-satisfiable', null, null],
      ['an offset past the end is unsatisfiable', 'ten', { range: 'bytes=10-' }, 'range-not-satisfiable', null, null],
      ['an object range past the end is unsatisfiable', 'ten', { range: { offset: 10 } }, 'range-not-satisfiable', null, null],
      ['any range of an empty object is unsatisfiable', 'empty', { range: 'bytes=0-' }, 'range-not-satisfiable', null, null],
      ['several ranges are ignored', 'ten', { range: 'bytes=0-1,4-5' }, 'found', ten, null],
      ['another unit is ignored', 'ten', { range: 'items=0-1' }, 'found', ten, null],
      ['If-Match fails', 'ten', { onlyIf: new Headers({ 'if-match': '"other"' }) }, 'precondition-failed', null, null],
      ['412 comes before 416', 'ten', { onlyIf: { etagMatches: 'other' }, range: 'bytes=50-' }, 'precondition-failed', null, null],
      ['If-None-Match matches', 'ten', { onlyIf: new Headers({ 'if-none-match': etag }) }, 'not-modified', null, null],
      ['304 comes before 416', 'ten', { onlyIf: new Headers({ 'if-none-match': etag }), range: 'bytes=50-' }, 'not-modified', null, null],
      ['412 comes before 304', 'ten', { onlyIf: new Headers({ 'if-match': '"other"', 'if-none-match': etag }) }, 'precondition-failed', null, null],
      ['not newer than If-Modified-Since', 'ten', { onlyIf: new Headers({ 'if-modified-since': future }) }, 'not-modified', null, null],
      ['If-Match holds', 'ten', { onlyIf: new Headers({ 'if-match': etag }), range: 'bytes=0-0' }, 'partial', Buffer.from('0'), { offset: 0, length: 1 }],
      ['a large body', 'large', { range: { offset: 100_000 } }, 'partial', large.subarray(100_000), { offset: 100_000, length: 100_000 }],
      ['HEAD: no body', 'ten', { body: false }, 'found', null, null],
      ['HEAD: a range without a body', 'ten', { body: false, range: 'bytes=1-2' }, 'partial', null, { offset: 1, length: 2 }],
      ['If-Range: the ETag holds', 'ten', { range: 'bytes=2-4', ifRange: etag }, 'partial', Buffer.from('234'), { offset: 2, length: 3 }],
      ['If-Range: even the Last-Modified never holds (two versions of one second share it)', 'ten', { range: 'bytes=2-4', ifRange: lastModified }, 'found', ten, null],
      ['If-Range: another ETag answers the whole', 'ten', { range: 'bytes=2-4', ifRange: '"other"' }, 'found', ten, null],
      ['If-Range: a weak ETag never holds', 'ten', { range: 'bytes=2-4', ifRange: `W/${etag}` }, 'found', ten, null],
      ['If-Range: neither form answers the whole', 'ten', { range: 'bytes=2-4', ifRange: 'yesterday' }, 'found', ten, null],
      ['If-Range: not unsatisfiable when it fails', 'ten', { range: 'bytes=50-', ifRange: '"other"' }, 'found', ten, null],
      ['If-Range without a range: the whole', 'ten', { ifRange: etag }, 'found', ten, null]
    ]
    for (const [label, key, options, status, bytes, range] of cases) {
      const outcome = await bucket.read(key, options)
      t.equal(outcome.status, status, `${label}: ${status}`)
      t.same(await bodyOf(outcome), bytes, `${label}: body`)
      if ('range' in outcome) t.same(outcome.range, range, `${label}: range`)
      if ('object' in outcome) t.equal(outcome.object.key, key, `${label}: the object's values come along`)
      if (outcome.status === 'range-not-satisfiable') t.equal(outcome.object.size, key === 'empty' ? 0 : 10, `${label}: the size for Content-Range`)
      if (outcome.status === 'precondition-failed' || outcome.status === 'not-modified') t.equal(outcome.object.httpEtag, etag)
    }
    await t.rejects(bucket.read('ten', { range: { offset: -1 } }), RangeError, 'a bad range object is an argument error')
    await t.rejects(bucket.read('', {}), { code: 10020 }, 'keys are checked')

    // readNow decides the same at once wherever the store holds the object (a small body, read with it); else it leaves it to read.
    for (const [label, key, options] of cases) {
      const later = await bucket.read(key, options)
      const now = bucket.readNow(key, options)
      if (key === 'large' || options.body === false) {
        t.equal(now, undefined, `${label}: readNow leaves it to read`)
        continue
      }
      if (now === undefined) {
        t.fail(`${label}: readNow decided nothing`)
        continue
      }
      t.equal(now.status, later.status, `${label}: readNow: ${later.status}`)
      t.same(await bodyOf(now), await bodyOf(later), `${label}: readNow: body`)
      if ('range' in later) t.same('range' in now ? now.range : undefined, later.range, `${label}: readNow: range`)
      if ('object' in later) t.same('object' in now ? now.object : undefined, later.object, `${label}: readNow: the object's values`)
    }
    t.throws(() => bucket.readNow('ten', { range: { offset: -1 } }), RangeError, 'readNow: a bad range object is an argument error')
    t.throws(() => bucket.readNow('', {}), { code: 10020 }, 'readNow: keys are checked')
    t.equal(bucket.readNow('ten', { partNumber: 1 }), undefined, 'readNow: a part is read\'s')
    t.equal(bucket.readNow('ten', { ssecKey: Buffer.alloc(32) }), undefined, 'readNow: an SSE-C key is read\'s')
  })
}

for (const [name, open] of stores) {
  t.test(`${name}: part 1 of an empty multipart object (its one part empty) is a whole read, as of an empty object put whole`, async t => {
    const bucket = await open(t)
    t.teardown(async () => { await bucket.close() })
    const upload = await bucket.createMultipartUpload('empty-parts')
    const part = await upload.uploadPart(1, '')
    await upload.complete([part])
    await bucket.put('empty-put', '')
    for (const key of ['empty-parts', 'empty-put']) {
      for (const body of [true, false]) {
        const outcome = await bucket.read(key, { partNumber: 1, body })
        t.equal(outcome.status, 'found', `${key}, body ${String(body)}: found, not partial`)
        if ('range' in outcome) t.equal(outcome.range, null, `${key}: no range (no Content-Range of bytes 0--1)`)
      }
      t.equal((await bucket.read(key, { partNumber: 2 })).status, 'range-not-satisfiable', `${key}: part 2 is past the end`)
    }
  })
}

t.test('a multipart object without its part layout (completed by an older version) is not read by part, and its bytes are released', async t => {
  const store = new MemoryStore()
  const bucket = new BucketEngine(store)
  t.teardown(async () => { await bucket.close() })
  const staged = await store.stage((async function * () { yield Buffer.from('abcdef') })())
  const record = {
    key: 'old', version: 'v1', size: 6, etag: '0123456789abcdef0123456789abcdef-2', uploaded: 0, storageClass: 'Standard' as const,
    httpMetadata: {}, customMetadata: {}, checksums: {}
  }
  t.ok(await store.commit('old', record, staged, () => true))
  let closed = 0
  const open = store.open.bind(store)
  store.open = async id => {
    const reader = await open(id)
    if (reader === null) return null
    return { object: reader.object, bytes: reader.bytes, stream: (o, l) => reader.stream(o, l), close: async () => { closed++; await reader.close() } }
  }
  await t.rejects(bucket.read('old', { partNumber: 1 }), RangeError, 'an argument error saying so')
  t.equal(closed, 1, 'the opened reader was closed')
  t.equal((await bucket.read('old')).status, 'found', 'a whole read still works')
})

t.test('fs: a multipart object stored without its part layout is read by part from the layout of its part bodies', async t => {
  const dir = testdir(t)
  const first = await openBucket(dir, { fsync: false, minPartSize: 5 })
  const upload = await first.createMultipartUpload('old')
  const data = [patternBytes(9, 1), patternBytes(9, 2), patternBytes(4, 3)]
  const parts = []
  for (const [i, bytes] of data.entries()) parts.push(await upload.uploadPart(i + 1, bytes))
  await upload.complete(parts)
  await first.close()
  // As an older version stored it: no layout in the record.
  const { Database } = await import('../../src/stores/fs/sqlite.js')
  const db = new Database(`${dir}/.fsbucket/catalog.db`)
  db.prepare("UPDATE objects SET checksums = json_remove(checksums, '$.multipart')").run()
  t.equal(JSON.parse((db.prepare('SELECT checksums FROM objects').get() as { checksums: string }).checksums).multipart, undefined, 'an old record')
  db.close()

  const bucket = await openBucket(dir, { fsync: false, minPartSize: 5 })
  t.teardown(async () => { await bucket.close() })
  for (const [i, bytes] of data.entries()) {
    const outcome = await bucket.read('old', { partNumber: i + 1 })
    t.same(outcome.status === 'partial' ? [outcome.range, outcome.partsCount] : outcome.status, [{ offset: i * 9, length: bytes.length }, 3], `part ${i + 1}'s range`)
    t.same(await bodyOf(outcome), bytes, `part ${i + 1}'s bytes`)
  }
  t.equal((await bucket.read('old', { partNumber: 4 })).status, 'range-not-satisfiable', 'a part past the last')
})
