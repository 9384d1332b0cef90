/**
 * A request's body as the binding should read it: the socket, with the
 * aws-chunked framing removed and the checksums the request names verified
 * on the way (payload.ts), all streaming.
 *
 * For PutObject and UploadPart, one checksum is handed to the binding,
 * which verifies it and keeps it with the object or part (so GetObject and
 * ListParts return it): an x-amz-checksum-* from a header (its value now) or
 * a trailer (a function the binding calls once the body has been read),
 * else Content-MD5. The door checks the others itself.
 */
import type { IncomingMessage } from 'node:http'
import { pipeline, type Readable } from 'node:stream'
import { type BucketUploadChecksumAlgorithm, type BucketUploadPartOptions } from '../bucket/index.js'
import { continueBody } from '../doors/expect-continue.js'
import { declaresBodyOver } from '../doors/request-metadata.js'
import { S3Error } from './errors.js'
import { single } from './headers.js'
import { announcedTrailers, AwsChunkedDecoder, ChecksumVerifier, checksumAlgorithms, payloadMode, requestedChecksums, type ChecksumAlgorithm, type ExpectedChecksum } from './payload.js'
import type { VerifiedSignature } from './sigv4.js'

/**
 * EntityTooLarge for a body announced over `limit` bytes (its decoded length
 * for aws-chunked), answered before the body is asked for.
 */
export function refuseOversized (headers: IncomingMessage['headers'], limit: number): void {
  if (declaresBodyOver(headers, limit)) throw new S3Error('EntityTooLarge', `Your proposed upload exceeds the maximum allowed size of ${limit} bytes.`)
}

/**
 * MissingContentLength (411) for an object or part sent with neither
 * Content-Length nor Transfer-Encoding, as S3 answers it: HTTP reads such a
 * request as having no body, and storing an empty object for a client whose
 * bytes follow unannounced would lose them without a word.
 */
export function refuseUnframed (headers: IncomingMessage['headers']): void {
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) throw new S3Error('MissingContentLength')
}

/** What S3 adds to an object or part that arrives without an x-amz-checksum-*. */
export const defaultChecksum: BucketUploadChecksumAlgorithm = 'crc64nvme'

export interface DecodedBody {
  stream: Readable
  /** The checksum option for `put` / `uploadPart` (empty unless the body is an object's). */
  checksum: BucketUploadPartOptions
  /** The x-amz-checksum-* algorithm handed to the binding, if any. */
  algorithm?: ChecksumAlgorithm
  /** The bytes the body declares (its decoded length for aws-chunked), when it declares them. */
  length?: number
}

/** The check the binding takes over: the first x-amz-checksum-*, else Content-MD5. */
function handedCheck (checks: ExpectedChecksum[]): ExpectedChecksum | undefined {
  const fromRequest = checks.filter(c => c.error === 'BadDigest')
  return fromRequest.find(c => checksumAlgorithms.includes(c.algorithm as ChecksumAlgorithm)) ?? fromRequest.find(c => c.algorithm === 'md5')
}

/**
 * What the body is: an object's or part's bytes (`object`: a checksum is
 * handed to the binding), an XML document (`document`), or a
 * CompleteMultipartUpload document, whose x-amz-checksum-* headers describe
 * the completed object, not the document (`completion`).
 */
export type BodyUse = 'object' | 'document' | 'completion'

export function decodedBody (raw: IncomingMessage, signature: VerifiedSignature | null, use: BodyUse): DecodedBody {
  const headers = raw.headers
  // Everything that could refuse the request before its body has been judged: now the client may send it.
  continueBody(raw)
  // The header, or the hash a presigned URL signs in its query (sigv4.ts refuses the two when they differ).
  const mode = payloadMode(single(headers, 'x-amz-content-sha256') ?? signature?.payloadHash)
  const stages: NodeJS.ReadWriteStream[] = []
  let decoder: AwsChunkedDecoder | undefined
  if (mode.kind === 'chunked') {
    if (mode.signed && signature === null) throw new S3Error('AccessDenied', 'A signed aws-chunked body needs a signed request.')
    const decodedLength = single(headers, 'x-amz-decoded-content-length')
    if (decodedLength === undefined) throw new S3Error('MissingContentLength', 'An aws-chunked body needs x-amz-decoded-content-length.')
    if (!/^\d+$/.test(decodedLength)) throw new S3Error('InvalidArgument', 'x-amz-decoded-content-length must be a number.')
    decoder = new AwsChunkedDecoder(mode.signed ? signature : null, Number(decodedLength), new Set(announcedTrailers(headers)))
    stages.push(decoder)
  } else if (single(headers, 'x-amz-trailer') !== undefined) {
    throw new S3Error('InvalidRequest', 'x-amz-trailer needs an aws-chunked body (x-amz-content-sha256: STREAMING-...-TRAILER).')
  }
  let checks: ExpectedChecksum[] = requestedChecksums(headers, () => decoder?.trailers, use !== 'completion')
  if (mode.kind === 'sha256') checks.push({ algorithm: 'sha256', expected: () => Buffer.from(mode.hex, 'hex').toString('base64'), error: 'XAmzContentSHA256Mismatch' })

  const checksum: BucketUploadPartOptions = {}
  const handed = use === 'object' ? handedCheck(checks) : undefined
  if (handed !== undefined) {
    checks = checks.filter(c => c !== handed)
    checksum[handed.algorithm] = () => {
      const value = handed.expected()
      if (value === undefined) throw new S3Error('IncompleteBody', `The ${handed.algorithm} checksum announced in x-amz-trailer never arrived.`)
      return Buffer.from(value, 'base64')
    }
  }
  const algorithm = handed !== undefined && handed.algorithm !== 'md5' ? handed.algorithm : undefined
  const declared = Number(decoder === undefined ? single(headers, 'content-length') : single(headers, 'x-amz-decoded-content-length'))
  const length = Number.isSafeInteger(declared) ? declared : undefined
  if (checks.length > 0) stages.push(new ChecksumVerifier(checks))
  if (stages.length === 0) return { stream: raw, checksum, algorithm, length }
  // Errors travel down the chain to the last stream, which the binding reads.
  const stream = (pipeline as unknown as (...streams: unknown[]) => Readable)(raw, ...stages, () => {})
  return { stream, checksum, algorithm, length }
}
