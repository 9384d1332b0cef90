/**
 * Multipart uploads of a bucket's filesystem store: their catalog rows, the
 * part files under `uploads/<uploadId>/<n>.<r>`, and completion, which
 * hard-links the chosen parts into blobs/ and commits the object's row (no
 * byte is copied, so completing 1 GiB takes milliseconds).
 */
import { isBucketError, objectLocked, partChecksumsFrom, partChecksumsText, type CompleteBuilder, type StagedBody, type StoredObject, type StoredPart, type StoredUpload, type UploadListQuery } from '../../bucket/port.js'
import { isUploadId, type BlobFiles } from './blobs.js'
import { toRecord, toUpload, uploadChecksumText, type Catalog, type PartRow, type Segment } from './catalog.js'
import { wasRolledBack, type Commits } from './commit.js'

/** A part's record from its row; one stored before parts kept their time takes the upload's creation time. */
function partOfRow (row: PartRow, created: number): StoredPart {
  return { partNumber: row.part_number, etag: row.etag, size: row.size, uploaded: row.uploaded ?? created, ...partChecksumsFrom(row.checksums) }
}

export class Uploads {
  readonly #catalog: Catalog
  readonly #commits: Commits
  readonly #blobs: BlobFiles

  constructor (catalog: Catalog, commits: Commits, blobs: BlobFiles) {
    this.#catalog = catalog
    this.#commits = commits
    this.#blobs = blobs
  }

