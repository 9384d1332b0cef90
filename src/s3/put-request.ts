/**
 * The headers of a write read once: PutObject's and UploadPart's headers →
 * one plain value (`PutRequest`, `PartRequest`), by pure functions that
 * throw the S3 errors a client is answered with. The handler then builds
 * the body pipeline from that value (body.ts), calls the binding and
 * translates its answer; nothing after the decoder looks at a header again.
 *
 * A body's headers (`BodyHeaders`, shared by every request with a body):
 *
 *   - its size: Content-Length, or x-amz-decoded-content-length for an
 *     aws-chunked body; over the limit is EntityTooLarge, neither
 *     Content-Length nor Transfer-Encoding on an object or part is
 *     MissingContentLength (411): HTTP reads such a request as having no
 *     body, and storing an empty object for a client whose bytes follow
 *     unannounced would lose them without a word;
 *   - its payload mode, from x-amz-content-sha256 or the hash a presigned
 *     URL signs (payload.ts): a literal SHA-256 to check, or aws-chunked
 *     framing (signed chunks need a signed request; x-amz-trailer needs a
 *     STREAMING-...-TRAILER mode);
 *   - the checksums it announces: Content-MD5, x-amz-checksum-* headers and
 *     trailers named by x-amz-trailer, held to x-amz-sdk-checksum-algorithm;
 *     of those, the one an object or part keeps (the x-amz-checksum-*, else
 *     Content-MD5) is handed to the binding, which verifies and stores it,
 *     and the door checks the others as the bytes stream.
 *
 * The checks run in the order the operations always ran them, so a request
 * with several faults is answered with the same one: size, framing, payload
 * mode, checksums, then the object's own headers (storage class, SSE-C).
 */
import type { IncomingHttpHeaders } from 'node:http'
import { MAX_PART_BYTES, MAX_PUT_BYTES, type BucketHTTPMetadata, type StorageClass } from '../bucket/index.js'
import { declaresBodyOver } from '../doors/request-metadata.js'
import { S3Error } from './errors.js'
import { customMetadataFrom, declaresAwsChunked, httpMetadataFrom, single, storageClassFrom, writeConditionalFrom } from './headers.js'
import { checksumAlgorithms, payloadMode, type ChecksumAlgorithm } from './payload.js'
import type { VerifiedSignature } from './sigv4.js'
import { ssecOption } from './ssec.js'

/** A checksum a request announces: its base64 value from a header, or the trailing header that will carry it. */
export type AnnouncedChecksum =
  | { algorithm: ChecksumAlgorithm | 'md5', value: string } // Content-MD5, x-amz-checksum-<algorithm>
  | { algorithm: ChecksumAlgorithm, trailer: string } // x-amz-trailer: x-amz-checksum-<algorithm>

export interface BodyHeaders {
  /** The bytes the body declares: Content-Length, or x-amz-decoded-content-length for aws-chunked; undefined when it declares none. */
  declaredBytes: number | undefined
  /** x-amz-content-sha256 as a literal SHA-256 (hex, lower case): what the bytes must hash to. */
  sha256: string | undefined
  /** aws-chunked framing (x-amz-content-sha256: STREAMING-*): the signature chain of signed chunks, x-amz-decoded-content-length, x-amz-trailer's names. */
  chunked: { signing: VerifiedSignature | null, decodedLength: number, trailers: string[] } | undefined
  /** The checksum handed to the binding (an object's or part's: the x-amz-checksum-*, else Content-MD5). */
  kept: AnnouncedChecksum | undefined
  /** The announced checksums the door verifies itself, in the order announced (Content-MD5, headers, trailers). */
  checked: AnnouncedChecksum[]
}

/**
 * What the body is: an object's or part's bytes (`object`: a checksum is
 * handed to the binding), an XML document (`document`), or a
 * CompleteMultipartUpload document, whose x-amz-checksum-* headers describe
 * the completed object, not the document (`completion`).
 */
export type BodyUse = 'object' | 'document' | 'completion'

export interface PutRequest {
  body: BodyHeaders
  /** If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, judged by the binding against the object replaced. */
  onlyIf: Headers | undefined
  /** Content-Type, Content-Language, Content-Disposition, Content-Encoding (without aws-chunked when the body was framed), Cache-Control, Expires. */
  httpMetadata: BucketHTTPMetadata
  /** x-amz-meta-*, names lowercased. */
  customMetadata: Record<string, string>
  /** x-amz-storage-class; undefined for the bucket's default. */
  storageClass: StorageClass | undefined
  /** x-amz-server-side-encryption-customer-{algorithm,key,key-md5}, as the binding's option. */
  ssec: { ssecKey?: Uint8Array }
}

export interface PartRequest {
  body: BodyHeaders
  /** x-amz-server-side-encryption-customer-{algorithm,key,key-md5}, as the binding's option. */
  ssec: { ssecKey?: Uint8Array }
}

