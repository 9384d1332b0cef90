/**
 * Public types of the bucket binding, with the neutral `Bucket` prefix.
 * Shapes follow the binding document (`bucket-binding-api.md`).
 */

import type { QueueNotifications } from './notifications.js'
import type { Readable } from 'node:stream'
import type { LockRule } from './locks.js'

export type StorageClass = 'Standard' | 'InfrequentAccess'

export interface BucketHTTPMetadata {
  contentType?: string // Content-Type
  contentLanguage?: string // Content-Language
  contentDisposition?: string // Content-Disposition
  contentEncoding?: string // Content-Encoding
  cacheControl?: string // Cache-Control
  cacheExpiry?: Date // Expires
}

export interface BucketChecksums {
  readonly md5?: ArrayBuffer
  readonly sha1?: ArrayBuffer
  readonly sha256?: ArrayBuffer
  readonly sha384?: ArrayBuffer
  readonly sha512?: ArrayBuffer
  /** Beyond the binding: the CRCs an S3 client sent with the object (of the whole object). */
  readonly crc32?: ArrayBuffer
  readonly crc32c?: ArrayBuffer
  readonly crc64nvme?: ArrayBuffer
  /**
   * Beyond the binding: S3's composite checksum of a multipart object (the
   * algorithm over its parts' checksums, written `<base64>-<parts>`).
   */
  readonly composite?: BucketCompositeChecksum
  /** The stored digests, hex by algorithm (the composite one left out). */
  toJSON (): Record<string, string>
}

export type BucketChecksumAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha384' | 'sha512' | 'crc32' | 'crc32c' | 'crc64nvme'

export interface BucketCompositeChecksum {
  algorithm: BucketChecksumAlgorithm
  value: ArrayBuffer
  parts: number
}

export type BucketRange =
  | { offset: number, length?: number }
  | { offset?: number, length: number }
  | { suffix: number }

export interface BucketConditional {
  etagMatches?: string // If-Match
  etagDoesNotMatch?: string // If-None-Match
  uploadedBefore?: Date | number // If-Unmodified-Since: a Date, or milliseconds since the epoch
  uploadedAfter?: Date | number // If-Modified-Since: a Date, or milliseconds since the epoch
  secondsGranularity?: boolean // both times compared in whole seconds, as HTTP dates are (the hosted binding's member)
}

/**
 * A customer-provided key (SSE-C): 32 bytes, as 64 lowercase hex digits or
 * an ArrayBuffer. An object written with one is encrypted at rest and
 * read only with the same key.
 */
export type BucketSsecKey = string | ArrayBuffer | ArrayBufferView

export interface BucketGetOptions {
  onlyIf?: BucketConditional | Headers
  range?: BucketRange | Headers
  /** The key the object was written with (SSE-C); required for such an object, refused for any other. */
  ssecKey?: BucketSsecKey
}

/** Options of `copy`. */
export interface BucketCopyOptions {
  /** Conditions on the object at the destination key, as for `put`. */
  onlyIf?: BucketConditional | Headers
  /** Conditions on the source object, as for `get` (S3's x-amz-copy-source-if-*). */
  sourceOnlyIf?: BucketConditional | Headers
  /** Replaces the source's HTTP metadata when given; otherwise the copy keeps it. */
  httpMetadata?: BucketHTTPMetadata | Headers
  /** Replaces the source's custom metadata when given; otherwise the copy keeps it. */
  customMetadata?: Record<string, string>
  /**
   * Beyond the binding (the hosted S3 API's `x-amz-metadata-directive:
   * MERGE`): `httpMetadata` and `customMetadata` are laid over the source's,
   * field by field and key by key, rather than replacing them.
   */
  mergeMetadata?: boolean
  /** The copy's storage class; the source's when not given. */
  storageClass?: StorageClass
  /**
   * Beyond S3's CopyObject (x-amz-checksum-algorithm): the checksum the copy
   * carries, computed over the bytes when the source has none of it; the
   * source's checksums when not given.
   */
  checksumAlgorithm?: BucketChecksumAlgorithm
  /** Beyond the binding (S3's x-amz-copy-source-server-side-encryption-customer-key): the source's SSE-C key. */
  sourceSsecKey?: BucketSsecKey
  /** Beyond the binding (S3's CopyObject with SSE-C headers): the copy is encrypted with this key. */
  ssecKey?: BucketSsecKey
}

