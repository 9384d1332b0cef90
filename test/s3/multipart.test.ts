/** Multipart uploads through the AWS SDK v3 and lib-storage, and with the binding on the other end. */
import t from 'tap'
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand,
  HeadObjectCommand, ListMultipartUploadsCommand, ListPartsCommand, UploadPartCommand, UploadPartCopyCommand, PutObjectCommand
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { raw, rejection, s3Server } from './fixture.js'

function md5OfMd5s (parts: Buffer[]): string {
  const joined = Buffer.concat(parts.map(p => createHash('md5').update(p).digest()))
  return `"${createHash('md5').update(joined).digest('hex')}-${parts.length}"`
}

t.test('lib-storage uploads a stream in parts; bytes and ETag as S3', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const partSize = 5 * 1024 * 1024
  const data = randomBytes(partSize * 2 + 12345)
  const upload = new Upload({
    client: s3,
    params: { Bucket: 'photos', Key: 'big.bin', Body: Readable.from([data.subarray(0, 3_000_000), data.subarray(3_000_000)]), ContentType: 'application/x-test', Metadata: { from: 'lib-storage' } },
    partSize,
    queueSize: 2
  })
  const done = await upload.done()
  const parts = [data.subarray(0, partSize), data.subarray(partSize, 2 * partSize), data.subarray(2 * partSize)]
  t.equal(done.ETag, md5OfMd5s(parts))
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'big.bin' }))
  t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(data), 'same bytes')
  t.equal(got.ContentType, 'application/x-test')
  t.same(got.Metadata, { from: 'lib-storage' })
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'big.bin' }))
  t.equal(head.ContentLength, data.length)
})

t.test('create, upload parts (one copied), complete; errors of completion', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'source', Body: 'abcdefghijklmnopqrstuvwxyz' }))
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'joined', ContentType: 'text/plain', StorageClass: 'STANDARD_IA' }))
  const uploadId = created.UploadId!
  const p1 = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'joined', UploadId: uploadId, PartNumber: 1, Body: 'hello' }))
  const p2 = await s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'joined', UploadId: uploadId, PartNumber: 2, CopySource: 'photos/source', CopySourceRange: 'bytes=0-4' }))
  const p3 = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'joined', UploadId: uploadId, PartNumber: 3, Body: 'xyz' }))
  const outOfOrder = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'joined', UploadId: uploadId,
    MultipartUpload: { Parts: [{ PartNumber: 2, ETag: p2.CopyPartResult!.ETag }, { PartNumber: 1, ETag: p1.ETag }] }
  })))
  t.equal(outOfOrder.name, 'InvalidPartOrder')
  const wrongEtag = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'joined', UploadId: uploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }] }
  })))
  t.equal(wrongEtag.name, 'InvalidPart')
  const done = await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'joined', UploadId: uploadId,
    MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.CopyPartResult!.ETag }, { PartNumber: 3, ETag: p3.ETag }] }
  }))
  t.equal(done.ETag, md5OfMd5s([Buffer.from('hello'), Buffer.from('abcde'), Buffer.from('xyz')]))
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'joined' }))
  t.equal(await got.Body!.transformToString(), 'helloabcdexyz')
  t.equal(got.StorageClass, 'STANDARD_IA')
  t.equal(got.ContentType, 'text/plain')
  const part = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'joined', PartNumber: 2 }))
  t.equal(await part.Body!.transformToString(), 'abcde', 'part 2, copied from a range of another object')
  t.equal(part.ContentRange, 'bytes 5-9/13')
  t.equal(part.PartsCount, 3)
  const gone = await rejection(s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'joined', UploadId: uploadId, PartNumber: 4, Body: 'late' })))
  t.equal(gone.name, 'NoSuchUpload')
  t.equal((await (await registry.open('photos'))!.head('joined'))?.storageClass, 'InfrequentAccess')
})

