/**
 * Signatures over a real socket: SDK-signed requests, presigned GET/PUT used
 * with plain fetch, expiry, tampering, wrong secrets and unknown keys,
 * anonymous access, and virtual-host style addressing.
 */
import t from 'tap'
import http from 'node:http'
import { createHash } from 'node:crypto'
import type { LookupFunction } from 'node:net'
import { CopyObjectCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, ListPartsCommand, PutObjectCommand, UploadPartCopyCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { s3AccessPolicy, s3StartupNote } from '../../src/s3/index.js'
import { redactedUrl } from '../../src/doors/redacted-url.js'
import { devCredentials, presignedPath, rejection, s3Server } from './fixture.js'

const configured = { accessKeyId: 'AKIDTESTTEST', secretAccessKey: 'the-real-secret' }

t.test('a configured pair: signed requests verify, wrong secrets and unknown keys do not', async t => {
  const { client } = await s3Server(t, { policy: s3AccessPolicy(configured, 'token', true) })
  await client({ credentials: configured }).send(new PutObjectCommand({ Bucket: 'photos', Key: 'k', Body: 'v' }))
  const wrong = await rejection(client({ credentials: { ...configured, secretAccessKey: 'guess' } }).send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' })))
  t.equal(wrong.name, 'SignatureDoesNotMatch')
  t.equal(wrong.$metadata.httpStatusCode, 403)
  const unknown = await rejection(client({ credentials: devCredentials }).send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' })))
  t.equal(unknown.name, 'InvalidAccessKeyId', 'the development pair is off once a pair is configured')
  const regionUs = await client({ credentials: configured, region: 'us-east-1' }).send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' }))
  t.equal(await regionUs.Body!.transformToString(), 'v', 'any region verifies')
})

t.test('anonymous requests: refused without the development mode, public buckets readable', async t => {
  const { endpoint, registry, client } = await s3Server(t, { policy: s3AccessPolicy(configured, null, false) })
  await client({ credentials: configured }).send(new PutObjectCommand({ Bucket: 'photos', Key: 'k', Body: 'v' }))
  const put = await fetch(`${endpoint}/photos/anon`, { method: 'PUT', body: 'x' })
  t.equal(put.status, 403)
  t.match(await put.text(), /<Code>AccessDenied<\/Code>/)
  t.ok(put.headers.get('x-amz-request-id'), 'every answer has a request id')
  t.equal((await fetch(`${endpoint}/photos/k`)).status, 403, 'a private bucket is not readable')
  await registry.updateSettings('photos', { public: true })
  const got = await fetch(`${endpoint}/photos/k`)
  t.equal(got.status, 200)
  t.equal(await got.text(), 'v')
  t.equal((await fetch(`${endpoint}/photos?list-type=2`)).status, 200, 'listing a public bucket')
  t.equal((await fetch(`${endpoint}/photos/k`, { method: 'DELETE' })).status, 403, 'writes are still refused')
})

t.test('a bucket served publicly for the run (serve --public) is readable anonymously, as on the HTTP routes', async t => {
  const { endpoint, registry, client } = await s3Server(t, { policy: s3AccessPolicy(configured, null, false, ['photos']) })
  await registry.create('private')
  for (const bucket of ['photos', 'private']) await client({ credentials: configured }).send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }))
  const got = await fetch(`${endpoint}/photos/k`)
  t.equal(got.status, 200)
  t.equal(await got.text(), 'v')
  t.equal((await fetch(`${endpoint}/photos/k`, { method: 'HEAD' })).status, 200)
  t.equal((await fetch(`${endpoint}/photos?list-type=2`)).status, 200, 'listed')
  t.equal((await registry.info('photos'))?.settings.public, false, 'its settings unchanged')
  t.equal((await fetch(`${endpoint}/private/k`)).status, 403, 'another bucket is not')
  t.equal((await fetch(`${endpoint}/photos/anon`, { method: 'PUT', body: 'x' })).status, 403, 'writes are still refused')
  t.equal((await fetch(`${endpoint}/photos/k`, { method: 'DELETE' })).status, 403)
})

t.test('an anonymous read of a public bucket takes no response-* overrides: it could serve any object as a page of this origin', async t => {
  const { endpoint, client } = await s3Server(t, { policy: s3AccessPolicy(configured, null, false, ['photos']) })
  const s3 = client({ credentials: configured })
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'note.txt', Body: '<script>1</script>', ContentType: 'text/plain' }))
  for (const query of ['response-content-type=text%2Fhtml', 'response-content-disposition=inline', 'response-cache-control=no-cache&x=1']) {
    for (const method of ['GET', 'HEAD']) {
      const refused = await fetch(`${endpoint}/photos/note.txt?${query}`, { method })
      t.equal(refused.status, 400, `anonymous ${method} ?${query}`)
      if (method === 'GET') t.match(await refused.text(), /<Code>InvalidRequest<\/Code>.*anonymous GET requests/s)
    }
  }
  t.equal((await fetch(`${endpoint}/photos/note.txt`)).status, 200, 'without an override it reads')
  const signed = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'note.txt', ResponseContentType: 'text/html' }))
  t.equal(signed.ContentType, 'text/html', 'a signed read may still override')
  await signed.Body?.transformToString()
})