/** What a copy answers. */
export type BucketCopyOutcome =
  | { status: 'copied', object: BucketObject }
  /** No object at the source key. */
  | { status: 'not-found' }
  /** A condition of `sourceOnlyIf` failed. */
  | { status: 'source-precondition-failed', source: BucketObject }
  /** A condition of `onlyIf` failed against the destination's object. */
  | { status: 'precondition-failed' }

export type ChecksumInput = ArrayBuffer | ArrayBufferView | string

export interface BucketPutOptions {
  onlyIf?: BucketConditional | Headers
  httpMetadata?: BucketHTTPMetadata | Headers
  customMetadata?: Record<string, string>
  md5?: ChecksumInput | DeferredChecksum
  sha1?: ChecksumInput | DeferredChecksum
  sha256?: ChecksumInput | DeferredChecksum
  sha384?: ChecksumInput | DeferredChecksum
  sha512?: ChecksumInput | DeferredChecksum
  /** Beyond the binding: CRCs, verified and stored as the digests are; and any value may be deferred. */
  crc32?: ChecksumInput | DeferredChecksum
  crc32c?: ChecksumInput | DeferredChecksum
  crc64nvme?: ChecksumInput | DeferredChecksum
  storageClass?: StorageClass
  /**
   * Beyond the binding: checksums to compute over the bytes as they stream
   * and keep with the object, with no value to verify (S3's copies between
   * buckets).
   */
  computeChecksums?: BucketChecksumAlgorithm[]
  /** Encrypts the object at rest with this customer-provided key (SSE-C); reads need it. */
  ssecKey?: BucketSsecKey
}

/**
 * Beyond the binding: a checksum value may also be a function returning it,
 * called once the body has been read (S3 sends checksums in trailers, after
 * the body); what it throws fails the write.
 */
export type DeferredChecksum = () => ChecksumInput

/** Beyond the binding: options of `uploadPart`, one checksum of the part to verify and keep. */
export type BucketUploadPartOptions = Partial<Record<BucketChecksumAlgorithm, ChecksumInput | DeferredChecksum>> & {
  /**
   * The part is bytes already stored (S3's UploadPartCopy): the checksum of
   * the upload's algorithm, if it has one, is computed over them instead of
   * being required.
   */
  copied?: boolean
  /**
   * Computed over the part and kept when neither the part nor its upload
   * carries a checksum (S3 adds CRC64NVME to what arrives without one).
   */
  defaultChecksum?: BucketUploadChecksumAlgorithm
  /** The key the upload was created with (SSE-C): required for such an upload, refused for any other. */
  ssecKey?: BucketSsecKey
}

/** Beyond the binding: the S3 checksum algorithms a multipart upload can be created with. */
export type BucketUploadChecksumAlgorithm = 'crc32' | 'crc32c' | 'crc64nvme' | 'sha1' | 'sha256'

export interface BucketMultipartOptions {
  httpMetadata?: BucketHTTPMetadata | Headers
  customMetadata?: Record<string, string>
  storageClass?: StorageClass
  /**
   * Beyond the binding (S3's CreateMultipartUpload): every part carries a
   * checksum of this algorithm (one sent with it, verified; else, for a
   * FULL_OBJECT upload or a copied part, one computed), and the completed
   * object's checksum is made from theirs as `checksumType` says.
   */
  checksumAlgorithm?: BucketUploadChecksumAlgorithm
  /** With `checksumAlgorithm`: COMPOSITE (the default; not for crc64nvme) or FULL_OBJECT (CRCs only; the default for crc64nvme). */
  checksumType?: 'COMPOSITE' | 'FULL_OBJECT'
  /** Encrypts the object at rest with this customer-provided key (SSE-C); every part is uploaded with it. */
  ssecKey?: BucketSsecKey
}

