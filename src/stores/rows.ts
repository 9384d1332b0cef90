/**
 * Rows of the catalogs (the filesystem store's SQLite, the PostgreSQL
 * store's) as the port's records, and back, once for both: an object row
 * and an upload row have the same columns in both catalogs, with JSON text
 * in the checksum and metadata columns, so `fsbucket migrate` copies rows
 * as they are. A shared module of the stores: it imports the port only.
 */
import type { StoredObject, StoredUpload } from '../bucket/port.js'

/** The record columns of an object row; a list row without metadata lacks the two metadata columns. */
export interface ObjectColumns {
  key: string
  version: string
  size: number
  etag: string
  uploaded: number
  storage_class: string
  checksums: string
  http_metadata?: string
  custom_metadata?: string
}

export interface UploadColumns {
  upload_id: string
  key: string
  created: number
  storage_class: string
  http_metadata: string
  custom_metadata: string
  /** The upload's checksum algorithm and type (JSON); NULL or absent (rows written before the column) for none. */
  checksum?: string | null
}

export function recordOfRow (row: ObjectColumns): StoredObject {
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

/** The record columns of `object`, as both catalogs store them. */
export function rowOfRecord (object: StoredObject): Required<ObjectColumns> {
  return {
    key: object.key,
    version: object.version,
    size: object.size,
    etag: object.etag,
    uploaded: object.uploaded,
    storage_class: object.storageClass,
    checksums: JSON.stringify(object.checksums),
    http_metadata: JSON.stringify(object.httpMetadata),
    custom_metadata: JSON.stringify(object.customMetadata)
  }
}

export function uploadOfRow (row: UploadColumns): StoredUpload {
  return {
    uploadId: row.upload_id,
    key: row.key,
    created: row.created,
    storageClass: row.storage_class as StoredUpload['storageClass'],
    httpMetadata: JSON.parse(row.http_metadata),
    customMetadata: JSON.parse(row.custom_metadata),
    ...uploadChecksumFrom(row.checksum)
  }
}

/**
 * The `checksum` column of an upload row: the upload's checksum algorithm
 * and type, and for an SSE-C upload its key record (`ssec`), as JSON; NULL
 * for neither. (One column for what every part must follow, so that SSE-C
 * needed no new column.)
 */
export function uploadChecksumText (upload: StoredUpload): string | null {
  if (upload.checksum === undefined && upload.ssec === undefined) return null
  return JSON.stringify(Object.assign({}, upload.checksum, upload.ssec === undefined ? {} : { ssec: upload.ssec }))
}

function uploadChecksumFrom (text: string | null | undefined): Pick<StoredUpload, 'checksum' | 'ssec'> {
  if (text === null || text === undefined) return {}
  const { ssec, ...checksum } = JSON.parse(text) as Partial<NonNullable<StoredUpload['checksum']>> & Pick<StoredUpload, 'ssec'>
  return Object.assign(checksum.algorithm === undefined ? {} : { checksum: checksum as NonNullable<StoredUpload['checksum']> }, ssec === undefined ? {} : { ssec })
}
