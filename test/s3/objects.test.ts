/** PutObject, GetObject, HeadObject, DeleteObject(s), CopyObject through the AWS SDK v3 over a real socket. */
import t from 'tap'
import {
  CopyObjectCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand
} from '@aws-sdk/client-s3'
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { raw, rejection, s3Server } from './fixture.js'

t.test('put then get: bytes, metadata, ETag; the default streamed upload (CRC32 trailer) is decoded', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const body = Buffer.from('hello, S3 world\n'.repeat(1000))
  const put = await s3.send(new PutObjectCommand({
    Bucket: 'photos', Key: 'dir/hello.txt', Body: Readable.from([body.subarray(0, 5000), body.subarray(5000)]), ContentLength: body.length,
    ContentType: 'text/plain', Metadata: { city: 'Zürich' }, CacheControl: 'max-age=60'
  }))
  t.equal(put.ETag, `"${createHash('md5').update(body).digest('hex')}"`)
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'dir/hello.txt' }))
  t.same(Buffer.from(await got.Body!.transformToByteArray()), body, 'same bytes')
  t.equal(got.ContentType, 'text/plain')
  t.equal(got.CacheControl, 'max-age=60')
  t.same(got.Metadata, { city: `=?UTF-8?B?${Buffer.from('Zürich').toString('base64')}?=` }, 'non-ASCII metadata comes back RFC 2047-encoded, as from S3')
  t.equal(got.ETag, put.ETag)
  const stored = await (await registry.open('photos'))!.head('dir/hello.txt')
  t.equal(stored?.size, body.length, 'the binding sees the decoded bytes')
  t.same(stored?.customMetadata, { city: 'Zürich' })
  t.equal(stored?.httpMetadata.contentEncoding, undefined, 'aws-chunked is not stored as a Content-Encoding')
})

t.test('head, range, conditionals', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'a', Body: '0123456789' }))
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'a' }))
  t.equal(head.ContentLength, 10)
  t.equal(head.ETag, put.ETag)
  const ranged = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', Range: 'bytes=2-4' }))
  t.equal(await ranged.Body!.transformToString(), '234')
  t.equal(ranged.ContentRange, 'bytes 2-4/10')
  const suffix = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', Range: 'bytes=-3' }))
  t.equal(await suffix.Body!.transformToString(), '789')
  const bad = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', Range: 'bytes=20-30' })))
  t.equal(bad.name, 'InvalidRange')
  t.equal(bad.$metadata.httpStatusCode, 416)
  const failed = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', IfMatch: '"nope"' })))
  t.equal(failed.name, 'PreconditionFailed')
  const notModified = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', IfNoneMatch: put.ETag })))
  t.equal(notModified.$metadata.httpStatusCode, 304)
  const overridden = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', ResponseContentType: 'text/x-test', ResponseContentDisposition: 'attachment' }))
  t.equal(overridden.ContentType, 'text/x-test')
  t.equal(overridden.ContentDisposition, 'attachment')
  const part1 = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'a', PartNumber: 1 }))
  t.equal(await part1.Body!.transformToString(), '0123456789', 'part 1 of a single put is the object')
  const missing = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'missing' })))
  t.equal(missing.name, 'NoSuchKey')
  const headMissing = await rejection(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'missing' })))
  t.equal(headMissing.$metadata.httpStatusCode, 404)
})

t.test('conditional put: If-None-Match * and If-Match', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const first = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'once', Body: 'one', IfNoneMatch: '*' }))
  const again = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'once', Body: 'two', IfNoneMatch: '*' })))
  t.equal(again.name, 'PreconditionFailed')
  t.equal(again.$metadata.httpStatusCode, 412)
  const wrong = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'once', Body: 'two', IfMatch: '"0000"' })))
  t.equal(wrong.name, 'PreconditionFailed')
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'once', Body: 'three', IfMatch: first.ETag }))
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'once' }))
  t.equal(await got.Body!.transformToString(), 'three')
})

