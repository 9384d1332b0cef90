/**
 * A request's body as the binding should read it, built from its decoded
 * headers (put-request.ts): the socket, with the aws-chunked framing removed
 * and the checksums the request announces verified on the way (payload.ts),
 * all streaming.
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
import { continueBody, continueOnRead } from '../doors/expect-continue.js'
import { S3Error } from './errors.js'
import { AwsChunkedDecoder, ChecksumVerifier, type ExpectedChecksum } from './payload.js'
import { decodeBodyHeaders, isChecksumValue, type AnnouncedChecksum, type BodyHeaders, type BodyUse } from './put-request.js'
import type { VerifiedSignature } from './sigv4.js'

/** What S3 adds to an object or part that arrives without an x-amz-checksum-*. */
export const defaultChecksum: BucketUploadChecksumAlgorithm = 'crc64nvme'

/** Whether the body keeps no x-amz-checksum-* (none announced, or only Content-MD5, the ETag's): then S3's default one is added. */
export function takesDefaultChecksum (body: BodyHeaders): boolean {
  return body.kept === undefined || body.kept.algorithm === 'md5'
}

export interface DecodedBody {
  stream: Readable
  /** The checksum option for `put` / `uploadPart` (empty unless a checksum is kept). */
  checksum: BucketUploadPartOptions
}

/** A trailer's checksum value, trimmed; InvalidDigest, as for a header, when it is not a base64 value of the algorithm's size. */
function trailerValue (trailers: Map<string, string> | undefined, name: string, algorithm: AnnouncedChecksum['algorithm']): string | undefined {
  const value = trailers?.get(name)?.trim()
  if (value !== undefined && !isChecksumValue(value, algorithm)) throw new S3Error('InvalidDigest', `${name} is not a base64 ${algorithm} value.`)
  return value
}

/**
 * The pipeline a body with these headers takes: the aws-chunked decoder,
 * then a verifier of what the door checks; the checksum handed to the
 * binding. Everything the door could refuse the request for has been
 * judged, so the 100 of `Expect: 100-continue` goes now, or with
 * `continueWhenRead` when the engine first reads the body (a part: the
 * engine refuses an upload that does not exist before reading it).
 */
export function bodyPipeline (raw: IncomingMessage, body: BodyHeaders, continueWhenRead = false): DecodedBody {
  if (!continueWhenRead) continueBody(raw)
  const stages: NodeJS.ReadWriteStream[] = []
  const decoder = body.chunked === undefined ? undefined : new AwsChunkedDecoder(body.chunked.signing, body.chunked.decodedLength, new Set(body.chunked.trailers))
  if (decoder !== undefined) stages.push(decoder)
  // A header's value is known now; a trailer's once the decoder has read it.
  const expected = (c: AnnouncedChecksum): () => string | undefined => 'value' in c ? () => c.value : () => trailerValue(decoder?.trailers, c.trailer, c.algorithm)
  const checks: ExpectedChecksum[] = body.checked.map(c => ({ algorithm: c.algorithm, expected: expected(c), error: 'BadDigest' }))
  const sha256 = body.sha256
  if (sha256 !== undefined) checks.push({ algorithm: 'sha256', expected: () => Buffer.from(sha256, 'hex').toString('base64'), error: 'XAmzContentSHA256Mismatch' })
  const checksum: BucketUploadPartOptions = {}
  const kept = body.kept
  if (kept !== undefined) {
    const value = expected(kept)
    checksum[kept.algorithm] = () => {
      const base64 = value()
      if (base64 === undefined) throw new S3Error('IncompleteBody', `The ${kept.algorithm} checksum announced in x-amz-trailer never arrived.`)
      return Buffer.from(base64, 'base64')
    }
  }
  if (checks.length > 0) stages.push(new ChecksumVerifier(checks))
  // Errors travel down the chain to the last stream, which the binding reads.
  const stream = stages.length === 0 ? raw : (pipeline as unknown as (...streams: unknown[]) => Readable)(raw, ...stages, () => {})
  if (continueWhenRead) continueOnRead(raw, stream)
  return { stream, checksum }
}

/** A document's body (an XML configuration, a Delete, a CompleteMultipartUpload): its headers decoded, then its pipeline. */
export function decodedBody (raw: IncomingMessage, signature: VerifiedSignature | null, use: Exclude<BodyUse, 'object'>): DecodedBody {
  return bodyPipeline(raw, decodeBodyHeaders(raw.headers, signature, use))
}