export interface BucketListOptions {
  limit?: number
  prefix?: string
  cursor?: string
  delimiter?: string
  startAfter?: string
  include?: Array<'httpMetadata' | 'customMetadata'>
}

export interface BucketUploadedPart {
  partNumber: number
  etag: string
  /**
   * Beyond the binding: the part's checksums (hex) as `uploadPart` returns
   * them when given one; handed to `complete`, checksums the part must have
   * been uploaded with (hex or bytes), InvalidPart otherwise.
   */
  checksums?: Partial<Record<BucketChecksumAlgorithm, ChecksumInput>>
}

/**
 * What `put` and `uploadPart` accept. Beyond the binding's types, any async
 * iterable of bytes (a Node.js Readable, for instance) is accepted, so doors
 * can stream a request body without converting it to a web stream.
 */
export type BucketValue =
  | ReadableStream
  | ArrayBuffer
  | ArrayBufferView
  | string
  | Blob
  | null
  | AsyncIterable<Uint8Array>

/** Metadata of a stored object (`BucketObject` of the binding). */
export interface BucketObject {
  readonly key: string
  readonly version: string
  readonly size: number
  readonly etag: string
  readonly httpEtag: string
  readonly uploaded: Date
  readonly httpMetadata: BucketHTTPMetadata
  readonly customMetadata: Record<string, string>
  readonly range?: { offset: number, length: number }
  readonly checksums: BucketChecksums
  readonly storageClass: StorageClass
  /** For an object encrypted with a customer-provided key: the key's MD5, hex. */
  readonly ssecKeyMd5?: string
  writeHttpMetadata (headers: Headers): void
}

/** A read with its value (`BucketObjectBody` of the binding). */
export interface BucketObjectBody extends BucketObject {
  readonly body: ReadableStream<Uint8Array>
  readonly bodyUsed: boolean
  arrayBuffer (): Promise<ArrayBuffer>
  text (): Promise<string>
  json<T = unknown> (): Promise<T>
  blob (): Promise<Blob>
}

/** An object as `list` answers it: `httpMetadata` and `customMetadata` only when `include` names them, else undefined (as workerd's). */
export type BucketListedObject = Omit<BucketObject, 'httpMetadata' | 'customMetadata'> & Partial<Pick<BucketObject, 'httpMetadata' | 'customMetadata'>>

export interface BucketObjects {
  objects: BucketListedObject[]
  truncated: boolean
  cursor?: string
  delimitedPrefixes: string[]
}

export interface BucketMultipartUpload {
  readonly key: string
  readonly uploadId: string
  uploadPart (partNumber: number, value: BucketValue, options?: BucketUploadPartOptions): Promise<BucketUploadedPart>
  abort (): Promise<void>
  complete (uploadedParts: BucketUploadedPart[]): Promise<BucketObject>
  /**
   * Beyond the binding (for S3's conditional CompleteMultipartUpload): completes
   * only when `onlyIf` holds for the key's current object, judged in the
   * same critical section as the commit; null (and the upload kept) otherwise.
   */
  complete (uploadedParts: BucketUploadedPart[], options: BucketCompleteOptions): Promise<BucketObject | null>
  /** Beyond the binding (for S3's ListParts): the parts uploaded so far, by part number; 10024 when the upload is gone. */
  listParts (options?: BucketPartListOptions): Promise<BucketParts>
}

