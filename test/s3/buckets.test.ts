/** Bucket operations and listings through the AWS SDK v3 over a real socket. */
import t from 'tap'
import {
  CreateBucketCommand, DeleteBucketCommand, DeleteBucketCorsCommand, DeleteBucketLifecycleCommand, GetBucketCorsCommand,
  GetBucketEncryptionCommand, GetBucketLifecycleConfigurationCommand, GetBucketLocationCommand, HeadBucketCommand,
  ListBucketsCommand, ListObjectsCommand, ListObjectsV2Command, PutBucketCorsCommand, PutBucketLifecycleConfigurationCommand,
  PutObjectCommand, paginateListBuckets, paginateListObjectsV2, CreateMultipartUploadCommand, UploadPartCommand, ListPartsCommand
} from '@aws-sdk/client-s3'
import { raw, rejection, s3Server, type RawAnswer } from './fixture.js'
import { s3AccessPolicy } from '../../src/s3/index.js'

t.test('create, list, head, locate, delete buckets', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  await s3.send(new CreateBucketCommand({ Bucket: 'fresh' }))
  t.ok(await registry.info('fresh'), 'the registry has it')
  const again = await rejection(s3.send(new CreateBucketCommand({ Bucket: 'fresh' })))
  t.equal(again.name, 'BucketAlreadyOwnedByYou')
  const invalid = await rejection(s3.send(new CreateBucketCommand({ Bucket: 'Not_Valid' })))
  t.equal(invalid.name, 'InvalidBucketName')
  const listed = await s3.send(new ListBucketsCommand({}))
  t.same(listed.Buckets?.map(b => b.Name), ['fresh', 'photos'])
  t.ok(listed.Buckets?.[0].CreationDate instanceof Date)
  await s3.send(new HeadBucketCommand({ Bucket: 'fresh' }))
  const missing = await rejection(s3.send(new HeadBucketCommand({ Bucket: 'nothere' })))
  t.equal(missing.$metadata.httpStatusCode, 404)
  const location = await s3.send(new GetBucketLocationCommand({ Bucket: 'fresh' }))
  t.equal(location.LocationConstraint, 'auto', 'the region the request was signed for')
  await s3.send(new PutObjectCommand({ Bucket: 'fresh', Key: 'k', Body: 'v' }))
  const notEmpty = await rejection(s3.send(new DeleteBucketCommand({ Bucket: 'fresh' })))
  t.equal(notEmpty.name, 'BucketNotEmpty')
  t.equal(notEmpty.$metadata.httpStatusCode, 409)
  const noBucket = await rejection(s3.send(new PutObjectCommand({ Bucket: 'nothere', Key: 'k', Body: 'v' })))
  t.equal(noBucket.name, 'NoSuchBucket')
  await s3.send(new DeleteBucketCommand({ Bucket: 'photos' }))
  t.equal(await registry.info('photos'), null)
})

t.test('ListBuckets: prefix, max-buckets and continuation tokens, as S3 pages them', async t => {
  const { client, endpoint } = await s3Server(t)
  const s3 = client()
  for (const name of ['test-a', 'test-b', 'test-c', 'prod-a']) await s3.send(new CreateBucketCommand({ Bucket: name }))
  const all = await s3.send(new ListBucketsCommand({}))
  t.same(all.Buckets?.map(b => b.Name), ['photos', 'prod-a', 'test-a', 'test-b', 'test-c'])
  t.equal(all.ContinuationToken, undefined)
  const tests = await s3.send(new ListBucketsCommand({ Prefix: 'test-' }))
  t.same(tests.Buckets?.map(b => b.Name), ['test-a', 'test-b', 'test-c'], 'only the names with the prefix')
  t.equal(tests.Prefix, 'test-')
  const none = await s3.send(new ListBucketsCommand({ Prefix: 'staging-' }))
  t.same(none.Buckets ?? [], [])
  const first = await s3.send(new ListBucketsCommand({ Prefix: 'test-', MaxBuckets: 2 }))
  t.same(first.Buckets?.map(b => b.Name), ['test-a', 'test-b'])
  t.type(first.ContinuationToken, 'string')
  const second = await s3.send(new ListBucketsCommand({ Prefix: 'test-', MaxBuckets: 2, ContinuationToken: first.ContinuationToken }))
  t.same(second.Buckets?.map(b => b.Name), ['test-c'])
  t.equal(second.ContinuationToken, undefined, 'the last page has no token')
  const paged: string[] = []
  for await (const page of paginateListBuckets({ client: s3, pageSize: 1 }, {})) paged.push(...(page.Buckets ?? []).map(b => b.Name ?? ''))
  t.same(paged, ['photos', 'prod-a', 'test-a', 'test-b', 'test-c'], 'the SDK paginator walks every page once')
  const zero = await fetch(`${endpoint}/?max-buckets=0`)
  t.equal(zero.status, 400)
  t.match(await zero.text(), /<Code>InvalidArgument<\/Code>/)
  const tampered = await rejection(s3.send(new ListBucketsCommand({ MaxBuckets: 1, ContinuationToken: 'not a token' })))
  t.equal(tampered.name, 'InvalidArgument')
})

