/**
 * Bad input over a real socket: each a clear S3 error, nothing stored, and
 * the server still serving afterwards.
 */
import t, { type Test } from 'tap'
import http from 'node:http'
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, type S3ServiceException } from '@aws-sdk/client-s3'
import { createHash } from 'node:crypto'
import zlib from 'node:zlib'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { devCredentials, devSigner, raw, s3Server, type S3Server } from './fixture.js'
import { openRegistry } from '../../src/index.js'
import { buildS3App, s3AccessPolicy } from '../../src/s3/index.js'
import { testdir } from '../testdir.js'
import { XML_BODY_LIMITS } from '../../src/s3/xml.js'

async function stored (server: S3Server, key: string): Promise<boolean> {
  return (await (await server.registry.open('photos'))!.head(key)) !== null
}

async function stillServing (t: Test, server: S3Server): Promise<void> {
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'alive', Body: 'yes' }))
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'alive' }))).ContentLength, 3, 'the server still serves')
}

t.test('malformed XML bodies are MalformedXML', async t => {
  const server = await s3Server(t)
  const entities = '<?xml version="1.0"?><!DOCTYPE Delete [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><Delete><Object><Key>&b;</Key></Object></Delete>'
  for (const body of ['<Delete><Object><Key>a</Key></Object>', 'not xml at all', '', '<Other/>', entities]) {
    const answer = await raw(server, 'POST', '/photos?delete', { 'content-type': 'application/xml' }, [body])
    t.equal(answer.status, 400, JSON.stringify(body))
    t.match(answer.body, /<Code>MalformedXML<\/Code>/)
  }
  const refs = await raw(server, 'POST', '/photos?delete', {}, ['<Delete><Object><Key>a&#34;b&#x26;c</Key></Object></Delete>'])
  t.match(refs.body, /<Key>a&quot;b&amp;c<\/Key>/, 'numeric character references are decoded')
  const complete = await raw(server, 'POST', '/photos/k?uploadId=abc', {}, ['<CompleteMultipartUpload><Part>'])
  t.match(complete.body, /<Code>MalformedXML<\/Code>/)
  await stillServing(t, server)
})

t.test('a lifecycle or CORS document with an element S3\'s schema does not put there is MalformedXML, never read as a rule for the whole bucket', async t => {
  const server = await s3Server(t)
  const rule = (filter: string, extra = ''): string =>
    `<LifecycleConfiguration><Rule><ID>only-logs</ID>${filter}<Status>Enabled</Status><Expiration><Days>1</Days></Expiration>${extra}</Rule></LifecycleConfiguration>`
  const refused: Array<[string, string]> = [
    ['a miscased Prefix', rule('<Filter><prefix>logs/</prefix></Filter>')],
    ['PREFIX', rule('<Filter><PREFIX>logs/</PREFIX></Filter>')],
    ['Prefix twice', rule('<Filter><Prefix>logs/</Prefix><Prefix>tmp/</Prefix></Filter>')],
    ['an element inside Prefix', rule('<Filter><Prefix><Value>logs/</Value></Prefix></Filter>')],
    ['an unknown element in the Filter', rule('<Filter><Prefix>logs/</Prefix><Bogus/></Filter>')],
    ['two Filters', rule('<Filter><Prefix>logs/</Prefix></Filter><Filter><Prefix>tmp/</Prefix></Filter>')],
    ['text for a Filter', rule('<Filter>logs/</Filter>')],
    ['a Prefix beside a Filter', rule('<Prefix>a/</Prefix><Filter><Prefix>b/</Prefix></Filter>')],
    ['an unknown element in the Rule', rule('<Filter><Prefix>logs/</Prefix></Filter>', '<Expire><Days>1</Days></Expire>')],
    ['Days twice', rule('<Filter><Prefix>logs/</Prefix></Filter>').replace('<Days>1</Days>', '<Days>1</Days><Days>2</Days>')],
    ['an unknown element at the top', `<LifecycleConfiguration><Rules/>${rule('').slice('<LifecycleConfiguration>'.length)}`]
  ]
  for (const [what, body] of refused) {
    const answer = await raw(server, 'PUT', '/photos?lifecycle', {}, body)
    t.equal(answer.status, 400, what)
    t.match(answer.body, /<Code>MalformedXML<\/Code>/, what)
  }
  t.equal((await server.registry.info('photos'))?.settings.lifecycle ?? null, null, 'no rule was stored')
  const narrow = await raw(server, 'PUT', '/photos?lifecycle', {}, rule('<Filter><Prefix>logs/</Prefix></Filter>'))
  t.equal(narrow.status, 200, 'the same rule, well formed')
  const stored = (await server.registry.info('photos'))?.settings.lifecycle as { rules: Array<{ conditions: { prefix: string } }> }
  t.same(stored.rules.map(r => r.conditions.prefix), ['logs/'], 'is stored for its prefix')
  for (const body of [
    '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>1</MaxAgeSeconds><MaxAgeSeconds>2</MaxAgeSeconds></CORSRule></CORSConfiguration>',
    '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedOrigins>x</AllowedOrigins></CORSRule></CORSConfiguration>'
  ]) {
    const answer = await raw(server, 'PUT', '/photos?cors', {}, body)
    t.match(answer.body, /<Code>MalformedXML<\/Code>/, body)
  }
  const quiet = await raw(server, 'POST', '/photos?delete', {}, '<Delete><Quiet>maybe</Quiet><Object><Key>a</Key></Object></Delete>')
  t.match(quiet.body, /<Code>MalformedXML<\/Code>/, 'Quiet is true or false')
  await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'kept', Body: 'x' }))
  for (const entry of ['<Key>kept</Key><Etag>x</Etag>', '<Key>kept</Key><VersionID>v1</VersionID>', '<key>kept</key>']) {
    const answer = await raw(server, 'POST', '/photos?delete', {}, `<Delete><Object>${entry}</Object></Delete>`)
    t.match(answer.body, /<Code>MalformedXML<\/Code>/, `a Delete's ${entry}: never a delete without its condition`)
  }
  t.not(await (await server.registry.open('photos'))!.head('kept'), null, 'nothing deleted')
  const completion = await raw(server, 'POST', '/photos/k?uploadId=abc', {}, '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>e</ETag><ChecksumCrc32>AAAAAA==</ChecksumCrc32></Part></CompleteMultipartUpload>')
  t.match(completion.body, /<Code>MalformedXML<\/Code>/, 'a miscased part checksum is not skipped')
  await stillServing(t, server)
})

