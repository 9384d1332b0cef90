/**
 * The objects a read returns: `BucketObject` (metadata) and
 * `BucketObjectBody` (metadata and value). Built from a store's record.
 *
 * An object encrypted with a customer-provided key (SSE-C) shows its
 * checksums only to a reader that gave the key (`get`, `read`, a put's or
 * copy's answer); `head` and `list`, which take none, show it with no
 * checksum value at all (`keylessView`): a digest of the data, even one the
 * writer gave, lets anyone holding a guess at the plaintext confirm it. S3's
 * ListObjects lists no checksum value of any object, and its HeadObject of
 * such an object needs the key.
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { Readable } from 'node:stream'
import { hashAlgorithms, type HashAlgorithm } from './checksums.js'
import { httpMetadataView, writeHttpHeaders } from './metadata.js'
import type { StoredChecksums, StoredObject } from './port.js'
import { withFields } from './records.js'
import type { BucketChecksums, BucketCompositeChecksum, BucketHTTPMetadata, BucketListedObject, BucketObject, BucketObjectBody, StorageClass } from './types.js'

class Checksums implements BucketChecksums {
  readonly #stored: StoredChecksums
  constructor (stored: StoredChecksums) { this.#stored = stored }
  #bytes (algorithm: HashAlgorithm): ArrayBuffer | undefined {
    const hex = this.#stored[algorithm]
    return hex === undefined ? undefined : hexBuffer(hex)
  }

  get md5 (): ArrayBuffer | undefined { return this.#bytes('md5') }
  get sha1 (): ArrayBuffer | undefined { return this.#bytes('sha1') }
  get sha256 (): ArrayBuffer | undefined { return this.#bytes('sha256') }
  get sha384 (): ArrayBuffer | undefined { return this.#bytes('sha384') }
  get sha512 (): ArrayBuffer | undefined { return this.#bytes('sha512') }
  get crc32 (): ArrayBuffer | undefined { return this.#bytes('crc32') }
  get crc32c (): ArrayBuffer | undefined { return this.#bytes('crc32c') }
  get crc64nvme (): ArrayBuffer | undefined { return this.#bytes('crc64nvme') }
  get composite (): BucketCompositeChecksum | undefined {
    const layout = this.#stored.multipart
    if (layout?.composite === undefined) return undefined
    return { algorithm: layout.composite.algorithm, value: hexBuffer(layout.composite.hex), parts: layout.parts }
  }

  toJSON (): Record<string, string> {
    const out: Record<string, string> = {}
    for (const algorithm of hashAlgorithms) {
      const hex = this.#stored[algorithm]
      if (hex !== undefined) out[algorithm] = hex
    }
    return out
  }
}

/** `record` as a reader without its SSE-C key sees it: no digest of the data (not the composite either); its layout and its key's MD5 kept. Any other record as it is. */
export function keylessView (record: StoredObject): StoredObject {
  const { ssec, multipart } = record.checksums
  if (ssec === undefined) return record
  const checksums: StoredChecksums = { ssec }
  if (multipart !== undefined) checksums.multipart = { parts: multipart.parts, partSize: multipart.partSize }
  return withFields(record, { checksums })
}

function hexBuffer (hex: string): ArrayBuffer {
  const buf = Buffer.from(hex, 'hex')
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer
}

/** Which of the optional metadata an object carries: both, but for a listed one, what `include` names. */
interface CarriedMetadata {
  httpMetadata: boolean
  customMetadata: boolean
}

const ALL_METADATA: CarriedMetadata = { httpMetadata: true, customMetadata: true }

/** An object as `list` answers it, its metadata undefined where `include` did not name it (listing.ts); the base of every other. */
export class ListedObject implements BucketListedObject {
  readonly key: string
  readonly version: string
  readonly size: number
  readonly etag: string
  readonly httpEtag: string
  readonly uploaded: Date
  readonly httpMetadata: BucketHTTPMetadata | undefined
  readonly customMetadata: Record<string, string> | undefined
  readonly range?: { offset: number, length: number }
  readonly checksums: BucketChecksums
  readonly storageClass: StorageClass
  readonly ssecKeyMd5?: string
  readonly #record: StoredObject

