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
  /** Hex digests, by algorithm. */
  checksums: Partial<Record<HashAlgorithm, string>>
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