t.test('a presigned URL\'s x-amz-* query parameters act as headers: metadata, storage class, and a checksum the body must match', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const withMetadata = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'photos', Key: 'meta', Metadata: { owner: 'ädå' }, StorageClass: 'STANDARD_IA' }), { expiresIn: 60 })
  t.match(withMetadata, /x-amz-meta-owner=/, 'the SDK moves them into the URL')
  t.match(withMetadata, /x-amz-checksum-crc32=AAAAAA%3D%3D/, 'with the checksum of an empty body, made before the body was known')
  const refused = await fetch(withMetadata, { method: 'PUT', body: 'not empty' })
  t.equal(refused.status, 400, 'a body that does not match the signed checksum, as S3 and the hosted service refuse it')
  t.match(await refused.text(), /<Code>BadDigest<\/Code>/)
  t.equal(await (await registry.open('photos'))!.head('meta'), null, 'nothing stored')

  const summed = await getSignedUrl(client({ requestChecksumCalculation: 'WHEN_REQUIRED' }),
    new PutObjectCommand({ Bucket: 'photos', Key: 'meta', Metadata: { owner: 'ädå' }, StorageClass: 'STANDARD_IA', ChecksumCRC32: 'yg3HWA==' }), { expiresIn: 60 })
  t.equal((await fetch(summed, { method: 'PUT', body: 'not empty' })).status, 200, 'the body\'s own checksum')
  const stored = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'meta', ChecksumMode: 'ENABLED' }))
  t.same((await (await registry.open('photos'))!.head('meta'))?.customMetadata, { owner: 'ädå' }, 'UTF-8 metadata, as sent')
  t.equal(stored.StorageClass, 'STANDARD_IA')
  t.equal(stored.ChecksumCRC32, 'yg3HWA==')
  const wrong = await getSignedUrl(client({ requestChecksumCalculation: 'WHEN_REQUIRED' }), new PutObjectCommand({ Bucket: 'photos', Key: 'meta', ChecksumCRC32: 'AAAAAQ==' }), { expiresIn: 60 })
  t.equal((await fetch(wrong, { method: 'PUT', body: 'other bytes' })).status, 400)
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'meta' }))).ContentLength, 9, 'the object stays')
})

t.test('a presigned CopyObject or UploadPartCopy URL copies (its source travels in the query); never a PUT of its empty body', async t => {
  const { client } = await s3Server(t)
  const s3 = client({ requestChecksumCalculation: 'WHEN_REQUIRED' })
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'src.txt', Body: 'hello source' }))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'dst.txt', Body: 'old destination' }))
  const copyUrl = await getSignedUrl(s3, new CopyObjectCommand({ Bucket: 'photos', Key: 'dst.txt', CopySource: 'photos/src.txt' }), { expiresIn: 60 })
  t.match(copyUrl, /x-amz-copy-source=/, 'the SDK moves the source into the URL')
  const copied = await fetch(copyUrl, { method: 'PUT' })
  t.equal(copied.status, 200)
  t.match(await copied.text(), /<CopyObjectResult[ >]/, 'answered as a copy')
  t.equal(await (await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'dst.txt' }))).Body!.transformToString(), 'hello source', 'the destination holds the source\'s bytes')

  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'parts.txt' }))
  const partUrl = await getSignedUrl(s3, new UploadPartCopyCommand({ Bucket: 'photos', Key: 'parts.txt', UploadId, PartNumber: 1, CopySource: 'photos/src.txt' }), { expiresIn: 60 })
  const part = await fetch(partUrl, { method: 'PUT' })
  t.equal(part.status, 200)
  t.match(await part.text(), /<CopyPartResult[ >]/, 'answered as a part copy')
  const parts = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'parts.txt', UploadId }))
  t.same(parts.Parts?.map(p => p.Size), [12], 'the part holds the source\'s 12 bytes, not an empty body')
})

