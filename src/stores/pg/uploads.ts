/**
 * Multipart uploads of the PostgreSQL store: their rows (uploads, parts) in
 * the catalog, their part files under `uploads/<uploadId>/<n>.<r>` in the
 * store's directory (blobs.ts), and completion, which hard-links the chosen
 * parts into blobs/ and commits the object's row in one transaction. Parts
 * of one upload may arrive through different gateways: each is a row, and
 * completion reads them all from the catalog.
 *
 * Storing a part takes the upload's row FOR SHARE; completing or aborting
 * takes it FOR UPDATE, so a part is either in the completion or refused.
 * A completion judges the key's row it holds FOR UPDATE; when the key had
 * none, its insert takes no row another writer made meanwhile (a create-only
 * completion of another upload, through another gateway): it rolls back and
 * judges again against that row, so of racing create-only completions one
 * wins, as of racing create-only puts.
 */
import { insertMessages } from './outbox.js'
import {
  bucketRetired, isBucketError, lockRulesOf, objectLocked, partChecksumsFrom, retainingRule, partChecksumsText, type CompleteBuilder, type StagedBody, type StoredObject, type StoredPart, type StoredUpload, type UploadListQuery,
  type EventSink
} from '../../bucket/port.js'
import { isUploadId, type BlobFiles } from '../fs/blobs.js'
import type { PgCatalog } from './catalog.js'
import { FULL_COLUMNS, LIVE_STORE_RULES, OBJECT_COLUMNS, OBJECT_UPDATE, objectValues, toObject, toUpload, uploadChecksumText, type PgObjectRow, type PgUploadRow, type Segment } from './rows.js'

/** Locks the store's row against retirement for the transaction; empty when the store is retired or gone. */
const LIVE = 'SELECT 1 FROM fsbucket.stores WHERE id = $1 AND NOT retired FOR SHARE'

/** `uploaded`: NULL in rows stored before parts kept their time. */
interface PartRow { part_number: number, etag: string, size: number, file: string, checksums: string | null, uploaded: number | null }

/** A part's record from its row; one stored before parts kept their time takes the upload's creation time. */
function partOfRow (row: Omit<PartRow, 'file'>, created: number): StoredPart {
  return { partNumber: row.part_number, etag: row.etag, size: Number(row.size), uploaded: row.uploaded ?? created, ...partChecksumsFrom(row.checksums) }
}


/** Thrown inside a completion's transaction when another writer created the key first: the completion judges again. */
const RACED = new Error('the key was created meanwhile')

export class PgUploads {
  readonly #catalog: PgCatalog
  readonly #storeId: string
  readonly #blobs: BlobFiles

  /** The store's event sink of the moment (store.ts), null without rules. */
  readonly #sink: () => EventSink | null

  constructor (catalog: PgCatalog, storeId: string, blobs: BlobFiles, sink: () => EventSink | null) {
    this.#catalog = catalog
    this.#storeId = storeId
    this.#blobs = blobs
    this.#sink = sink
  }