t.test('checksums: sha256 stored and returned, a wrong one is BadDigest and stores nothing', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const body = 'checked bytes'
  const sha256 = createHash('sha256').update(body).digest('base64')
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'c', Body: body, ChecksumSHA256: sha256 }))
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'c', ChecksumMode: 'ENABLED' }))
  t.equal(got.ChecksumSHA256, sha256)
  await got.Body!.transformToString()
  const wrong = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'd', Body: body, ChecksumSHA256: createHash('sha256').update('other').digest('base64') })))
  t.equal(wrong.name, 'BadDigest')
  const md5 = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'd', Body: body, ContentMD5: createHash('md5').update('other').digest('base64') })))
  t.equal(md5.name, 'BadDigest')
  const missing = await rejection(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'd' })))
  t.equal(missing.$metadata.httpStatusCode, 404, 'nothing stored')
  for (const ChecksumAlgorithm of ['SHA1', 'SHA256', 'CRC32', 'CRC32C', 'CRC64NVME'] as const) {
    const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `sum-${ChecksumAlgorithm}`, Body: Readable.from([Buffer.from(body)]), ContentLength: body.length, ChecksumAlgorithm }))
    t.ok(put.ETag, `a trailing ${ChecksumAlgorithm} verifies`)
  }
  const crc32c = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'd', Body: body, ChecksumCRC32C: 'AAAAAA==' })))
  t.equal(crc32c.name, 'BadDigest', 'a wrong CRC32C header')
})

t.test('delete, delete many (quiet or not), copy with REPLACE and COPY', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  for (const key of ['x/1', 'x/2', 'x/3']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: key, ContentType: 'text/plain', Metadata: { k: key } }))
  await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'x/1' }))
  await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'never-there' }))
  const deleted = await s3.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'x/2' }, { Key: 'ghost' }] } }))
  t.same(deleted.Deleted?.map(d => d.Key), ['x/2', 'ghost'])
  const copied = await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copy', CopySource: 'photos/x/3' }))
  const copy = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'copy' }))
  t.equal(await copy.Body!.transformToString(), 'x/3')
  t.same(copy.Metadata, { k: 'x/3' }, 'COPY keeps the metadata')
  t.equal(copy.ETag, copied.CopyObjectResult?.ETag)
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copy2', CopySource: '/photos/x%2F3', MetadataDirective: 'REPLACE', Metadata: { n: '1' }, ContentType: 'text/x-new' }))
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'copy2' }))
  t.same(head.Metadata, { n: '1' })
  t.equal(head.ContentType, 'text/x-new')
  const refused = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copy3', CopySource: 'photos/x/3', CopySourceIfMatch: '"nope"' })))
  t.equal(refused.name, 'PreconditionFailed')
  const self = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copy', CopySource: 'photos/copy' })))
  t.equal(self.name, 'InvalidRequest')
  await registry.create('archive')
  const across = await s3.send(new CopyObjectCommand({ Bucket: 'archive', Key: 'kept', CopySource: 'photos/x/3' }))
  t.equal(across.CopyObjectResult?.ETag, copied.CopyObjectResult?.ETag, 'a copy to another bucket')
  const kept = await s3.send(new GetObjectCommand({ Bucket: 'archive', Key: 'kept' }))
  t.equal(await kept.Body!.transformToString(), 'x/3')
  t.same(kept.Metadata, { k: 'x/3' })
  const missing = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copy4', CopySource: 'photos/ghost' })))
  t.equal(missing.name, 'NoSuchKey')
  const quiet = await s3.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Quiet: true, Objects: [{ Key: 'copy' }, { Key: 'copy2' }] } }))
  t.equal(quiet.Deleted, undefined)
  const restyled = await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'x/3', CopySource: 'photos/x/3', StorageClass: 'STANDARD_IA' }))
  t.equal(restyled.CopyObjectResult?.ETag, copied.CopyObjectResult?.ETag, 'a copy onto itself changing the storage class keeps the bytes')
  const again = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'x/3' }))
  t.equal(again.StorageClass, 'STANDARD_IA')
  t.same(again.Metadata, { k: 'x/3' })
  t.equal(await again.Body!.transformToString(), 'x/3')
  // Without the header a copy is stored as a put would be: in the destination bucket's default class.
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'x/3', CopySource: 'photos/x/3', MetadataDirective: 'REPLACE', Metadata: { k: 'x/3' } }))
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'x/3' }))).StorageClass, undefined, 'rewritten in place: Standard again')
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'x/ia', CopySource: 'photos/x/3', StorageClass: 'STANDARD_IA' }))
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'x/ia' }))).StorageClass, 'STANDARD_IA')
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'x/std', CopySource: 'photos/x/ia' }))
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'x/std' }))).StorageClass, undefined, 'copied within the bucket: its default')
  await registry.create('cold', { storageClass: 'InfrequentAccess' })
  await s3.send(new CopyObjectCommand({ Bucket: 'cold', Key: 'c', CopySource: 'photos/x/std' }))
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'cold', Key: 'c' }))).StorageClass, 'STANDARD_IA', 'copied to a bucket whose default is Infrequent Access: that')
  await s3.send(new CopyObjectCommand({ Bucket: 'archive', Key: 'k2', CopySource: 'photos/x/ia' }))
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'k2' }))).StorageClass, undefined, 'copied across buckets: the destination\'s default')
})