t.test('a request signed both ways (an Authorization header and a presigned query) is refused 400 InvalidArgument', async t => {
  const server = await s3Server(t)
  const path = await presignedPath(server, 'GET', '/photos/k')
  const res = await fetch(`${server.endpoint}${path}`, { headers: { authorization: 'AWS4-HMAC-SHA256 Credential=x/20260101/auto/s3/aws4_request, SignedHeaders=host, Signature=00' } })
  t.equal(res.status, 400)
  const text = await res.text()
  t.match(text, /<Code>InvalidArgument<\/Code>/)
  t.match(text, /<ArgumentName>Authorization<\/ArgumentName>/)
  // A Signature Version 2 query beside the header, too.
  const v2 = await fetch(`${server.endpoint}/photos/k?AWSAccessKeyId=x&Expires=1&Signature=y`, { headers: { authorization: 'AWS4-HMAC-SHA256 Credential=x/20260101/auto/s3/aws4_request, SignedHeaders=host, Signature=00' } })
  t.equal(v2.status, 400)
  t.match(await v2.text(), /<Code>InvalidArgument<\/Code>/)
})

t.test('presigned GET and PUT work with plain fetch; expired and tampered ones do not', async t => {
  const { client } = await s3Server(t)
  // Without a body to sum, an SDK left to its default signs the checksum of an empty one into a PUT URL (see below).
  const s3 = client({ requestChecksumCalculation: 'WHEN_REQUIRED' })
  const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'photos', Key: 'dir/pre signed.txt', ContentType: 'text/plain' }), { expiresIn: 60 })
  const put = await fetch(putUrl, { method: 'PUT', body: 'uploaded by url', headers: { 'content-type': 'text/plain' } })
  t.equal(put.status, 200)
  const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'photos', Key: 'dir/pre signed.txt', ResponseContentDisposition: 'attachment; filename="x.txt"' }), { expiresIn: 60 })
  const got = await fetch(getUrl)
  t.equal(got.status, 200)
  t.equal(await got.text(), 'uploaded by url')
  t.equal(got.headers.get('content-disposition'), 'attachment; filename="x.txt"')

  const tampered = await fetch(getUrl.replace('response-content-disposition=', 'response-content-disposition=x'))
  t.equal(tampered.status, 403)
  t.match(await tampered.text(), /<Code>SignatureDoesNotMatch<\/Code>/)
  const otherKey = await fetch(getUrl.replace('pre%20signed', 'pre%20signeD'))
  t.equal(otherKey.status, 403)

  const expiredUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'photos', Key: 'dir/pre signed.txt' }), { expiresIn: 1, signingDate: new Date(Date.now() - 10_000) })
  const expired = await fetch(expiredUrl)
  t.equal(expired.status, 403)
  t.match(await expired.text(), /<Code>AccessDenied<\/Code><Message>Request has expired<\/Message>/)
})

