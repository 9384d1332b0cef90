/**
 * The storage port: what the bucket engine needs from a place that keeps
 * bytes and metadata. The engine owns every rule (validation, conditionals,
 * ranges, hashing, multipart checks); a store only keeps records and bytes
 * and gives three guarantees:
 *
 *   1. `commit`, `completeUpload` and `delete` are atomic and linearizable:
 *      the precondition is judged against the current record inside the
 *      same critical section that replaces it, across every process using
 *      the store.
 *   2. A staged body is invisible until a commit names it, and is removed
 *      when it is discarded or when the commit's precondition fails.
 *   3. `open` pins the bytes of the record it returns: a concurrent
 *      overwrite or delete never changes what an opened reader streams.
 *
 * Records are addressed by *id* (the NFC form of the key); `list` orders ids
 * by their UTF-8 bytes.
 */
import type { Readable } from 'node:stream'
import type { HashAlgorithm, StoredHttpMetadata } from './metadata.js'
import type { StorageClass, SweepReport } from './types.js'

export interface StoredObject {
  /** Spelling of the key at its last write. */
  key: string
  version: string
  size: number
  etag: string
  /** Milliseconds since the epoch. */
  uploaded: number
  storageClass: StorageClass
  httpMetadata: StoredHttpMetadata
  customMetadata: Record<string, string>
  /** Hex digests, by algorithm. */
  checksums: Partial<Record<HashAlgorithm, string>>
}

/** A body written aside, waiting for a commit. */
export interface StagedBody {
  readonly size: number
  discard (): Promise<void>
}

export interface ObjectReader {
  readonly object: StoredObject
  /** The whole body, when the store already holds it in memory (small objects). */
  readonly bytes?: Buffer
  /** Streams `length` bytes from `offset`; may be called once. */
  stream (offset: number, length: number): Readable
  /** Releases the pinned bytes when no stream is wanted. */
  close (): Promise<void>
}

export interface StoredUpload {
  uploadId: string
  key: string
  /** Milliseconds since the epoch. */
  created: number
  httpMetadata: StoredHttpMetadata
  customMetadata: Record<string, string>
  storageClass: StorageClass
}

export interface StoredPart {
  partNumber: number
  etag: string
  size: number
}

export interface ListQuery {
  /** Only ids starting with this prefix. */
  prefix: string
  /** Group ids by the part after the prefix up to this string (delimited prefixes). */
  delimiter?: string
  /** Only ids whose UTF-8 bytes are strictly greater than these. */
  after?: Uint8Array
  /** Most entries (objects and delimited prefixes) on the page. */
  limit: number
  /** Whether httpMetadata and customMetadata are wanted. */
  withMetadata: boolean
}

/** A listed object (with its id) or a delimited prefix. */
export type ListEntry = { id: string, object: StoredObject } | { prefix: string }

export interface ListPage {
  entries: ListEntry[]
  truncated: boolean
}

export type Precondition = (current: StoredObject | null) => boolean

/** What `completeUpload` builds from the upload and its stored parts; throws to refuse. */
export type CompleteBuilder = (upload: StoredUpload, parts: Map<number, StoredPart>) => { object: StoredObject, partNumbers: number[] }

export interface BucketStore {
  /**
   * Receives a body. `version`, when given, is the version the body will be
   * committed under (a put's), so a store may put the bytes where that version
   * belongs at once; they stay invisible until `commit`. Parts come without.
   */
  stage (source: AsyncIterable<Uint8Array>, version?: string): Promise<StagedBody>
  head (id: string): Promise<StoredObject | null>
  open (id: string): Promise<ObjectReader | null>
  /** Replaces the record of `id` when `precondition` holds; false (and the body discarded) otherwise. */
  commit (id: string, object: StoredObject, body: StagedBody, precondition: Precondition): Promise<boolean>
  delete (ids: string[]): Promise<void>
  /** One page, as `assembleListPage` (list-page.ts) defines it. */
  list (query: ListQuery): Promise<ListPage>

  createUpload (id: string, upload: StoredUpload): Promise<void>
  getUpload (uploadId: string): Promise<StoredUpload | null>
  /** Stores a part; false (and the body discarded) when the upload does not exist. */
  putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean>
  /** Completes an upload into the object `id`; null when the upload does not exist. */
  completeUpload (uploadId: string, id: string, build: CompleteBuilder): Promise<StoredObject | null>
  abortUpload (uploadId: string): Promise<void>

  /**
   * When no object is stored, marks the store retired (every later write, in
   * any process, fails with 10006) and returns true; false otherwise. The
   * check and the mark are one critical section, so no acknowledged write is
   * lost to a bucket deletion.
   */
  retire (): Promise<boolean>

  /** Aborts uploads created before `createdBefore`, removes leftovers older than `leftoversBefore`. */
  sweep (createdBefore: number, leftoversBefore: number): Promise<SweepReport>
  close (): Promise<void>
}
