/**
 * The pure decoder of PutObject's and UploadPart's headers (put-request.ts),
 * by tables: each header family decoded, each error it answers, and the
 * order in which a request with several faults is answered.
 */
import { createHash, createSecretKey } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import t from 'tap'
import { MAX_PART_BYTES, MAX_PUT_BYTES } from '../../src/bucket/index.js'
import { decodeBodyHeaders, decodePartRequest, decodePutRequest, type BodyHeaders, type BodyUse } from '../../src/s3/put-request.js'
import type { VerifiedSignature } from '../../src/s3/sigv4.js'

const signature: VerifiedSignature = {
  accessKeyId: 'key', payloadHash: 'UNSIGNED-PAYLOAD', longDate: '20260101T000000Z', scope: '20260101/us-east-1/s3/aws4_request', signingKey: createSecretKey(new Uint8Array(32)), signature: 'ab'.repeat(32)
}
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
const MD5 = createHash('md5').update('x').digest('base64')
const CRC32 = 'AAAAAA=='
const SHA1 = createHash('sha1').update('x').digest('base64')
const SSEC_KEY = Buffer.alloc(32, 7)
const ssec = {
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': SSEC_KEY.toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(SSEC_KEY).digest('base64')
}
/** A plain framed body of 10 bytes: what the other headers of a row are added to. */
const framed = { 'content-length': '10' }
const chunked = { 'content-length': '200', 'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', 'x-amz-decoded-content-length': '10' }

function body (fields: Partial<BodyHeaders>): BodyHeaders {
  return Object.assign({ declaredBytes: 10, sha256: undefined, chunked: undefined, kept: undefined, checked: [] }, fields)
}