t.test('any Content-Type is stored as given (empty, malformed, a list): PutObject, multipart, DeleteObjects', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  for (const [i, type] of ['', ';;;', 'a/b/c', 'text/plain, text/html', 'text/plain;'].entries()) {
    const name = JSON.stringify(type)
    const put = await raw(server, 'PUT', `/photos/ct-${i}`, { 'content-type': type }, ['body'])
    t.equal(put.status, 200, `PutObject ${name}: ${put.body}`)
    t.equal((await bucket.head(`ct-${i}`))?.httpMetadata.contentType, type, 'stored as given')
    const head = await raw(server, 'HEAD', `/photos/ct-${i}`)
    t.equal(head.status, 200)
    t.equal(head.headers['content-type'], type, 'answered as stored')

    const create = await raw(server, 'POST', `/photos/mp-${i}?uploads`, { 'content-type': type })
    t.equal(create.status, 200, `CreateMultipartUpload ${name}: ${create.body}`)
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(create.body)?.[1] ?? ''
    const part = await raw(server, 'PUT', `/photos/mp-${i}?partNumber=1&uploadId=${encodeURIComponent(uploadId)}`, { 'content-type': type }, ['part'])
    t.equal(part.status, 200, `UploadPart ${name}: ${part.body}`)
    const done = await raw(server, 'POST', `/photos/mp-${i}?uploadId=${encodeURIComponent(uploadId)}`, { 'content-type': type },
      [`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${String(part.headers.etag)}</ETag></Part></CompleteMultipartUpload>`])
    t.equal(done.status, 200, `CompleteMultipartUpload ${name}: ${done.body}`)
    t.equal((await bucket.head(`mp-${i}`))?.httpMetadata.contentType, type, 'the upload\'s type, as given')

    const deleted = await raw(server, 'POST', '/photos?delete', { 'content-type': type }, [`<Delete><Object><Key>ct-${i}</Key></Object></Delete>`])
    t.equal(deleted.status, 200, `DeleteObjects ${name}: ${deleted.body}`)
    t.equal(await bucket.head(`ct-${i}`), null)
  }
  // Signed by the SDK, Content-Type among the signed headers: the signature is checked against the type as sent.
  await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'signed', Body: 'x', ContentType: 'a/b/c' }))
  t.equal((await bucket.head('signed'))?.httpMetadata.contentType, 'a/b/c')
})