  async create (id: string, upload: StoredUpload): Promise<void> {
    await this.#commits.commit(() => this.#catalog.sql.insertUpload.run({
      upload_id: upload.uploadId,
      id: Buffer.from(id, 'utf8'),
      key: upload.key,
      created: upload.created,
      storage_class: upload.storageClass,
      http_metadata: JSON.stringify(upload.httpMetadata),
      custom_metadata: JSON.stringify(upload.customMetadata),
      checksum: uploadChecksumText(upload)
    }))
  }

  get (uploadId: string): StoredUpload | null {
    if (!isUploadId(uploadId)) return null
    const row = this.#catalog.sql.upload.get(uploadId)
    return row === undefined ? null : toUpload(row)
  }

  list (query: UploadListQuery): StoredUpload[] {
    const prefix = Buffer.from(query.prefix, 'utf8')
    return this.#catalog.sql.uploadsAfter.all({
      prefix,
      prefix_length: prefix.length,
      // An empty id sorts before every id, and every upload id is above ''.
      after_id: Buffer.from(query.after?.id ?? '', 'utf8'),
      after_upload: query.after?.uploadId ?? '',
      limit: query.limit
    }).map(toUpload)
  }

  listParts (uploadId: string, after: number, limit: number): StoredPart[] | null {
    if (!isUploadId(uploadId)) return null
    const sql = this.#catalog.sql
    // One read transaction: the upload and its parts as of one moment.
    return this.#catalog.read(() => {
      const upload = sql.upload.get(uploadId)
      if (upload === undefined) return null
      return sql.partsAfter.all(uploadId, after, limit).map(p => partOfRow(p, upload.created))
    })
  }

  async putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean> {
    if (!isUploadId(uploadId)) {
      await body.discard()
      return false
    }
    const sql = this.#catalog.sql
    let file: string
    try {
      file = await this.#blobs.placePart(body, uploadId, part.partNumber)
    } catch (err) {
      // The upload's directory went with the upload (completed or aborted meanwhile): no such upload, not a storage failure.
      if (!isBucketError(err) && sql.upload.get(uploadId) === undefined) return false
      throw err
    }
    let replaced: string | undefined
    let stored: boolean
    try {
      stored = await this.#commits.commit(() => {
        if (sql.upload.get(uploadId) === undefined) return false
        replaced = sql.part.get(uploadId, part.partNumber)?.file
        sql.upsertPart.run({ upload_id: uploadId, part_number: part.partNumber, etag: part.etag, size: part.size, file, checksums: partChecksumsText(part), uploaded: part.uploaded ?? null })
        return true
      })
    } catch (err) {
      if (wasRolledBack(err)) await this.#blobs.removeFile(file)
      throw err
    }
    // The upload went meanwhile (aborted, completed): its directory, which placing the part made again, goes with the part.
    if (!stored) await this.#blobs.removeUpload(uploadId)
    else if (replaced !== undefined) await this.#blobs.removeFile(replaced)
    return stored
  }

  /**
   * Completes an upload into the object `id`; returns the object and the
   * body files it replaced. The parts are read and hard-linked into blobs/
   * before the write transaction, which then only checks that the upload
   * and the chosen parts are still those (a part uploaded again meanwhile
   * starts the completion over), builds it again when the key was written
   * meanwhile (its condition judged on the object the key holds now), and
   * commits the rows.
   */
  async complete (uploadId: string, id: string, build: CompleteBuilder, now?: number): Promise<{ object: StoredObject, replaced: Segment[] } | null> {
    if (!isUploadId(uploadId)) return null
    const idBytes = Buffer.from(id, 'utf8')
    const sql = this.#catalog.sql
    for (let attempt = 0; ; attempt++) {
      const read = this.#catalog.read(() => {
        const upload = sql.upload.get(uploadId)
        if (upload === undefined) return null
        const currentRow = sql.head.get(idBytes)
        return { upload, rows: new Map(sql.parts.all(uploadId).map(p => [p.part_number, p])), current: currentRow === undefined ? null : toRecord(currentRow) }
      })
      if (read === null) return null
      const parts = new Map([...read.rows].map(([n, p]) => [n, partOfRow(p, read.upload.created)]))
      const upload = toUpload(read.upload)
      const built = build(upload, parts, read.current)
      let object = built.object
      const chosen = built.partNumbers.map(n => read.rows.get(n) as PartRow)
      let segments: Segment[]
      try {
        segments = await this.#blobs.linkParts(object.version, chosen.map(p => ({ file: p.file, size: p.size, partNumber: p.part_number })))
      } catch (err) {
        // A part file went under the link (the upload completed or aborted, or the part uploaded again, meanwhile): look again.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 20) throw err
        continue
      }
      let replaced: Segment[] = []
      let outcome: 'done' | 'gone' | 'changed'
      try {
        outcome = await this.#commits.commit(() => {
          if (sql.upload.get(uploadId) === undefined) return 'gone'
          if (chosen.some(p => sql.part.get(uploadId, p.part_number)?.file !== p.file)) return 'changed'
          // `build` judged the key's object as read above: the key written since then, it judges the object there now.
          const current = sql.head.get(idBytes)
          if ((current?.version ?? null) !== (read.current?.version ?? null)) object = build(upload, parts, current === undefined ? null : toRecord(current)).object
          // Thrown inside the transaction: nothing is written, the upload stays as it was.
          if (this.#catalog.retained(id, current, now)) throw objectLocked('completeMultipartUpload', object.key)
          if (current !== undefined) replaced = JSON.parse(current.segments)
          this.#catalog.putRow(idBytes, object, segments)
          this.#catalog.emit({ action: 'CompleteMultipartUpload', key: object.key, size: object.size, etag: object.etag })
          sql.deleteParts.run(uploadId)
          sql.deleteUpload.run(uploadId)
          return 'done'
        })
      } catch (err) {
        if (wasRolledBack(err)) await this.#blobs.removeSegments(segments)
        throw err
      }
      if (outcome === 'done') {
        await this.#blobs.removeUpload(uploadId)
        return { object, replaced }
      }
      await this.#blobs.removeSegments(segments)
      if (outcome === 'gone') return null
      // A part was uploaded again while this completion prepared: start over with things as they are now.
      if (attempt >= 20) throw new Error('completeMultipartUpload: the parts kept changing while the upload was completed.')
    }
  }

  /** Removes the upload; false when there was none (a completion or another abort removed it first). */
  async abort (uploadId: string): Promise<boolean> {
    if (!isUploadId(uploadId)) return false
    const sql = this.#catalog.sql
    const removed = await this.#commits.commit(() => {
      sql.deleteParts.run(uploadId)
      return sql.deleteUpload.run(uploadId).changes > 0
    })
    if (removed) await this.#blobs.removeUpload(uploadId)
    return removed
  }
}