export interface BucketCompleteOptions {
  onlyIf?: BucketConditional | Headers
  /**
   * How the object's checksum is made from its parts' checksums (when every
   * part has one of the same algorithm): COMPOSITE (the default; not for
   * crc64nvme) or FULL_OBJECT (the CRC of the whole object; CRCs only, and
   * the default for crc64nvme).
   */
  checksumType?: 'COMPOSITE' | 'FULL_OBJECT'
  /** The whole object's checksum the completion must produce (a FULL_OBJECT one); BadDigest otherwise. */
  checksum?: Partial<Record<BucketChecksumAlgorithm, ChecksumInput>>
  /** Beyond the binding (S3's `<base64>-<parts>` form): the COMPOSITE checksum the completion must produce, of `parts` parts; BadDigest otherwise. */
  compositeChecksum?: { algorithm: BucketChecksumAlgorithm, value: ChecksumInput, parts: number }
  /**
   * Beyond the binding (S3's CompleteMultipartUpload, which a client
   * retries when the answer was lost): a completion asked again after it
   * succeeded answers the object it made, when its parts carry the same ETags
   * and while that object is still the key's. Otherwise (and by default, as
   * the binding does) the finished upload is unknown: 10024.
   */
  repeatable?: boolean
  /** Beyond the binding: the upload's customer key (SSE-C), optional; when given, judged as a part's (10911, or 10912 for an upload without one). */
  ssecKey?: BucketSsecKey
}

/** Options of `listParts`: parts numbered above `partNumberMarker`, at most `limit` (1 to 1,000, default 1,000). */
export interface BucketPartListOptions {
  partNumberMarker?: number
  limit?: number
  /** The upload's customer key (SSE-C): without it, the parts of an upload made under one are listed without checksums. */
  ssecKey?: BucketSsecKey
}

export interface BucketParts {
  /**
   * `uploaded`: when the part was uploaded (its upload's creation time for a part stored before parts kept theirs);
   * `checksums`: hex by algorithm, those the part was uploaded with (not its MD5, which is the etag).
   */
  parts: Array<{ partNumber: number, etag: string, size: number, uploaded: Date, checksums: Partial<Record<BucketChecksumAlgorithm, string>> }>
  truncated: boolean
  /** The checksum algorithm and type the upload was created with, if any. */
  checksum?: { algorithm: BucketUploadChecksumAlgorithm, type: 'COMPOSITE' | 'FULL_OBJECT' }
}

/**
 * Options of `listMultipartUploads`: uploads whose key starts with `prefix`,
 * after `keyMarker` (all of that key's uploads when `uploadIdMarker` is not
 * given, else those of that key after it), at most `limit` (1 to 1,000,
 * default 1,000).
 */
export interface BucketUploadListOptions {
  prefix?: string
  /** Roll keys holding this after the prefix up into `delimitedPrefixes` (S3's CommonPrefixes). */
  delimiter?: string
  keyMarker?: string
  uploadIdMarker?: string
  limit?: number
}

export interface BucketUploads {
  /** In UTF-8 byte order of the keys, then by upload id. */
  uploads: Array<{ key: string, uploadId: string, initiated: Date, storageClass: StorageClass, checksum?: { algorithm: BucketUploadChecksumAlgorithm, type: 'COMPOSITE' | 'FULL_OBJECT' } }>
  /** With a delimiter: the prefixes rolled up, in order, each once. */
  delimitedPrefixes?: string[]
  truncated: boolean
}

export interface SweepReport {
  /** Uploads aborted because they outlived the upload lifetime. */
  abortedUploads: number
  /** Leftovers of interrupted writes that were removed (temporary files, orphaned bodies). */
  removedLeftovers: number
  /** Objects a lifecycle rule expired (deleted). Absent where no lifecycle rules were applied. */
  expiredObjects?: number
  /** Objects a lifecycle rule moved to InfrequentAccess. Absent where no lifecycle rules were applied. */
  transitionedObjects?: number
  /**
   * Buckets left alone because another sweep held them (one process at a
   * time sweeps a bucket; one that was killed holds it for a minute): their
   * rules, uploads and leftovers wait for the next sweep. Absent: none.
   */
  skippedBuckets?: number
}