t.test('partNumber on an object put whole: part 1 is a 206 over all of it without PartsCount, as S3 answers; part 2 is InvalidPartNumber', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'whole', Body: 'hello world' }))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'empty', Body: '' }))
  const part = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'whole', PartNumber: 1 }))
  t.same([part.$metadata.httpStatusCode, part.ContentRange, part.ContentLength, part.PartsCount], [206, 'bytes 0-10/11', 11, undefined])
  t.equal(await part.Body!.transformToString(), 'hello world')
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'whole', PartNumber: 1 }))
  t.same([head.$metadata.httpStatusCode, head.ContentRange, head.ContentLength, head.PartsCount], [206, 'bytes 0-10/11', 11, undefined], 'HEAD alike')
  const empty = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'empty', PartNumber: 1 }))
  t.same([empty.$metadata.httpStatusCode, empty.ContentRange, empty.ContentLength], [200, undefined, 0], 'an empty object: no range fits, the whole read')
  const past = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'whole', PartNumber: 2 })))
  t.same([past.name, past.$metadata.httpStatusCode], ['InvalidPartNumber', 416])
  const pastHead = await rejection(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'whole', PartNumber: 2 })))
  t.equal(pastHead.$metadata.httpStatusCode, 416, 'HEAD of a part past the last')
  for (const [query, what] of [['0', 'zero'], ['10001', 'past the largest'], ['x', 'not a number']]) {
    const refused = await raw(server, 'GET', `/photos/whole?partNumber=${query}`)
    t.same([refused.status, /<Code>(\w+)</.exec(refused.body)?.[1]], [400, 'InvalidArgument'], what)
  }
  const both = await raw(server, 'GET', '/photos/whole?partNumber=1', { range: 'bytes=0-1' })
  t.same([both.status, /<Code>(\w+)</.exec(both.body)?.[1]], [400, 'InvalidRequest'], 'a part and a Range together')
})

t.test('a part uploaded twice before completion: the later one counts; completing with the older ETag is InvalidPart', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'twice' }))
  const first = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'twice', UploadId, PartNumber: 1, Body: 'first' }))
  const later = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'twice', UploadId, PartNumber: 1, Body: 'later' }))
  const last = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'twice', UploadId, PartNumber: 2, Body: '!' }))
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'twice', UploadId }))
  t.same(listed.Parts?.map(p => [p.PartNumber, p.ETag]), [[1, later.ETag], [2, last.ETag]], 'ListParts lists the later part 1 only')
  const stale = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'twice', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.ETag }, { PartNumber: 2, ETag: last.ETag }] }
  })))
  t.same([stale.name, stale.$metadata.httpStatusCode], ['InvalidPart', 400], 'the older ETag names no part')
  const done = await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'twice', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: later.ETag }, { PartNumber: 2, ETag: last.ETag }] }
  }))
  t.equal(done.ETag, md5OfMd5s([Buffer.from('later'), Buffer.from('!')]))
  t.equal(await (await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'twice' }))).Body!.transformToString(), 'later!')
})

t.test('a completion asked again after it succeeded answers the same object, as S3 does for a client retrying a lost answer', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const complete = async (uploadId: string, parts: Array<{ PartNumber: number, ETag?: string }>, key = 'retried'): Promise<{ ETag?: string }> =>
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }))
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'retried' }))
  const p1 = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'retried', UploadId, PartNumber: 1, Body: 'one' }))
  const parts = [{ PartNumber: 1, ETag: p1.ETag }]
  const first = await complete(UploadId!, parts)
  const again = await complete(UploadId!, parts)
  t.equal(again.ETag, first.ETag, 'the same answer')
  const version = (await (await registry.open('photos'))!.head('retried'))?.version
  t.equal((await complete(UploadId!, parts)).ETag, first.ETag)
  t.equal((await (await registry.open('photos'))!.head('retried'))?.version, version, 'nothing written again')

  const otherParts = await rejection(complete(UploadId!, [{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }]))
  t.equal(otherParts.name, 'NoSuchUpload', 'other parts than the completion named: the upload is gone')
  t.equal((await rejection(complete(UploadId!, parts, 'elsewhere'))).name, 'NoSuchUpload', 'under another key')
  const other = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'retried' }))
  t.equal((await rejection(complete(other.UploadId!, parts))).name, 'InvalidPart', 'another upload of the key is not this one')
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'retried', Body: 'overwritten' }))
  t.equal((await rejection(complete(UploadId!, parts))).name, 'NoSuchUpload', 'once the key holds another object')
  t.equal(await (await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'retried' }))).Body!.transformToString(), 'overwritten')
})