  constructor (record: StoredObject, range: { offset: number, length: number } | undefined, carried: CarriedMetadata) {
    this.#record = record
    this.key = record.key
    this.version = record.version
    this.size = record.size
    this.etag = record.etag
    this.httpEtag = `"${record.etag}"`
    this.uploaded = new Date(record.uploaded)
    this.httpMetadata = carried.httpMetadata ? httpMetadataView(record.httpMetadata) : undefined
    this.customMetadata = carried.customMetadata ? { ...record.customMetadata } : undefined
    if (range !== undefined) this.range = range
    this.checksums = new Checksums(record.checksums)
    this.storageClass = record.storageClass
    if (record.checksums.ssec !== undefined) this.ssecKeyMd5 = record.checksums.ssec.keyMd5
  }

  writeHttpMetadata (headers: Headers): void {
    if (this.httpMetadata === undefined) {
      throw new TypeError('writeHttpMetadata: this object was listed without its HTTP metadata; ' +
        'list with `include: ["httpMetadata"]` or call head() or get() first.')
    }
    writeHttpHeaders(this.#record.httpMetadata, headers)
  }

  toJSON (): Record<string, unknown> {
    return {
      key: this.key,
      version: this.version,
      size: this.size,
      etag: this.etag,
      httpEtag: this.httpEtag,
      uploaded: this.uploaded.toISOString(),
      httpMetadata: this.httpMetadata,
      customMetadata: this.customMetadata,
      ...(this.range === undefined ? {} : { range: this.range }),
      checksums: this.checksums.toJSON(),
      storageClass: this.storageClass,
      ...(this.ssecKeyMd5 === undefined ? {} : { ssecKeyMd5: this.ssecKeyMd5 })
    }
  }
}

/** An object with all its metadata: what head, get, put, copy and complete answer. */
export class ObjectMetadata extends ListedObject implements BucketObject {
  declare readonly httpMetadata: BucketHTTPMetadata
  declare readonly customMetadata: Record<string, string>

  constructor (record: StoredObject, range?: { offset: number, length: number }) {
    super(record, range, ALL_METADATA)
  }
}

export class ObjectBody extends ObjectMetadata implements BucketObjectBody {
  #stream: Readable | (() => Readable)
  #web: ReadableStream<Uint8Array> | undefined
  #used = false
  readonly #bytes: Buffer | undefined

  /**
   * `stream` may be a function making the stream on first use; `bytes`, when
   * given, are the served bytes already in memory (a fast path for doors).
   */
  constructor (record: StoredObject, range: { offset: number, length: number } | undefined, stream: Readable | (() => Readable), bytes?: Buffer) {
    super(record, range)
    this.#stream = stream
    this.#bytes = bytes
  }

  get #readable (): Readable {
    if (typeof this.#stream === 'function') this.#stream = this.#stream()
    return this.#stream
  }

  /** The served bytes when they are already in memory (small objects), else undefined. */
  bufferedBytes (): Buffer | undefined {
    if (this.#bytes === undefined || this.bodyUsed) return undefined
    this.#used = true
    return this.#bytes
  }

  /** The value as a Node.js stream (what doors pipe to a socket). */
  nodeStream (): Readable {
    this.#used = true
    return this.#readable
  }

  get body (): ReadableStream<Uint8Array> {
    this.#web ??= Readable.toWeb(this.#readable) as unknown as ReadableStream<Uint8Array>
    return this.#web
  }

  get bodyUsed (): boolean {
    return this.#used || (this.#web !== undefined && (this.#web.locked || this.#readable.readableEnded))
  }

  async arrayBuffer (): Promise<ArrayBuffer> {
    if (this.bodyUsed) throw new TypeError('Body has already been used. It can only be used once.')
    this.#used = true
    const chunks: Buffer[] = []
    for await (const chunk of this.#readable) chunks.push(chunk as Buffer)
    const buf = Buffer.concat(chunks)
    return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer
  }

  async text (): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer())
  }

  async json<T = unknown> (): Promise<T> {
    return JSON.parse(await this.text()) as T
  }

  async blob (): Promise<Blob> {
    const type = this.httpMetadata.contentType ?? ''
    return new Blob([await this.arrayBuffer()], { type })
  }
}

/**
 * The body of a read as a Buffer when the engine already holds it in memory
 * (small objects), so a door can send it without a stream; undefined
 * otherwise (use `bodyStream`). Consumes the body.
 */
export function bodyBuffer (body: BucketObjectBody): Buffer | undefined {
  return body instanceof ObjectBody ? body.bufferedBytes() : undefined
}

/** The body of a read as a Node.js stream, for doors that pipe it to a socket. */
export function bodyStream (body: BucketObjectBody): Readable {
  if (body instanceof ObjectBody) return body.nodeStream()
  return Readable.fromWeb(body.body as import('node:stream/web').ReadableStream)
}