  async create (id: string, upload: StoredUpload): Promise<void> {
    const result = await this.#catalog.query('creating an upload', `WITH live AS (${LIVE})
      INSERT INTO fsbucket.uploads (store_id, upload_id, id, key, created, storage_class, http_metadata, custom_metadata, checksum)
      SELECT $1, $2::text, $3::bytea, $4::text, $5::bigint, $6::text, $7::text, $8::text, $9::text FROM live`,
    [this.#storeId, upload.uploadId, Buffer.from(id, 'utf8'), upload.key, upload.created, upload.storageClass,
      JSON.stringify(upload.httpMetadata), JSON.stringify(upload.customMetadata), uploadChecksumText(upload)])
    if (result.rowCount === 0) throw bucketRetired()
  }

  async get (uploadId: string): Promise<StoredUpload | null> {
    if (!isUploadId(uploadId)) return null
    const { rows } = await this.#catalog.query<PgUploadRow>('reading an upload',
      'SELECT * FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])
    return rows.length === 0 ? null : toUpload(rows[0])
  }

  async putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean> {
    if (!isUploadId(uploadId)) {
      await body.discard()
      return false
    }
    let file: string
    try {
      file = await this.#blobs.placePart(body, uploadId, part.partNumber)
    } catch (err) {
      // The upload's directory went with the upload (completed or aborted meanwhile): no such upload, not a storage failure.
      if (!isBucketError(err) && await this.get(uploadId) === null) return false
      throw err
    }
    let replaced: string | undefined
    let stored = false
    try {
      stored = await this.#catalog.transaction('storing a part', async client => {
        const upload = await client.query('SELECT 1 FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2 FOR SHARE', [this.#storeId, uploadId])
        if (upload.rowCount === 0) return false
        if ((await client.query(LIVE, [this.#storeId])).rowCount === 0) throw bucketRetired()
        const old = await client.query<{ file: string }>('SELECT file FROM fsbucket.parts WHERE store_id = $1 AND upload_id = $2 AND part_number = $3 FOR UPDATE',
          [this.#storeId, uploadId, part.partNumber])
        replaced = old.rows[0]?.file
        await client.query(`INSERT INTO fsbucket.parts (store_id, upload_id, part_number, etag, size, file, checksums, uploaded) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
          ON CONFLICT (store_id, upload_id, part_number) DO UPDATE SET etag = excluded.etag, size = excluded.size, file = excluded.file, checksums = excluded.checksums,
            uploaded = excluded.uploaded`,
        [this.#storeId, uploadId, part.partNumber, part.etag, part.size, file, partChecksumsText(part), part.uploaded ?? null])
        return true
      })
    } finally {
      // Only completion reads part files, and it holds the upload's row: a replaced part can go at once.
      if (stored && replaced !== undefined) await this.#blobs.removeFile(replaced)
    }
    // The upload went meanwhile (aborted, completed): its directory, which placing the part made again, goes with the part.
    if (!stored) await this.#blobs.removeUpload(uploadId)
    return stored
  }

  /** `now`: the instant a lock on the key's current object is judged at (port.ts, guarantee 4). */
  async complete (uploadId: string, id: string, build: CompleteBuilder, now = Date.now()): Promise<StoredObject | null> {
    if (!isUploadId(uploadId)) return null
    for (;;) {
      let linked: Segment[] = []
      try {
        return await this.#completeOnce(uploadId, id, build, now, segments => { linked = segments })
      } catch (err) {
        // Rolled back for certain: the links name nothing, and the completion judges again against the row that won.
        if (err !== RACED) throw err
        await this.#blobs.removeSegments(linked)
      }
    }
  }

  async #completeOnce (uploadId: string, id: string, build: CompleteBuilder, now: number, linked: (segments: Segment[]) => void): Promise<StoredObject | null> {
    const idBytes = Buffer.from(id, 'utf8')
    const object = await this.#catalog.transaction('completing an upload', async client => {
      const uploads = await client.query<PgUploadRow>('SELECT * FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2 FOR UPDATE', [this.#storeId, uploadId])
      if (uploads.rowCount === 0) return null
      const live = await client.query<{ lock_rules: string | null }>(LIVE_STORE_RULES, [this.#storeId])
      if (live.rowCount === 0) throw bucketRetired()
      const partRows = await client.query<PartRow>('SELECT part_number, etag, size, file, checksums, uploaded FROM fsbucket.parts WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])
      const rows = new Map(partRows.rows.map(p => [p.part_number, p]))
      const parts = new Map([...rows].map(([n, p]) => [n, partOfRow(p, Number(uploads.rows[0].created))]))
      // The key's current object is locked before the build judges it (a conditional completion).
      const current = await client.query<PgObjectRow>(`SELECT ${FULL_COLUMNS} FROM fsbucket.objects WHERE store_id = $1 AND id = $2 FOR UPDATE`, [this.#storeId, idBytes])
      const { object, partNumbers } = build(toUpload(uploads.rows[0]), parts, current.rows[0] === undefined ? null : toObject(current.rows[0]))
      // The store's row (FOR SHARE) and the key's (FOR UPDATE) are held: neither the rules nor the object change before the commit.
      if (current.rows[0] !== undefined && retainingRule(lockRulesOf(live.rows[0].lock_rules), id, Number(current.rows[0].uploaded), now) !== null) {
        throw objectLocked('completeMultipartUpload', object.key)
      }
      // Linked before the row naming them commits; if it never does, the sweeper removes the links.
      const segments: Segment[] = await this.#catalog.busy(client, async progress => await this.#blobs.linkParts(object.version, partNumbers.map(n => {
        const row = rows.get(n) as PartRow
        return { file: row.file, size: row.size, partNumber: n }
      }), progress))
      linked(segments)
      const values = [this.#storeId, idBytes, ...objectValues(object, segments)]
      const insert = `INSERT INTO fsbucket.objects (store_id, id, ${OBJECT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb)`
      if (current.rows[0] === undefined) {
        // No row to lock was judged: another writer (a completion of another upload, a put) may have made one since,
        // which this must not overwrite unjudged (two create-only completions would both win).
        const inserted = await client.query(`${insert} ON CONFLICT (store_id, id) DO NOTHING`, values)
        if (inserted.rowCount === 0) throw RACED
      } else {
        await client.query(`${insert} ON CONFLICT (store_id, id) DO UPDATE SET ${OBJECT_UPDATE}`, values)
      }
      const replaced = current.rows[0]?.segments ?? []
      if (replaced.length > 0) {
        await client.query('INSERT INTO fsbucket.garbage (store_id, file, since) SELECT $1, f, $2 FROM unnest($3::text[]) f',
          [this.#storeId, Date.now(), replaced.map(s => s[0])])
      }
      await client.query('DELETE FROM fsbucket.parts WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])
      await client.query('DELETE FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])
      await insertMessages(client, this.#storeId, this.#sink()?.({ action: 'CompleteMultipartUpload', key: object.key, size: object.size, etag: object.etag }) ?? [])
      return object
    })
    if (object !== null) await this.#blobs.removeUpload(uploadId)
    return object
  }

  /**
   * Uploads in progress, in (id bytes, upload id) order; bytea compares
   * bytewise, upload ids in the C collation. The marker's upload id is the
   * client's text (S3's upload-id-marker), and PostgreSQL's text cannot hold
   * a NUL: it is cut at its first one, which orders every upload id alike,
   * since no upload id holds a NUL (`u > m\0...` exactly when `u > m`).
   */
  async list (query: UploadListQuery): Promise<StoredUpload[]> {
    const prefix = Buffer.from(query.prefix, 'utf8')
    const after = query.after === undefined ? null : { id: query.after.id, uploadId: query.after.uploadId.split('\0', 1)[0] }
    const { rows } = await this.#catalog.query<PgUploadRow>('listing uploads',
      `SELECT * FROM fsbucket.uploads WHERE store_id = $1 AND substring(id FROM 1 FOR $2) = $3
        AND ($4::bytea IS NULL OR (id, upload_id COLLATE "C") > ($4::bytea, $5::text COLLATE "C"))
        ORDER BY id, upload_id COLLATE "C" LIMIT $6`,
      [this.#storeId, prefix.length, prefix, after === null ? null : Buffer.from(after.id, 'utf8'), after?.uploadId ?? null, query.limit])
    return rows.map(toUpload)
  }

  /** Parts numbered above `after`, in order; null when the upload does not exist. */
  async listParts (uploadId: string, after: number, limit: number): Promise<StoredPart[] | null> {
    if (!isUploadId(uploadId)) return null
    return await this.#catalog.transaction('listing parts', async client => {
      const upload = await client.query<{ created: number }>('SELECT created FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])
      if (upload.rowCount === 0) return null
      const { rows } = await client.query<Omit<PartRow, 'file'>>(
        'SELECT part_number, etag, size, checksums, uploaded FROM fsbucket.parts WHERE store_id = $1 AND upload_id = $2 AND part_number > $3 ORDER BY part_number LIMIT $4',
        [this.#storeId, uploadId, after, limit])
      return rows.map(r => partOfRow(r, Number(upload.rows[0].created)))
    }, 'REPEATABLE READ')
  }

  /** Removes the upload; false when there was none (a completion or another abort removed it first). */
  async abort (uploadId: string): Promise<boolean> {
    if (!isUploadId(uploadId)) return false
    const removed = await this.#catalog.transaction('aborting an upload', async client => {
      if ((await client.query(LIVE, [this.#storeId])).rowCount === 0) throw bucketRetired()
      await client.query('SELECT 1 FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2 FOR UPDATE', [this.#storeId, uploadId])
      await client.query('DELETE FROM fsbucket.parts WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])
      return ((await client.query('DELETE FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = $2', [this.#storeId, uploadId])).rowCount ?? 0) > 0
    })
    if (removed) await this.#blobs.removeUpload(uploadId)
    return removed
  }

  /** Uploads created before `createdBefore`. */
  async expired (createdBefore: number): Promise<string[]> {
    const { rows } = await this.#catalog.query<{ upload_id: string }>('sweeping',
      'SELECT upload_id FROM fsbucket.uploads WHERE store_id = $1 AND created < $2', [this.#storeId, createdBefore])
    return rows.map(r => r.upload_id)
  }
}