t.test('CORS, lifecycle and encryption map onto the bucket settings', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const noCors = await rejection(s3.send(new GetBucketCorsCommand({ Bucket: 'photos' })))
  t.equal(noCors.name, 'NoSuchCORSConfiguration')
  await s3.send(new PutBucketCorsCommand({
    Bucket: 'photos',
    CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://app.example'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 }] }
  }))
  t.same((await registry.info('photos'))?.settings.cors, [{ allowedOrigins: ['https://app.example'], allowedMethods: ['GET', 'PUT'], allowedHeaders: ['*'], exposeHeaders: ['ETag'], maxAgeSeconds: 600 }])
  const cors = await s3.send(new GetBucketCorsCommand({ Bucket: 'photos' }))
  t.same(cors.CORSRules?.[0].AllowedMethods, ['GET', 'PUT'])
  t.equal(cors.CORSRules?.[0].MaxAgeSeconds, 600)
  await s3.send(new DeleteBucketCorsCommand({ Bucket: 'photos' }))
  t.equal((await registry.info('photos'))?.settings.cors, null)

  await s3.send(new PutBucketLifecycleConfigurationCommand({
    Bucket: 'photos',
    LifecycleConfiguration: {
      Rules: [{ ID: 'abort-2d', Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 }, Expiration: { Days: 30 } }]
    }
  }))
  const stored = (await registry.info('photos'))?.settings.lifecycle as { rules: Array<Record<string, unknown>> }
  t.same(stored.rules[0], {
    id: 'abort-2d',
    enabled: true,
    conditions: { prefix: '' },
    deleteObjectsTransition: { condition: { type: 'Age', maxAge: 30 * 86400 } },
    abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 2 * 86400 } }
  }, 'stored in the management API\'s shape, which the sweeper reads')
  const lifecycle = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'photos' }))
  t.equal(lifecycle.Rules?.[0].AbortIncompleteMultipartUpload?.DaysAfterInitiation, 2)
  t.equal(lifecycle.Rules?.[0].Expiration?.Days, 30)
  await s3.send(new DeleteBucketLifecycleCommand({ Bucket: 'photos' }))
  const noLifecycle = await rejection(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'photos' })))
  t.equal(noLifecycle.name, 'NoSuchLifecycleConfiguration')

  const encryption = await s3.send(new GetBucketEncryptionCommand({ Bucket: 'photos' }))
  t.equal(encryption.ServerSideEncryptionConfiguration?.Rules?.[0].ApplyServerSideEncryptionByDefault?.SSEAlgorithm, 'AES256')
})