t.test('a date equal to the Last-Modified: a read\'s or a copy source\'s If-Unmodified-Since holds and If-Modified-Since is not modified, as S3 judges them; a write\'s fails, as the hosted service judges it', async t => {
  const server = await s3Server(t)
  await server.registry.create('other')
  await raw(server, 'PUT', '/photos/dated.txt', { 'content-length': '5' }, 'dated')
  // The upload time has milliseconds; the header has whole seconds, and names the object as it is.
  const lastModified = String((await raw(server, 'HEAD', '/photos/dated.txt')).headers['last-modified'])
  for (const method of ['GET', 'HEAD']) {
    t.equal((await raw(server, method, '/photos/dated.txt', { 'if-unmodified-since': lastModified })).status, 200, `${method} If-Unmodified-Since`)
    t.equal((await raw(server, method, '/photos/dated.txt', { 'if-modified-since': lastModified })).status, 304, `${method} If-Modified-Since`)
  }
  // Within the bucket (the binding's copy) and to another (read and written again).
  for (const target of ['/photos/copy.txt', '/other/copy.txt']) {
    const copied = await raw(server, 'PUT', target, { 'x-amz-copy-source': '/photos/dated.txt', 'x-amz-copy-source-if-unmodified-since': lastModified })
    t.equal(copied.status, 200, `CopyObject to ${target}, x-amz-copy-source-if-unmodified-since: ${copied.body}`)
    const refused = await raw(server, 'PUT', target, { 'x-amz-copy-source': '/photos/dated.txt', 'x-amz-copy-source-if-modified-since': lastModified })
    t.equal(refused.status, 412, `CopyObject to ${target}, x-amz-copy-source-if-modified-since`)
  }
  const put = await raw(server, 'PUT', '/photos/dated.txt', { 'if-unmodified-since': lastModified, 'content-length': '3' }, 'new')
  t.equal(put.status, 412, 'PutObject If-Unmodified-Since: another writer may have stored a version within the same second')
  const copyOver = await raw(server, 'PUT', '/photos/dated.txt', { 'x-amz-copy-source': '/photos/copy.txt', 'cf-copy-destination-if-unmodified-since': lastModified })
  t.equal(copyOver.status, 412, 'CopyObject onto it with cf-copy-destination-if-unmodified-since: a write\'s condition')
  t.equal((await raw(server, 'GET', '/photos/dated.txt')).body, 'dated')
})

t.test('PreconditionFailed names the condition (S3\'s <Condition>) when the request carried that one alone', async t => {
  const server = await s3Server(t)
  const put = await raw(server, 'PUT', '/photos/cond.txt', { 'content-length': '1' }, 'x')
  const etag = String(put.headers.etag)
  const past = 'Mon, 01 Jan 2001 00:00:00 GMT'
  const cases: Array<[string, string, string, Record<string, string>, string | undefined, string?]> = [
    ['GetObject If-Match', 'GET', '/photos/cond.txt', { 'if-match': '"nope"' }, 'If-Match'],
    ['GetObject If-Unmodified-Since', 'GET', '/photos/cond.txt', { 'if-unmodified-since': past }, 'If-Unmodified-Since'],
    ['GetObject with two conditions: not named', 'GET', '/photos/cond.txt', { 'if-match': '"nope"', 'if-unmodified-since': past }, undefined],
    ['PutObject If-None-Match: *', 'PUT', '/photos/cond.txt', { 'if-none-match': '*', 'content-length': '1' }, 'If-None-Match', 'y'],
    ['PutObject If-Match', 'PUT', '/photos/cond.txt', { 'if-match': '"nope"', 'content-length': '1' }, 'If-Match', 'y'],
    ['CopyObject If-None-Match (destination)', 'PUT', '/photos/cond.txt', { 'x-amz-copy-source': '/photos/cond.txt', 'x-amz-metadata-directive': 'REPLACE', 'if-none-match': etag }, 'If-None-Match'],
    ['CopyObject source condition: not named', 'PUT', '/photos/other.txt', { 'x-amz-copy-source': '/photos/cond.txt', 'x-amz-copy-source-if-match': '"nope"' }, undefined]
  ]
  for (const [name, method, path, headers, condition, body] of cases) {
    const answer = await raw(server, method, path, headers, body ?? [])
    t.equal(answer.status, 412, `${name}: 412`)
    t.match(answer.body, '<Code>PreconditionFailed</Code>', name)
    if (condition === undefined) t.notMatch(answer.body, '<Condition>', `${name}: no Condition`)
    else t.match(answer.body, `<Condition>${condition}</Condition>`, `${name}: Condition ${condition}`)
  }
  const created = await raw(server, 'POST', '/photos/cond.txt?uploads')
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created.body)?.[1] ?? ''
  const part = await raw(server, 'PUT', `/photos/cond.txt?partNumber=1&uploadId=${uploadId}`, { 'content-length': '5' }, 'parts')
  const document = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${String(part.headers.etag)}</ETag></Part></CompleteMultipartUpload>`
  const completed = await raw(server, 'POST', `/photos/cond.txt?uploadId=${uploadId}`, { 'if-none-match': '*', 'content-length': String(document.length) }, document)
  t.equal(completed.status, 412, 'CompleteMultipartUpload If-None-Match: 412')
  t.match(completed.body, '<Condition>If-None-Match</Condition>')
})