t.test('a body\'s headers: size, payload mode, framing and announced checksums', async t => {
  const rows: Array<[string, IncomingHttpHeaders, VerifiedSignature | null, BodyHeaders]> = [
    ['no checksum, unsigned payload', framed, null, body({})],
    ['Transfer-Encoding without Content-Length: no declared size', { 'transfer-encoding': 'chunked' }, null, body({ declaredBytes: undefined })],
    ['a literal SHA-256, lowercased', Object.assign({ 'x-amz-content-sha256': EMPTY_SHA256.toUpperCase() }, framed), null, body({ sha256: EMPTY_SHA256 })],
    ['the SHA-256 a presigned URL signs', framed, Object.assign({}, signature, { payloadHash: EMPTY_SHA256 }), body({ sha256: EMPTY_SHA256 })],
    ['UNSIGNED-PAYLOAD in the header wins over the signature', Object.assign({ 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, framed), Object.assign({}, signature, { payloadHash: EMPTY_SHA256 }), body({})],
    ['unsigned aws-chunked with a trailer: its decoded length, no signing', Object.assign({ 'x-amz-trailer': 'X-Amz-Checksum-CRC32' }, chunked), null,
      body({ chunked: { signing: null, decodedLength: 10, trailers: ['x-amz-checksum-crc32'] }, kept: { algorithm: 'crc32', trailer: 'x-amz-checksum-crc32' } })],
    ['signed aws-chunked: the request\'s signature starts the chain', Object.assign({}, chunked, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' }), signature,
      body({ chunked: { signing: signature, decodedLength: 10, trailers: [] } })],
    ['Content-MD5 alone is kept', Object.assign({ 'content-md5': ` ${MD5} ` }, framed), null, body({ kept: { algorithm: 'md5', value: MD5 } })],
    ['an x-amz-checksum-* is kept, Content-MD5 checked', Object.assign({ 'content-md5': MD5, 'x-amz-checksum-crc32': CRC32 }, framed), null,
      body({ kept: { algorithm: 'crc32', value: CRC32 }, checked: [{ algorithm: 'md5', value: MD5 }] })],
    ['x-amz-sdk-checksum-algorithm naming the one sent', Object.assign({ 'x-amz-checksum-sha1': SHA1, 'x-amz-sdk-checksum-algorithm': 'SHA1' }, framed), null,
      body({ kept: { algorithm: 'sha1', value: SHA1 } })],
    ['a repeated checksum header: its first value', Object.assign({ 'x-amz-checksum-crc32': [CRC32, 'nonsense'] }, framed), null, body({ kept: { algorithm: 'crc32', value: CRC32 } })]
  ]
  for (const [name, headers, signed, expected] of rows) t.same(decodeBodyHeaders(headers, signed, 'object'), expected, name)
})

t.test('a document keeps no checksum; a completion\'s x-amz-checksum-* describe the object, not the document', async t => {
  const headers = Object.assign({ 'content-md5': MD5, 'x-amz-checksum-crc32': CRC32 }, framed)
  const rows: Array<[BodyUse, IncomingHttpHeaders, BodyHeaders]> = [
    ['object', headers, body({ kept: { algorithm: 'crc32', value: CRC32 }, checked: [{ algorithm: 'md5', value: MD5 }] })],
    ['document', headers, body({ checked: [{ algorithm: 'md5', value: MD5 }, { algorithm: 'crc32', value: CRC32 }] })],
    ['completion', headers, body({ checked: [{ algorithm: 'md5', value: MD5 }] })],
    ['completion', Object.assign({ 'x-amz-checksum-crc32': 'whole-object-3', 'x-amz-sdk-checksum-algorithm': 'bogus' }, framed), body({})]
  ]
  for (const [use, given, expected] of rows) t.same(decodeBodyHeaders(given, null, use), expected, `${use}: ${Object.keys(given).join(', ')}`)
})

t.test('each error of a body\'s headers', async t => {
  const rows: Array<[string, IncomingHttpHeaders, VerifiedSignature | null, string]> = [
    ['x-amz-content-sha256 in a STREAMING mode not supported', Object.assign({ 'x-amz-content-sha256': 'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD' }, framed), null, 'NotImplemented'],
    ['x-amz-content-sha256 neither a mode nor a hash', Object.assign({ 'x-amz-content-sha256': 'nonsense' }, framed), null, 'InvalidArgument'],
    ['signed chunks on an anonymous request', Object.assign({}, chunked, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' }), null, 'AccessDenied'],
    ['aws-chunked without x-amz-decoded-content-length', Object.assign({}, chunked, { 'x-amz-decoded-content-length': undefined }), null, 'MissingContentLength'],
    ['x-amz-decoded-content-length not a number', Object.assign({}, chunked, { 'x-amz-decoded-content-length': '1e3' }), null, 'InvalidArgument'],
    ['x-amz-trailer on a body that is not aws-chunked', Object.assign({ 'x-amz-trailer': 'x-amz-checksum-crc32' }, framed), null, 'InvalidRequest'],
    ['x-amz-trailer on signed chunks without a trailer mode: no signature would cover it', Object.assign({}, chunked, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'x-amz-trailer': 'x-amz-checksum-crc32' }), signature, 'InvalidRequest'],
    ['x-amz-trailer naming what is not a checksum', Object.assign({}, chunked, { 'x-amz-trailer': 'x-amz-meta-a' }), null, 'InvalidRequest'],
    ['x-amz-trailer naming an unknown checksum', Object.assign({}, chunked, { 'x-amz-trailer': 'x-amz-checksum-md5' }), null, 'InvalidRequest'],
    ['Content-MD5 not 16 bytes of base64', Object.assign({ 'content-md5': 'AAAA' }, framed), null, 'InvalidDigest'],
    ['x-amz-checksum-crc32 not 4 bytes of base64', Object.assign({ 'x-amz-checksum-crc32': SHA1 }, framed), null, 'InvalidDigest'],
    ['two x-amz-checksum-* headers', Object.assign({ 'x-amz-checksum-crc32': CRC32, 'x-amz-checksum-sha1': SHA1 }, framed), null, 'InvalidRequest'],
    ['a checksum header and a checksum trailer', Object.assign({}, chunked, { 'x-amz-checksum-sha1': SHA1, 'x-amz-trailer': 'x-amz-checksum-crc32' }), null, 'InvalidRequest'],
    ['x-amz-sdk-checksum-algorithm unknown', Object.assign({ 'x-amz-checksum-crc32': CRC32, 'x-amz-sdk-checksum-algorithm': 'MD5' }, framed), null, 'InvalidRequest'],
    ['x-amz-sdk-checksum-algorithm without a checksum', Object.assign({ 'x-amz-sdk-checksum-algorithm': 'CRC32' }, framed), null, 'InvalidRequest'],
    ['x-amz-sdk-checksum-algorithm naming another one', Object.assign({ 'x-amz-checksum-crc32': CRC32, 'x-amz-sdk-checksum-algorithm': 'SHA1' }, framed), null, 'InvalidRequest']
  ]
  for (const [name, headers, signed, code] of rows) t.throws(() => decodeBodyHeaders(headers, signed, 'object'), { code }, name)
})

t.test('PutObject\'s headers: the body\'s, then metadata, conditions, storage class and SSE-C', async t => {
  const put = decodePutRequest(Object.assign({
    'content-type': 'text/plain',
    'content-encoding': 'aws-chunked, gzip',
    'x-amz-meta-colour': 'blue',
    'if-match': 'abc',
    'x-amz-storage-class': 'STANDARD_IA'
  }, chunked, ssec), null)
  t.same(put.body, body({ chunked: { signing: null, decodedLength: 10, trailers: [] } }))
  t.same(put.httpMetadata, { contentType: 'text/plain', contentEncoding: 'gzip' }, 'the framing\'s coding is not the object\'s')
  const hashed = decodePutRequest(Object.assign({ 'content-encoding': 'aws-chunked, gzip', 'x-amz-content-sha256': 'ab'.repeat(32) }, framed), null)
  t.same(hashed.httpMetadata, { contentEncoding: 'aws-chunked, gzip' }, 'beside a literal SHA-256 the body is not framed: the coding is kept')
  t.same(put.customMetadata, { colour: 'blue' })
  t.equal(put.onlyIf?.get('if-match'), '"abc"', 'a bare etag is quoted for the binding')
  t.equal(put.storageClass, 'InfrequentAccess')
  t.same(put.ssec.ssecKey, new Uint8Array(SSEC_KEY))
  const bare = decodePutRequest(framed, null)
  t.equal(bare.onlyIf, undefined)
  t.equal(bare.storageClass, undefined, 'the bucket\'s default applies')
  t.same(bare.ssec, {}, 'no SSE-C key: no option')
})

t.test('each error of PutObject\'s and UploadPart\'s own headers', async t => {
  const rows: Array<[string, IncomingHttpHeaders, string]> = [
    ['Content-Length over the limit', { 'content-length': String(MAX_PUT_BYTES + 1) }, 'EntityTooLarge'],
    ['x-amz-decoded-content-length over the limit', Object.assign({}, chunked, { 'x-amz-decoded-content-length': String(MAX_PUT_BYTES + 1) }), 'EntityTooLarge'],
    ['neither Content-Length nor Transfer-Encoding', {}, 'MissingContentLength'],
    ['aws-chunked without a STREAMING mode', Object.assign({ 'content-encoding': 'gzip,aws-chunked' }, framed), 'InvalidArgument'],
    ['aws-chunked with UNSIGNED-PAYLOAD', Object.assign({ 'content-encoding': 'aws-chunked', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, framed), 'InvalidArgument'],
    ['an unknown storage class', Object.assign({ 'x-amz-storage-class': 'GLACIER' }, framed), 'InvalidStorageClass'],
    ['an SSE-C algorithm other than AES256', Object.assign({}, framed, ssec, { 'x-amz-server-side-encryption-customer-algorithm': 'AES128' }), 'InvalidEncryptionAlgorithmError'],
    ['an SSE-C key whose MD5 differs', Object.assign({}, framed, ssec, { 'x-amz-server-side-encryption-customer-key-md5': MD5 }), 'InvalidArgument']
  ]
  for (const [name, headers, code] of rows) t.throws(() => decodePutRequest(headers, null), { code }, `PutObject: ${name}`)
  t.throws(() => decodePartRequest({ 'content-length': String(MAX_PART_BYTES + 1) }, null), { code: 'EntityTooLarge' }, 'UploadPart: over the part limit')
  t.throws(() => decodePartRequest({}, null), { code: 'MissingContentLength' }, 'UploadPart: unframed')
  t.throws(() => decodePartRequest(Object.assign({}, framed, ssec, { 'x-amz-server-side-encryption-customer-key': 'short' }), null), { code: 'InvalidArgument' }, 'UploadPart: a malformed SSE-C key')
})

t.test('UploadPart decodes the headers a part shares with PutObject, and only those', async t => {
  const part = decodePartRequest(Object.assign({ 'x-amz-checksum-crc32': CRC32, 'x-amz-storage-class': 'GLACIER', 'x-amz-meta-a': 'b' }, framed, ssec), null)
  t.same(part, { body: body({ kept: { algorithm: 'crc32', value: CRC32 } }), ssec: { ssecKey: new Uint8Array(SSEC_KEY) } })
})

t.test('a request with several faults is answered with the first in the order the operation checks them', async t => {
  const rows: Array<[string, IncomingHttpHeaders, string]> = [
    ['size before everything', { 'content-length': String(MAX_PUT_BYTES + 1), 'x-amz-content-sha256': 'nonsense', 'x-amz-storage-class': 'GLACIER' }, 'EntityTooLarge'],
    ['framing before payload mode', { 'x-amz-content-sha256': 'nonsense' }, 'MissingContentLength'],
    ['payload mode before checksums', Object.assign({ 'x-amz-content-sha256': 'nonsense', 'content-md5': 'AAAA' }, framed), 'InvalidArgument'],
    ['x-amz-trailer before checksums', Object.assign({ 'x-amz-trailer': 'x-amz-checksum-crc32', 'content-md5': 'AAAA' }, framed), 'InvalidRequest'],
    ['Content-MD5 before the one-checksum rule', Object.assign({ 'content-md5': 'AAAA', 'x-amz-checksum-crc32': CRC32, 'x-amz-checksum-sha1': SHA1 }, framed), 'InvalidDigest'],
    ['checksums before the storage class', Object.assign({ 'x-amz-checksum-crc32': 'AAAA', 'x-amz-storage-class': 'GLACIER' }, framed), 'InvalidDigest'],
    ['the storage class before SSE-C', Object.assign({ 'x-amz-storage-class': 'GLACIER' }, framed, ssec, { 'x-amz-server-side-encryption-customer-algorithm': 'AES128' }), 'InvalidStorageClass']
  ]
  for (const [name, headers, code] of rows) t.throws(() => decodePutRequest(headers, null), { code }, name)
})
