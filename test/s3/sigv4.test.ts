/**
 * SigV4 verification and the aws-chunked decoder against the worked
 * examples of the S3 documentation ("Authenticating Requests", "Transferring
 * Payload in Multiple Chunks", "Signature calculations for trailing
 * headers"): signatures computed by AWS, not by this code.
 */
import t from 'tap'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { IncomingHttpHeaders } from 'node:http'
import { createHash } from 'node:crypto'
import { S3Error } from '../../src/s3/errors.js'
import { AwsChunkedDecoder, payloadMode } from '../../src/s3/payload.js'
import { verifySignature, type VerifiedSignature } from '../../src/s3/sigv4.js'
import { parseRawQuery } from '../../src/s3/uri-encoding.js'

const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE'
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
const secretOf = (id: string): string | undefined => id === ACCESS_KEY ? SECRET : undefined
const DOC_TIME = new Date('2013-05-24T00:00:00Z')
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
/** The trailer names of a request without x-amz-trailer. */
const noTrailers: ReadonlySet<string> = new Set()

function authorization (signedHeaders: string, signature: string): string {
  return `AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/20130524/us-east-1/s3/aws4_request,SignedHeaders=${signedHeaders},Signature=${signature}`
}

async function verify (method: string, url: string, headers: IncomingHttpHeaders, now = DOC_TIME): Promise<VerifiedSignature> {
  const q = url.indexOf('?')
  const rawQuery = q === -1 ? '' : url.slice(q + 1)
  const query = parseRawQuery(rawQuery)
  return await verifySignature({ method, rawPath: q === -1 ? url : url.slice(0, q), rawQuery, headers }, query, secretOf, now)
}

async function code (promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (err) {
    if (err instanceof S3Error) return err.code
    throw err
  }
  return 'no error'
}

