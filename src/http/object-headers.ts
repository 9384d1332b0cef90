/**
 * HTTP headers <-> the binding's options and object metadata, both ways.
 *
 * Request side: the contract's header table becomes `httpMetadata`,
 * `customMetadata` (`x-meta-*`), checksums (`Content-MD5` in base64,
 * `x-checksum-sha*` in hex), `storageClass` (`x-storage-class`), `onlyIf`
 * (the four conditional headers, handed to the binding as `Headers` so that
 * it parses lists, `*` and weak etags itself) and `ssecKey` (S3's three
 * SSE-C headers, on reads and on every write that takes a key).
 *
 * Response side: ETag, Last-Modified, Accept-Ranges, the stored HTTP
 * metadata, `x-meta-*`, `x-storage-class` and the stored checksums, with a
 * Content-Type from the key's extension when none was stored. `response-*`
 * query parameters (read by the engine's `responseOverridesFrom`) override
 * the stored metadata in that response only.
 *
 * Header values travel as Latin-1 on the wire. Values that are valid UTF-8
 * (curl sends UTF-8 as is) are decoded as UTF-8 when stored (the engine's
 * request-metadata.ts, shared with the S3 door) and encoded back when
 * served, so `x-meta-city: Zürich` round-trips.
 */
import { typeByName } from '../doors/type-by-name.js'
import type { IncomingHttpHeaders } from 'node:http'
import { conditionalHeadersOf, type ConditionsOf, contentMd5Bytes, customMetadataOfHeaders, headerWireValue, httpMetadataOfHeaders } from '../doors/request-metadata.js'
import type { BucketHTTPMetadata, BucketObject, BucketPutOptions, BucketSsecKey, BucketUploadPartOptions, StorageClass } from '../bucket/index.js'
import { ssecKeyFromHeaders } from '../doors/ssec-headers.js'
import { addMetadataHeaders } from '../doors/metadata-headers.js'
import { DoorError } from './errors.js'

const conditionalHeaders = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since'] as const
const checksumHeaders = ['sha1', 'sha256', 'sha384', 'sha512'] as const