t.test('ListObjectsV2: prefix, delimiter, pages, start-after, byte order, url encoding', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const keys = ['a/1', 'a/2', 'a/b/3', 'b', 'c d+e', 'z\u{1F600}', 'z\uFFFD']
  for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: key }))
  const all = await s3.send(new ListObjectsV2Command({ Bucket: 'photos' }))
  t.same(all.Contents?.map(c => c.Key), ['a/1', 'a/2', 'a/b/3', 'b', 'c d+e', 'z\uFFFD', 'z\u{1F600}'], 'UTF-8 byte order')
  t.equal(all.KeyCount, 7)
  t.equal(all.Contents?.[0].Size, 3)
  t.equal(all.Contents?.[0].StorageClass, 'STANDARD')
  const rolled = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', Delimiter: '/' }))
  t.same(rolled.CommonPrefixes?.map(p => p.Prefix), ['a/'])
  t.same(rolled.Contents?.map(c => c.Key), ['b', 'c d+e', 'z\uFFFD', 'z\u{1F600}'])
  const inA = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'a/', Delimiter: '/' }))
  t.same(inA.Contents?.map(c => c.Key), ['a/1', 'a/2'])
  t.same(inA.CommonPrefixes?.map(p => p.Prefix), ['a/b/'])
  const pages: string[][] = []
  for await (const page of paginateListObjectsV2({ client: s3, pageSize: 2 }, { Bucket: 'photos', Delimiter: '/' })) {
    pages.push([...(page.CommonPrefixes ?? []).map(p => p.Prefix!), ...(page.Contents ?? []).map(c => c.Key!)])
  }
  t.same(pages, [['a/', 'b'], ['c d+e', 'z\uFFFD'], ['z\u{1F600}']])
  const after = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', StartAfter: 'b' }))
  t.same(after.Contents?.map(c => c.Key), ['c d+e', 'z\uFFFD', 'z\u{1F600}'])
  const encoded = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'c', EncodingType: 'url' }))
  t.same(encoded.Contents?.map(c => c.Key), ['c%20d%2Be'])
  t.equal(encoded.EncodingType, 'url')
  const none = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', MaxKeys: 0 }))
  t.equal(none.KeyCount, 0)
  t.equal(none.IsTruncated, false)
  const owned = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', FetchOwner: true, MaxKeys: 1 }))
  t.equal(owned.Contents?.[0].Owner?.ID, 'fsbucket')
  const badToken = await rejection(s3.send(new ListObjectsV2Command({ Bucket: 'photos', ContinuationToken: 'garbage!' })))
  t.equal(badToken.name, 'InvalidArgument')
})

t.test('ListObjects (V1): marker and NextMarker never repeat a common prefix', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  for (const key of ['a/1', 'a/2', 'b/1', 'c', 'd/1']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: key }))
  const seen: string[] = []
  let marker: string | undefined
  for (let i = 0; i < 10; i++) {
    const page = await s3.send(new ListObjectsCommand({ Bucket: 'photos', Delimiter: '/', MaxKeys: 1, Marker: marker }))
    seen.push(...(page.CommonPrefixes ?? []).map(p => p.Prefix!), ...(page.Contents ?? []).map(c => c.Key!))
    if (page.IsTruncated !== true) break
    marker = page.NextMarker
  }
  t.same(seen, ['a/', 'b/', 'c', 'd/'])
  const flat = await s3.send(new ListObjectsCommand({ Bucket: 'photos', Marker: 'b/1' }))
  t.same(flat.Contents?.map(c => c.Key), ['c', 'd/1'])
  t.equal(flat.IsTruncated, false)
  // max-keys 0 is an empty page, never truncated, a common prefix for marker or not (a paginator would find no NextMarker).
  for (const Marker of ['a/', 'b']) {
    const none = await s3.send(new ListObjectsCommand({ Bucket: 'photos', Delimiter: '/', MaxKeys: 0, Marker }))
    t.same([none.Contents, none.CommonPrefixes, none.IsTruncated], [undefined, undefined, false], `max-keys 0 after ${Marker}`)
  }
})

t.test('ListObjects V1 and V2: a marker or start-after that is a common prefix, or lies within one, lists nothing more of it', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  for (const key of ['a/1', 'a/2', 'a/b/3', 'b', 'c/1']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: key }))
  const shown = (page: { CommonPrefixes?: Array<{ Prefix?: string }>, Contents?: Array<{ Key?: string }>, IsTruncated?: boolean }): unknown =>
    [(page.CommonPrefixes ?? []).map(p => p.Prefix), (page.Contents ?? []).map(c => c.Key), page.IsTruncated]
  const v2 = async (StartAfter: string, more: { Prefix?: string, MaxKeys?: number, ContinuationToken?: string } = {}): Promise<unknown> =>
    shown(await s3.send(new ListObjectsV2Command({ Bucket: 'photos', Delimiter: '/', StartAfter, ...more })))
  const v1 = async (Marker: string, more: { Prefix?: string, MaxKeys?: number } = {}): Promise<unknown> =>
    shown(await s3.send(new ListObjectsCommand({ Bucket: 'photos', Delimiter: '/', Marker, ...more })))
  for (const [list, name] of [[v2, 'V2 start-after'], [v1, 'V1 marker']] as const) {
    t.same(await list('a/'), [['c/'], ['b'], false], `${name} a/: the common prefix itself`)
    t.same(await list('a/1'), [['c/'], ['b'], false], `${name} a/1: within it, keys of it after`)
    t.same(await list('a/b/3'), [['c/'], ['b'], false], `${name} a/b/3: its last key`)
    t.same(await list('a'), [['a/', 'c/'], ['b'], false], `${name} a: before it, so it is listed`)
    t.same(await list('c/'), [[], [], false], `${name} c/: nothing after it`)
    t.same(await list('a/', { MaxKeys: 1 }), [[], ['b'], true], `${name} a/, max-keys 1`)
    t.same(await list('a/b/', { Prefix: 'a/' }), [[], [], false], `${name} a/b/ under the prefix a/`)
    t.same(await list('a/1', { Prefix: 'a/' }), [['a/b/'], ['a/2'], false], `${name} a/1 under the prefix a/: a key, no common prefix`)
  }
  const first = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', Delimiter: '/', StartAfter: 'a/1', MaxKeys: 1 }))
  t.same(await v2('a/1', { ContinuationToken: first.NextContinuationToken }), [['c/'], [], false], 'the next page goes on after it')
})

