/**
 * S3 request headers → the binding's options, and stored objects → S3
 * response headers.
 *
 * Request side: Content-Type and the other HTTP metadata, `x-amz-meta-*`
 * (names lowercased, as S3 stores them), `x-amz-storage-class` (STANDARD ⇄
 * Standard, STANDARD_IA ⇄ InfrequentAccess; other S3 classes are
 * InvalidStorageClass), the conditional headers (handed to the binding as a
 * `Headers`, so it judges them), and `aws-chunked` removed from
 * Content-Encoding: it names the framing of this request, not the object's
 * encoding.
 *
 * Response side: what S3 answers for GET/HEAD, `x-amz-storage-class` only
 * for classes other than STANDARD (as S3), the stored checksums (CRC32,
 * CRC32C, CRC64NVME, SHA-1, SHA-256 in base64, with x-amz-checksum-type)
 * when asked with `x-amz-checksum-mode: ENABLED`.
 *
 * Header values travel as Latin-1 on the wire; values that are valid UTF-8
 * are decoded as UTF-8 when stored (the engine's request-metadata.ts, shared
 * with the HTTP routes), and RFC 2047 encoded words in `x-amz-meta-*` values
 * are decoded (encoded-words.ts), as the hosted service stores them. Served
 * `x-amz-meta-*` values that are not printable ASCII go out as RFC 2047
 * encoded words, as S3 and the hosted service send them, and the other
 * headers in their UTF-8 bytes, as given; custom metadata whose name cannot
 * be a header name is left out and counted in `x-amz-missing-meta`.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { conditionsHeaders, customMetadataOfHeaders, headerWireValue, httpMetadataOfHeaders, type ConditionsOf } from '../doors/request-metadata.js'
import { addMetadataHeaders } from '../doors/metadata-headers.js'
import { type BucketHTTPMetadata, type BucketObject, type StorageClass } from '../bucket/index.js'
import { decodeEncodedWords } from './encoded-words.js'
import { S3Error } from './errors.js'

export function single (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * A stored value → the value of header `name`: printable ASCII as is. An
 * `x-amz-meta-*` value with anything else goes out as an RFC 2047 encoded
 * word (`=?UTF-8?B?...?=`), which is how S3 answers non-ASCII metadata.
 * Any other header (Content-Disposition, Content-Type, a `response-*`
 * override) is answered as it was given, in its UTF-8 bytes, as the HTTP
 * routes answer it: S3 returns those values as sent, and a word would stand
 * for the whole value, so `attachment; filename="naïve.txt"` would reach a
 * browser as a disposition it cannot read, and an SDK as base64. A value
 * holding a control character cannot travel as bytes; it goes as a word, so
 * the read is still answered. `name` is lower case, as every caller gives it.
 */
function encodeHeaderValue (name: string, value: string): string {
  if (/^[\t\u0020-\u007e]*$/.test(value)) return value
  const wire = name.startsWith('x-amz-meta-') ? null : headerWireValue(value)
  return wire ?? `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`
}

/** Headers whose value asks for what this server does not do, and what that is. */
const unsupportedValueHeaders: Record<string, string> = {
  'x-amz-tagging': 'object tagging',
  'x-amz-website-redirect-location': 'website redirects',
  'x-amz-write-offset-bytes': 'appending to an object'
}

/**
 * Headers asking for what this server does not do: encryption with KMS,
 * and Object Lock, object tags (`x-amz-tagging`), website redirects and
 * appends (`x-amz-write-offset-bytes`). Acting on the rest of such a
 * request would store plaintext a client believes encrypted, a deletable
 * object it believes locked, an object without the tags it believes it
 * has, or replace an object a client believes appended to: NotImplemented
 * instead, as for the sub-resources (an empty value asks for nothing and
 * is taken).
 * `x-amz-server-side-encryption: AES256` (SSE-S3, the default
 * GetBucketEncryption answers) is accepted; SSE-C's headers are read by the
 * operations that take them (ssec.ts), and are InvalidArgument beside
 * `x-amz-server-side-encryption` (any value), as S3 answers them.
 */
