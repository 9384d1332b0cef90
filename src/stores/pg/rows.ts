/**
 * Rows of the PostgreSQL catalog and the records they hold: the columns of
 * an object row, and the conversions between rows and the port's records.
 * The JSON columns hold the same text as the SQLite catalog's, so `migrate`
 * copies them as they are.
 */
import type { StoredObject, StoredUpload } from '../../bucket/port.js'

/** A body file (relative to the store's directory) and its size, as the filesystem store names them. */
export type Segment = [file: string, size: number]

export interface PgObjectRow {
  key: string
  version: string
  size: number
  etag: string
  uploaded: number
  storage_class: string
  checksums: string
  http_metadata?: string
  custom_metadata?: string
  segments: Segment[]
  rev: number
}

export interface PgUploadRow {
  upload_id: string
  key: string
  created: number
  storage_class: string
  http_metadata: string
  custom_metadata: string
}

export const LIST_COLUMNS = 'id, key, version, size, etag, uploaded, storage_class, checksums'
export const FULL_COLUMNS = `${LIST_COLUMNS}, http_metadata, custom_metadata, segments, rev`

export function toObject (row: PgObjectRow): StoredObject {
  return {
    key: row.key,
    version: row.version,
    size: row.size,
    etag: row.etag,
    uploaded: row.uploaded,
    storageClass: row.storage_class as StoredObject['storageClass'],
    checksums: JSON.parse(row.checksums),
    httpMetadata: row.http_metadata === undefined ? {} : JSON.parse(row.http_metadata),
    customMetadata: row.custom_metadata === undefined ? {} : JSON.parse(row.custom_metadata)
  }
}

export function toUpload (row: PgUploadRow): StoredUpload {
  return {
    uploadId: row.upload_id,
    key: row.key,
    created: row.created,
    storageClass: row.storage_class as StoredUpload['storageClass'],
    httpMetadata: JSON.parse(row.http_metadata),
    customMetadata: JSON.parse(row.custom_metadata)
  }
}

/** The values of an object row after (store_id, id), in the order of OBJECT_VALUES. */
export function objectValues (object: StoredObject, segments: Segment[]): unknown[] {
  return [
    object.key, object.version, object.size, object.etag, object.uploaded, object.storageClass,
    JSON.stringify(object.checksums), JSON.stringify(object.httpMetadata), JSON.stringify(object.customMetadata),
    JSON.stringify(segments)
  ]
}

/** The columns objectValues fills, from $3 on ($1 the store, $2 the id). */
export const OBJECT_COLUMNS = 'key, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments'
export const OBJECT_VALUES = '$3::text, $4::text, $5::bigint, $6::text, $7::bigint, $8::text, $9::text, $10::text, $11::text, $12::jsonb'
export const OBJECT_UPDATE = `key = $3, version = $4, size = $5, etag = $6, uploaded = $7, storage_class = $8,
  checksums = $9, http_metadata = $10, custom_metadata = $11, segments = $12::jsonb, rev = nextval('fsbucket.revisions')`