/** PutObject's headers, decoded. */
export function decodePutRequest (headers: IncomingHttpHeaders, signature: VerifiedSignature | null): PutRequest {
  const body = decodeUploadBody(headers, signature, MAX_PUT_BYTES)
  const onlyIf = writeConditionalFrom(headers)
  // A body whose SHA-256 is given is not framed: an aws-chunked Content-Encoding beside it is the object's, as S3 keeps it.
  const httpMetadata = httpMetadataFrom(headers, body.chunked !== undefined)
  const customMetadata = customMetadataFrom(headers)
  const storageClass = storageClassFrom(headers)
  return { body, onlyIf, httpMetadata, customMetadata, storageClass, ssec: ssecOption(headers) }
}

/** UploadPart's headers, decoded: those of PutObject's a part shares (its body's and SSE-C's). */
export function decodePartRequest (headers: IncomingHttpHeaders, signature: VerifiedSignature | null): PartRequest {
  const body = decodeUploadBody(headers, signature, MAX_PART_BYTES)
  return { body, ssec: ssecOption(headers) }
}

/** An object's or part's body headers: announced within `limit` bytes, framed, then as any body's. */
function decodeUploadBody (headers: IncomingHttpHeaders, signature: VerifiedSignature | null, limit: number): BodyHeaders {
  if (declaresBodyOver(headers, limit)) throw new S3Error('EntityTooLarge', `Your proposed upload exceeds the maximum allowed size of ${limit} bytes.`)
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) throw new S3Error('MissingContentLength')
  return decodeBodyHeaders(headers, signature, 'object')
}

/** A body's headers (payload mode, framing, announced checksums), decoded. */
export function decodeBodyHeaders (headers: IncomingHttpHeaders, signature: VerifiedSignature | null, use: BodyUse): BodyHeaders {
  // The header, or the hash a presigned URL signs in its query (sigv4.ts refuses the two when they differ).
  const mode = payloadMode(single(headers, 'x-amz-content-sha256') ?? signature?.payloadHash)
  let chunked: BodyHeaders['chunked']
  if (mode.kind === 'chunked') {
    if (mode.signed && signature === null) throw new S3Error('AccessDenied', 'A signed aws-chunked body needs a signed request.')
    const decodedLength = single(headers, 'x-amz-decoded-content-length')
    if (decodedLength === undefined) throw new S3Error('MissingContentLength', 'An aws-chunked body needs x-amz-decoded-content-length.')
    if (!/^\d+$/.test(decodedLength)) throw new S3Error('InvalidArgument', 'x-amz-decoded-content-length must be a number.')
    // Without a TRAILER mode no signature would cover the trailer's values.
    if (!mode.trailer && single(headers, 'x-amz-trailer') !== undefined) {
      throw new S3Error('InvalidRequest', 'x-amz-trailer needs a trailer mode (x-amz-content-sha256: STREAMING-...-TRAILER).')
    }
    chunked = { signing: mode.signed ? signature : null, decodedLength: Number(decodedLength), trailers: announcedTrailers(headers) }
  } else if (single(headers, 'x-amz-trailer') !== undefined) {
    throw new S3Error('InvalidRequest', 'x-amz-trailer needs an aws-chunked body (x-amz-content-sha256: STREAMING-...-TRAILER).')
  } else if (mode.kind === 'plain' && declaresAwsChunked(headers)) {
    // Framing announced, no STREAMING mode to say how to read it: its bytes would be stored as the object's. S3 refuses it too.
    throw new S3Error('InvalidArgument', 'aws-chunked encoding is not supported when x-amz-content-sha256 UNSIGNED-PAYLOAD is supplied (or none).')
  }
  const announced = announcedChecksums(headers, use !== 'completion')
  const kept = use === 'object' ? keptChecksum(announced) : undefined
  const declared = Number(single(headers, chunked === undefined ? 'content-length' : 'x-amz-decoded-content-length'))
  return {
    declaredBytes: Number.isSafeInteger(declared) ? declared : undefined,
    sha256: mode.kind === 'sha256' ? mode.hex : undefined,
    chunked,
    kept,
    checked: kept === undefined ? announced : announced.filter(c => c !== kept)
  }
}

/** The checksum an object or part keeps: the x-amz-checksum-* (one at most, checked), else Content-MD5. */
function keptChecksum (announced: AnnouncedChecksum[]): AnnouncedChecksum | undefined {
  return announced.find(c => c.algorithm !== 'md5') ?? announced.find(c => c.algorithm === 'md5')
}

/** A checksum header's first value (a repeated one is not joined: it would not be a checksum). */
function first (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Base64 of `bytes` bytes, strictly. */
function isBase64Of (value: string, bytes: number): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(value) && Buffer.from(value, 'base64').length === bytes && value.length % 4 === 0
}

const digestBytes: Record<ChecksumAlgorithm | 'md5', number> = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32, md5: 16 }