t.test('an upload started through the binding completes through S3, and the other way round; abort', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const bucket = (await registry.open('photos'))!
  const fromBinding = await bucket.createMultipartUpload('mixed')
  const bound = await fromBinding.uploadPart(1, 'first')
  const viaS3 = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'mixed', UploadId: fromBinding.uploadId, PartNumber: 2, Body: 'last' }))
  await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'mixed', UploadId: fromBinding.uploadId,
    MultipartUpload: { Parts: [{ PartNumber: 1, ETag: `"${bound.etag}"` }, { PartNumber: 2, ETag: viaS3.ETag }] }
  }))
  t.equal(await (await bucket.get('mixed') as { text: () => Promise<string> }).text(), 'firstlast')

  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'back' }))
  const resumed = bucket.resumeMultipartUpload('back', created.UploadId!)
  const part = await resumed.uploadPart(1, 'through the binding')
  const object = await resumed.complete([part])
  t.equal(object.size, 19)

  const toAbort = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'dropped' }))
  await s3.send(new AbortMultipartUploadCommand({ Bucket: 'photos', Key: 'dropped', UploadId: toAbort.UploadId }))
  const aborted = await rejection(s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'dropped', UploadId: toAbort.UploadId, PartNumber: 1, Body: 'x' })))
  t.equal(aborted.name, 'NoSuchUpload')
})

t.test('part numbers 0 and 10001 are refused and store nothing', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'p' }))
  for (const PartNumber of [0, 10001]) {
    const err = await rejection(s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'p', UploadId: created.UploadId, PartNumber, Body: 'x' })))
    t.equal(err.name, 'InvalidArgument', `part ${PartNumber}`)
    t.equal(err.$metadata.httpStatusCode, 400)
  }
  const ok = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'p', UploadId: created.UploadId, PartNumber: 10000, Body: 'x' }))
  t.ok(ok.ETag, 'the server still serves; 10000 is allowed')
})

t.test('a completion listing no part is MalformedXML, as S3 answers it; the upload stays and nothing is stored', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'none' }))
  await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'none', UploadId: created.UploadId, PartNumber: 1, Body: 'x' }))
  const sdk = await rejection(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: 'none', UploadId: created.UploadId, MultipartUpload: { Parts: [] } })))
  t.same([sdk.name, sdk.$metadata.httpStatusCode], ['MalformedXML', 400], 'Parts: [] through the SDK')
  for (const body of ['<CompleteMultipartUpload></CompleteMultipartUpload>', '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>']) {
    const answer = await raw(server, 'POST', `/photos/none?uploadId=${encodeURIComponent(created.UploadId!)}`, { 'content-type': 'application/xml' }, [body])
    t.equal(answer.status, 400, body)
    t.match(answer.body, /<Code>MalformedXML<\/Code>/, body)
  }
  t.equal((await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'none', UploadId: created.UploadId }))).Parts?.length, 1, 'the upload and its part are kept')
  t.equal(await (await server.registry.open('photos'))!.head('none'), null, 'no empty object was made')
})