export function refuseUnsupportedHeaders (headers: IncomingHttpHeaders): void {
  // SSE-C's key with another encryption method (SSE-S3 or SSE-KMS) for the same object: S3 refuses the two together,
  // whatever that method (a copy source's key, x-amz-copy-source-server-side-encryption-customer-*, is another object's).
  if (headers['x-amz-server-side-encryption'] !== undefined && Object.keys(headers).some(name => name.startsWith('x-amz-server-side-encryption-customer-'))) {
    throw new S3Error('InvalidArgument', 'Server Side Encryption with Customer provided key is incompatible with the encryption method specified')
  }
  for (const name in headers) {
    if (!name.startsWith('x-amz-')) continue
    if (name.startsWith('x-amz-server-side-encryption-aws-kms') ||
        name === 'x-amz-server-side-encryption-context' || name === 'x-amz-server-side-encryption-bucket-key-enabled') {
      throw new S3Error('NotImplemented', `${name}: SSE-KMS is not supported by this server.`)
    }
    if (name.startsWith('x-amz-object-lock-') || (name === 'x-amz-bucket-object-lock-enabled' && single(headers, name)?.trim().toLowerCase() === 'true')) {
      throw new S3Error('NotImplemented', `${name}: Object Lock is not supported by this server.`)
    }
    // Tags and a website redirect would be dropped, and an append would replace the object: a client relying on them is told.
    const unsupported = unsupportedValueHeaders[name]
    if (unsupported !== undefined && (single(headers, name)?.trim() ?? '') !== '') {
      throw new S3Error('NotImplemented', `${name}: ${unsupported} is not supported by this server.`)
    }
  }
  const sse = single(headers, 'x-amz-server-side-encryption')?.trim()
  if (sse === undefined || sse === 'AES256') return
  if (sse.startsWith('aws:kms')) throw new S3Error('NotImplemented', 'SSE-KMS is not supported by this server; objects are stored unencrypted.')
  throw new S3Error('InvalidArgument', `The encryption method specified is not supported: ${sse}.`)
}

const toStorageClass: Record<string, StorageClass> = { STANDARD: 'Standard', STANDARD_IA: 'InfrequentAccess' }
const fromStorageClass: Record<StorageClass, string> = { Standard: 'STANDARD', InfrequentAccess: 'STANDARD_IA' }

export function s3StorageClass (storageClass: StorageClass): string {
  return fromStorageClass[storageClass]
}

export function storageClassFrom (headers: IncomingHttpHeaders): StorageClass | undefined {
  const value = single(headers, 'x-amz-storage-class')
  if (value === undefined) return undefined
  const mapped = toStorageClass[value.trim()]
  if (mapped === undefined) throw new S3Error('InvalidStorageClass', `The storage class ${value} is not supported; use STANDARD or STANDARD_IA.`)
  return mapped
}

function isAwsChunked (coding: string): boolean {
  return coding.trim().toLowerCase() === 'aws-chunked'
}

/** Whether a request's Content-Encoding names `aws-chunked` (its body framed in chunks). */
export function declaresAwsChunked (headers: IncomingHttpHeaders): boolean {
  return single(headers, 'content-encoding')?.split(',').some(isAwsChunked) ?? false
}

/** Content-Encoding without `aws-chunked`, or undefined when nothing else is left. */
export function storedContentEncoding (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const kept = value.split(',').map(s => s.trim()).filter(s => s !== '' && !isAwsChunked(s))
  return kept.length === 0 ? undefined : kept.join(', ')
}

/**
 * The HTTP metadata of the request (the engine's mapping), without
 * `aws-chunked` unless `framed` is false (a PutObject whose body was sent
 * with its SHA-256, which S3 stores with that coding). An Expires that is
 * no HTTP date (`0`, `never`) is stored as the epoch: S3 keeps the text,
 * which a stored date cannot, and RFC 9111 reads such a value as a time in
 * the past, which the epoch says to every cache that reads the object
 * back, as the binding stores an Expires header
 * it cannot parse.
 */
export function httpMetadataFrom (headers: IncomingHttpHeaders, framed = true): BucketHTTPMetadata {
  const { metadata, invalidExpires } = httpMetadataOfHeaders(headers)
  if (invalidExpires !== undefined) metadata.cacheExpiry = new Date(0)
  if (!framed) return metadata
  const contentEncoding = storedContentEncoding(metadata.contentEncoding)
  if (contentEncoding === undefined) delete metadata.contentEncoding
  else metadata.contentEncoding = contentEncoding
  return metadata
}

/** `x-amz-meta-*` of the request, names lowercased, RFC 2047 encoded words in the values decoded (encoded-words.ts). */
export function customMetadataFrom (headers: IncomingHttpHeaders): Record<string, string> {
  const metadata = customMetadataOfHeaders(headers, 'x-amz-meta-')
  for (const name in metadata) metadata[name] = decodeEncodedWords(metadata[name])
  return metadata
}

/**
 * S3 takes an etag in If-Match / If-None-Match with or without its quotes;
 * the binding's Headers form wants them (an unquoted one is an Error there),
 * so bare etags are quoted on the way in.
 */