t.test('a presigned URL that signs X-Amz-Content-Sha256 takes only that body, however the SDK spelled the name; UNSIGNED-PAYLOAD there takes any', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  const hash = createHash('sha256').update('the signed bytes').digest('hex')
  for (const name of ['X-Amz-Content-Sha256', 'x-amz-content-sha256']) {
    const path = await presignedPath(server, 'PUT', '/photos/hashed', { headers: { [name]: hash } })
    t.match(path, `${name}=${hash}`, 'the hash is in the URL')
    const refused = await fetch(`${server.endpoint}${path}`, { method: 'PUT', body: 'other bytes' })
    t.equal(refused.status, 400, `${name}: another body`)
    t.match(await refused.text(), /<Code>XAmzContentSHA256Mismatch<\/Code>/)
    t.equal(await bucket.head('hashed'), null, 'nothing stored')
    const accepted = await fetch(`${server.endpoint}${path}`, { method: 'PUT', body: 'the signed bytes' })
    t.equal(accepted.status, 200, `${name}: the signed body`)
    const got = await bucket.get('hashed')
    t.equal(got !== null && 'text' in got ? await got.text() : null, 'the signed bytes')
    await bucket.delete('hashed')
  }
  const unsigned = await presignedPath(server, 'PUT', '/photos/any', { headers: { 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' } })
  t.match(unsigned, 'X-Amz-Content-Sha256=UNSIGNED-PAYLOAD')
  t.equal((await fetch(`${server.endpoint}${unsigned}`, { method: 'PUT', body: 'any bytes' })).status, 200, 'UNSIGNED-PAYLOAD signs no body')
})

t.test('an x-amz-content-sha256 header other than the hash a presigned URL signs is refused before the body, whichever would match', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')
  const path = await presignedPath(server, 'PUT', '/photos/hashed', { headers: { 'X-Amz-Content-Sha256': sha256('the signed bytes') } })
  for (const [header, body] of [[sha256('other bytes'), 'other bytes'], ['UNSIGNED-PAYLOAD', 'other bytes'], [sha256('other bytes'), 'the signed bytes']]) {
    const refused = await fetch(`${server.endpoint}${path}`, { method: 'PUT', body, headers: { 'x-amz-content-sha256': header } })
    t.equal(refused.status, 400, `header ${header}, body ${body}`)
    t.match(await refused.text(), /<Code>XAmzContentSHA256Mismatch<\/Code>/)
    t.equal(await bucket.head('hashed'), null, 'nothing stored')
  }
  const repeated = `${path}&X-Amz-Content-Sha256=UNSIGNED-PAYLOAD`
  t.match(await (await fetch(`${server.endpoint}${repeated}`, { method: 'PUT', body: 'other bytes' })).text(), /<Code>XAmzContentSHA256Mismatch<\/Code>/, 'the parameter twice, with two values')
  const same = await fetch(`${server.endpoint}${path}`, { method: 'PUT', body: 'the signed bytes', headers: { 'x-amz-content-sha256': sha256('the signed bytes') } })
  t.equal(same.status, 200, 'the header saying the same')
})

t.test('a presigned URL dated over 15 minutes ahead is not yet valid; an X-Amz-Expires that is not a plain decimal is refused', async t => {
  const server = await s3Server(t)
  await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'k', Body: 'v' }))
  const inTen = await presignedPath(server, 'GET', '/photos/k', { signingDate: new Date(Date.now() + 10 * 60_000) })
  t.equal((await fetch(`${server.endpoint}${inTen}`)).status, 200, 'ten minutes ahead: within the clock skew S3 allows')
  const ahead = await fetch(`${server.endpoint}${await presignedPath(server, 'GET', '/photos/k', { signingDate: new Date(Date.now() + 20 * 60_000), expiresIn: 604_800 })}`)
  t.equal(ahead.status, 403, 'twenty minutes ahead')
  t.match(await ahead.text(), /<Code>AccessDenied<\/Code><Message>Request is not yet valid<\/Message>/)
  for (const expires of ['+60', '0x10', '1e3', ' 60', '60.0', '60 ', '']) {
    const path = await presignedPath(server, 'GET', '/photos/k', { expiresIn: expires })
    t.match(path, `X-Amz-Expires=${encodeURIComponent(expires)}&`, 'signed as written')
    const answer = await fetch(`${server.endpoint}${path}`)
    t.equal(answer.status, 400, JSON.stringify(expires))
    t.match(await answer.text(), /<Code>AuthorizationQueryParametersError<\/Code><Message>X-Amz-Expires should be a number<\/Message>/)
  }
  t.equal((await fetch(`${server.endpoint}${await presignedPath(server, 'GET', '/photos/k', { expiresIn: '060' })}`)).status, 200, 'leading zeros are a plain decimal')
})

t.test('virtual-host style: <bucket>.localhost and <bucket>.<--s3-domain>', async t => {
  const { port, client } = await s3Server(t, { domains: ['s3.example.test'] })
  // Every host name resolves to the test server.
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }])
    else callback(null, '127.0.0.1', 4)
  }) as unknown as LookupFunction
  const httpAgent = new http.Agent({ lookup })
  t.teardown(() => httpAgent.destroy())
  for (const host of ['localhost', 's3.example.test']) {
    const s3 = client({ endpoint: `http://${host}:${port}`, forcePathStyle: false, requestHandler: { httpAgent } })
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `vhost/${host}`, Body: host }))
    const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: `vhost/${host}` }))
    t.equal(await got.Body!.transformToString(), host)
  }
  const listed = await client().send(new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'vhost/' }))
  t.same(listed.Contents?.map(c => c.Key), ['vhost/localhost', 'vhost/s3.example.test'], 'the same bucket through path style')
})

t.test('no secret reaches a log line: presigned URLs are redacted, a configured secret is never printed', async t => {
  const url = '/photos/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20260101%2Fauto%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=abcdef0123'
  const redacted = redactedUrl(url)
  t.notMatch(redacted, /abcdef0123/)
  t.notMatch(redacted, /AKID/)
  t.match(redacted, /X-Amz-Expires=60/, 'the rest of the URL stays')
  const [fields, message] = s3StartupNote(s3AccessPolicy(configured, null, true), '127.0.0.1', 8788)
  t.notMatch(JSON.stringify(fields) + message, /the-real-secret/)
  t.equal(fields.accessKeyId, configured.accessKeyId)
  const [dev] = s3StartupNote(s3AccessPolicy(null, null, true), '127.0.0.1', 8788)
  t.equal(dev.secretAccessKey, 'fsbucket-dev-secret', 'the public development pair is printed whole')
  const [none, refusal] = s3StartupNote(s3AccessPolicy(null, 'token', true), '::1', 8788)
  t.equal(none.endpoint, 'http://[::1]:8788')
  t.match(refusal, /no key pair configured/)
})