t.test('ListMultipartUploads and ListParts, with pages', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const ids: Record<string, string> = {}
  for (const key of ['docs/b', 'docs/a', 'other']) {
    ids[key] = (await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: key, StorageClass: 'STANDARD_IA' }))).UploadId!
  }
  const all = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos' }))
  t.same(all.Uploads?.map(u => [u.Key, u.UploadId]), [['docs/a', ids['docs/a']], ['docs/b', ids['docs/b']], ['other', ids.other]])
  t.equal(all.Uploads?.[0].StorageClass, 'STANDARD_IA')
  t.ok(all.Uploads?.[0].Initiated instanceof Date)
  t.equal(all.IsTruncated, false)
  const first = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', MaxUploads: 1 }))
  t.equal(first.IsTruncated, true)
  const second = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', MaxUploads: 1, KeyMarker: first.NextKeyMarker, UploadIdMarker: first.NextUploadIdMarker }))
  t.same(second.Uploads?.map(u => u.Key), ['docs/b'])
  const docs = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', Prefix: 'docs/' }))
  t.same(docs.Uploads?.map(u => u.Key), ['docs/a', 'docs/b'])
  const rolled = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', Delimiter: '/' }))
  t.same([rolled.Uploads?.map(u => u.Key), rolled.CommonPrefixes?.map(p => p.Prefix), rolled.Delimiter], [['other'], ['docs/'], '/'], 'CommonPrefixes with a delimiter')
  const rolledPage = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', Delimiter: '/', MaxUploads: 1 }))
  t.same([rolledPage.Uploads, rolledPage.CommonPrefixes?.map(p => p.Prefix), rolledPage.IsTruncated, rolledPage.NextKeyMarker], [undefined, ['docs/'], true, 'docs/'])
  const rolledRest = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', Delimiter: '/', KeyMarker: rolledPage.NextKeyMarker }))
  t.same([rolledRest.Uploads?.map(u => u.Key), rolledRest.CommonPrefixes, rolledRest.IsTruncated], [['other'], undefined, false], 'the next page starts after the prefix\'s keys')

  const uploadId = ids['docs/a']
  for (const PartNumber of [2, 1, 3]) await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'docs/a', UploadId: uploadId, PartNumber, Body: `part-${PartNumber}` }))
  const parts = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'docs/a', UploadId: uploadId }))
  t.same(parts.Parts?.map(p => [p.PartNumber, p.Size, p.ETag]), [1, 2, 3].map(n => [n, 6, `"${createHash('md5').update(`part-${n}`).digest('hex')}"`]))
  const page = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'docs/a', UploadId: uploadId, MaxParts: 2 }))
  t.equal(page.IsTruncated, true)
  t.equal(page.NextPartNumberMarker, '2')
  const rest = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'docs/a', UploadId: uploadId, PartNumberMarker: page.NextPartNumberMarker }))
  t.same(rest.Parts?.map(p => p.PartNumber), [3])
  const missing = await rejection(s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'docs/a', UploadId: 'nope-nope-nope-nope' })))
  t.equal(missing.name, 'NoSuchUpload')
  await s3.send(new AbortMultipartUploadCommand({ Bucket: 'photos', Key: 'other', UploadId: ids.other }))
  t.same((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos' }))).Uploads?.map(u => u.Key), ['docs/a', 'docs/b'])
})

t.test('conditional CompleteMultipartUpload: If-None-Match (* or etags) and If-Match', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const existing = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'taken', Body: 'already here' }))
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'taken' }))
  const part = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'taken', UploadId: created.UploadId, PartNumber: 1, Body: 'new bytes' }))
  const complete = (condition: { IfNoneMatch?: string, IfMatch?: string }): Promise<unknown> => s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'taken', UploadId: created.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] }, ...condition
  }))
  const refused = await rejection(complete({ IfNoneMatch: '*' }))
  t.equal(refused.name, 'PreconditionFailed')
  t.equal(refused.$metadata.httpStatusCode, 412)
  const wrong = await rejection(complete({ IfMatch: '"0000"' }))
  t.equal(wrong.name, 'PreconditionFailed')
  const named = await rejection(complete({ IfNoneMatch: existing.ETag }))
  t.equal(named.name, 'PreconditionFailed', 'If-None-Match naming the etag of the object it would replace')
  await complete({ IfMatch: existing.ETag, IfNoneMatch: '"0000"' })
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'taken' }))
  t.equal(await got.Body!.transformToString(), 'new bytes')
})
