/**
 * The one small interface both transports implement, so that every command
 * is written once and prints the same output whichever way it reaches the
 * buckets: the library on a data directory (transport-local.ts) or a running
 * gateway over its HTTP routes (transport-http.ts).
 *
 * Bodies are Node.js streams both ways. Failures are CliErrors carrying the
 * catalogue code (see errors.ts); `head` answers null for a missing key but
 * throws for a missing bucket, so a command can tell the two apart.
 */
import type { Readable } from 'node:stream'

export interface ObjectHttpMetadata {
  contentType?: string
  contentLanguage?: string
  contentDisposition?: string
  contentEncoding?: string
  cacheControl?: string
  /** `Expires`. */
  cacheExpiry?: Date
}

/** What the commands know of a stored object. */
export interface RemoteObject {
  key: string
  size: number
  etag: string
  uploaded: Date
  storageClass: string
  httpMetadata: ObjectHttpMetadata
  customMetadata: Record<string, string>
}

export interface BucketSummary {
  name: string
  creationDate: Date
}

export interface ListedPage {
  objects: RemoteObject[]
  /** Delimited prefixes (`photos/`), when a delimiter was given. */
  prefixes: string[]
  /** Set when there are more pages. */
  cursor?: string
}

export interface WriteMetadata {
  httpMetadata: ObjectHttpMetadata
  customMetadata: Record<string, string>
}

export interface UploadedPart {
  partNumber: number
  etag: string
}

export interface PartUpload {
  uploadPart (partNumber: number, body: Readable, size: number): Promise<UploadedPart>
  complete (parts: UploadedPart[]): Promise<RemoteObject>
  abort (): Promise<void>
}

export interface ObjectTransport {
  listBuckets (): Promise<BucketSummary[]>
  createBucket (name: string): Promise<void>
  deleteBucket (name: string): Promise<void>
  list (bucket: string, options: { prefix?: string, delimiter?: string, cursor?: string }): Promise<ListedPage>
  head (bucket: string, key: string): Promise<RemoteObject | null>
  /** The bytes of an object (or of `range`), streamed; throws 10007 when the key is missing. */
  get (bucket: string, key: string, range?: { offset: number, length: number }): Promise<{ size: number, body: Readable }>
  /** One request: `size` is the body's length when known. */
  put (bucket: string, key: string, body: Readable, size: number | undefined, metadata: WriteMetadata): Promise<RemoteObject>
  createUpload (bucket: string, key: string, metadata: WriteMetadata): Promise<PartUpload>
  /** Removes keys (at most 1,000 per call); missing keys are not an error. */
  delete (bucket: string, keys: string[]): Promise<void>
  close (): Promise<void>
}

/** Every object under a prefix, page after page, in key order. */
export async function * listAll (transport: ObjectTransport, bucket: string, prefix: string): AsyncGenerator<RemoteObject> {
  let cursor: string | undefined
  do {
    const page = await transport.list(bucket, { prefix, cursor })
    yield * page.objects
    cursor = page.cursor
  } while (cursor !== undefined)
}
