/**
 * Request payloads as S3 clients send them, decoded while they stream:
 *
 *   - `UNSIGNED-PAYLOAD` (and anonymous or presigned requests): the bytes as is;
 *   - a literal SHA-256 in x-amz-content-sha256: the bytes, hashed on the way
 *     and compared at the end (XAmzContentSHA256Mismatch);
 *   - `STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]` and
 *     `STREAMING-UNSIGNED-PAYLOAD-TRAILER` (the AWS SDKs' default since
 *     2025): the `aws-chunked` framing is removed by `AwsChunkedDecoder`, a
 *     Transform that holds at most one chunk header line, never the body;
 *     every chunk signature, and the trailer's, is verified against the
 *     signature chain started by the request's own signature;
 *   - checksums: Content-MD5 and x-amz-checksum-{crc32,crc32c,crc64nvme,
 *     sha1,sha256} from headers or trailers (announced and judged in
 *     put-request.ts): the one the object keeps is handed to the binding,
 *     which computes, verifies and stores it (body.ts); any other is
 *     computed on the way (`ChecksumVerifier`, with the engine's
 *     implementations) and compared at the end (BadDigest).
 *
 * A failure raises from the stream, so the binding's `put`/`uploadPart`
 * that reads it discards what it had staged: nothing is stored. Bytes of a
 * chunk flow on before its signature is checked, which is safe for the same
 * reason: nothing becomes visible before the stream ends cleanly.
 */
import { createHash, type Hash } from 'node:crypto'
import { Transform, type TransformCallback } from 'node:stream'
import { runningChecksum, sha256Hex, type RunningChecksum } from '../bucket/index.js'
import { S3Error } from './errors.js'
import { hmacHex, signaturesEqual, UNSIGNED_PAYLOAD, type VerifiedSignature } from './sigv4.js'

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
/** Longest chunk header or trailer line (a 64-hex signature and a size fit many times over). */
const MAX_LINE_BYTES = 4096
/** Most trailer lines accepted. */
const MAX_TRAILER_LINES = 16

export type PayloadMode =
  | { kind: 'plain' }
  | { kind: 'sha256', hex: string }
  | { kind: 'chunked', signed: boolean, trailer: boolean }

/**
 * The payload mode of a request from its x-amz-content-sha256, or the hash
 * its presigned URL signs (undefined when neither is sent).
 */
export function payloadMode (contentSha256: string | undefined): PayloadMode {
  if (contentSha256 === undefined || contentSha256 === UNSIGNED_PAYLOAD) return { kind: 'plain' }
  switch (contentSha256) {
    case 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD': return { kind: 'chunked', signed: true, trailer: false }
    case 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER': return { kind: 'chunked', signed: true, trailer: true }
    case 'STREAMING-UNSIGNED-PAYLOAD-TRAILER': return { kind: 'chunked', signed: false, trailer: true }
  }
  if (/^[0-9a-f]{64}$/i.test(contentSha256)) return { kind: 'sha256', hex: contentSha256.toLowerCase() }
  if (contentSha256.startsWith('STREAMING-')) throw new S3Error('NotImplemented', `x-amz-content-sha256 ${contentSha256} is not supported.`)
  throw new S3Error('InvalidArgument', 'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a SHA-256 in hex or a STREAMING-* mode.')
}

/**
 * Removes the `aws-chunked` framing. `signing` is null for unsigned chunks;
 * `decodedLength` (x-amz-decoded-content-length) is checked when given.
 * The trailer may hold the headers `announced` (x-amz-trailer's names, lower
 * case), each once, and one x-amz-trailer-signature: any other line, or one
 * sent twice, is MalformedTrailerError, as S3 answers. Otherwise a trailer
 * signed once could carry values the request never named, or a second
 * value of one it did, for whichever reader takes the last.
 */
export class AwsChunkedDecoder extends Transform {
  readonly #signing: VerifiedSignature | null
  readonly #decodedLength: number | undefined
  readonly #announced: ReadonlySet<string>
  #state: 'header' | 'data' | 'data-end' | 'trailer' | 'done' = 'header'
  #pending: Buffer = Buffer.alloc(0)
  #remaining = 0
  #chunkSignature = ''
  #chunkHash: Hash | null = null
  #previousSignature: string
  #decoded = 0
  #trailerText = ''
  #trailerSignature: string | undefined
  #trailerLines = 0
  /** Trailing headers (lowercase names) once the body ended. */
  readonly trailers = new Map<string, string>()