function single (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** A string → a value Node will put in a header (the engine's, shared with the management API's object reads). */
export const encodeHeaderValue = headerWireValue

/** Whether a stored value can be a header of these routes (UTF-8 bytes, no control character). */
function travelsAsHeader (value: string): boolean {
  return headerWireValue(value) !== null
}

/** Conditional request headers of a read or a write (`ConditionsOf` says how each is judged), or undefined when none was sent. */
export function conditionalFrom (headers: IncomingHttpHeaders, use: ConditionsOf): Headers | undefined {
  return conditionalHeadersOf(headers, conditionalHeaders, use)
}

/** The HTTP metadata of the request (the engine's mapping); an Expires that is not an HTTP date is refused. */
export function httpMetadataFrom (headers: IncomingHttpHeaders): BucketHTTPMetadata {
  const { metadata, invalidExpires } = httpMetadataOfHeaders(headers)
  if (invalidExpires !== undefined) throw new DoorError('InvalidHeader', 'Expires is not an HTTP date.')
  return metadata
}

export function customMetadataFrom (headers: IncomingHttpHeaders): Record<string, string> {
  return customMetadataOfHeaders(headers, 'x-meta-')
}

export function storageClassFrom (headers: IncomingHttpHeaders): StorageClass | undefined {
  const value = single(headers, 'x-storage-class')
  if (value === undefined) return undefined
  if (value === 'Standard' || value === 'InfrequentAccess') return value
  throw new DoorError('InvalidHeader', 'x-storage-class must be Standard or InfrequentAccess.')
}

/**
 * The customer key of S3's SSE-C headers (`x-amz-server-side-encryption-customer-*`),
 * undefined when none of the three was sent; malformed ones are 40003 on a
 * write as on a read, so a key sent is never dropped and the object stored
 * in the clear.
 */
export function ssecKeyFrom (headers: IncomingHttpHeaders): Uint8Array | undefined {
  const ssec = ssecKeyFromHeaders(headers)
  if (ssec === undefined) return undefined
  if (!('key' in ssec)) throw new DoorError('InvalidHeader', ssec.message)
  return ssec.key
}

/** Content-MD5 (base64 of 16 bytes) as an ArrayBuffer. */
function md5From (value: string): ArrayBuffer {
  const bytes = contentMd5Bytes(value)
  if (bytes === null) throw new DoorError('InvalidHeader', 'Content-MD5 must be the base64 of a 16-byte MD5 digest.')
  return bytes
}

/** Every put option the request headers carry (checksums, metadata, storage class, conditions, SSE-C key). */
export function putOptionsFrom (headers: IncomingHttpHeaders, defaultStorageClass: StorageClass): BucketPutOptions {
  const options: BucketPutOptions = {
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(headers),
    storageClass: storageClassFrom(headers) ?? defaultStorageClass
  }
  const onlyIf = conditionalFrom(headers, 'write')
  if (onlyIf !== undefined) options.onlyIf = onlyIf
  addChecksums(options, headers)
  addSsecKey(options, headers)
  return options
}

/** The checksums a part's request carries (Content-MD5, x-checksum-sha*), for the binding to verify as for a put, and its SSE-C key (the engine judges it against the upload's). */
export function partOptionsFrom (headers: IncomingHttpHeaders): BucketUploadPartOptions {
  const options: BucketUploadPartOptions = {}
  addChecksums(options, headers)
  addSsecKey(options, headers)
  return options
}

/** Sets `options.ssecKey` to the key the request's SSE-C headers carry, when they carry one (malformed: 40003). */
export function addSsecKey (options: { ssecKey?: BucketSsecKey }, headers: IncomingHttpHeaders): void {
  const ssecKey = ssecKeyFrom(headers)
  if (ssecKey !== undefined) options.ssecKey = ssecKey
}

function addChecksums (options: BucketPutOptions | BucketUploadPartOptions, headers: IncomingHttpHeaders): void {
  const md5 = single(headers, 'content-md5')
  if (md5 !== undefined) options.md5 = md5From(md5)
  for (const algorithm of checksumHeaders) {
    const value = single(headers, `x-checksum-${algorithm}`)
    if (value !== undefined) options[algorithm] = value.trim().toLowerCase()
  }
}

/**
 * Headers describing a stored object (without Content-Length and
 * Content-Range, which depend on what is sent).
 */
export function objectHeaders (object: BucketObject, overrides: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = {
    etag: object.httpEtag,
    'last-modified': object.uploaded.toUTCString(),
    'accept-ranges': 'bytes',
    'x-storage-class': object.storageClass
  }
  const http = object.httpMetadata
  headers['content-type'] = http.contentType ?? typeByName(object.key)
  if (http.contentLanguage !== undefined) headers['content-language'] = http.contentLanguage
  if (http.contentDisposition !== undefined) headers['content-disposition'] = http.contentDisposition
  if (http.contentEncoding !== undefined) headers['content-encoding'] = http.contentEncoding
  if (http.cacheControl !== undefined) headers['cache-control'] = http.cacheControl
  if (http.cacheExpiry !== undefined) headers.expires = http.cacheExpiry.toUTCString()
  const missing = addMetadataHeaders(headers, object.customMetadata, 'x-meta-', travelsAsHeader)
  if (missing > 0) headers['x-missing-meta'] = String(missing)
  // Every stored hash but the MD5 (the ETag and Content-MD5 carry it), the CRCs an S3 client had stored too.
  const checksums: Record<string, string | undefined> = object.checksums.toJSON()
  for (const algorithm in checksums) {
    if (algorithm !== 'md5' && checksums[algorithm] !== undefined) headers[`x-checksum-${algorithm}`] = checksums[algorithm]
  }
  Object.assign(headers, overrides)
  const safe: Record<string, string> = {}
  for (const name in headers) {
    const encoded = encodeHeaderValue(headers[name])
    if (encoded !== null) safe[name] = encoded
  }
  // A stored type no header can carry (a control character, which only the binding takes) is answered as a key without one.
  safe['content-type'] ??= typeByName(object.key)
  return safe
}

/** Content-MD5 of a whole object (base64), when the object has an MD5 checksum. */
export function contentMd5 (object: BucketObject): string | undefined {
  const md5 = object.checksums.toJSON().md5
  return md5 === undefined ? undefined : Buffer.from(md5, 'hex').toString('base64')
}
