/**
 * A handle on one upload of one key, as `createMultipartUpload` and
 * `resumeMultipartUpload` hand it out. Every call names the key, so a
 * handle resumed under another key than the upload's finds no upload
 * (10024). Aborting again through a handle that already aborted or
 * completed its upload does nothing, as in the hosted runtime; a store
 * forgets finished uploads, so through another handle the id is unknown
 * (10024). Every call goes through the bucket's engine, so an upload
 * handle of a closed bucket handle is refused as the bucket handle is.
 */
import type {
  BucketCompleteOptions, BucketMultipartUpload, BucketObject, BucketPartListOptions, BucketParts, BucketUploadedPart, BucketUploadPartOptions, BucketValue
} from './types.js'

/** What an upload handle asks of the engine (bucket.ts), every call naming the key and the upload. */
export interface UploadCalls {
  uploadPart: (key: string, uploadId: string, partNumber: unknown, value: BucketValue, options?: BucketUploadPartOptions) => Promise<BucketUploadedPart>
  abortUpload: (key: string, uploadId: string) => Promise<void>
  completeUpload: (key: string, uploadId: string, uploadedParts: BucketUploadedPart[], options?: BucketCompleteOptions) => Promise<BucketObject | null>
  listParts: (key: string, uploadId: string, options?: BucketPartListOptions) => Promise<BucketParts>
}

export class MultipartUpload implements BucketMultipartUpload {
  readonly key: string
  readonly uploadId: string
  readonly #engine: UploadCalls
  #finished = false

  constructor (engine: UploadCalls, key: string, uploadId: string) {
    this.#engine = engine
    this.key = key
    this.uploadId = uploadId
  }

  async uploadPart (partNumber: number, value: BucketValue, options?: BucketUploadPartOptions): Promise<BucketUploadedPart> {
    return await this.#engine.uploadPart(this.key, this.uploadId, partNumber, value, options)
  }

  async abort (): Promise<void> {
    if (this.#finished) return
    await this.#engine.abortUpload(this.key, this.uploadId)
    this.#finished = true
  }

  async complete (uploadedParts: BucketUploadedPart[]): Promise<BucketObject>
  async complete (uploadedParts: BucketUploadedPart[], options: BucketCompleteOptions): Promise<BucketObject | null>
  async complete (uploadedParts: BucketUploadedPart[], options?: BucketCompleteOptions): Promise<BucketObject | null> {
    const object = await this.#engine.completeUpload(this.key, this.uploadId, uploadedParts, options)
    if (object !== null) this.#finished = true
    return object
  }

  async listParts (options?: BucketPartListOptions): Promise<BucketParts> {
    return await this.#engine.listParts(this.key, this.uploadId, options)
  }
}
