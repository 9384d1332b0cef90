/**
 * A request's body as the binding should read it: the socket, with the
 * aws-chunked framing removed and the checksums the request names verified
 * on the way (payload.ts), all streaming.
 *
 * For PutObject, one checksum given in a header (x-amz-checksum-sha256, else
 * -sha1, else Content-MD5) is handed to the binding instead, which verifies
 * and stores it (so GetObject can return it); the door checks the others.
 */
import type { IncomingMessage } from 'node:http'
import { pipeline, type Readable } from 'node:stream'
import type { BucketPutOptions } from '../bucket/index.js'
import { S3Error } from './errors.js'
import { single } from './headers.js'
import { AwsChunkedDecoder, ChecksumVerifier, payloadMode, requestedChecksums, type ExpectedChecksum } from './payload.js'
import type { VerifiedSignature } from './sigv4.js'

export interface DecodedBody {
  stream: Readable
  /** Checksum options for `put` (empty unless `forPut`). */
  putChecksum: Pick<BucketPutOptions, 'md5' | 'sha1' | 'sha256'>
}

export function decodedBody (raw: IncomingMessage, signature: VerifiedSignature | null, forPut: boolean): DecodedBody {
  const headers = raw.headers
  const mode = payloadMode(single(headers, 'x-amz-content-sha256'))
  const stages: NodeJS.ReadWriteStream[] = []
  let decoder: AwsChunkedDecoder | undefined
  if (mode.kind === 'chunked') {
    if (mode.signed && signature === null) throw new S3Error('AccessDenied', 'A signed aws-chunked body needs a signed request.')
    const decodedLength = single(headers, 'x-amz-decoded-content-length')
    if (decodedLength !== undefined && !/^\d+$/.test(decodedLength)) throw new S3Error('InvalidArgument', 'x-amz-decoded-content-length must be a number.')
    decoder = new AwsChunkedDecoder(mode.signed ? signature : null, decodedLength === undefined ? undefined : Number(decodedLength))
    stages.push(decoder)
  } else if (single(headers, 'x-amz-trailer') !== undefined) {
    throw new S3Error('InvalidRequest', 'x-amz-trailer needs an aws-chunked body (x-amz-content-sha256: STREAMING-...-TRAILER).')
  }
  let checks: ExpectedChecksum[] = requestedChecksums(headers, () => decoder?.trailers)
  if (mode.kind === 'sha256') checks.push({ algorithm: 'sha256', expected: () => Buffer.from(mode.hex, 'hex').toString('base64'), error: 'XAmzContentSHA256Mismatch' })

  const putChecksum: DecodedBody['putChecksum'] = {}
  if (forPut) {
    const fromHeader = (algorithm: string): ExpectedChecksum | undefined => checks.find(c =>
      c.algorithm === algorithm && c.error === 'BadDigest' && single(headers, algorithm === 'md5' ? 'content-md5' : `x-amz-checksum-${algorithm}`) !== undefined)
    const handed = fromHeader('sha256') ?? fromHeader('sha1') ?? fromHeader('md5')
    if (handed !== undefined) {
      const bytes = Buffer.from(handed.expected() ?? '', 'base64')
      const value = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer
      if (handed.algorithm === 'sha256') putChecksum.sha256 = value
      else if (handed.algorithm === 'sha1') putChecksum.sha1 = value
      else putChecksum.md5 = value
      checks = checks.filter(c => c !== handed)
    }
  }
  if (checks.length > 0) stages.push(new ChecksumVerifier(checks))
  if (stages.length === 0) return { stream: raw, putChecksum }
  // Errors travel down the chain to the last stream, which the binding reads.
  const stream = (pipeline as unknown as (...streams: unknown[]) => Readable)(raw, ...stages, () => {})
  return { stream, putChecksum }
}