const getObjectHeaders = (): IncomingHttpHeaders => ({
  host: 'examplebucket.s3.amazonaws.com',
  range: 'bytes=0-9',
  'x-amz-content-sha256': EMPTY_SHA256,
  'x-amz-date': '20130524T000000Z',
  authorization: authorization('host;range;x-amz-content-sha256;x-amz-date', 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41')
})

t.test('the documented GET Object header signature verifies; tampering does not', async t => {
  const verified = await verify('GET', '/test.txt', getObjectHeaders())
  t.equal(verified.accessKeyId, ACCESS_KEY)
  t.equal(await code(verify('GET', '/test.txt', { ...getObjectHeaders(), range: 'bytes=0-10' })), 'SignatureDoesNotMatch', 'a signed header changed')
  t.equal(await code(verify('GET', '/test2.txt', getObjectHeaders())), 'SignatureDoesNotMatch', 'another path')
  t.equal(await code(verify('DELETE', '/test.txt', getObjectHeaders())), 'SignatureDoesNotMatch', 'another method')
  t.equal(await code(verify('GET', '/test.txt?x=1', getObjectHeaders())), 'SignatureDoesNotMatch', 'a query parameter added')
  const unknown = getObjectHeaders()
  unknown.authorization = (unknown.authorization as string).replace(ACCESS_KEY, 'AKIDUNKNOWN')
  t.equal(await code(verify('GET', '/test.txt', unknown)), 'InvalidAccessKeyId')
  t.equal(await code(verify('GET', '/test.txt', getObjectHeaders(), new Date(DOC_TIME.getTime() + 16 * 60_000))), 'RequestTimeTooSkewed')
  t.equal(await code(verify('GET', '/test.txt', { ...getObjectHeaders(), 'x-amz-content-sha256': undefined })), 'InvalidRequest', 'x-amz-content-sha256 is required')
  const unhosted = getObjectHeaders()
  unhosted.authorization = authorization('range;x-amz-content-sha256;x-amz-date', 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41')
  t.equal(await code(verify('GET', '/test.txt', unhosted)), 'AuthorizationHeaderMalformed', 'host must be signed')
})

t.test('the documented presigned URL verifies until it expires; a tampered query does not', async t => {
  const url = '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404'
  const headers = { host: 'examplebucket.s3.amazonaws.com' }
  const verified = await verify('GET', url, headers, new Date(DOC_TIME.getTime() + 3600_000))
  t.equal(verified.payloadHash, 'UNSIGNED-PAYLOAD')
  t.equal(await code(verify('GET', url, headers, new Date(DOC_TIME.getTime() + 86_401_000))), 'AccessDenied', 'expired')
  t.equal(await code(verify('GET', url.replace('X-Amz-Expires=86400', 'X-Amz-Expires=86401'), headers)), 'SignatureDoesNotMatch', 'a longer lifetime')
  t.equal(await code(verify('GET', url.replace('X-Amz-Expires=86400', 'X-Amz-Expires=604801'), headers)), 'AuthorizationQueryParametersError', 'over seven days')
  t.equal(await code(verify('GET', url.replace('test.txt', 'other.txt'), headers)), 'SignatureDoesNotMatch')
  // The good signature, then another: the second would be left unread.
  const twice = await verify('GET', `${url}&X-Amz-Signature=${'0'.repeat(64)}`, headers, new Date(DOC_TIME.getTime() + 3600_000)).then(() => 'verified', (err: S3Error) => `${err.code}: ${err.message}`)
  t.equal(twice, 'AuthorizationQueryParametersError: X-Amz-Signature is given more than once.', 'a second signature is refused, not ignored')
})

/** The documented chunked body: 65,536 and 1,024 bytes of `a`, signatures as published. */
function chunkedBody (signatures: string[], trailer = ''): Buffer {
  return Buffer.concat([
    Buffer.from(`10000;chunk-signature=${signatures[0]}\r\n`), Buffer.alloc(65_536, 'a'),
    Buffer.from(`\r\n400;chunk-signature=${signatures[1]}\r\n`), Buffer.alloc(1024, 'a'),
    Buffer.from(`\r\n0;chunk-signature=${signatures[2]}\r\n${trailer}\r\n`)
  ])
}

const plainSignatures = [
  'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
  '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
  'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9'
]

function chunkedHeaders (): IncomingHttpHeaders {
  return {
    host: 's3.amazonaws.com',
    'content-encoding': 'aws-chunked',
    'content-length': '66824',
    'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    'x-amz-date': '20130524T000000Z',
    'x-amz-decoded-content-length': '66560',
    'x-amz-storage-class': 'REDUCED_REDUNDANCY',
    authorization: authorization('content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class',
      '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9')
  }
}

/** Feeds `body` in small fragments (so chunk headers straddle reads) and collects the output. */
async function decode (decoder: AwsChunkedDecoder, body: Buffer, fragment = 997): Promise<Buffer> {
  const pieces: Buffer[] = []
  for (let i = 0; i < body.length; i += fragment) pieces.push(body.subarray(i, i + fragment))
  const out: Buffer[] = []
  await pipeline(Readable.from(pieces), decoder, async function (source) {
    for await (const chunk of source) out.push(chunk as Buffer)
  })
  return Buffer.concat(out)
}

t.test('the documented signed chunked upload decodes; a changed byte, a bad signature or a cut body fail', async t => {
  const verified = await verify('PUT', '/examplebucket/chunkObject.txt', chunkedHeaders())
  t.same(payloadMode(verified.payloadHash), { kind: 'chunked', signed: true, trailer: false })
  const body = chunkedBody(plainSignatures)
  t.equal(body.length, 66_824, 'the documented Content-Length')
  const decoded = await decode(new AwsChunkedDecoder(verified, 66_560, noTrailers), body)
  t.ok(decoded.equals(Buffer.alloc(66_560, 'a')))

  const flipped = Buffer.from(body)
  flipped[60_000] = 'b'.charCodeAt(0)
  t.equal(await code(decode(new AwsChunkedDecoder(verified, 66_560, noTrailers), flipped)), 'SignatureDoesNotMatch', 'a changed data byte')
  const badSignature = chunkedBody([plainSignatures[0], plainSignatures[1].replace('0055', '0056'), plainSignatures[2]])
  t.equal(await code(decode(new AwsChunkedDecoder(verified, 66_560, noTrailers), badSignature)), 'SignatureDoesNotMatch', 'a wrong chunk signature')
  t.equal(await code(decode(new AwsChunkedDecoder(verified, 66_560, noTrailers), body.subarray(0, 40_000))), 'IncompleteBody', 'a truncated body')
  t.equal(await code(decode(new AwsChunkedDecoder(verified, 66_561, noTrailers), body)), 'IncompleteBody', 'a wrong decoded length')
})

t.test('the documented signed upload with a trailer decodes and its trailer signature is checked', async t => {
  const headers: IncomingHttpHeaders = {
    host: 's3.amazonaws.com',
    'content-encoding': 'aws-chunked',
    'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
    'x-amz-date': '20130524T000000Z',
    'x-amz-decoded-content-length': '66560',
    'x-amz-storage-class': 'REDUCED_REDUNDANCY',
    'x-amz-trailer': 'x-amz-checksum-crc32c',
    authorization: authorization('content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer',
      '106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e')
  }
  const verified = await verify('PUT', '/examplebucket/chunkObject.txt', headers)
  const crc32c = new Set(['x-amz-checksum-crc32c'])
  const signatures = [
    'b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2',
    '1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7',
    '2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992'
  ]
  const trailer = 'x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n'
  const decoder = new AwsChunkedDecoder(verified, 66_560, crc32c)
  t.equal((await decode(decoder, chunkedBody(signatures, trailer), 4096)).length, 66_560)
  t.equal(decoder.trailers.get('x-amz-checksum-crc32c'), 'sOO8/Q==')
  const tampered = trailer.replace('sOO8/Q==', 'sOO8/R==')
  t.equal(await code(decode(new AwsChunkedDecoder(verified, 66_560, crc32c), chunkedBody(signatures, tampered))), 'SignatureDoesNotMatch', 'a changed trailer')
})

t.test('unsigned chunks with a trailer decode', async t => {
  const decoder = new AwsChunkedDecoder(null, 3, new Set(['x-amz-checksum-crc32']))
  const out = await decode(decoder, Buffer.from('3\r\nabc\r\n0\r\nx-amz-checksum-crc32:NSRBwg==\r\n\r\n'), 2)
  t.equal(out.toString(), 'abc')
  t.equal(decoder.trailers.get('x-amz-checksum-crc32'), 'NSRBwg==')
  t.equal(await code(decode(new AwsChunkedDecoder(null, undefined, noTrailers), Buffer.from('zz\r\nabc\r\n'))), 'IncompleteBody', 'a size that is not hex')
  t.equal(await code(decode(new AwsChunkedDecoder(null, undefined, noTrailers), Buffer.from('3\r\nabcd\r\n0\r\n\r\n'))), 'IncompleteBody', 'a chunk longer than announced')
})

t.test('a chunk running past x-amz-decoded-content-length is refused at its size line, before any of its bytes go on', async t => {
  const decoder = new AwsChunkedDecoder(null, 3, noTrailers)
  const passed: Buffer[] = []
  decoder.on('data', (chunk: Buffer) => { passed.push(chunk) })
  const failed = new Promise<unknown>(resolve => { decoder.on('error', resolve) })
  decoder.write(Buffer.from('2\r\nab\r\n100000\r\n' + 'x'.repeat(1000)))
  decoder.end()
  t.match(await failed, { code: 'IncompleteBody', message: /says 3 bytes; the chunks hold more/ })
  t.ok(Buffer.concat(passed).length <= 2, 'none of the chunk\'s bytes went on')
})

t.test('trailer lines: each announced one once, one signature; anything else is MalformedTrailerError', async t => {
  const crc32 = 'x-amz-checksum-crc32:NSRBwg=='
  const cases: Array<[string, string, string[], string]> = [
    ['the announced checksum', `${crc32}\r\n`, ['x-amz-checksum-crc32'], 'no error'],
    ['its name in another case', 'X-Amz-Checksum-CRC32:NSRBwg==\r\n', ['x-amz-checksum-crc32'], 'no error'],
    ['nothing announced, nothing sent', '', [], 'no error'],
    ['nothing announced', `${crc32}\r\n`, [], 'MalformedTrailerError'],
    ['another checksum', 'x-amz-checksum-crc32c:AAAAAA==\r\n', ['x-amz-checksum-crc32'], 'MalformedTrailerError'],
    ['twice', `${crc32}\r\n${crc32}\r\n`, ['x-amz-checksum-crc32'], 'MalformedTrailerError'],
    ['twice, spelled apart', `${crc32}\r\nX-AMZ-CHECKSUM-CRC32:NSRBwg==\r\n`, ['x-amz-checksum-crc32'], 'MalformedTrailerError'],
    ['the signature twice', `${crc32}\r\nx-amz-trailer-signature:00\r\nx-amz-trailer-signature:00\r\n`, ['x-amz-checksum-crc32'], 'MalformedTrailerError']
  ]
  for (const [what, trailer, announced, expected] of cases) {
    const decoder = new AwsChunkedDecoder(null, 3, new Set(announced))
    t.equal(await code(decode(decoder, Buffer.from(`3\r\nabc\r\n0\r\n${trailer}\r\n`), 5)), expected, what)
  }
})

t.test('a presigned URL\'s X-Amz-Content-Sha256 is the payload hash it signs; a header or second value saying otherwise is refused', async t => {
  const signer = await sdkSigner()
  const now = new Date()
  const hash = createHash('sha256').update('body').digest('hex')
  const rawQuery = (query: Record<string, string>): string => Object.entries(query).map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&')
  for (const name of ['X-Amz-Content-Sha256', 'x-amz-content-sha256']) {
    const presigned = await signer.presign({ method: 'PUT', protocol: 'http:', hostname: 'localhost', path: '/bucket/key', query: {}, headers: { host: 'localhost', [name]: hash } }, { signingDate: now, expiresIn: 60 })
    const url = `/bucket/key?${rawQuery(presigned.query as Record<string, string>)}`
    const headers = received(presigned.headers as Record<string, string>)
    t.equal((await verify('PUT', url, headers, now)).payloadHash, hash, name)
    t.equal((await verify('PUT', url, { ...headers, 'x-amz-content-sha256': hash }, now)).payloadHash, hash, `${name}: the header saying the same`)
    t.equal(await code(verify('PUT', url, { ...headers, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, now)), 'XAmzContentSHA256Mismatch', `${name}: a header saying otherwise`)
    t.equal(await code(verify('PUT', `${url}&${name}=UNSIGNED-PAYLOAD`, headers, now)), 'XAmzContentSHA256Mismatch', `${name}: a second value`)
  }
})

t.test('X-Amz-Expires is a plain decimal; X-Amz-Date at most 15 minutes ahead', async t => {
  const url = (expires: string, date = '20130524T000000Z'): string => `/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=${date}&X-Amz-Expires=${encodeURIComponent(expires)}&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404`
  const headers = { host: 'examplebucket.s3.amazonaws.com' }
  const table: Array<[string, string]> = [
    ['86400', 'no error'], ['086400', 'SignatureDoesNotMatch'],
    ['+86400', 'X-Amz-Expires should be a number'], ['0x10', 'X-Amz-Expires should be a number'], ['1e3', 'X-Amz-Expires should be a number'],
    [' 60', 'X-Amz-Expires should be a number'], ['60.0', 'X-Amz-Expires should be a number'], ['', 'X-Amz-Expires should be a number'],
    ['\u0661\u0662', 'X-Amz-Expires should be a number'],
    ['0', 'AccessDenied'], ['-60', 'X-Amz-Expires must be non-negative'], ['604800', 'SignatureDoesNotMatch'],
    ['604801', 'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds']
  ]
  for (const [expires, expected] of table) {
    const answer = await verify('GET', url(expires), headers, new Date(DOC_TIME.getTime() + 60_000)).then(() => 'no error', (err: S3Error) => err.code === 'AuthorizationQueryParametersError' ? err.message : err.code)
    t.equal(answer, expected, JSON.stringify(expires))
  }
  const early = async (minutes: number): Promise<string> => await verify('GET', url('86400'), headers, new Date(DOC_TIME.getTime() - minutes * 60_000)).then(() => 'no error', (err: S3Error) => err.message)
  t.equal(await early(15), 'no error', '15 minutes ahead of the server\'s clock')
  t.equal(await early(16), 'Request is not yet valid', '16 minutes ahead')
})

t.test('payload modes', async t => {
  t.same(payloadMode(undefined), { kind: 'plain' })
  t.same(payloadMode('UNSIGNED-PAYLOAD'), { kind: 'plain' })
  t.same(payloadMode('STREAMING-UNSIGNED-PAYLOAD-TRAILER'), { kind: 'chunked', signed: false, trailer: true })
  t.same(payloadMode(EMPTY_SHA256.toUpperCase()), { kind: 'sha256', hex: EMPTY_SHA256 })
  t.throws(() => payloadMode('STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD'), { code: 'NotImplemented' })
  t.throws(() => payloadMode('nonsense'), { code: 'InvalidArgument' })
})

/** A signed request's headers as Node hands them to the server: names in lower case. */
function received (headers: Record<string, string>): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}

/** The AWS SDK's own signer (@smithy/signature-v4) with the documented key pair. */
async function sdkSigner (): Promise<InstanceType<typeof import('@smithy/signature-v4').SignatureV4>> {
  const { SignatureV4 } = await import('@smithy/signature-v4')
  const { createHash, createHmac } = await import('node:crypto')
  const bytes = (d: unknown): Buffer => typeof d === 'string' ? Buffer.from(d) : Buffer.from(d as Uint8Array)
  class Sha256 {
    readonly #hash
    constructor (secret?: unknown) { this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret)) }
    update (data: unknown): void { this.#hash.update(bytes(data)) }
    async digest (): Promise<Uint8Array> { return this.#hash.digest() }
    reset (): void {}
  }
  return new SignatureV4({ credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }, region: 'us-east-1', service: 's3', sha256: Sha256, uriEscapePath: false })
}

t.test('a path sent with characters a signer percent-encodes verifies through its AWS encoding', async t => {
  const signer = await sdkSigner()
  const now = new Date()
  const sign = async (signedPath: string): Promise<IncomingHttpHeaders> => (await signer.sign(
    { method: 'GET', protocol: 'http:', hostname: 'localhost', path: signedPath, query: {}, headers: { host: 'localhost', 'x-amz-content-sha256': EMPTY_SHA256 } },
    { signingDate: now })).headers as IncomingHttpHeaders
  const encoded = await sign('/bucket/a%28b%29%21')
  t.equal((await verify('GET', '/bucket/a%28b%29%21', encoded, now)).accessKeyId, ACCESS_KEY, 'sent as signed')
  t.equal((await verify('GET', '/bucket/a(b)!', encoded, now)).accessKeyId, ACCESS_KEY, 'sent raw, signed encoded')
  t.equal(await code(verify('GET', '/bucket/a(c)!', encoded, now)), 'SignatureDoesNotMatch', 'another path still fails')
  const plain = await sign('/bucket/plain')
  t.equal((await verify('GET', '/bucket/plain', plain, now)).accessKeyId, ACCESS_KEY, 'a path with nothing to encode')
})

t.test('requests signed by the AWS SDK signer verify, header and presigned, whatever their query and header values hold', async t => {
  const signer = await sdkSigner()
  const now = new Date()
  // Names that sort differently once encoded or joined to their value ('a' < 'a-b' < 'a.b' < 'a=' ...), repeated names, empty values, every punctuation mark, non-ASCII.
  const queries: Array<Record<string, string | string[]>> = [
    {},
    { uploads: '' },
    { a: '1', 'a-b': '2', 'a.b': '3', a_b: '4', A: '5', 'a~': '6', 'a%': '7' },
    { 'list-type': '2', prefix: 'photos/ 2026/', delimiter: '/', 'start-after': 'a+b=c&d', 'encoding-type': 'url' },
    { tag: ['z', 'a', 'm', ''] },
    { 'response-content-disposition': 'attachment; filename="naïve café.txt"', 'response-cache-control': 'max-age=60, public' },
    { key: "!#$&'()*+,/:;=?@[]^`{|}~ \"<>%", emoji: '\u{1F600}', cjk: '\u5BFE\u8C61' }
  ]
  const headerSets: Array<Record<string, string>> = [
    {},
    { 'x-amz-meta-note': '  spaced   out\tvalue  ', 'content-type': 'text/plain;  charset=utf-8' },
    { 'x-amz-meta-a': 'one', 'x-amz-meta-b': '', range: 'bytes=0-9', 'x-amz-storage-class': 'STANDARD_IA' }
  ]
  const rawQuery = (query: Record<string, string | string[]>): string =>
    Object.entries(query).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map(v => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`)).join('&')
  let checked = 0
  for (const query of queries) {
    for (const extra of headerSets) {
      const request = {
        method: 'PUT', protocol: 'http:', hostname: 'localhost', port: 8788, path: '/bucket/some%20key',
        query, headers: { host: 'localhost:8788', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...extra }
      }
      const signed = await signer.sign(request, { signingDate: now })
      const headers = received(signed.headers as Record<string, string>)
      const raw = rawQuery(query)
      const verified = await verify('PUT', `/bucket/some%20key${raw === '' ? '' : `?${raw}`}`, headers, now)
      t.equal(verified.accessKeyId, ACCESS_KEY, `header auth: query ${JSON.stringify(query)}, headers ${JSON.stringify(extra)}`)
      const changed = { ...headers, host: 'localhost:8789' }
      t.equal(await code(verify('PUT', `/bucket/some%20key${raw === '' ? '' : `?${raw}`}`, changed, now)), 'SignatureDoesNotMatch')

      const presigned = await signer.presign(request, { signingDate: now, expiresIn: 600 })
      const url = `/bucket/some%20key?${rawQuery(presigned.query as Record<string, string | string[]>)}`
      const plainHeaders = received(presigned.headers as Record<string, string>)
      t.equal((await verify('PUT', url, plainHeaders, now)).accessKeyId, ACCESS_KEY, `presigned: query ${JSON.stringify(query)}`)
      t.equal(await code(verify('PUT', url.replace('some%20key', 'other%20key'), plainHeaders, now)), 'SignatureDoesNotMatch')
      checked++
    }
  }
  t.equal(checked, queries.length * headerSets.length)
})

t.test('signed header names out of order or repeated in SignedHeaders are signed sorted, each once, as the SDK signs them', async t => {
  const signer = await sdkSigner()
  const now = new Date()
  const signed = await signer.sign({
    method: 'GET', protocol: 'http:', hostname: 'localhost', path: '/bucket/key', query: {},
    headers: { host: 'localhost', 'x-amz-content-sha256': EMPTY_SHA256, 'x-amz-meta-z': '1' }
  }, { signingDate: now })
  const headers = received(signed.headers as Record<string, string>)
  const authorization = headers.authorization as string
  const list = /SignedHeaders=([^,]+)/.exec(authorization)![1]
  t.equal((await verify('GET', '/bucket/key', headers, now)).accessKeyId, ACCESS_KEY)
  const shuffled = authorization.replace(list, [...list.split(';')].reverse().concat('host').join(';'))
  t.equal((await verify('GET', '/bucket/key', { ...headers, authorization: shuffled }, now)).accessKeyId, ACCESS_KEY)
})

t.test('a header value is signed with its white space as the SDK signs it: only runs of spaces and tabs become one space', async t => {
  const signer = await sdkSigner()
  const now = new Date()
  const sign = async (note: string): Promise<IncomingHttpHeaders> => received((await signer.sign({
    method: 'PUT', protocol: 'http:', hostname: 'localhost', path: '/bucket/key', query: {},
    headers: { host: 'localhost', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-note': note, 'x-amz-copy-source': '/src/key' }
  }, { signingDate: now })).headers as Record<string, string>)
  // Node reads header bytes as Latin-1: byte 0xA0 arrives as U+00A0.
  t.equal((await verify('PUT', '/bucket/key', await sign('a\u00a0b'), now)).accessKeyId, ACCESS_KEY, 'U+00A0 signed and sent')
  const spaced = await sign('a b')
  t.equal(await code(verify('PUT', '/bucket/key', { ...spaced, 'x-amz-meta-note': 'a\u00a0b' }, now)), 'SignatureDoesNotMatch', 'U+00A0 sent for a signed space')
  t.equal(await code(verify('PUT', '/bucket/key', { ...spaced, 'x-amz-copy-source': '/src/key\u00a0' }, now)), 'SignatureDoesNotMatch', 'U+00A0 added at the end')
  t.equal((await verify('PUT', '/bucket/key', await sign('a \t  b'), now)).accessKeyId, ACCESS_KEY)
  t.equal((await verify('PUT', '/bucket/key', { ...spaced, 'x-amz-meta-note': 'a\t \tb' }, now)).accessKeyId, ACCESS_KEY, 'a run of spaces and tabs is one space')
})

t.test('query parameters named like object properties are parameters like any other: signed, never taken as sent when they were not', async t => {
  const signer = await sdkSigner()
  const now = new Date()
  const sign = async (query: Record<string, string>): Promise<IncomingHttpHeaders> => received((await signer.sign({
    method: 'GET', protocol: 'http:', hostname: 'localhost', path: '/bucket/key', query,
    headers: { host: 'localhost', 'x-amz-content-sha256': EMPTY_SHA256 }
  }, { signingDate: now })).headers as Record<string, string>)
  const plain = await sign({})
  t.equal(await code(verify('GET', '/bucket/key?__proto__=x', plain, now)), 'SignatureDoesNotMatch', '__proto__ added')
  t.equal(await code(verify('GET', '/bucket/key?constructor=x', plain, now)), 'SignatureDoesNotMatch', 'constructor added')
  const numbered = await sign({ 0: 'x', 1: 'y' })
  t.equal((await verify('GET', '/bucket/key?0=x&1=y', numbered, now)).accessKeyId, ACCESS_KEY)
  t.equal(await code(verify('GET', '/bucket/key?0=x&__proto__=y', numbered, now)), 'SignatureDoesNotMatch', 'a signed parameter swapped for __proto__')
  t.same(Object.keys(parseRawQuery('__proto__=x&constructor=y&toString=z')), ['__proto__', 'constructor', 'toString'])
})

t.test('a + in the query is a space, as S3 reads a query: a signature over the space verifies, one over a plus does not', async t => {
  t.same(parseRawQuery('prefix=dir+with+space%2F&a+b=c%2Bd&e=%2B+'), { prefix: 'dir with space/', 'a b': 'c+d', e: '+ ' })
  const signer = await sdkSigner()
  const now = new Date()
  const sign = async (query: Record<string, string>): Promise<IncomingHttpHeaders> => received((await signer.sign({
    method: 'GET', protocol: 'http:', hostname: 'localhost', path: '/bucket', query,
    headers: { host: 'localhost', 'x-amz-content-sha256': EMPTY_SHA256 }
  }, { signingDate: now })).headers as Record<string, string>)
  const spaced = await sign({ prefix: 'dir with space/' })
  t.equal((await verify('GET', '/bucket?prefix=dir+with+space%2F', spaced, now)).accessKeyId, ACCESS_KEY, 'sent with + for the spaces (a form encoder)')
  t.equal((await verify('GET', '/bucket?prefix=dir%20with%20space%2F', spaced, now)).accessKeyId, ACCESS_KEY, 'sent with %20, as signed')
  const plussed = await sign({ prefix: 'a+b' })
  t.equal((await verify('GET', '/bucket?prefix=a%2Bb', plussed, now)).accessKeyId, ACCESS_KEY, 'a plus sent as %2B')
  t.equal(await code(verify('GET', '/bucket?prefix=a+b', plussed, now)), 'SignatureDoesNotMatch', 'a plus sent bare is a space')
})

t.test('a signed header name like an object property is a header that was not sent (SignatureDoesNotMatch, not a crash)', async t => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const headers = getObjectHeaders()
    headers.authorization = authorization(`host;${name};range;x-amz-content-sha256;x-amz-date`, 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41')
    t.equal(await code(verify('GET', '/test.txt', headers)), 'SignatureDoesNotMatch', name)
  }
})

t.test('the Authorization header verifies however its fields are spelled: in another order, with spaces around them', async t => {
  const documented = getObjectHeaders().authorization as string
  const fields = documented.slice('AWS4-HMAC-SHA256 '.length).split(',')
  for (const spelling of [
    `AWS4-HMAC-SHA256 ${fields.join(', ')}`,
    `AWS4-HMAC-SHA256 ${[...fields].reverse().join(',')}`,
    `AWS4-HMAC-SHA256 ${fields.map(f => ` ${f.replace('=', ' = ')} `).join(',')}`
  ]) {
    t.equal((await verify('GET', '/test.txt', { ...getObjectHeaders(), authorization: spelling })).accessKeyId, ACCESS_KEY, spelling)
  }
  const lacking = `AWS4-HMAC-SHA256 ${fields.slice(0, 2).join(', ')}`
  t.equal(await code(verify('GET', '/test.txt', { ...getObjectHeaders(), authorization: lacking })), 'AuthorizationHeaderMalformed', 'no Signature')
})

t.test('a credential scope verified with one secret is checked afresh against another (the signing key is the secret\'s)', async t => {
  const query = parseRawQuery('')
  const request = { method: 'GET', rawPath: '/test.txt', rawQuery: '', headers: getObjectHeaders() }
  const verifyWith = async (secret: string): Promise<string> => await code(verifySignature(request, query, () => secret, DOC_TIME))
  t.equal(await verifyWith(SECRET), 'no error')
  t.equal(await verifyWith('another-secret'), 'SignatureDoesNotMatch', 'the same access key id with another secret')
  t.equal(await verifyWith(SECRET), 'no error', 'and the first secret again')
})

t.test('a Credential that does not parse is named first, before the time of the request', async t => {
  const malformed = getObjectHeaders()
  malformed.authorization = (malformed.authorization as string).replace('/20130524/us-east-1/s3/', '/20130524/us-east-1/')
  t.equal(await code(verify('GET', '/test.txt', malformed, new Date(DOC_TIME.getTime() + 16 * 60_000))), 'AuthorizationHeaderMalformed', 'header: not RequestTimeTooSkewed')
  const url = '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404'
  t.equal(await code(verify('GET', url, { host: 'examplebucket.s3.amazonaws.com' }, new Date(DOC_TIME.getTime() + 3600_000))), 'AuthorizationQueryParametersError', 'presigned: not "Request has expired"')
})

t.test('an X-Amz-Date that names no instant (hour 30, second 99, 30 February) is malformed, not rolled over', async t => {
  for (const date of ['20130524T300000Z', '20130523T235999Z', '20130230T000000Z']) {
    const headers = { ...getObjectHeaders(), 'x-amz-date': date }
    const failure = await verify('GET', '/test.txt', headers, new Date(Date.UTC(2013, 4, 24, 6))).catch((err: unknown) => err)
    t.ok(failure instanceof S3Error, date)
    t.match(failure, { code: 'AccessDenied', message: /requires a valid Date or x-amz-date header/ }, `${date}: refused as no date, as S3 does`)
  }
  const url = '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130523T300000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404'
  const presigned = await verify('GET', url, { host: 'examplebucket.s3.amazonaws.com' }, new Date(DOC_TIME.getTime() + 3600_000)).catch((err: unknown) => err)
  t.match((presigned as S3Error).message, /X-Amz-Date must be yyyymmddThhmmssZ/, 'a presigned URL\'s: malformed')
})
