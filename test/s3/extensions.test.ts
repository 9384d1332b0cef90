/** The hosted service's S3 extensions: cf-create-bucket-if-missing, the MERGE metadata directive, ListBuckets' cf-* paging. */
import t from 'tap'
import {
  CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, HeadObjectCommand, ListBucketsCommand, PutObjectCommand,
  type S3Client
} from '@aws-sdk/client-s3'
import { rejection, s3Server } from './fixture.js'

interface Extended { headers: Record<string, string>, answered: Record<string, string> }

/** Sends `command` with extra request headers (added before signing), and keeps the answer's headers. */
async function sendWith<T> (s3: S3Client, command: any, headers: Record<string, string>): Promise<T & Extended> {
  const answered: Record<string, string> = {}
  command.middlewareStack.add((next: any) => async (args: any) => {
    Object.assign(args.request.headers, headers)
    const result = await next(args)
    Object.assign(answered, result.response?.headers ?? {})
    return result
  }, { step: 'build' })
  const output = await s3.send(command)
  return Object.assign(output as object, { headers, answered }) as T & Extended
}

t.test('cf-create-bucket-if-missing: true creates the bucket for PutObject and CreateMultipartUpload', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const missing = await rejection(s3.send(new PutObjectCommand({ Bucket: 'made-on-put', Key: 'k', Body: 'v' })))
  t.equal(missing.name, 'NoSuchBucket', 'without the header a missing bucket stays missing')
  const ignored = await rejection(sendWith(s3, new PutObjectCommand({ Bucket: 'made-on-put', Key: 'k', Body: 'v' }), { 'cf-create-bucket-if-missing': 'false' }))
  t.equal(ignored.name, 'NoSuchBucket', 'only `true` asks for it')
  await sendWith(s3, new PutObjectCommand({ Bucket: 'made-on-put', Key: 'k', Body: 'v' }), { 'cf-create-bucket-if-missing': 'true' })
  t.ok(await registry.info('made-on-put'), 'the registry has the bucket')
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'made-on-put', Key: 'k' }))
  t.equal(head.ContentLength, 1, 'and the object was written into it')
  await sendWith(s3, new PutObjectCommand({ Bucket: 'made-on-put', Key: 'k2', Body: 'w' }), { 'cf-create-bucket-if-missing': 'true' })
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'made-on-put', Key: 'k2' }))).ContentLength, 1, 'an existing bucket is written as it is')
  const upload = await sendWith<{ UploadId?: string }>(s3, new CreateMultipartUploadCommand({ Bucket: 'made-on-upload', Key: 'big' }), { 'cf-create-bucket-if-missing': 'true' })
  t.type(upload.UploadId, 'string')
  t.ok(await registry.info('made-on-upload'), 'CreateMultipartUpload creates it too')
  const invalid = await rejection(sendWith(s3, new PutObjectCommand({ Bucket: 'xn--reserved', Key: 'k', Body: 'v' }), { 'cf-create-bucket-if-missing': 'true' }))
  t.equal(invalid.name, 'InvalidBucketName')
  t.equal(invalid.$metadata.httpStatusCode, 400)
  const tooShort = await rejection(sendWith(s3, new PutObjectCommand({ Bucket: 'ab', Key: 'k', Body: 'v' }), { 'cf-create-bucket-if-missing': 'true' }))
  t.equal(tooShort.name, 'InvalidBucketName', 'the registry judges the name')
})

