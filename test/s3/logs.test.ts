/**
 * The S3 port's log: one line per request in the gateway's shape, whose
 * reqId is the x-amz-request-id the client was answered, and no credential
 * in any line (the Authorization header, a presigned URL's signature).
 */
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { pino } from 'pino'
import { CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { buildS3App, s3AccessPolicy } from '../../src/s3/index.js'
import { testdir } from '../testdir.js'
import { devCredentials } from './fixture.js'

/** An S3 app on a fresh registry with a bucket `photos`, logging to memory: its listening endpoint, the log's text and its request lines. */
async function loggedApp (t: Test): Promise<{ registry: BucketRegistry, endpoint: string, text: string[], lines: () => Array<Record<string, unknown>> }> {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos')
  const text: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { text.push(String(chunk)); done() } }))
  const app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: 'info', logger })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close(); await registry.close() })
  const endpoint = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  return { registry, endpoint, text, lines: () => text.map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l.msg === 'request') }
}

t.test('one line per request: reqId is the answered x-amz-request-id; bucket, key, status, bytes; no credential', async t => {
  const { endpoint, text, lines } = await loggedApp(t)
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: devCredentials, maxAttempts: 1 })
  t.teardown(() => { client.destroy() })

  const put = await client.send(new PutObjectCommand({ Bucket: 'photos', Key: 'dir/a b.txt', Body: 'hello world' }))
  const missing = await fetch(`${endpoint}/photos/none`)
  const presigned = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'photos', Key: 'dir/a b.txt' }), { expiresIn: 60 })
  const got = await fetch(presigned)
  t.equal(await got.text(), 'hello world')
  const refused = await fetch(`${endpoint}/photos?X-Amz-Credential=AKIDSECRET%2F20260101&X-Amz-Signature=feedbeef99`, { method: 'PATCH' })
  t.equal(refused.status, 405)

  const [putLine, missingLine, getLine, refusedLine, ...more] = lines()
  t.same(more, [], 'one line per request')
  t.match(putLine, { method: 'PUT', bucket: 'photos', key: 'dir/a b.txt', status: 200, bytes: 11 }, 'a PutObject: the bytes stored')
  t.equal(putLine.reqId, put.$metadata.requestId, 'the id the SDK got')
  t.match(missingLine, { method: 'GET', bucket: 'photos', key: 'none', status: 404, code: 'NoSuchKey' }, 'an error answer: its Code')
  t.equal(putLine.code, undefined, 'no code on a success')
  t.equal(missingLine.reqId, missing.headers.get('x-amz-request-id'))
  t.match(getLine, { method: 'GET', key: 'dir/a b.txt', status: 200, bytes: 11 }, 'a read: the body sent')
  t.equal(getLine.reqId, got.headers.get('x-amz-request-id'))
  t.equal(typeof putLine.ms, 'number')
  t.equal(putLine.url, undefined, 'a resolved request is named by bucket and key, not its URL')
  t.match(refusedLine, { method: 'PATCH', status: 405 })
  t.match(refusedLine.url, /X-Amz-Credential=\[redacted\]&X-Amz-Signature=\[redacted\]/, 'an unresolved request by its URL, credentials redacted')
  t.notMatch(text.join(''), /AKIDSECRET|feedbeef99|Signature=[0-9a-f]{64}|AWS4-HMAC-SHA256 Credential|fsbucket-dev-secret/, 'no credential anywhere')
  t.equal(new Set(lines().map(l => l.reqId)).size, 4, 'ids are distinct')

  // The SDK sends a part aws-chunked, with a trailing checksum: the bytes are the part's, not the framing's.
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'big' }))
  await client.send(new UploadPartCommand({ Bucket: 'photos', Key: 'big', UploadId, PartNumber: 1, Body: Buffer.alloc(6000, 1) }))
  t.match(lines().at(-1), { method: 'PUT', bucket: 'photos', key: 'big', status: 200, bytes: 6000 }, 'an UploadPart: the bytes stored')

  await fetch(`${endpoint}/`)
  t.match(lines().at(-1), { method: 'GET', url: '/', status: 200 }, 'ListBuckets names no bucket: its URL')
  // A URL the router cannot decode is refused before any route runs.
  const undecodable = await fetch(`${endpoint}/photos/%zz?X-Amz-Signature=feedbeef99`)
  t.equal(undecodable.status, 400)
  t.ok(undecodable.headers.get('x-amz-id-2'), 'with both ids')
  t.match(lines().at(-1), { method: 'GET', url: '/photos/%zz?X-Amz-Signature=[redacted]', status: 400, reqId: undecodable.headers.get('x-amz-request-id') },
    'a request refused before any route has its line too')
  t.match(lines().at(-1)?.code, /^[A-Z][A-Za-z]+$/, 'with its S3 Code')
  t.notMatch(text.join(''), /feedbeef99/)
})

