/**
 * Conformance cases of `copy` (beyond the binding, for S3's CopyObject):
 * the copy's record and bytes, metadata kept or replaced, the source's and
 * the destination's conditions, argument checks. Part of
 * `bucketConformance`: every store runs them.
 */
import type { Test } from 'tap'
import type { Bucket, BucketObject } from '../../src/bucket/index.js'
import { expectCode, md5Hex, patternBytes } from './conformance.js'

export function copyConformance (t: Test, fresh: (t: Test, options?: { minPartSize?: number }) => Promise<Bucket>): void {
  t.test('copy: bytes, etag and checksums of the source; metadata kept or replaced', async t => {
    const bucket = await fresh(t)
    const bytes = patternBytes(300_000, 41)
    const put = await bucket.put('src', bytes, {
      httpMetadata: { contentType: 'text/csv', cacheControl: 'max-age=60' }, customMetadata: { a: '1' }, sha256: undefined
    })
    const outcome = await bucket.copy('src', 'dst')
    t.equal(outcome.status, 'copied')
    const copied = (outcome as { object: BucketObject }).object
    t.equal(copied.key, 'dst')
    t.equal(copied.etag, md5Hex(bytes))
    t.equal(copied.size, bytes.length)
    t.not(copied.version, put?.version, 'a version of its own')
    t.same(copied.httpMetadata, { contentType: 'text/csv', cacheControl: 'max-age=60' })
    t.same(copied.customMetadata, { a: '1' })
    const got = await bucket.get('dst')
    t.same(new Uint8Array(await (got as { arrayBuffer: () => Promise<ArrayBuffer> }).arrayBuffer()), bytes)

    const replaced = await bucket.copy('src', 'dst2', { httpMetadata: new Headers({ 'content-type': 'image/png' }), customMetadata: { b: '2' }, storageClass: 'InfrequentAccess' })
    const object = (replaced as { object: BucketObject }).object
    t.same(object.httpMetadata, { contentType: 'image/png' })
    t.same(object.customMetadata, { b: '2' })
    t.equal(object.storageClass, 'InfrequentAccess')
    t.same((await bucket.head('src'))?.customMetadata, { a: '1' }, 'the source is unchanged')

    const self = await bucket.copy('src', 'src', { customMetadata: { c: '3' } })
    t.equal(self.status, 'copied', 'onto itself: a metadata change')
    t.same((await bucket.head('src'))?.customMetadata, { c: '3' })
    t.equal((await bucket.head('src'))?.etag, md5Hex(bytes))
  })

  t.test('copy: a multipart source keeps its bytes and its etag', async t => {
    const bucket = await fresh(t, { minPartSize: 5 })
    const upload = await bucket.createMultipartUpload('multi')
    const parts = [await upload.uploadPart(1, 'first part'), await upload.uploadPart(2, 'second')]
    const completed = await upload.complete(parts)
    const outcome = await bucket.copy('multi', 'copy')
    t.equal((outcome as { object: BucketObject }).object.etag, completed.etag)
    const got = await bucket.get('copy', { range: { offset: 8, length: 6 } })
    t.equal(await (got as { text: () => Promise<string> }).text(), 'rtseco')
  })

  t.test('copy: conditions on the source and on the destination', async t => {
    const bucket = await fresh(t)
    t.same(await bucket.copy('missing', 'dst'), { status: 'not-found' })
    const source = await bucket.put('src', 'source bytes')
    await bucket.put('dst', 'old')
    const failed = await bucket.copy('src', 'dst', { sourceOnlyIf: { etagMatches: 'nope' } })
    t.equal(failed.status, 'source-precondition-failed')
    t.equal((failed as { source: BucketObject }).source.etag, source?.etag)
    t.equal((await bucket.copy('src', 'dst', { sourceOnlyIf: new Headers({ 'if-none-match': `"${source?.etag ?? ''}"` }) })).status, 'source-precondition-failed')
    t.same(await bucket.copy('src', 'dst', { onlyIf: { etagDoesNotMatch: '*' } }), { status: 'precondition-failed' })
    t.equal(await (await bucket.get('dst') as { text: () => Promise<string> }).text(), 'old', 'a refused copy changes nothing')
    t.equal((await bucket.copy('src', 'dst', { sourceOnlyIf: { etagMatches: source?.etag }, onlyIf: { etagMatches: md5Hex('old') } })).status, 'copied')
    t.equal(await (await bucket.get('dst') as { text: () => Promise<string> }).text(), 'source bytes')
  })

  t.test('copy: arguments are checked before anything is read', async t => {
    const bucket = await fresh(t)
    await bucket.put('src', 'x')
    await expectCode(t, () => bucket.copy('src', 'k'.repeat(1025)), 10020, 'copy', 'a destination key too long')
    await expectCode(t, () => bucket.copy('k'.repeat(1025), 'dst'), 10020, 'copy', 'a source key too long')
    await t.rejects(bucket.copy('src', 'dst', { onlyIf: { etagMatches: '"quoted"' } }), TypeError)
    await t.rejects(bucket.copy('src', 'dst', { customMetadata: 'nope' as unknown as Record<string, string> }), TypeError)
    t.equal(await bucket.head('dst'), null)
  })
}
