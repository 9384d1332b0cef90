/**
 * SHA-256 and HMAC-SHA256 over node:crypto, in the shape the smithy signer
 * (@smithy/signature-v4) asks for: share links are presigned with it.
 */
import { createHash, createHmac } from 'node:crypto'
import type { SourceData } from '@smithy/types'

/** SHA-256 and HMAC-SHA256 over node:crypto, in the shape the smithy signer asks for. */
export class NodeSha256 {
  readonly #secret: SourceData | undefined
  #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>

  constructor (secret?: SourceData) {
    this.#secret = secret
    this.#hash = this.#fresh()
  }

  #fresh (): ReturnType<typeof createHash> | ReturnType<typeof createHmac> {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(this.#secret))
  }

  update (data: SourceData): void { this.#hash.update(toBytes(data)) }
  async digest (): Promise<Uint8Array> { return this.#hash.digest() }
  reset (): void { this.#hash = this.#fresh() }
}

function toBytes (data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8')
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return Buffer.from(data)
}