/** Whether `value` (trimmed) is a base64 digest of `algorithm`'s size: how a header's and a trailer's value are both judged. */
export function isChecksumValue (value: string, algorithm: ChecksumAlgorithm | 'md5'): boolean {
  return isBase64Of(value, digestBytes[algorithm])
}

/** The trailing headers x-amz-trailer names, in lower case. */
function announcedTrailers (headers: IncomingHttpHeaders): string[] {
  const trailer = first(headers, 'x-amz-trailer')
  return trailer === undefined ? [] : trailer.split(',').map(s => s.trim().toLowerCase()).filter(s => s !== '')
}

/**
 * The checksums a request announces: Content-MD5, x-amz-checksum-* (unless
 * `checksumHeaders` is false) and the trailers x-amz-trailer names, each
 * well-formed (InvalidDigest, InvalidRequest).
 */
function announcedChecksums (headers: IncomingHttpHeaders, checksumHeaders: boolean): AnnouncedChecksum[] {
  const announced: AnnouncedChecksum[] = []
  const md5 = first(headers, 'content-md5')?.trim()
  if (md5 !== undefined) {
    if (!isChecksumValue(md5, 'md5')) throw new S3Error('InvalidDigest')
    announced.push({ algorithm: 'md5', value: md5 })
  }
  for (const algorithm of checksumHeaders ? checksumAlgorithms : []) {
    const value = first(headers, `x-amz-checksum-${algorithm}`)?.trim()
    if (value === undefined) continue
    if (!isChecksumValue(value, algorithm)) throw new S3Error('InvalidDigest', `x-amz-checksum-${algorithm} is not a base64 ${algorithm} value.`)
    announced.push({ algorithm, value })
  }
  for (const name of announcedTrailers(headers)) {
    const algorithm = name.replace(/^x-amz-checksum-/, '') as ChecksumAlgorithm
    if (!name.startsWith('x-amz-checksum-') || !checksumAlgorithms.includes(algorithm)) {
      throw new S3Error('InvalidRequest', `x-amz-trailer names ${name}, which is not a checksum.`)
    }
    announced.push({ algorithm, trailer: name })
  }
  if (checksumHeaders) checkAnnouncedAlgorithm(headers, announced.filter(c => c.algorithm !== 'md5').map(c => c.algorithm))
  return announced
}

/**
 * One x-amz-checksum-* per request (header or trailer), and the algorithm
 * x-amz-sdk-checksum-algorithm announces is the one sent, as S3 checks.
 */
function checkAnnouncedAlgorithm (headers: IncomingHttpHeaders, sent: string[]): void {
  if (sent.length > 1) throw new S3Error('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.')
  const announced = first(headers, 'x-amz-sdk-checksum-algorithm')?.trim().toLowerCase()
  if (announced === undefined) return
  if (!checksumAlgorithms.includes(announced as ChecksumAlgorithm)) throw new S3Error('InvalidRequest', 'Value for x-amz-sdk-checksum-algorithm header is invalid.')
  if (sent.length === 0) {
    throw new S3Error('InvalidRequest', 'x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found.')
  }
  if (sent[0] !== announced) throw new S3Error('InvalidRequest', `x-amz-sdk-checksum-algorithm says ${announced}; the checksum sent is ${sent[0]}.`)
}

/**
 * The checksum of the object a CompleteMultipartUpload must make, from its
 * x-amz-checksum-* headers: a whole-object value (`checksum`, what a
 * FULL_OBJECT completion must produce) or one in S3's `<base64>-<parts>`
 * form (`composite`, what a COMPOSITE one must). One header at most, as S3
 * takes one on every request (InvalidRequest, its PutObject's sentence): of
 * several, none would be judged but the last. Whether it is of the upload's
 * algorithm and matches is the binding's to judge.
 */
export function completionChecksumFrom (headers: IncomingHttpHeaders): { checksum?: { algorithm: ChecksumAlgorithm, value: Buffer }, composite?: { algorithm: ChecksumAlgorithm, value: Buffer, parts: number } } {
  const sent = checksumAlgorithms.flatMap(algorithm => {
    const value = first(headers, `x-amz-checksum-${algorithm}`)?.trim()
    return value === undefined ? [] : [{ algorithm, value }]
  })
  if (sent.length > 1) throw new S3Error('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.')
  if (sent.length === 0) return {}
  const { algorithm, value } = sent[0]
  const compositeForm = /^([^-]*)-(\d{1,5})$/.exec(value)
  if (compositeForm !== null) return { composite: { algorithm, value: Buffer.from(compositeForm[1], 'base64'), parts: Number(compositeForm[2]) } }
  if (value.includes('-')) throw new S3Error('InvalidRequest', `Value for x-amz-checksum-${algorithm} header is invalid.`)
  return { checksum: { algorithm, value: Buffer.from(value, 'base64') } }
}