t.test('a failed HEAD, whose answer has no body to carry S3\'s Code, has the Code in its line', async t => {
  const { registry, endpoint, lines } = await loggedApp(t)
  const head = async (path: string, headers: Record<string, string> = {}): Promise<Record<string, unknown> | undefined> => {
    const answer = await fetch(`${endpoint}${path}`, { method: 'HEAD', headers })
    t.equal(await answer.text(), '', `${path}: no body`)
    return lines().at(-1)
  }
  await registry.open('photos').then(async bucket => await bucket!.put('cat', 'meow'))
  t.match(await head('/photos/none'), { method: 'HEAD', bucket: 'photos', key: 'none', status: 404, bytes: 0, code: 'NoSuchKey' }, 'a missing key')
  t.match(await head('/nobucket/none'), { method: 'HEAD', bucket: 'nobucket', key: 'none', status: 404, bytes: 0, code: 'NoSuchBucket' }, 'a missing bucket: told apart from a missing key')
  t.match(await head('/nobucket'), { method: 'HEAD', bucket: 'nobucket', status: 404, code: 'NoSuchBucket' }, 'HeadBucket')
  t.match(await head('/photos/cat', { 'if-match': '"nope"' }), { status: 412, code: 'PreconditionFailed' }, 'a failed condition')
  t.match(await head('/photos/cat', { range: 'bytes=100-200' }), { status: 416, code: 'InvalidRange' }, 'an unsatisfiable range')
  t.match(await head('/photos/%zz'), { method: 'HEAD', url: '/photos/%zz', status: 400, bytes: 0, code: 'InvalidArgument' }, 'a request refused before any route: its Code, and no body counted')
})

t.test('SSE-C keys given in the query are hidden from the line of a request named by its URL', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos')
  const text: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { text.push(String(chunk)); done() } }))
  const app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: 'info', logger })
  t.teardown(async () => { await app.close(); await registry.close() })
  const query = 'x-amz-server-side-encryption-customer-algorithm=AES256&x-amz-server-side-encryption-customer-key=SSECKEYSECRET&x-amz-server-side-encryption-customer-key-MD5=SSECMD5SECRET' +
    '&x-amz-copy-source-server-side-encryption-customer-key=COPYKEYSECRET&x-amz-copy-source-server-side-encryption-customer-key-MD5=COPYMD5SECRET'
  const refused = await app.inject({ method: 'PATCH', url: `/photos?${query}` })
  t.equal(refused.statusCode, 405)
  const line = text.map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l.msg === 'request').at(-1)
  t.equal(line?.url, '/photos?x-amz-server-side-encryption-customer-algorithm=AES256&x-amz-server-side-encryption-customer-key=[redacted]&x-amz-server-side-encryption-customer-key-MD5=[redacted]' +
    '&x-amz-copy-source-server-side-encryption-customer-key=[redacted]&x-amz-copy-source-server-side-encryption-customer-key-MD5=[redacted]', 'names kept, values hidden')
  t.notMatch(text.join(''), /SSECKEYSECRET|SSECMD5SECRET|COPYKEYSECRET|COPYMD5SECRET/, 'no key anywhere')
})

t.test('a probe\'s line names its URL, not a bucket', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  const text: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { text.push(String(chunk)); done() } }))
  const app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: 'info', logger, operator: { ready: async () => [], metrics: null } })
  t.teardown(async () => { await app.close(); await registry.close() })
  for (const url of ['/_health/live', '/_health/ready']) t.equal((await app.inject({ method: 'GET', url, headers: { host: '127.0.0.1' } })).statusCode, 200, url)
  const lines = text.map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l.msg === 'request')
  t.match(lines, [{ method: 'GET', url: '/_health/live', status: 200 }, { method: 'GET', url: '/_health/ready', status: 200 }])
  t.same(lines.map(line => [line.bucket, line.key]), [[undefined, undefined], [undefined, undefined]], 'no bucket _health')
})