  constructor (signing: VerifiedSignature | null, decodedLength: number | undefined, announced: ReadonlySet<string>) {
    super()
    this.#signing = signing
    this.#decodedLength = decodedLength
    this.#announced = announced
    this.#previousSignature = signing?.signature ?? ''
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      // The data of all the chunks in this piece goes on as one buffer: a body of one-byte chunks
      // would otherwise cost a push (some microseconds) every six bytes.
      const data: Buffer[] = []
      this.#consume(chunk, data)
      if (data.length === 1) this.push(data[0])
      else if (data.length > 1) this.push(Buffer.concat(data))
      callback()
    } catch (err) {
      callback(err as Error)
    }
  }

  override _flush (callback: TransformCallback): void {
    if (this.#state !== 'done') {
      callback(new S3Error('IncompleteBody', 'The aws-chunked body ended before its final chunk.'))
      return
    }
    if (this.#decodedLength !== undefined && this.#decoded !== this.#decodedLength) {
      callback(new S3Error('IncompleteBody', `x-amz-decoded-content-length says ${this.#decodedLength} bytes; the chunks held ${this.#decoded}.`))
      return
    }
    callback()
  }

  /** Takes one CRLF-terminated line off the pending bytes, or null when it has not arrived yet. */
  #line (): string | null {
    const end = this.#pending.indexOf('\r\n')
    if (end === -1) {
      if (this.#pending.length > MAX_LINE_BYTES) throw new S3Error('IncompleteBody', 'An aws-chunked header line is too long.')
      return null
    }
    if (end > MAX_LINE_BYTES) throw new S3Error('IncompleteBody', 'An aws-chunked header line is too long.')
    const line = this.#pending.subarray(0, end).toString('latin1')
    this.#pending = this.#pending.subarray(end + 2)
    return line
  }

  #consume (chunk: Buffer, out: Buffer[]): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk])
    for (;;) {
      switch (this.#state) {
        case 'header': {
          const line = this.#line()
          if (line === null) return
          this.#startChunk(line)
          break
        }
        case 'data': {
          if (this.#pending.length === 0) return
          const take = Math.min(this.#remaining, this.#pending.length)
          const data = this.#pending.subarray(0, take)
          this.#pending = this.#pending.subarray(take)
          this.#chunkHash?.update(data)
          this.#remaining -= take
          this.#decoded += take
          out.push(data)
          if (this.#remaining === 0) this.#state = 'data-end'
          break
        }
        case 'data-end': {
          if (this.#pending.length < 2) return
          if (this.#pending[0] !== 0x0d || this.#pending[1] !== 0x0a) throw new S3Error('IncompleteBody', 'An aws-chunked chunk is longer than its header says.')
          this.#pending = this.#pending.subarray(2)
          this.#verifyChunk(this.#chunkHash?.digest('hex') ?? '')
          this.#state = 'header'
          break
        }
        case 'trailer': {
          const line = this.#line()
          if (line === null) return
          if (line === '') {
            this.#verifyTrailer()
            this.#state = 'done'
            break
          }
          if (++this.#trailerLines > MAX_TRAILER_LINES) throw new S3Error('InvalidRequest', 'Too many trailing headers.')
          const colon = line.indexOf(':')
          if (colon <= 0) throw new S3Error('IncompleteBody', 'A trailing header is malformed.')
          const name = line.slice(0, colon).trim().toLowerCase()
          const value = line.slice(colon + 1).trim()
          if (name === 'x-amz-trailer-signature') {
            if (this.#trailerSignature !== undefined) throw new S3Error('MalformedTrailerError', 'The trailer holds x-amz-trailer-signature twice.')
            this.#trailerSignature = value
          } else {
            if (!this.#announced.has(name)) throw new S3Error('MalformedTrailerError', 'The trailer holds a header x-amz-trailer does not name.')
            if (this.trailers.has(name)) throw new S3Error('MalformedTrailerError', 'The trailer holds a header twice.')
            this.trailers.set(name, value)
            this.#trailerText += `${name}:${value}\n`
          }
          break
        }
        case 'done':
          // Some clients end with one more CRLF; anything else is not aws-chunked.
          if (this.#pending.toString('latin1').trim() !== '') throw new S3Error('IncompleteBody', 'Bytes follow the end of the aws-chunked body.')
          this.#pending = Buffer.alloc(0)
          return
      }
    }
  }

  #startChunk (line: string): void {
    const semicolon = line.indexOf(';')
    const sizeField = (semicolon === -1 ? line : line.slice(0, semicolon)).trim()
    if (!/^[0-9a-fA-F]{1,16}$/.test(sizeField)) throw new S3Error('IncompleteBody', 'An aws-chunked chunk size is not hexadecimal.')
    const size = parseInt(sizeField, 16)
    // Refused at once: a body whose chunks run past the length it announced would otherwise stream on (up to the size limit) until its end.
    if (this.#decodedLength !== undefined && this.#decoded + size > this.#decodedLength) {
      throw new S3Error('IncompleteBody', `x-amz-decoded-content-length says ${this.#decodedLength} bytes; the chunks hold more.`)
    }
    if (this.#signing !== null) {
      const extensions = semicolon === -1 ? [] : line.slice(semicolon + 1).split(';')
      const signature = extensions.map(e => e.trim()).find(e => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length)
      if (signature === undefined) throw new S3Error('SignatureDoesNotMatch', 'An aws-chunked chunk has no chunk-signature.')
      this.#chunkSignature = signature
    }
    if (size === 0) {
      this.#verifyChunk(EMPTY_SHA256)
      this.#state = 'trailer'
      return
    }
    this.#remaining = size
    this.#chunkHash = this.#signing === null ? null : createHash('sha256')
    this.#state = 'data'
  }

  #verifyChunk (dataHash: string): void {
    const signing = this.#signing
    if (signing === null) return
    const stringToSign = ['AWS4-HMAC-SHA256-PAYLOAD', signing.longDate, signing.scope, this.#previousSignature, EMPTY_SHA256, dataHash].join('\n')
    const expected = hmacHex(signing.signingKey, stringToSign)
    if (!signaturesEqual(expected, this.#chunkSignature)) {
      throw new S3Error('SignatureDoesNotMatch', 'An aws-chunked chunk signature does not match its data.')
    }
    this.#previousSignature = expected
  }

  #verifyTrailer (): void {
    const signing = this.#signing
    if (signing === null || signing.payloadHash !== 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER') return
    if (this.#trailerSignature === undefined) throw new S3Error('SignatureDoesNotMatch', 'The trailer has no x-amz-trailer-signature.')
    const stringToSign = ['AWS4-HMAC-SHA256-TRAILER', signing.longDate, signing.scope, this.#previousSignature, sha256Hex(this.#trailerText)].join('\n')
    if (!signaturesEqual(hmacHex(signing.signingKey, stringToSign), this.#trailerSignature)) {
      throw new S3Error('SignatureDoesNotMatch', 'The trailer signature does not match.')
    }
  }
}

export type ChecksumAlgorithm = 'crc32' | 'crc32c' | 'crc64nvme' | 'sha1' | 'sha256'
export const checksumAlgorithms: ChecksumAlgorithm[] = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256']

/** A checksum to check: the expected base64 value now (header) or later (trailer). */
export interface ExpectedChecksum {
  algorithm: ChecksumAlgorithm | 'md5'
  expected: () => string | undefined
  /** The S3 error of a mismatch. */
  error: 'BadDigest' | 'XAmzContentSHA256Mismatch'
}

/** Passes bytes through, computing checksums, and fails at the end when one differs. */
export class ChecksumVerifier extends Transform {
  readonly #checks: Array<{ check: ExpectedChecksum, running: RunningChecksum }>

  constructor (checks: ExpectedChecksum[]) {
    super()
    this.#checks = checks.map(check => ({ check, running: runningChecksum(check.algorithm) }))
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    for (const { running } of this.#checks) running.update(chunk)
    callback(null, chunk)
  }

  override _flush (callback: TransformCallback): void {
    this.#verify().then(() => callback(), err => callback(err as Error))
  }

  async #verify (): Promise<void> {
    for (const { check, running } of this.#checks) {
      const expected = check.expected()
      if (expected === undefined) throw new S3Error('IncompleteBody', `The ${check.algorithm} checksum announced in x-amz-trailer never arrived.`)
      const actual = (await running.digest()).toString('base64')
      if (actual === expected) continue
      // The SHA-256 the client sent in hex, as S3 names both in hex.
      if (check.error === 'XAmzContentSHA256Mismatch') {
        throw new S3Error(check.error, undefined, {}, { ClientComputedContentSHA256: hexOf(expected), S3ComputedContentSHA256: hexOf(actual) })
      }
      throw new S3Error(check.error, `The ${check.algorithm} you specified was ${expected}; the data received has ${actual}.`)
    }
  }
}

function hexOf (base64: string): string {
  return Buffer.from(base64, 'base64').toString('hex')
}