t.test('a truncated aws-chunked body stores nothing', async t => {
  const server = await s3Server(t)
  const headers = { 'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '10' }
  const cut = await raw(server, 'PUT', '/photos/cut', headers, ['a\r\n01234'])
  t.equal(cut.status, 400)
  t.match(cut.body, /<Code>IncompleteBody<\/Code>/)
  t.notOk(await stored(server, 'cut'), 'nothing stored')
  const whole = await raw(server, 'PUT', '/photos/whole', { ...headers, 'x-amz-trailer': 'x-amz-checksum-crc32' },
    ['a\r\n0123456789\r\n', '0\r\nx-amz-checksum-crc32:', `${crc32Base64('0123456789')}\r\n\r\n`])
  t.equal(whole.status, 200, 'the same framing, complete, is stored')
  const badCrc = await raw(server, 'PUT', '/photos/bad-crc', { ...headers, 'x-amz-trailer': 'x-amz-checksum-crc32' },
    ['a\r\n0123456789\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n'])
  t.equal(badCrc.status, 400)
  t.match(badCrc.body, /<Code>BadDigest<\/Code>/)
  t.notOk(await stored(server, 'bad-crc'))
  await stillServing(t, server)
})

t.test('an aws-chunked body without x-amz-decoded-content-length is MissingContentLength; a garbage trailer checksum is InvalidDigest', async t => {
  const server = await s3Server(t)
  const framing = { 'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', 'content-encoding': 'aws-chunked' }
  const body = ['a\r\n0123456789\r\n0\r\n\r\n']
  const missing = await raw(server, 'PUT', '/photos/no-length', framing, body)
  t.equal(missing.status, 411)
  t.match(missing.body, /<Code>MissingContentLength<\/Code>/)
  t.notOk(await stored(server, 'no-length'), 'nothing stored')
  for (const value of ['not base64!', 'AAAA', 'AAAAAAAAAAA=']) {
    const garbage = await raw(server, 'PUT', '/photos/garbage', { ...framing, 'x-amz-decoded-content-length': '10', 'x-amz-trailer': 'x-amz-checksum-crc32' },
      [`a\r\n0123456789\r\n0\r\nx-amz-checksum-crc32:${value}\r\n\r\n`])
    t.equal(garbage.status, 400, value)
    t.match(garbage.body, /<Code>InvalidDigest<\/Code>/, `${value}: InvalidDigest, as for the same value in a header`)
    t.notOk(await stored(server, 'garbage'))
  }
  const part = await raw(server, 'POST', '/photos/mp?uploads')
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(part.body)![1]!
  const garbagePart = await raw(server, 'PUT', `/photos/mp?uploadId=${uploadId}&partNumber=1`,
    { ...framing, 'x-amz-decoded-content-length': '10', 'x-amz-trailer': 'x-amz-checksum-sha256' },
    ['a\r\n0123456789\r\n0\r\nx-amz-checksum-sha256:AAAA\r\n\r\n'])
  t.match(garbagePart.body, /<Code>InvalidDigest<\/Code>/, 'the same for a part')
  await stillServing(t, server)
})

t.test('an aws-chunked trailer holding a header x-amz-trailer does not name, or one header twice, is MalformedTrailerError, storing nothing', async t => {
  const server = await s3Server(t)
  const framing = { 'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '10' }
  const announced = { ...framing, 'x-amz-trailer': 'x-amz-checksum-crc32' }
  const good = `x-amz-checksum-crc32:${crc32Base64('0123456789')}\r\n`
  const cases: Array<[string, Record<string, string>, string]> = [
    ['a checksum x-amz-trailer does not name', announced, `${good}x-amz-checksum-sha256:${'A'.repeat(43)}=\r\n`],
    ['another header', announced, `${good}x-amz-meta-owner:mallory\r\n`],
    ['a trailer without x-amz-trailer', framing, good],
    ['the announced checksum twice, a wrong value first', announced, `x-amz-checksum-crc32:AAAAAA==\r\n${good}`],
    ['the announced checksum twice, the same value', announced, `${good}${good}`],
    ['the trailer signature twice', announced, `${good}x-amz-trailer-signature:${'0'.repeat(64)}\r\nx-amz-trailer-signature:${'0'.repeat(64)}\r\n`]
  ]
  for (const [what, headers, trailer] of cases) {
    const answer = await raw(server, 'PUT', '/photos/trailed', headers, [`a\r\n0123456789\r\n0\r\n${trailer}\r\n`])
    t.equal(answer.status, 400, what)
    t.match(answer.body, /<Code>MalformedTrailerError<\/Code>/, what)
    t.notOk(await stored(server, 'trailed'), `${what}: nothing stored`)
  }
  const part = await raw(server, 'POST', '/photos/mp?uploads')
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(part.body)![1]!
  const twicePart = await raw(server, 'PUT', `/photos/mp?uploadId=${uploadId}&partNumber=1`, announced,
    [`a\r\n0123456789\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n${good}\r\n`])
  t.match(twicePart.body, /<Code>MalformedTrailerError<\/Code>/, 'the same for a part')
  const listed = await raw(server, 'GET', `/photos/mp?uploadId=${uploadId}`)
  t.notMatch(listed.body, /<Part>/, 'no part stored')
  const whole = await raw(server, 'PUT', '/photos/trailed', announced, [`a\r\n0123456789\r\n0\r\n${good}\r\n`])
  t.equal(whole.status, 200, 'the announced trailer, once, is stored')
  await stillServing(t, server)
})

t.test('Signature Version 2 and SigV4A, in a header or a presigned URL, are InvalidRequest', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, null, false) })
  const header = await raw(server, 'GET', '/photos/k', { authorization: 'AWS AKIDEXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=', date: new Date().toUTCString() })
  t.equal(header.status, 400)
  t.match(header.body, /<Code>InvalidRequest<\/Code><Message>The authorization mechanism you have provided is not supported\. Please use AWS4-HMAC-SHA256\.<\/Message>/)
  const presigned = await raw(server, 'GET', '/photos/k?AWSAccessKeyId=AKIDEXAMPLE&Expires=2000000000&Signature=abc%3D')
  t.equal(presigned.status, 400)
  t.match(presigned.body, /<Code>InvalidRequest<\/Code><Message>The authorization mechanism you have provided is not supported/)
  const date = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '')
  const sigv4a = await raw(server, 'GET', '/photos/k', {
    'x-amz-date': date,
    'x-amz-region-set': '*',
    authorization: `AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE/${date.slice(0, 8)}/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=3045022100ab`
  })
  t.equal(sigv4a.status, 400)
  t.match(sigv4a.body, /<Code>InvalidRequest<\/Code><Message>The authorization mechanism you have provided is not supported/)
  const presignedV4a = await raw(server, 'GET', `/photos/k?X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F${date.slice(0, 8)}%2Fs3%2Faws4_request&X-Amz-Date=${date}&X-Amz-Expires=60&X-Amz-Region-Set=%2A&X-Amz-SignedHeaders=host&X-Amz-Signature=3045022100ab`)
  t.equal(presignedV4a.status, 400)
  t.match(presignedV4a.body, /<Code>InvalidRequest<\/Code><Message>The authorization mechanism you have provided is not supported/)
})

