/**
 * Rows of the PostgreSQL catalog and the records they hold: the columns of
 * an object row, and the conversions between rows and the port's records.
 * The conversions themselves are src/stores/rows.ts, shared with the
 * SQLite catalog (the same columns and JSON text, so `migrate` copies them
 * as they are).
 */
import type { StoredObject } from '../../bucket/port.js'
import { rowOfRecord, type ObjectColumns, type UploadColumns } from '../rows.js'

/** A body file (relative to the store's directory) and its size, as the filesystem store names them. */
export type Segment = [file: string, size: number]

export interface PgObjectRow extends ObjectColumns {
  segments: Segment[]
  rev: number
}

export type PgUploadRow = UploadColumns

export const LIST_COLUMNS = 'id, key, version, size, etag, uploaded, storage_class, checksums'
export const FULL_COLUMNS = `${LIST_COLUMNS}, http_metadata, custom_metadata, segments, rev`

export { recordOfRow as toObject, uploadChecksumText, uploadOfRow as toUpload } from '../rows.js'

/** The values of an object row after (store_id, id), in the order of OBJECT_VALUES. */
export function objectValues (object: StoredObject, segments: Segment[]): unknown[] {
  const row = rowOfRecord(object)
  return [
    row.key, row.version, row.size, row.etag, row.uploaded, row.storage_class, row.checksums, row.http_metadata, row.custom_metadata,
    JSON.stringify(segments)
  ]
}

/** The columns objectValues fills, from $3 on ($1 the store, $2 the id). */
export const OBJECT_COLUMNS = 'key, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments'
export const OBJECT_VALUES = '$3::text, $4::text, $5::bigint, $6::text, $7::bigint, $8::text, $9::text, $10::text, $11::text, $12::jsonb'
export const OBJECT_UPDATE = `key = $3, version = $4, size = $5, etag = $6, uploaded = $7, storage_class = $8,
  checksums = $9, http_metadata = $10, custom_metadata = $11, segments = $12::jsonb, rev = nextval('fsbucket.revisions')`

/**
 * Locks the store's row for the transaction against retirement and against
 * a change of its lock rules, and reads the rules; no row when the store is
 * retired or gone.
 */
export const LIVE_STORE_RULES = 'SELECT lock_rules FROM fsbucket.stores WHERE id = $1 AND NOT retired FOR SHARE'

/**
 * Locks the store's row for one statement, as LIVE_STORE_RULES, and only
 * when its lock rules are still `$<param>` (their text, NULL for none), the
 * rules the statement's write was judged against: no row when they changed
 * since (read them again and judge again), so a write never lands under
 * rules it was not judged against.
 */
export function liveStoreUnder (param: number): string {
  return `SELECT 1 FROM fsbucket.stores WHERE id = $1 AND NOT retired AND lock_rules IS NOT DISTINCT FROM $${param}::text FOR SHARE`
}
