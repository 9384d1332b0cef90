/**
 * The records a store keeps and the engine reads: objects, uploads, parts,
 * and the list query and page. Plain data, shared by port.ts and the list
 * page assembly.
 */
import type { HashAlgorithm, StoredHttpMetadata } from './metadata.js'
import type { StorageClass } from './types.js'

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
  checksums: StoredChecksums
}

/**
 * `record` with some of its fields replaced, as a new record. Written out
 * field by field, not as `{ ...record, ...changes }`: on Node 20, an object
 * that starts with a spread and then gets more properties is given a new
 * hidden class every time (about 1 µs each), which a listing pays per object.
 */
export function withFields (record: StoredObject, changes: Partial<StoredObject>): StoredObject {
  return {
    key: changes.key ?? record.key,
    version: changes.version ?? record.version,
    size: changes.size ?? record.size,
    etag: changes.etag ?? record.etag,
    uploaded: changes.uploaded ?? record.uploaded,
    storageClass: changes.storageClass ?? record.storageClass,
    httpMetadata: changes.httpMetadata ?? record.httpMetadata,
    customMetadata: changes.customMetadata ?? record.customMetadata,
    checksums: changes.checksums ?? record.checksums
  }
}

/**
 * Hex checksums of the whole object, by algorithm; for a completed
 * multipart upload, also its part layout and composite checksum. Stores
 * keep the record as it is (as JSON: a field added here needs no column),
 * and rows written before a field existed simply lack it.
 */
export type StoredChecksums = Partial<Record<HashAlgorithm, string>> & {
  multipart?: MultipartLayout
  /** For an object encrypted with a customer-provided key: what ssec.ts keeps to check the key and decipher (never the key). */
  ssec?: SsecRecord
}

export interface MultipartLayout {
  /** How many parts the object was completed from. */
  parts: number
  /** The size of every part but the last (which is no larger). */
  partSize: number
  /** S3's composite checksum: `algorithm` over the parts' checksums, hex. */
  composite?: { algorithm: HashAlgorithm, hex: string }
  /** For a composite checksum: the parts' own checksums of its algorithm, concatenated (base64), for reads of one part. */
  partChecksums?: string
}

/** What an SSE-C object's record keeps (`checksums.ssec`, ssec.ts); an upload keeps all but `partSalts`. Never the key. */
export interface SsecRecord {
  /** MD5 of the customer key, hex. */
  keyMd5: string
  /** The object's (or upload's) salt, base64: the check value's, and a put's body key's. */
  salt: string
  /** HMAC-SHA256 under the check key derived from the customer key and `salt`, base64. */
  check: string
  /** For a multipart object: each part's 16-byte salt, in order, base64. */
  partSalts?: string
}

export interface StoredUpload {
  uploadId: string
  key: string
  /** Milliseconds since the epoch. */
  created: number
  httpMetadata: StoredHttpMetadata
  customMetadata: Record<string, string>
  storageClass: StorageClass
  /**
   * The checksum algorithm and type the upload was created with (S3's
   * CreateMultipartUpload); absent for none, and in rows written before
   * uploads kept them.
   */
  checksum?: UploadChecksum
  /** For an upload created with a customer-provided key (SSE-C): its key's MD5, salt and check value (ssec.ts). */
  ssec?: SsecRecord
}

/** S3's checksum of a multipart upload: the parts' algorithm and how the object's is made from theirs. */
export interface UploadChecksum {
  algorithm: 'crc32' | 'crc32c' | 'crc64nvme' | 'sha1' | 'sha256'
  type: 'COMPOSITE' | 'FULL_OBJECT'
}

export interface StoredPart {
  partNumber: number
  etag: string
  size: number
  /**
   * Milliseconds since the epoch: when the part was uploaded, by the
   * engine's clock (as an object's `uploaded`). A store lists a part kept
   * without one (stored before parts kept their time) with its upload's
   * `created`.
   */
  uploaded?: number
  /** Hex checksums the part was uploaded with, beside its MD5 (the etag); absent or empty when none. */
  checksums?: Partial<Record<HashAlgorithm, string>>
  /** For a part of an SSE-C upload: the salt of its body key, base64 (ssec.ts). */
  ssec?: { salt: string }
}

/** Which uploads in progress `listUploads` returns, in (id bytes, uploadId) order. */
export interface UploadListQuery {
  /** Only uploads whose key's id starts with this prefix. */
  prefix: string
  /** Only uploads after this position: a greater id, or the same id and a greater upload id. */
  after?: { id: string, uploadId: string }
  limit: number
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