t.test('a chunk signature that does not verify stores nothing', async t => {
  const server = await s3Server(t)
  const host = `127.0.0.1:${server.port}`
  const signer = devSigner()
  const signed = await signer.sign({
    method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos/forged', query: {},
    headers: { host, 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '5' }
  })
  const answer = await raw(server, 'PUT', '/photos/forged', signed.headers as Record<string, string>,
    [`5;chunk-signature=${'0'.repeat(64)}\r\nhello\r\n0;chunk-signature=${'0'.repeat(64)}\r\n\r\n`])
  t.equal(answer.status, 403)
  t.match(answer.body, /<Code>SignatureDoesNotMatch<\/Code>/)
  t.notOk(await stored(server, 'forged'))
  await stillServing(t, server)
})

t.test('a literal x-amz-content-sha256 is verified', async t => {
  const server = await s3Server(t)
  const sent = createHash('sha256').update('other').digest('hex')
  const answer = await raw(server, 'PUT', '/photos/sha', { 'x-amz-content-sha256': sent }, ['bytes'])
  t.equal(answer.status, 400)
  t.match(answer.body, /<Code>XAmzContentSHA256Mismatch<\/Code>/)
  // Both hashes in hex, as the client sent its own and as S3 names them.
  t.match(answer.body, `<ClientComputedContentSHA256>${sent}</ClientComputedContentSHA256><S3ComputedContentSHA256>${createHash('sha256').update('bytes').digest('hex')}</S3ComputedContentSHA256>`)
  t.notOk(await stored(server, 'sha'))
  const right = await raw(server, 'PUT', '/photos/sha', { 'x-amz-content-sha256': createHash('sha256').update('bytes').digest('hex') }, ['bytes'])
  t.equal(right.status, 200)
})

