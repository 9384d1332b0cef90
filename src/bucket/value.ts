/**
 * Values given to `put` and `uploadPart`, turned into one stream of bytes
 * that is hashed and measured on the way to the store: the bytes are never
 * held whole in memory.
 */
import { Readable } from 'node:stream'
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'
import { runningChecksum, type HashAlgorithm, type RunningChecksum } from './checksums.js'
import { expectedChecksumHex, type ChecksumOption } from './metadata.js'
import type { StagedBody } from './port.js'

function isAsyncIterable (value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value
}

function toBytes (chunk: unknown, method: string): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk)
  throw new TypeError(`${method}: a stream given as value must yield bytes (Uint8Array), got ${typeof chunk}.`)
}

async function * iterate (source: AsyncIterable<unknown> | Iterable<unknown>, method: string): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) yield toBytes(chunk, method)
}

/**
 * The value as an async iterable of bytes; TypeError for anything else.
 * Called as the write is (before its first await): bytes given in a buffer
 * are copied then, as the hosted binding takes them, so a caller reusing
 * its buffer once the call returned changes neither what is stored nor the
 * ETag hashed from it. A web stream already read from (a retry handing the
 * same body again) is refused: what is left of it is not the value.
 */
export function valueSource (value: unknown, method: string): AsyncIterable<Uint8Array> {
  if (value === null || value === undefined) return iterate([], method)
  if (typeof value === 'string') return iterate([Buffer.from(value, 'utf8')], method)
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return iterate([Uint8Array.prototype.slice.call(toBytes(value, method))], method)
  if (value instanceof Blob) return iterate(value.stream() as unknown as AsyncIterable<unknown>, method)
  if (value instanceof ReadableStream && Readable.isDisturbed(value as unknown as NodeJS.ReadableStream)) {
    throw new TypeError(`${method}: this ReadableStream was read from already (disturbed): give a new stream.`)
  }
  if (isAsyncIterable(value)) return iterate(value, method)
  throw new TypeError(`${method}: the value must be a ReadableStream, ArrayBuffer, ArrayBufferView, string, Blob or null.`)
}

/** Hashes and counts the bytes flowing through `source`; `digests()` once the stream is complete. */
export class MeasuredBody implements AsyncIterable<Uint8Array> {
  size = 0
  readonly #checksums: Array<[HashAlgorithm, RunningChecksum]>
  readonly #source: AsyncIterable<Uint8Array>
  readonly #maxSize: number
  readonly #method: string
  #digests: Promise<Partial<Record<HashAlgorithm, string>>> | undefined

  constructor (source: AsyncIterable<Uint8Array>, algorithms: HashAlgorithm[], maxSize: number, method: string) {
    this.#source = source
    this.#checksums = [...new Set(algorithms)].map(a => [a, runningChecksum(a)])
    this.#maxSize = maxSize
    this.#method = method
  }

  async * [Symbol.asyncIterator] (): AsyncGenerator<Uint8Array> {
    for await (const chunk of this.#source) {
      this.size += chunk.byteLength
      if (this.size > this.#maxSize) throw new BucketError('EntityTooLarge', this.#method)
      for (const [, running] of this.#checksums) running.update(chunk)
      yield chunk
    }
  }

  /** Hex digests by algorithm. */
  async digests (): Promise<Partial<Record<HashAlgorithm, string>>> {
    this.#digests ??= Promise.all(this.#checksums.map(async ([a, running]) => [a, (await running.digest()).toString('hex')] as const))
      .then(entries => Object.fromEntries(entries))
    return await this.#digests
  }
}

/**
 * The digests of a body once staged, after checking the one a write was
 * given (BadDigest otherwise); on a failure the staged body is discarded.
 */
export async function verifiedDigests (method: string, body: MeasuredBody, checksum: ChecksumOption | null, staged: StagedBody): Promise<Partial<Record<HashAlgorithm, string>>> {
  try {
    const digests = await body.digests()
    if (checksum === null) return digests
    const expected = expectedChecksumHex(method, checksum)
    const actual = digests[checksum.algorithm]
    if (actual !== expected) {
      throw new BucketError('BadDigest', method, `The ${checksum.algorithm} you provided was ${expected}; the ${checksum.algorithm} of the data received is ${actual ?? ''}.`)
    }
    return digests
  } catch (err) {
    await staged.discard()
    throw err
  }
}