export interface SweepOptions {
  /** Age after which an upload in progress is aborted; defaults to the bucket's setting (7 days). */
  uploadMaxAgeMs?: number
  /** Leftovers younger than this are kept, since a live writer may still own them. Default 15 minutes. */
  leftoverGraceMs?: number
  /** The lifecycle document (the management API's shape), carried out (lifecycle.ts); none: only old uploads are aborted. */
  lifecycle?: unknown
  /** Reads the lifecycle document as it stands: each batch a sweep acts on is judged again by it first (lifecycle-sweep.ts). */
  lifecycleNow?: () => Promise<unknown>
  /**
   * The instant (ms since the epoch) rules and upload ages are judged at,
   * instead of the clock's: to see what rules will do without waiting.
   * Stored times are never changed; leftovers are judged by real time.
   */
  now?: number
}

/** Options of `read`, the one read decision every door translates. */
export interface BucketReadOptions {
  /** Conditions, as for `get`: a `BucketConditional` or the four conditional request headers. */
  onlyIf?: BucketConditional | Headers
  /**
   * A range object (checked strictly, as for `get`), or the value of a
   * `Range` header: a header that is not one byte range is ignored (the
   * whole object is answered); one that cannot be satisfied is
   * `range-not-satisfiable`, not ignored as `get` ignores it.
   */
  range?: BucketRange | string
  /** An `If-Range` header's value: `range` applies only while it is the object's ETag (strongly; a date never holds: read.ts). */
  ifRange?: string
  /** false: decide as HEAD does, without opening the body. Default true. */
  body?: boolean
  /**
   * Beyond the binding (S3's `partNumber`): read part N of a multipart
   * object (part 1 of an object put whole is all of it), served as a range
   * (`partial`); not with `range`. A part past the last is
   * `range-not-satisfiable`.
   */
  partNumber?: number
  /** The key an SSE-C object was written with: required to read such an object (with or without its body), refused for any other. */
  ssecKey?: BucketSsecKey
}

/** What a read answers; doors map each status onto theirs (404, 412, 304, 416, 200, 206). */
export type BucketReadOutcome =
  | { status: 'not-found' }
  /** A condition other than a not-modified one failed (judged first, RFC 9110 section 13.2.2). */
  | { status: 'precondition-failed', object: BucketObject }
  /** If-None-Match matched or the object is not newer than If-Modified-Since. */
  | { status: 'not-modified', object: BucketObject }
  /** The range cannot be served from `object.size` bytes (every range of an empty object). */
  | { status: 'range-not-satisfiable', object: BucketObject }
  | BucketReadServed

/** A read that serves bytes: the whole object (`found`) or `range` of it (`partial`). */
export interface BucketReadServed {
  status: 'found' | 'partial'
  object: BucketObject
  /** The bytes served (null for `found`: the whole object). */
  range: { offset: number, length: number } | null
  /** The bytes: already in memory for small objects, else a stream to consume or destroy; null when `body: false`. */
  body: Buffer | Readable | null
  /** With `partNumber`, for a multipart object: how many parts it has. */
  partsCount?: number
  /**
   * With `partNumber`, for a multipart object: the part's own checksum when
   * the object keeps it (S3's answer to a part read with checksums asked:
   * a COMPOSITE object's part, or the only part of a FULL_OBJECT one).
   */
  partChecksum?: { algorithm: BucketChecksumAlgorithm, value: Uint8Array, type: 'COMPOSITE' | 'FULL_OBJECT' }
}