t.test('x-amz-metadata-directive: MERGE lays the request\'s metadata over the source\'s', async t => {
  const { client, registry } = await s3Server(t)
  await registry.create('other')
  const s3 = client()
  await s3.send(new PutObjectCommand({
    Bucket: 'photos', Key: 'src', Body: 'hello', ContentType: 'text/plain', CacheControl: 'max-age=60', Metadata: { a: '1', b: '2' }
  }))
  for (const bucket of ['photos', 'other']) {
    await s3.send(new CopyObjectCommand({
      Bucket: bucket, Key: 'merged', CopySource: 'photos/src', MetadataDirective: 'MERGE' as any, Metadata: { b: 'two', c: '3' }, ContentType: 'text/x-new'
    }))
    const merged = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'merged' }))
    t.same(merged.Metadata, { a: '1', b: 'two', c: '3' }, `${bucket}: the source's keys kept, the request's win`)
    t.equal(merged.ContentType, 'text/x-new', `${bucket}: the request's content type`)
    t.equal(merged.CacheControl, 'max-age=60', `${bucket}: the source's cache control kept`)
  }
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'replaced', CopySource: 'photos/src', MetadataDirective: 'REPLACE', Metadata: { c: '3' } }))
  const replaced = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'replaced' }))
  t.same(replaced.Metadata, { c: '3' }, 'REPLACE still replaces')
  t.equal(replaced.CacheControl, undefined)
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'src', CopySource: 'photos/src', MetadataDirective: 'MERGE' as any, Metadata: { d: '4' } }))
  t.same((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'src' }))).Metadata, { a: '1', b: '2', d: '4' }, 'a merge onto itself adds a key')
  // A name such as __proto__ is an entry like any other, kept through a merge in one bucket and across two.
  await (await registry.open('photos'))!.put('proto', 'p', { customMetadata: JSON.parse('{"__proto__": "kept"}') })
  for (const bucket of ['photos', 'other']) {
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'proto-merged', CopySource: 'photos/proto', MetadataDirective: 'MERGE' as any, Metadata: { e: '5' } }))
    const kept = (await (await registry.open(bucket))!.head('proto-merged'))?.customMetadata ?? {}
    t.same(Object.entries(kept), [['__proto__', 'kept'], ['e', '5']], `${bucket}: __proto__ kept through a merge`)
  }
  const unknown = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'x', CopySource: 'photos/src', MetadataDirective: 'MIX' as any })))
  t.equal(unknown.name, 'InvalidArgument')
})

t.test('ListBuckets pages through the cf-* headers and answers the hosted service\'s elements and headers', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  for (const name of ['test-a', 'test-b', 'test-c', 'prod-a']) await s3.send(new CreateBucketCommand({ Bucket: name }))
  const plain = await sendWith<any>(s3, new ListBucketsCommand({}), {})
  t.same(plain.Buckets?.map((b: any) => b.Name), ['photos', 'prod-a', 'test-a', 'test-b', 'test-c'])
  t.equal(plain.answered['cf-is-truncated'], undefined, 'without the headers ListBuckets is S3\'s')
  const first = await sendWith<any>(s3, new ListBucketsCommand({}), { 'cf-prefix': 'test-', 'cf-max-keys': '2' })
  t.same(first.Buckets?.map((b: any) => b.Name), ['test-a', 'test-b'])
  t.equal(first.answered['cf-is-truncated'], 'true')
  const token = first.answered['cf-next-continuation-token']
  t.type(token, 'string')
  const second = await sendWith<any>(s3, new ListBucketsCommand({}), { 'cf-prefix': 'test-', 'cf-max-keys': '2', 'cf-continuation-token': token })
  t.same(second.Buckets?.map((b: any) => b.Name), ['test-c'])
  t.equal(second.answered['cf-is-truncated'], 'false')
  t.equal(second.answered['cf-next-continuation-token'], undefined, 'the last page has no token')
  const after = await sendWith<any>(s3, new ListBucketsCommand({}), { 'cf-start-after': 'prod-a' })
  t.same(after.Buckets?.map((b: any) => b.Name), ['test-a', 'test-b', 'test-c'], 'start-after leaves out the names up to it')
  const winning = await sendWith<any>(s3, new ListBucketsCommand({ Prefix: 'prod-' }), { 'cf-prefix': 'test-' })
  t.same(winning.Buckets?.map((b: any) => b.Name), ['test-a', 'test-b', 'test-c'], 'a header wins over the query parameter')
  const bad = await rejection(sendWith(s3, new ListBucketsCommand({}), { 'cf-max-keys': 'lots' }))
  t.equal(bad.name, 'InvalidArgument')
})

t.test('ListBuckets\' hosted paging answers its XML elements', async t => {
  const { client, endpoint } = await s3Server(t)
  const s3 = client()
  await s3.send(new CreateBucketCommand({ Bucket: 'second' }))
  const answer = await fetch(`${endpoint}/?max-keys=1&start-after=a`)
  const body = await answer.text()
  t.equal(answer.status, 200, body)
  t.match(body, /<Name>photos<\/Name>/)
  t.notMatch(body, /<Name>second<\/Name>/)
  t.match(body, /<IsTruncated>true<\/IsTruncated>/)
  t.match(body, /<NextContinuationToken>[^<]+<\/NextContinuationToken>/)
  t.match(body, /<KeyCount>1<\/KeyCount>/)
  t.match(body, /<MaxKeys>1<\/MaxKeys>/)
  t.match(body, /<StartAfter>a<\/StartAfter>/)
})
