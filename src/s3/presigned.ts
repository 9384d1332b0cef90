/**
 * What a presigned URL's query carries beside its signature (sigv4.ts
 * verifies that): the request's `x-amz-*` headers, and the payload hash
 * the URL signs.
 *
 * - Headers: the SDKs move a request's `x-amz-*` headers into the query
 *   when they presign it, and S3 acts on them as headers.
 * - Payload hash: `X-Amz-Content-Sha256` in the query (its name in any
 *   case: SDK signers hoist the header as the caller spelled it) is the
 *   hash the URL signs, and body.ts verifies the body against it as
 *   against a header-signed request's; `UNSIGNED-PAYLOAD` there signs no
 *   body. A request whose header and query disagree is refused: an
 *   `x-amz-content-sha256` header other than the URL's, or the parameter
 *   given twice with two values, is XAmzContentSHA256Mismatch before the
 *   body is read: the unsigned header never stands in for what the URL
 *   signs, and the URL's hash never goes unchecked.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { S3Error } from './errors.js'

/** The query parameters that carry a presigned URL's authentication, lower-cased: never headers. */
const presignParameters = new Set(['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-expires', 'x-amz-signedheaders', 'x-amz-signature', 'x-amz-security-token', 'x-amz-content-sha256'])

/**
 * A presigned request's headers, with those its URL carries: the SDKs move
 * a request's `x-amz-*` headers into the query when they presign it
 * (metadata, storage class, checksums: `x-amz-checksum-crc32` of the
 * body, or of an empty one when the URL was made without it), and S3 acts
 * on them as headers. The signature covers the query, so they are signed.
 * Added as a header's raw bytes would read (UTF-8 as Latin-1), unless the
 * request sends that header itself (signed, or refused as unsigned).
 */
export function hoistQueryHeaders (headers: IncomingHttpHeaders, query: Record<string, string | string[]>): void {
  for (const name in query) {
    const header = name.toLowerCase()
    if (!header.startsWith('x-amz-') || presignParameters.has(header) || headers[header] !== undefined) continue
    const value = query[name]
    headers[header] = Buffer.from(Array.isArray(value) ? value.join(',') : value, 'utf8').toString('latin1')
  }
}

/**
 * Whether the request names a copy source: in its header, or, presigned,
 * in its URL's query, where the SDKs put it (hoistQueryHeaders makes it a
 * header once the signature holds; the operation is chosen before that).
 */
export function namesCopySource (headers: IncomingHttpHeaders, query: Record<string, string | string[]>, presigned: boolean): boolean {
  if (headers['x-amz-copy-source'] !== undefined) return true
  if (!presigned) return false
  for (const name in query) {
    if (name.toLowerCase() === 'x-amz-copy-source') return true
  }
  return false
}

/**
 * The payload hash a presigned URL signs (X-Amz-Content-Sha256, its name in
 * any case), or undefined. XAmzContentSHA256Mismatch when the URL gives
 * two, or the request's x-amz-content-sha256 header says another: which
 * one governs the body would otherwise be a guess, and the header is not
 * signed.
 */
export function presignedPayloadHash (query: Record<string, string | string[]>, header: string | undefined): string | undefined {
  let signed: string | undefined
  for (const name in query) {
    if (name.toLowerCase() !== 'x-amz-content-sha256') continue
    const value = query[name]
    for (const hash of Array.isArray(value) ? value : [value]) {
      if (signed !== undefined && hash !== signed) throw new S3Error('XAmzContentSHA256Mismatch', 'The presigned URL gives X-Amz-Content-Sha256 more than one value.')
      signed = hash
    }
  }
  if (signed !== undefined && header !== undefined && header !== signed) {
    throw new S3Error('XAmzContentSHA256Mismatch', 'The x-amz-content-sha256 header is not the X-Amz-Content-Sha256 the presigned URL signs.')
  }
  return signed
}