t.test('a refused upload whose body was not read closes its connection, and the server goes on', async t => {
  const server = await s3Server(t)
  const answer = await raw(server, 'PUT', '/photos/p?partNumber=1&uploadId=no-such-upload-id-000', { 'content-length': String(4 * 1024 * 1024) }, [Buffer.alloc(4 * 1024 * 1024)])
  t.equal(answer.status, 404)
  t.match(answer.body, /<Code>NoSuchUpload<\/Code>/)
  await stillServing(t, server)
})

t.test('a key over 1,024 bytes is KeyTooLongError', async t => {
  const server = await s3Server(t)
  try {
    await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'k'.repeat(1025), Body: 'x' }))
    t.fail('accepted')
  } catch (err) {
    t.equal((err as S3ServiceException).name, 'KeyTooLongError')
  }
  await stillServing(t, server)
})

t.test('Expect: 100-continue is answered before the body; HEAD errors have no body', async t => {
  const server = await s3Server(t)
  const status = await new Promise<number>((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: server.port, method: 'PUT', path: '/photos/continued', headers: { expect: '100-continue', 'content-length': '4' } })
    request.on('continue', () => request.end('body'))
    request.on('response', response => { response.resume(); resolve(response.statusCode ?? 0) })
    request.on('error', reject)
  })
  t.equal(status, 200)
  t.ok(await stored(server, 'continued'))
  const head = await raw(server, 'HEAD', '/photos/missing', {})
  t.equal(head.status, 404)
  t.equal(head.body, '')
  const unsupported = await raw(server, 'GET', '/photos?acl', {})
  t.equal(unsupported.status, 501)
  t.match(unsupported.body, /<Code>NotImplemented<\/Code>/)
})

t.test('a session token on a request its key pair did not sign is InvalidToken, not ignored', async t => {
  const server = await s3Server(t)
  await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'open', Body: 'x' }))
  for (const [path, headers] of [['/photos/open', { 'x-amz-security-token': 'bogus' }], ['/photos/open?X-Amz-Security-Token=bogus', {}]] as const) {
    const answer = await raw(server, 'GET', path, headers)
    t.equal(answer.status, 400, path)
    t.match(answer.body, /<Code>InvalidToken<\/Code>/, path)
  }
  t.equal((await raw(server, 'GET', '/photos/open')).status, 200, 'the same request without it is served (development mode)')
})

