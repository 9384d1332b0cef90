/**
 * Conformance cases of `copy` (beyond the binding, for S3's CopyObject):
 * the copy's record and bytes, metadata kept or replaced, the source's and
 * the destination's conditions, argument checks. Part of
 * `bucketConformance`: every store runs them.
 */
import type { Test } from 'tap'
import type { Bucket, BucketObject } from '../../src/bucket/index.js'
import { expectCode, md5Hex, patternBytes } from './bucket.js'

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

  t.test('copy: a multipart source makes a single-part copy, its etag the MD5 of the bytes (as S3\'s CopyObject)', async t => {
    const bucket = await fresh(t, { minPartSize: 5 })
    const upload = await bucket.createMultipartUpload('multi', { customMetadata: { m: '1' } })
    const parts = [await upload.uploadPart(1, 'first part', { crc32c: 'bf64cc69' }), await upload.uploadPart(2, 'second', { crc32c: '7afd9428' })]
    const completed = await upload.complete(parts)
    t.match(completed.etag, /-2$/)
    const outcome = await bucket.copy('multi', 'copy')
    const copied = (outcome as { object: BucketObject }).object
    t.equal(copied.etag, md5Hex('first partsecond'), 'the MD5 of the bytes, no part count')
    t.same(copied.customMetadata, { m: '1' }, 'metadata kept')
    t.equal(copied.checksums.composite, undefined, 'no composite checksum: one part')
    const again = await bucket.head('copy')
    t.equal(again?.etag, md5Hex('first partsecond'), 'as stored')
    t.ok(again?.checksums.crc32c !== undefined, 'the composite\'s algorithm as a whole-object checksum')
    const got = await bucket.get('copy', { range: { offset: 8, length: 6 } })
    t.equal(await (got as { text: () => Promise<string> }).text(), 'rtseco')
    const part = await bucket.read('copy', { partNumber: 2 })
    t.equal(part.status, 'range-not-satisfiable', 'a single-part object has no part 2')
    const failed = await bucket.copy('multi', 'copy2', { sourceOnlyIf: { etagMatches: 'nope' } })
    t.equal(failed.status, 'source-precondition-failed', 'source conditions judged on the bytes\' record')
    t.same(await bucket.copy('multi', 'copy', { onlyIf: { etagDoesNotMatch: '*' } }), { status: 'precondition-failed' }, 'and the destination\'s')
    t.equal(await bucket.head('copy2'), null)
  })

  t.test('copy: a checksum asked for is computed over the bytes when the source lacks it', async t => {
    const bucket = await fresh(t)
    await bucket.put('src', '123456789', { crc32: 'cbf43926' })
    const kept = (await bucket.copy('src', 'same', { checksumAlgorithm: 'crc32' })) as { object: BucketObject }
    t.equal(Buffer.from(kept.object.checksums.crc32 as ArrayBuffer).toString('hex'), 'cbf43926', 'one the source has: kept')
    const asked = (await bucket.copy('src', 'other', { checksumAlgorithm: 'crc32c' })) as { object: BucketObject }
    t.equal(Buffer.from(asked.object.checksums.crc32c as ArrayBuffer).toString('hex'), 'e3069283', 'one it lacks: computed')
    t.equal(asked.object.etag, md5Hex('123456789'))
    t.equal(Buffer.from((await bucket.head('other'))?.checksums.crc32c as ArrayBuffer).toString('hex'), 'e3069283', 'and stored')
    await t.rejects(bucket.copy('src', 'x', { checksumAlgorithm: 'md4' as 'md5' }), TypeError)
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