function quoteBareEtags (value: string): string {
  return value.split(',').map(item => {
    const etag = item.trim()
    return etag === '' || etag === '*' || etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`
  }).join(', ')
}

const conditionNames = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since']

/**
 * The conditions of a write (PutObject, CompleteMultipartUpload) as the
 * hosted service takes them: If-Match and If-None-Match (`*` or etags),
 * If-Modified-Since and If-Unmodified-Since, each against the object the
 * write would replace. The engine judges them (a missing object fails
 * If-Match and If-Modified-Since and passes the others); a failed one is
 * PreconditionFailed (412).
 */
export function writeConditionalFrom (headers: IncomingHttpHeaders): Headers | undefined {
  return conditionalFrom(headers, 'write')
}

/**
 * The destination conditions of a CopyObject: the hosted service's
 * `cf-copy-destination-if-*`, and S3's If-Match / If-None-Match (and the
 * dates, as on PutObject); a `cf-copy-destination-` header wins over the
 * plain one of the same name.
 */
export function copyDestinationConditionalFrom (headers: IncomingHttpHeaders): Headers | undefined {
  const plain = conditionalFrom(headers, 'write')
  const prefixed = conditionalFrom(headers, 'write', 'cf-copy-destination-')
  if (plain === undefined || prefixed === undefined) return prefixed ?? plain
  prefixed.forEach((value, name) => { plain.set(name, value) })
  return plain
}

const conditionHeaderNames: Record<string, string> = { 'if-match': 'If-Match', 'if-none-match': 'If-None-Match', 'if-modified-since': 'If-Modified-Since', 'if-unmodified-since': 'If-Unmodified-Since' }

/**
 * PreconditionFailed for a request whose conditions `onlyIf` were (as this
 * module made them), with S3's `Condition` element naming the header that
 * failed when the request carried that one condition alone: then the
 * engine's outcome leaves no doubt. With several, the outcome does not say
 * which one failed, and the door does not judge them again to find out: the
 * element is left out.
 */
export function preconditionFailed (onlyIf: Headers | undefined): S3Error {
  const sent = onlyIf === undefined ? [] : conditionNames.filter(name => onlyIf.has(name))
  return new S3Error('PreconditionFailed', undefined, {}, sent.length === 1 ? { Condition: conditionHeaderNames[sent[0]] } : {})
}

/**
 * The conditional headers of a request under their own names, or under `prefix` (x-amz-copy-source-if-*,
 * cf-copy-destination-if-*): a read's (a copy's source's) judged as S3 judges them (RFC 9110: an If-Unmodified-Since
 * equal to the Last-Modified holds), a write's as the hosted service does (strictly: `ConditionsOf` says why).
 */
export function conditionalFrom (headers: IncomingHttpHeaders, use: ConditionsOf, prefix = ''): Headers | undefined {
  let onlyIf: Headers | undefined
  for (const name of conditionNames) {
    const value = single(headers, `${prefix}${name}`)
    if (value === undefined) continue
    onlyIf ??= conditionsHeaders(use)
    onlyIf.set(name, name.endsWith('match') ? quoteBareEtags(value) : value)
  }
  return onlyIf
}

const s3ChecksumAlgorithms = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const

/**
 * x-amz-checksum-<algorithm> and x-amz-checksum-type of an object: a
 * multipart object's composite checksum (`<base64>-<parts>`, COMPOSITE), or
 * the stored checksums of the whole object (FULL_OBJECT). MD5 is the ETag's.
 */
export function checksumHeaders (object: BucketObject): Record<string, string> {
  const composite = object.checksums.composite
  if (composite !== undefined) {
    return {
      [`x-amz-checksum-${composite.algorithm}`]: `${Buffer.from(composite.value).toString('base64')}-${composite.parts}`,
      'x-amz-checksum-type': 'COMPOSITE'
    }
  }
  const headers: Record<string, string> = {}
  const stored = object.checksums.toJSON()
  for (const algorithm of s3ChecksumAlgorithms) {
    if (stored[algorithm] !== undefined) headers[`x-amz-checksum-${algorithm}`] = Buffer.from(stored[algorithm], 'hex').toString('base64')
  }
  if (Object.keys(headers).length > 0) headers['x-amz-checksum-type'] = 'FULL_OBJECT'
  return headers
}

/** The headers describing `object` in a GET/HEAD answer (without Content-Length/Range). */
export function objectHeaders (object: BucketObject, options: { overrides?: Record<string, string>, checksums?: boolean } = {}): Record<string, string> {
  const headers: Record<string, string> = {
    etag: object.httpEtag,
    'last-modified': object.uploaded.toUTCString(),
    'accept-ranges': 'bytes',
    'content-type': object.httpMetadata.contentType ?? 'application/octet-stream'
  }
  const http = object.httpMetadata
  if (http.contentLanguage !== undefined) headers['content-language'] = http.contentLanguage
  if (http.contentDisposition !== undefined) headers['content-disposition'] = http.contentDisposition
  if (http.contentEncoding !== undefined) headers['content-encoding'] = http.contentEncoding
  if (http.cacheControl !== undefined) headers['cache-control'] = http.cacheControl
  if (http.cacheExpiry !== undefined) headers.expires = http.cacheExpiry.toUTCString()
  if (object.storageClass !== 'Standard') headers['x-amz-storage-class'] = s3StorageClass(object.storageClass)
  // RFC 2047 words carry any value.
  const missing = addMetadataHeaders(headers, object.customMetadata, 'x-amz-meta-')
  if (missing > 0) headers['x-amz-missing-meta'] = String(missing)
  if (options.checksums === true) Object.assign(headers, checksumHeaders(object))
  Object.assign(headers, options.overrides ?? {})
  const safe: Record<string, string> = {}
  for (const name in headers) safe[name] = encodeHeaderValue(name, headers[name])
  return safe
}