t.test('a signed header sent on several lines is signed as its values joined with a comma, as SigV4 says', async t => {
  const server = await s3Server(t)
  const put = async (signedValue: string, lines: string | string[]): Promise<number> => {
    const signed = await devSigner().sign({
      method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos/dup', query: {},
      headers: { host: `127.0.0.1:${server.port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-dup': signedValue, 'content-length': '1' }
    })
    return (await raw(server, 'PUT', '/photos/dup', { ...(signed.headers as Record<string, string>), 'x-amz-meta-dup': lines as string }, 'x')).status
  }
  t.equal(await put('one,two', ['one', ' two ']), 200, 'two lines, signed as one,two')
  t.equal(await put('one, two', ['one', 'two']), 403, 'not as Node joins them')
  t.equal(await put('one, two', 'one, two'), 200, 'one line holding a comma is signed as it is')
})

t.test('a bucket\'s sub-resource on an object\'s path is NotImplemented, never the object\'s put or delete', async t => {
  const server = await s3Server(t)
  await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'victim', Body: 'data' }))
  for (const [method, query] of [['DELETE', 'cors'], ['DELETE', 'lifecycle'], ['DELETE', 'policy'], ['DELETE', 'delete'], ['PUT', 'cors'], ['PUT', 'lifecycle'], ['PUT', 'versioning'], ['PUT', 'website'], ['GET', 'location']] as const) {
    const answer = await raw(server, method, `/photos/victim?${query}`, {}, method === 'PUT' ? ['<CORSConfiguration/>'] : undefined)
    t.equal(answer.status, 501, `${method} ?${query}`)
    t.match(answer.body, /<Code>NotImplemented<\/Code>/, `${method} ?${query}`)
  }
  t.equal((await (await server.registry.open('photos'))!.head('victim'))?.size, 4, 'the object is untouched')
})

t.test('Expect: 100-continue waits for the signature and the size: a refused request never gets the 100', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy(devCredentials, null, true) })
  const ask = async (headers: Record<string, string>): Promise<{ continued: boolean, status: number, body: string }> => await new Promise((resolve, reject) => {
    let continued = false
    const request = http.request({ host: '127.0.0.1', port: server.port, method: 'PUT', path: '/photos/expected', headers: { expect: '100-continue', ...headers } })
    request.on('continue', () => { continued = true; request.end('body') })
    request.on('response', response => {
      const chunks: Buffer[] = []
      response.on('data', chunk => chunks.push(chunk))
      response.on('end', () => resolve({ continued, status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
    })
    request.on('error', reject)
  })
  const unsigned = await ask({ 'content-length': '4' })
  t.equal(unsigned.status, 403)
  t.notOk(unsigned.continued, 'no 100 for a request without a signature')
  const huge = await ask({ 'content-length': String(6 * 1024 ** 3), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' })
  t.notOk(huge.continued)
  t.equal(await stored(server, 'expected'), false, 'nothing stored')
  const signer = devSigner()
  const host = `127.0.0.1:${server.port}`
  const signed = await signer.sign({
    method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos/expected', query: {},
    headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': String(6 * 1024 ** 3) }
  })
  const tooLarge = await ask(signed.headers as Record<string, string>)
  t.equal(tooLarge.status, 400)
  t.match(tooLarge.body, /<Code>EntityTooLarge<\/Code>/)
  t.notOk(tooLarge.continued, 'no 100 for a body over the limit')
  const fine = await signer.sign({
    method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos/expected', query: {},
    headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': '4' }
  })
  const accepted = await ask(fine.headers as Record<string, string>)
  t.ok(accepted.continued, 'a signed request of a fitting size gets the 100')
  t.equal(accepted.status, 200)
})

function crc32Base64 (text: string): string {
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(text))
  return crc.toString('base64')
}

t.test('a failing disk answers InternalError and is logged as a storage failure at warn, with its path, as the HTTP door does', async t => {
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  await before.create('photos')
  const bucket = (await before.open('photos'))!
  for (let i = 0; i < 50; i++) await bucket.put(`k${i}`, 'v'.repeat(3000))
  await before.close()
  const catalog = path.join(dataDir, 'photos', '.fsbucket', 'catalog.db')
  for (const suffix of ['-wal', '-shm']) await fsp.rm(catalog + suffix, { force: true })
  await fsp.writeFile(catalog, (await fsp.readFile(catalog)).fill(0x55, 4096)) // SQLITE_CORRUPT past the first page

  const lines: Array<{ level: number, msg: string, path?: string }> = []
  const capture = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } }))
  const registry = await openRegistry(dataDir, { fsync: false })
  const app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: 'info', childLoggerFactory: (_logger, bindings) => capture.child(bindings) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const client = new S3Client({ endpoint: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, region: 'auto', forcePathStyle: true, credentials: devCredentials, maxAttempts: 1 })
  t.teardown(async () => { client.destroy(); await app.close(); await registry.close() })
  const failed = await client.send(new GetObjectCommand({ Bucket: 'photos', Key: 'k1' })).then(() => null, (err: S3ServiceException) => err)
  t.equal(failed?.name, 'InternalError')
  t.equal(failed?.$metadata.httpStatusCode, 500)
  const failure = lines.find(l => l.msg === 'storage failure')
  t.equal(failure?.level, 40, 'logged at warn')
  t.equal(failure?.path, catalog, 'with the path of the failing file')
  t.notOk(lines.some(l => l.level >= 50), 'nothing at error level')
})

t.test('a key holding U+0000 is refused on a write (400, 10020\'s message); a lookup finds nothing', async t => {
  const server = await s3Server(t)
  const put = await raw(server, 'PUT', '/photos/a%00b', {}, ['x'])
  t.equal(put.status, 400)
  t.match(put.body, /<Message>The specified object name is not valid.<\/Message>/, 'the catalogue\'s 10020, as the door names it')
  const create = await raw(server, 'POST', '/photos/a%00b?uploads')
  t.equal(create.status, 400)
  t.match(create.body, /<Message>The specified object name is not valid.<\/Message>/)
  t.equal((await raw(server, 'GET', '/photos/a%00b')).status, 404)
  t.equal((await raw(server, 'DELETE', '/photos/a%00b')).status, 204)
  for (const encoded of ['%ED%A0%80', 'a%FFb', '%C3']) {
    const answer = await raw(server, 'PUT', `/photos/${encoded}`, {}, ['x'])
    t.equal(answer.status, 400, `${encoded}: not UTF-8`)
  }
  await stillServing(t, server)
})

t.test('XML bodies over their document\'s cap are MaxMessageLengthExceeded; over its markup budget, MalformedXML', async t => {
  const server = await s3Server(t)
  const cors = (rules: number, origin: string): string =>
    `<CORSConfiguration>${`<CORSRule><AllowedOrigin>${origin}</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>`.repeat(rules)}</CORSConfiguration>`
  const fits = cors(100, `https://${'o'.repeat(500)}.test`)
  t.ok(fits.length < XML_BODY_LIMITS.CORSConfiguration.bytes)
  t.equal((await raw(server, 'PUT', '/photos?cors', {}, fits)).status, 200, '100 rules of long origins fit')
  const bodies: Array<[string, string, string]> = [
    ['/photos?cors', 'CORSConfiguration', cors(1, `https://${'o'.repeat(XML_BODY_LIMITS.CORSConfiguration.bytes)}.test`)],
    ['/photos?lifecycle', 'LifecycleConfiguration', `<LifecycleConfiguration>${' '.repeat(XML_BODY_LIMITS.LifecycleConfiguration.bytes)}</LifecycleConfiguration>`],
    ['/photos?delete', 'Delete', `<Delete><Object><Key>${'k'.repeat(XML_BODY_LIMITS.Delete.bytes)}</Key></Object></Delete>`]
  ]
  for (const [path, root, body] of bodies) {
    const answer = await raw(server, path.endsWith('delete') ? 'POST' : 'PUT', path, {}, body)
    t.equal(answer.status, 400, root)
    t.match(answer.body, /<Code>MaxMessageLengthExceeded<\/Code>/, root)
  }
  const many = `<Delete>${'<Object><Key>k</Key></Object>'.repeat(XML_BODY_LIMITS.Delete.nodes / 2)}</Delete>`
  const budget = await raw(server, 'POST', '/photos?delete', {}, many)
  t.equal(budget.status, 400)
  t.match(budget.body, /<Code>MalformedXML<\/Code>/)
  t.match(budget.body, /at most 10000 elements/)
  await stillServing(t, server)
})

t.test('a QUERY without Content-Type is InvalidRequest, not an internal error', async t => {
  const server = await s3Server(t)
  const answer = await raw(server, 'QUERY', '/photos/k')
  t.equal(answer.status, 400)
  t.match(answer.body, /<Code>InvalidRequest<\/Code>/)
})
