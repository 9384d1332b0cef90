/**
 * Conformance cases of the upload listings (`listMultipartUploads`,
 * `listParts`), which go beyond the binding for S3's ListMultipartUploads
 * and ListParts. Part of `bucketConformance`: every store runs them.
 */
import type { Test } from 'tap'
import type { Bucket } from '../../src/bucket/index.js'
import { isArgumentError } from '../../src/bucket/errors.js'
import { expectCode, md5Hex, TestClock, type SuiteOptions } from './bucket.js'

export function uploadListingConformance (t: Test, fresh: (t: Test, options?: SuiteOptions) => Promise<Bucket>): void {
  t.test('multipart: listParts gives each part the time the engine\'s clock read at its upload', async t => {
    const clock = new TestClock(Date.UTC(2024, 2, 1, 12, 0, 0, 250))
    const bucket = await fresh(t, { minPartSize: 5, clock: clock.read })
    const upload = await bucket.createMultipartUpload('timed')
    const created = clock.now
    for (const n of [2, 1, 3]) {
      clock.now += 1000
      await upload.uploadPart(n, `part ${n}`)
    }
    const times = async (): Promise<Array<[number, number]>> => (await upload.listParts()).parts.map(p => [p.partNumber, p.uploaded.getTime()])
    t.same(await times(), [[1, created + 2000], [2, created + 1000], [3, created + 3000]], 'by part number, each with its time to the millisecond')
    clock.now += 1000
    await upload.uploadPart(2, 'part 2 again')
    t.same(await times(), [[1, created + 2000], [2, created + 4000], [3, created + 3000]], 'a part uploaded again has the later time')
  })

  t.test('multipart: listing uploads in progress and their parts', async t => {
    const bucket = await fresh(t, { minPartSize: 5 })
    t.same(await bucket.listMultipartUploads(), { uploads: [], truncated: false }, 'none at first')
    const keys = ['b/2', 'a', 'b/1', 'z\u{1F600}', 'z\uFFFD']
    const made = new Map<string, string[]>()
    for (const key of [...keys, 'b/1']) {
      const upload = await bucket.createMultipartUpload(key, { storageClass: 'InfrequentAccess' })
      made.set(key, [...(made.get(key) ?? []), upload.uploadId].sort())
    }
    const all = await bucket.listMultipartUploads()
    const expected = ['a', 'b/1', 'b/1', 'b/2', 'z\uFFFD', 'z\u{1F600}']
    t.same(all.uploads.map(u => u.key), expected, 'by the UTF-8 bytes of the keys')
    t.same(all.uploads.filter(u => u.key === 'b/1').map(u => u.uploadId), made.get('b/1'), 'then by upload id')
    t.ok(all.uploads.every(u => u.initiated instanceof Date && u.storageClass === 'InfrequentAccess'))
    t.equal(all.truncated, false)

    const paged = await bucket.listMultipartUploads({ limit: 2 })
    t.same(paged.uploads.map(u => u.key), ['a', 'b/1'])
    t.equal(paged.truncated, true)
    const next = await bucket.listMultipartUploads({ keyMarker: 'b/1', uploadIdMarker: paged.uploads[1].uploadId, limit: 2 })
    t.same(next.uploads.map(u => u.key), ['b/1', 'b/2'], 'after a key and upload id: the key\'s later uploads, then later keys')
    // An upload id marker is the client's text (S3's upload-id-marker): one with a NUL, which no upload id holds, still orders bytewise.
    const [first, second] = made.get('b/1')!
    const nul = await bucket.listMultipartUploads({ keyMarker: 'b/1', uploadIdMarker: `${first}\u0000` })
    t.same(nul.uploads.map(u => [u.key, u.uploadId]), [['b/1', second], ['b/2', made.get('b/2')![0]], ['z\uFFFD', made.get('z\uFFFD')![0]], ['z\u{1F600}', made.get('z\u{1F600}')![0]]],
      'a marker with a NUL after an upload id sorts after that id and before the next')
    t.same((await bucket.listMultipartUploads({ keyMarker: 'b/1', uploadIdMarker: '\u0000' })).uploads.map(u => u.key), ['b/1', 'b/1', 'b/2', 'z\uFFFD', 'z\u{1F600}'], 'a marker of a NUL alone sorts before every upload id')
    t.same((await bucket.listMultipartUploads({ keyMarker: 'b/1' })).uploads.map(u => u.key), ['b/2', 'z\uFFFD', 'z\u{1F600}'], 'a key marker alone skips all of its uploads')
    t.same((await bucket.listMultipartUploads({ prefix: 'b/' })).uploads.map(u => u.key), ['b/1', 'b/1', 'b/2'])
    await expectCode(t, () => bucket.listMultipartUploads({ limit: 0 }), 10022, undefined, 'a limit of 0')

    const upload = bucket.resumeMultipartUpload('a', made.get('a')![0])
    t.same(await upload.listParts(), { parts: [], truncated: false })
    for (const n of [3, 1, 2]) await upload.uploadPart(n, `part ${n}`)
    await upload.uploadPart(2, 'PART 2')
    const parts = await upload.listParts()
    t.same(parts.parts.map(p => [p.partNumber, p.size]), [[1, 6], [2, 6], [3, 6]], 'in order')
    t.equal(parts.parts[1].etag, md5Hex('PART 2'), 'a re-uploaded part as it is now')
    const page = await upload.listParts({ partNumberMarker: 1, limit: 1 })
    t.same(page.parts.map(p => p.partNumber), [2])
    t.equal(page.truncated, true)
    // An argument mistake, marked so that a door answers 400, not 500.
    const refused: unknown = await upload.listParts({ partNumberMarker: -1 }).then(() => null, (err: unknown) => err)
    t.ok(isArgumentError(refused), 'a negative marker')
    await expectCode(t, () => bucket.resumeMultipartUpload('other', made.get('a')![0]).listParts(), 10024, undefined, 'the upload of another key')

    await upload.complete(parts.parts)
    await bucket.resumeMultipartUpload('b/2', made.get('b/2')![0]).abort()
    t.same((await bucket.listMultipartUploads()).uploads.map(u => u.key), ['b/1', 'b/1', 'z\uFFFD', 'z\u{1F600}'], 'completed and aborted uploads are gone')
    await expectCode(t, () => upload.listParts(), 10024, undefined, 'parts of a completed upload')
  })

  t.test('multipart: listing uploads with a delimiter rolls keys up into prefixes', async t => {
    const bucket = await fresh(t)
    for (const key of ['a/1', 'a/2', 'a/2', 'b', 'c/d/e', 'c/x', 'd']) await bucket.createMultipartUpload(key)
    const all = await bucket.listMultipartUploads({ delimiter: '/' })
    t.same(all.uploads.map(u => u.key), ['b', 'd'])
    t.same(all.delimitedPrefixes, ['a/', 'c/'], 'each prefix once')
    t.equal(all.truncated, false)
    const first = await bucket.listMultipartUploads({ delimiter: '/', limit: 2 })
    t.same([first.uploads.map(u => u.key), first.delimitedPrefixes, first.truncated], [['b'], ['a/'], true], 'a prefix counts as an entry')
    const second = await bucket.listMultipartUploads({ delimiter: '/', limit: 2, keyMarker: 'b' })
    t.same([second.uploads.map(u => u.key), second.delimitedPrefixes, second.truncated], [['d'], ['c/'], false])
    const afterPrefix = await bucket.listMultipartUploads({ delimiter: '/', keyMarker: 'a/' })
    t.same([afterPrefix.uploads.map(u => u.key), afterPrefix.delimitedPrefixes], [['b', 'd'], ['c/']], 'a marker that is a prefix resumes after its keys')
    const nested = await bucket.listMultipartUploads({ delimiter: '/', prefix: 'c/' })
    t.same([nested.uploads.map(u => u.key), nested.delimitedPrefixes], [['c/x'], ['c/d/']], 'the delimiter is looked for after the prefix')
    t.equal((await bucket.listMultipartUploads()).delimitedPrefixes, undefined, 'without a delimiter, no prefixes')
  })

  t.test('multipart: conditional completion is judged against the current object and keeps a refused upload', async t => {
    const bucket = await fresh(t, { minPartSize: 5 })
    const upload = await bucket.createMultipartUpload('guarded')
    const part = await upload.uploadPart(1, 'first version')
    t.equal(await upload.complete([part], { onlyIf: { etagMatches: 'no-such-etag' } }), null, 'If-Match on a missing key fails')
    const created = await upload.complete([part], { onlyIf: new Headers({ 'if-none-match': '*' }) })
    t.equal(created?.size, 13, 'If-None-Match: * creates')

    const again = await bucket.createMultipartUpload('guarded')
    const againPart = await again.uploadPart(1, 'second')
    t.equal(await again.complete([againPart], { onlyIf: { etagDoesNotMatch: '*' } }), null, 'If-None-Match: * refuses an existing key')
    t.same((await again.listParts()).parts.map(p => p.partNumber), [1], 'the refused upload is kept')
    const replaced = await again.complete([againPart], { onlyIf: { etagMatches: created!.etag } })
    t.equal(replaced?.size, 6, 'If-Match with the current etag completes')
    t.equal((await bucket.head('guarded'))?.etag, replaced?.etag)
  })

  t.test('multipart: a completion asked again is 10024, or with `repeatable` the object it made while the key holds it', async t => {
    const bucket = await fresh(t, { minPartSize: 5 })
    const upload = await bucket.createMultipartUpload('done')
    const parts = [await upload.uploadPart(1, 'first '), await upload.uploadPart(2, 'second')]
    const made = await upload.complete(parts)
    const resumed = bucket.resumeMultipartUpload('done', upload.uploadId)
    await expectCode(t, async () => await resumed.complete(parts), 10024, undefined, 'the binding forgets a finished upload')
    const again = await resumed.complete(parts, { repeatable: true })
    t.same([again?.version, again?.etag, again?.size], [made.version, made.etag, 12], 'the object it made')
    await expectCode(t, async () => await resumed.complete(parts.slice(0, 1), { repeatable: true }), 10024, undefined, 'named with other parts')
    await expectCode(t, async () => await bucket.resumeMultipartUpload('other', upload.uploadId).complete(parts, { repeatable: true }), 10024, undefined, 'under another key')
    await bucket.put('done', 'replaced')
    await expectCode(t, async () => await resumed.complete(parts, { repeatable: true }), 10024, undefined, 'once the key holds another object')
  })
}