t.test('ListParts with max-parts 0: an empty page, never truncated (a loop following it would never end)', async t => {
  const { client } = await s3Server(t)
  const s3 = client({ requestChecksumCalculation: 'WHEN_REQUIRED' })
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'parted' }))
  await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'parted', UploadId, PartNumber: 1, Body: 'part' }))
  const none = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'parted', UploadId, MaxParts: 0 }))
  t.same([none.Parts, none.IsTruncated], [undefined, false])
})

t.test('CORS on the S3 port: an unsigned preflight does not tell a missing bucket from one without a matching rule', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy({ accessKeyId: 'key', secretAccessKey: 'secret' }, null, true) })
  await server.registry.create('ruled')
  await server.registry.updateSettings('ruled', { cors: [{ allowedOrigins: ['https://app.example'], allowedMethods: ['GET'] }] })
  const preflight = async (bucket: string): Promise<RawAnswer> =>
    await raw(server, 'OPTIONS', `/${bucket}/upload.txt`, { origin: 'https://evil.example', 'access-control-request-method': 'PUT' })
  // The request's own id and the echoed path aside, every refusal is the same document.
  const shape = (answer: RawAnswer): unknown => ({
    status: answer.status,
    type: answer.headers['content-type'],
    body: answer.body.replace(/<RequestId>[^<]*<\/RequestId>/, '').replace(/<Resource>[^<]*<\/Resource>/, '')
  })
  const missing = await preflight('nothere')
  t.equal(missing.status, 403)
  t.match(missing.body, /<Code>AccessForbidden<\/Code>/)
  t.same(shape(await preflight('photos')), shape(missing), 'a bucket without rules')
  t.same(shape(await preflight('ruled')), shape(missing), 'a bucket whose rules do not match')
})

t.test('CORS on the S3 port: preflights and answers follow the bucket rules', async t => {
  const { client, endpoint } = await s3Server(t)
  const preflight = async (origin: string, method: string, headers = 'content-type'): Promise<Response> => await fetch(`${endpoint}/photos/upload.txt`, {
    method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers }
  })
  const off = await preflight('https://app.example', 'PUT')
  t.equal(off.status, 403)
  t.match(await off.text(), /<Code>AccessForbidden<\/Code>/)
  await client().send(new PutBucketCorsCommand({
    Bucket: 'photos',
    CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://*.example'], AllowedMethods: ['PUT', 'GET'], AllowedHeaders: ['content-type', 'x-amz-*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 60 }] }
  }))
  const allowed = await preflight('https://app.example', 'PUT', 'content-type, x-amz-meta-a')
  t.equal(allowed.status, 200)
  t.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example')
  t.equal(allowed.headers.get('access-control-allow-methods'), 'PUT, GET')
  t.equal(allowed.headers.get('access-control-allow-headers'), 'content-type, x-amz-meta-a')
  t.equal(allowed.headers.get('access-control-max-age'), '60')
  t.equal((await preflight('https://other.test', 'PUT')).status, 403, 'another origin')
  t.equal((await preflight('https://app.example', 'DELETE')).status, 403, 'another method')
  t.equal((await preflight('https://app.example', 'PUT', 'authorization')).status, 403, 'a header not allowed')
  const put = await fetch(`${endpoint}/photos/upload.txt`, { method: 'PUT', body: 'x', headers: { origin: 'https://app.example' } })
  t.equal(put.status, 200)
  t.equal(put.headers.get('access-control-allow-origin'), 'https://app.example')
  t.equal(put.headers.get('access-control-expose-headers'), 'ETag')
})