/** The bucket binding. */
export interface Bucket {
  /**
   * The read decision of every door: judges `onlyIf`, then the range, in RFC 9110
   * order, and answers one outcome with the body and its headers' values, which a door only translates.
   */
  read (key: string, options?: BucketReadOptions): Promise<BucketReadOutcome>
  /** Beyond the binding: `read` decided at once when the store holds the object (a small body); undefined otherwise, and then `read`. */
  readNow (key: string, options?: BucketReadOptions): BucketReadOutcome | undefined
  head (key: string): Promise<BucketObject | null>
  get (key: string, options?: BucketGetOptions): Promise<BucketObjectBody | BucketObject | null>
  put (key: string, value: BucketValue, options?: BucketPutOptions): Promise<BucketObject | null>
  /**
   * Beyond the binding (for S3's CopyObject between buckets, whose bytes
   * are read from the source bucket and written here): `put` of `value`, a
   * `get` of `source` in its bucket, whose event notification is CopyObject
   * naming `source`, as the hosted service reports every copy. A value
   * serving more than a copy may carry is refused before it is read (100100).
   */
  putCopied (key: string, value: BucketObjectBody, options: BucketPutOptions | undefined, source: { bucket: string, key: string }): Promise<BucketObject | null>
  /** Deletes every key a bucket lock does not retain; throws 10913 (ObjectLocked) when one was retained. */
  delete (keys: string | string[]): Promise<void>
  /** Beyond the binding (for S3's DeleteObjects and the HTTP routes' bulk delete, which say which keys were kept): deletes every key a bucket lock does not retain, and answers those it kept. */
  deleteEach (keys: string[]): Promise<string[]>
  /** Beyond the binding (for the management API): the bucket's lock rules (locks.ts). */
  lockRules (): Promise<LockRule[]>
  /** Beyond the binding: replaces the bucket's lock rules, checked (an argument error names the first mistake); answers them as kept. */
  setLockRules (rules: unknown): Promise<LockRule[]>
  /**
   * Beyond the binding (for S3's CopyObject): copies the object at
   * `sourceKey` to `key` in this bucket, its bytes shared by the store
   * (never read and written again), atomically: a copy racing a delete of
   * its source copies the object as it was or answers `not-found`.
   */
  copy (sourceKey: string, key: string, options?: BucketCopyOptions): Promise<BucketCopyOutcome>
  list (options?: BucketListOptions): Promise<BucketObjects>
  createMultipartUpload (key: string, options?: BucketMultipartOptions): Promise<BucketMultipartUpload>
  resumeMultipartUpload (key: string, uploadId: string): BucketMultipartUpload
  /** Beyond the binding (for S3's ListMultipartUploads): the uploads in progress. */
  listMultipartUploads (options?: BucketUploadListOptions): Promise<BucketUploads>
  /** Aborts expired uploads and removes leftovers of interrupted writes. */
  sweep (options?: SweepOptions): Promise<SweepReport>
  /**
   * For deleting the bucket: when it holds no object, refuses every later
   * write (10006, in every process) and returns true; returns false when an
   * object is stored. Uploads in progress do not count.
   */
  retire (): Promise<boolean>
  /** Releases the bucket's handles and timers; final: every later call on the handle rejects (ERR_USE_AFTER_CLOSE). */
  close (): Promise<void>
}

export interface OpenBucketOptions {
  /** Current time, for tests. Default `() => new Date()`. */
  clock?: () => Date
  /** Smallest size of every part but the last in a multipart upload. Default 5 MiB. */
  minPartSize?: number
  /** Age after which the sweeper aborts an upload. Default 7 days. */
  uploadMaxAgeMs?: number
  /** Run the sweeper on a timer every so many ms (0 = never). Default 0; servers turn it on. */
  sweepIntervalMs?: number
  /**
   * The bucket's name and its event notification rules, read before each
   * write: a store with an outbox then writes the messages of each
   * committed change in the change's own transaction. Without it, no
   * events.
   */
  notifications?: { bucket: string, rules: () => Promise<readonly QueueNotifications[]> }
  /** The storage class of a put or upload that names none: the bucket's (a registry's buckets); default Standard. */
  defaultStorageClass?: () => Promise<StorageClass>
}
