/**
 * The PostgreSQL store: one bucket store whose catalog rows live in a
 * PostgreSQL server shared by every gateway, and whose bodies are immutable
 * files in the store's directory on a shared mount, in the filesystem
 * store's layout (blobs.ts: `blobs/<vv>/<version>`, `uploads/<id>/<n>.<r>`,
 * `tmp/`). This module owns objects: head, open, conditional commit,
 * delete, list, retire; uploads.ts owns multipart uploads, copy.ts copies,
 * sweeper.ts the sweep.
 *
 * How the port's guarantees hold across hosts:
 *   - A conditional write is a compare-and-set on the row's `rev` (a
 *     number from one sequence, never reused): judge the precondition on
 *     the row (the one read just before, when the engine read it, else
 *     read now), then INSERT ... ON CONFLICT DO NOTHING (the key was
 *     absent) or UPDATE ... WHERE rev = <judged rev>. When another gateway
 *     wrote in between, no row is touched and the write judges again on
 *     the row as it is; so of two racing create-only puts exactly one
 *     inserts, and no update is lost. An unconditional write is one
 *     statement that locks the current row, then replaces or inserts it.
 *   - The same statement takes the store's row FOR SHARE and requires it
 *     not retired; retiring takes it FOR UPDATE and then looks for objects,
 *     so no write is acknowledged into a bucket being deleted.
 *   - Bucket locks are a column of the store's row. A write judges the
 *     key's row against the rules it last saw, and its statement requires
 *     the rules to be those still (liveStoreUnder), holding the store's row
 *     FOR SHARE until it commits; changing the rules updates that row, so
 *     it waits for such writes, and a write that comes after finds the
 *     rules changed, reads them and judges again. An unconditional write
 *     into a store without rules stays one statement.
 *   - A body is written and fsynced (blobs.ts) before the row naming it
 *     commits. The body files a write replaces or a delete removes are never
 *     unlinked by the write: the same statement records them in `garbage`,
 *     and the sweeper removes them after the grace period, so a read in
 *     flight on any gateway finishes on the bytes it opened.
 *   - No row is cached: every read asks the catalog, so a read on one
 *     gateway sees every write acknowledged by another.
 */
import type pg from 'pg'
import { insertMessages, PgOutbox } from './outbox.js'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import {
  ALWAYS, assembleListPageAsync, BucketError, putChange, bucketLocked, bucketRetired, lockRulesOf, lockRulesText, objectLocked, retainingRule, type LockRule, partLayoutOfSizes, pastPrefix, type MultipartLayout, type AsyncPageSource, type BucketStore, type CommitOptions, type CompleteBuilder, type CompleteOptions, type CopyBuilder, type CopyOptions,
  type CopyOutcome, type DeleteOptions, type DeleteOutcome, type EventSink, type OutboxMessage, type ListPage, type ListQuery, type ObjectReader, type Precondition,
  type StagedBody, type StoredObject, type StoredPart, type StoredUpload, type SweepReport, type UploadListQuery
} from '../../bucket/port.js'
import { storageError } from '../fs/atomic.js'
import { BlobFiles } from '../fs/blobs.js'
import type { DeletedBuckets } from '../fs/deleted-buckets.js'
import { openSegments } from '../fs/readers.js'
import type { PgCatalog } from './catalog.js'
import { copyPgObject } from './copy.js'
import {
  FULL_COLUMNS, LIST_COLUMNS, liveStoreUnder, OBJECT_COLUMNS, OBJECT_UPDATE, OBJECT_VALUES, objectValues, toObject, type PgObjectRow
} from './rows.js'
import { skipScanNextId } from './skip-scan.js'
import { sweepPgStore } from './sweeper.js'
import { PgUploads } from './uploads.js'

export interface PgStoreOptions {
  /** fsync bodies and their directories before a write resolves (default true). */
  fsync?: boolean
  /**
   * Create the store's row and its directory `root` when missing (a store
   * outside any registry); a registry creates both with the bucket, and a
   * store it opens never makes `root` again (see `open`).
   */
  create?: boolean
  /** The data directory's deleted buckets, which the registry has each sweep remove (blobs.ts). */
  deletedBuckets?: DeletedBuckets
}

/** Rows kept as guesses for the conditional writes that follow a read. */
const RECENT_ROWS = 64

/**
 * The rows this process read last, by id (the oldest forgotten first): a
 * conditional put reads the key's row before receiving the body, and its
 * commit judges that row and writes only if it is still the key's (same
 * rev), in one statement. A guess that turned stale costs a second look,
 * never a wrong answer.
 */
class RecentRows {
  readonly #rows = new Map<string, PgObjectRow | null>()

  remember (id: string, row: PgObjectRow | null): void {
    this.#rows.delete(id)
    this.#rows.set(id, row)
    if (this.#rows.size > RECENT_ROWS) this.#rows.delete(this.#rows.keys().next().value as string)
  }

  take (id: string): PgObjectRow | null | undefined {
    const row = this.#rows.get(id)
    this.#rows.delete(id)
    return row
  }
}


export class PgStore implements BucketStore {
  readonly #catalog: PgCatalog
  readonly #storeId: string
  readonly #blobs: BlobFiles
  readonly #uploads: PgUploads
  readonly #root: string
  readonly #seen = new RecentRows()
  readonly #deletedBuckets: DeletedBuckets | undefined
  /**
   * The store's lock rules as this process last saw them (their text, null
   * for none): a guess, which every write statement checks (liveStoreUnder)
   * and which a refused statement reads again.
   */
  #rulesText: string | null = null
  readonly outbox: PgOutbox
  /** Where committed changes send their events; null without rules. */
  #sink: EventSink | null = null

  private constructor (catalog: PgCatalog, storeId: string, root: string, fsync: boolean, deletedBuckets: DeletedBuckets | undefined) {
    this.#catalog = catalog
    this.#deletedBuckets = deletedBuckets
    this.#storeId = storeId
    this.#root = root
    this.#blobs = new BlobFiles(root, fsync)
    this.#uploads = new PgUploads(catalog, storeId, this.#blobs, () => this.#sink)
    this.outbox = new PgOutbox(catalog, storeId)
  }

  setEventSink (sink: EventSink | null): void {
    this.#sink = sink
  }

  /**
   * Runs a write's statement; with messages, in a transaction that inserts
   * them when the statement wrote its row (`written` of its result is 1).
   */
  async #write (messages: OutboxMessage[], text: string, params: unknown[], written: (result: pg.QueryResult) => number): Promise<number> {
    if (messages.length === 0) return written(await this.#catalog.query('committing a write', text, params))
    return await this.#catalog.transaction('committing a write', async client => {
      const n = written(await client.query(text, params))
      if (n === 1) await insertMessages(client, this.#storeId, messages)
      return n
    })
  }

  /**
   * Opens the store `storeId` of the catalog, with its bodies in the
   * directory `root` (with `create`, made when missing, and the store's row
   * too). Without `create`, `root` is never made: the bucket may have been
   * deleted (its directory moved away) since its row was read, and a write
   * racing the delete must answer NoSuchBucket, not bring the directory back.
   */
  static async open (catalog: PgCatalog, storeId: string, root: string, options: PgStoreOptions = {}): Promise<PgStore> {
    try {
      if (options.create === true) await fsp.mkdir(root, { recursive: true })
      await Promise.all(['tmp', 'blobs', 'uploads'].map(async sub => await fsp.mkdir(path.join(root, sub)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err
      })))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        // Deleted meanwhile, or a live bucket whose directory is missing (an unmounted share): the catalog tells which.
        const { rows } = await catalog.query<{ retired: boolean }>('looking for a bucket', 'SELECT retired FROM fsbucket.stores WHERE id = $1', [storeId])
        if (rows.length === 0 || rows[0].retired) throw bucketRetired('open')
      }
      throw storageError(err, 'creating the bucket directory')
    }
    if (options.create === true) {
      await catalog.query('opening a bucket', 'INSERT INTO fsbucket.stores (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [storeId])
    }
    return new PgStore(catalog, storeId, root, options.fsync ?? true, options.deletedBuckets)
  }

  /** True when the store is retired or its bucket deleted; notes the store's lock rules as it goes. */
  async #retired (): Promise<boolean> {
    const { rows } = await this.#catalog.query<{ retired: boolean, lock_rules: string | null }>('writing', 'SELECT retired, lock_rules FROM fsbucket.stores WHERE id = $1', [this.#storeId])
    if (rows.length > 0) this.#rulesText = rows[0].lock_rules
    return rows.length === 0 || rows[0].retired
  }

  /** The key's row and the store's lock rules, in one snapshot (null when the store is retired); notes the rules as it goes. */
  async #snapshot (id: Buffer): Promise<{ row: PgObjectRow | null, rulesText: string | null } | null> {
    const { rows } = await this.#catalog.query<PgObjectRow & { lock_rules: string | null, retired: boolean }>('committing a write',
      `WITH s AS (SELECT lock_rules, retired FROM fsbucket.stores WHERE id = $1)
      SELECT s.lock_rules, s.retired, o.* FROM s LEFT JOIN LATERAL (SELECT ${FULL_COLUMNS} FROM fsbucket.objects WHERE store_id = $1 AND id = $2) o ON true`,
      [this.#storeId, id])
    if (rows.length === 0 || rows[0].retired) return null
    const { lock_rules: rulesText, retired: _retired, ...row } = rows[0]
    this.#rulesText = rulesText
    return { row: row.version === null ? null : row as PgObjectRow, rulesText }
  }

  async #row (id: Buffer, what: string): Promise<PgObjectRow | null> {
    const { rows } = await this.#catalog.query<PgObjectRow>(what, `SELECT ${FULL_COLUMNS} FROM fsbucket.objects WHERE store_id = $1 AND id = $2`, [this.#storeId, id])
    return rows[0] ?? null
  }

  async retire (): Promise<boolean> {
    return await this.#catalog.transaction('deleting a bucket', async client => {
      const store = await client.query<{ retired: boolean, lock_rules: string | null }>('SELECT retired, lock_rules FROM fsbucket.stores WHERE id = $1 FOR UPDATE', [this.#storeId])
      if (store.rowCount === 0) return true // deleted already: nothing is stored
      if (store.rows[0].retired) throw bucketRetired('retire')
      if (store.rows[0].lock_rules !== null) throw bucketLocked()
      const any = await client.query('SELECT 1 FROM fsbucket.objects WHERE store_id = $1 LIMIT 1', [this.#storeId])
      if ((any.rowCount ?? 0) > 0) return false
      await client.query('UPDATE fsbucket.stores SET retired = true WHERE id = $1', [this.#storeId])
      return true
    })
  }

  async stage (source: AsyncIterable<Uint8Array>, version?: string): Promise<StagedBody> {
    try {
      return await this.#blobs.stage(source, version)
    } catch (err) {
      // Deleted through another gateway while the body arrived: its directory gone (ENOENT), or removed with the
      // body file in it (unlinked) and a directory of the same name made since by a bucket created again, which
      // blobs.ts, holding no identity of a directory, cannot tell from this one. The catalog tells: 10006.
      if (!(err instanceof BucketError && err.errorName === 'NoSuchBucket') && await this.#retired().catch(() => false)) throw bucketRetired()
      throw err
    }
  }

  async head (id: string): Promise<StoredObject | null> {
    const row = await this.#row(Buffer.from(id, 'utf8'), 'reading an object')
    this.#seen.remember(id, row)
    return row === null ? null : toObject(row)
  }

  /** A completed upload's row names one body file per part, with its size: the layout follows from them. */
  async derivePartLayout (id: string, version: string): Promise<MultipartLayout | null> {
    const row = await this.#row(Buffer.from(id, 'utf8'), 'reading an object')
    if (row === null || row.version !== version) return null
    return partLayoutOfSizes(row.etag, row.segments.map(([, size]) => size))
  }

  async open (id: string): Promise<ObjectReader | null> {
    const idBytes = Buffer.from(id, 'utf8')
    for (let attempt = 0; ; attempt++) {
      const row = await this.#row(idBytes, 'reading an object')
      if (row === null) return null
      try {
        return await openSegments(toObject(row), row.segments, file => this.#blobs.abs(file))
      } catch (err) {
        // Body files are removed only a grace period after their row was replaced: read the newer row.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw storageError(err, 'reading an object')
      }
    }
  }

  async commit (id: string, object: StoredObject, body: StagedBody, precondition: Precondition, options: CommitOptions = {}): Promise<boolean> {
    const segment = await this.#blobs.place(body, object.version)
    const idBytes = Buffer.from(id, 'utf8')
    const values = [this.#storeId, idBytes, ...objectValues(object, [segment])]
    // The row this process read last for the key (a conditional put heads it first): a guess, checked by the write.
    let current = precondition === ALWAYS ? undefined : this.#seen.take(id)
    // The messages the put sends if it commits (the sink only reads the rules).
    const messages = this.#sink?.(putChange(object, options.copiedFrom)) ?? []
    // When the catalog fails, the body stays: the row may have committed; if not, the sweeper removes it.
    for (;;) {
      // The rules this write is judged against: its statement lands only while they are the store's (liveStoreUnder).
      const rulesText = this.#rulesText
      let written: number
      if (precondition === ALWAYS && rulesText === null) {
        written = await this.#replace(values, messages)
      } else {
        const guessed = current !== undefined
        let rules = rulesText
        if (current === undefined) {
          const snapshot = await this.#snapshot(idBytes)
          if (snapshot === null) {
            await this.#blobs.removeSegments([segment])
            throw bucketRetired()
          }
          ({ row: current, rulesText: rules } = snapshot)
        }
        if (!precondition(current === null ? null : toObject(current))) {
          if (guessed) { current = undefined; continue } // judged on a guess: judge again on the row as it is
          await this.#blobs.removeSegments([segment])
          return false
        }
        // A refusal is judged on the row and the rules of one snapshot, never on a guess of either.
        if (current !== null && retainingRule(lockRulesOf(rules), id, Number(current.uploaded), options.now ?? Date.now()) !== null) {
          if (guessed) { current = undefined; continue }
          await this.#blobs.removeSegments([segment])
          throw objectLocked('put', object.key)
        }
        written = current === null ? await this.#insert(values, rules, messages) : await this.#update(values, current, rules, messages)
        current = undefined
      }
      if (written === 1) return true
      // Another gateway wrote this key in between (judge again), changed the lock rules (judge again under them), or is deleting the bucket.
      if (await this.#retired()) {
        await this.#blobs.removeSegments([segment])
        throw bucketRetired()
      }
    }
  }

  /** Inserts the row when the key holds none; 0 when it does (or the store is retired, or its rules are no longer `rulesText`). */
  async #insert (values: unknown[], rulesText: string | null, messages: OutboxMessage[]): Promise<number> {
    return await this.#write(messages, `WITH live AS (${liveStoreUnder(13)})
      INSERT INTO fsbucket.objects (store_id, id, ${OBJECT_COLUMNS}) SELECT $1, $2, ${OBJECT_VALUES} FROM live
      ON CONFLICT (store_id, id) DO NOTHING`, [...values, rulesText], result => result.rowCount ?? 0)
  }

  /** Replaces the row `current` when it is still the key's (same rev); 0 otherwise. Its body files go to `garbage`. */
  async #update (values: unknown[], current: PgObjectRow, rulesText: string | null, messages: OutboxMessage[]): Promise<number> {
    return await this.#write(messages, `WITH live AS (${liveStoreUnder(16)}),
      updated AS (UPDATE fsbucket.objects SET ${OBJECT_UPDATE}
        WHERE store_id = $1 AND id = $2 AND rev = $13 AND EXISTS (SELECT 1 FROM live) RETURNING 1),
      replaced AS (INSERT INTO fsbucket.garbage (store_id, file, since) SELECT $1, f, $14 FROM updated, unnest($15::text[]) f)
      SELECT count(*)::int AS n FROM updated`, [...values, current.rev, Date.now(), current.segments.map(s => s[0]), rulesText], result => result.rows[0].n)
  }

  /**
   * Writes the row whatever the key holds, in one statement: the current row
   * is locked first (so its body files, sent to `garbage`, are the ones
   * replaced), then updated, or the row inserted when there was none. 0 when
   * another gateway inserted the key since the statement's snapshot, the
   * store is retired, or it has lock rules (then the write is judged).
   */
  async #replace (values: unknown[], messages: OutboxMessage[]): Promise<number> {
    return await this.#write(messages, `WITH live AS (${liveStoreUnder(14)}),
      prior AS (SELECT segments FROM fsbucket.objects WHERE store_id = $1 AND id = $2 FOR UPDATE),
      updated AS (UPDATE fsbucket.objects SET ${OBJECT_UPDATE} FROM prior
        WHERE store_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM live) RETURNING prior.segments AS before),
      inserted AS (INSERT INTO fsbucket.objects (store_id, id, ${OBJECT_COLUMNS}) SELECT $1, $2, ${OBJECT_VALUES} FROM live
        WHERE NOT EXISTS (SELECT 1 FROM prior) ON CONFLICT (store_id, id) DO NOTHING RETURNING 1),
      replaced AS (INSERT INTO fsbucket.garbage (store_id, file, since)
        SELECT $1, s->>0, $13 FROM updated, jsonb_array_elements(updated.before) s)
      SELECT ((SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted))::int AS n`, [...values, Date.now(), null], result => result.rows[0].n)
  }

  async delete (ids: string[], { cause, versions, now = Date.now() }: DeleteOptions = {}): Promise<DeleteOutcome> {
    const sink = this.#sink
    const action = cause === 'lifecycle' ? 'LifecycleDeletion' : 'DeleteObject'
    const refused = new Set<string>()
    let removedCount = 0
    let left = [...new Set(ids)]
    while (left.length > 0) {
      let rulesText = this.#rulesText
      // Without rules, nothing needs judging: the ids go as they are. With rules, each row is judged and removed only if unchanged since (same rev).
      // With versions (a lifecycle expiry's), a row goes only while it holds the version judged.
      let targets: Array<{ id: string, rev: number | null, version: string | null }> = left.map(id => ({ id, rev: null, version: versions?.get(id) ?? null }))
      // What these rules retain counts once the deletion ran under them (rules changed meanwhile judge again).
      const retained: string[] = []
      if (rulesText !== null) {
        // The rules and the rows, read in one snapshot: a refusal is judged on both as they were at one instant.
        const { rows } = await this.#catalog.query<{ lock_rules: string | null, retired: boolean, id: Buffer | null, uploaded: string, rev: string, version: string }>('deleting objects',
          `WITH s AS (SELECT lock_rules, retired FROM fsbucket.stores WHERE id = $1)
          SELECT s.lock_rules, s.retired, o.id, o.uploaded, o.rev, o.version FROM s
            LEFT JOIN LATERAL (SELECT id, uploaded, rev, version FROM fsbucket.objects WHERE store_id = $1 AND id = ANY($2::bytea[])) o ON true`,
          [this.#storeId, left.map(id => Buffer.from(id, 'utf8'))])
        if (rows.length === 0 || rows[0].retired) throw bucketRetired('delete')
        this.#rulesText = rulesText = rows[0].lock_rules
        const rules = lockRulesOf(rulesText)
        targets = []
        for (const row of rows) {
          if (row.id === null) continue
          const id = row.id.toString('utf8')
          const version = versions?.get(id) ?? null
          if (version !== null && row.version !== version) continue
          if (retainingRule(rules, id, Number(row.uploaded), now) !== null) retained.push(id)
          else targets.push({ id, rev: Number(row.rev), version })
        }
        if (targets.length === 0) {
          for (const id of retained) refused.add(id)
          break
        }
      }
      const text = `WITH live AS (${liveStoreUnder(5)}),
        removed AS (DELETE FROM fsbucket.objects o USING unnest($2::bytea[], $3::bigint[], $6::text[]) AS t(id, rev, version)
          WHERE o.store_id = $1 AND o.id = t.id AND (t.rev IS NULL OR o.rev = t.rev) AND (t.version IS NULL OR o.version = t.version) AND EXISTS (SELECT 1 FROM live) RETURNING o.id, o.key, o.segments),
        garbage AS (INSERT INTO fsbucket.garbage (store_id, file, since)
          SELECT $1, s->>0, $4 FROM removed, jsonb_array_elements(removed.segments) s)
        SELECT (SELECT count(*) FROM live)::int AS live, coalesce((SELECT array_agg(id) FROM removed), '{}') AS removed,
          coalesce((SELECT array_agg(key) FROM removed), '{}') AS keys`
      const params = [this.#storeId, targets.map(t => Buffer.from(t.id, 'utf8')), targets.map(t => t.rev), Date.now(), rulesText, targets.map(t => t.version)]
      // With notification rules, the keys removed are known only inside the statement: their messages go in its transaction.
      const { rows } = sink === null
        ? await this.#catalog.query<{ live: number, removed: Buffer[], keys: string[] }>('deleting objects', text, params)
        : await this.#catalog.transaction('deleting objects', async client => {
          const result = await client.query<{ live: number, removed: Buffer[], keys: string[] }>(text, params)
          await insertMessages(client, this.#storeId, result.rows[0].keys.flatMap(key => sink({ action, key })))
          return result
        })
      if (rows[0].live === 0) {
        // The store is retired (a delete is a write, refused there too), or its rules changed: judge again under them.
        if (await this.#retired()) throw bucketRetired('delete')
        continue
      }
      removedCount += rows[0].removed.length
      for (const id of retained) refused.add(id)
      if (rulesText === null) break
      // A judged row replaced meanwhile (another rev) is judged again as it is now; one deleted meanwhile is gone anyway.
      const removed = new Set(rows[0].removed.map(id => Buffer.from(id).toString('utf8')))
      left = targets.filter(t => !removed.has(t.id)).map(t => t.id)
    }
    return { retained: ids.filter(id => refused.has(id)), removed: removedCount }
  }

  async lockRules (): Promise<LockRule[]> {
    const { rows } = await this.#catalog.query<{ lock_rules: string | null }>('reading lock rules', 'SELECT lock_rules FROM fsbucket.stores WHERE id = $1', [this.#storeId])
    if (rows.length === 0) throw bucketRetired('lockRules')
    this.#rulesText = rows[0].lock_rules
    return lockRulesOf(rows[0].lock_rules)
  }

  async setLockRules (rules: LockRule[]): Promise<void> {
    const text = lockRulesText(rules)
    // Waits for every write holding the store's row FOR SHARE, judged against the rules before: none lands after this commits.
    const result = await this.#catalog.query('setting lock rules', 'UPDATE fsbucket.stores SET lock_rules = $2 WHERE id = $1 AND NOT retired', [this.#storeId, text])
    if (result.rowCount === 0) throw bucketRetired('setLockRules')
    this.#rulesText = text
  }

  async copy (fromId: string, toId: string, build: CopyBuilder, precondition: Precondition, options: CopyOptions = {}): Promise<CopyOutcome> {
    return await copyPgObject({ catalog: this.#catalog, storeId: this.#storeId, blobs: this.#blobs, sink: this.#sink }, fromId, toId, build, precondition, options)
  }

  async list (query: ListQuery): Promise<ListPage> {
    const prefix = Buffer.from(query.prefix, 'utf8')
    const end = pastPrefix(query.prefix)
    // Below the prefix, "after" means nothing: start at the prefix itself.
    const from = (after: Uint8Array | undefined): { op: string, start: Buffer } =>
      after !== undefined && Buffer.compare(after, prefix) >= 0 ? { op: '>', start: Buffer.from(after) } : { op: '>=', start: prefix }
    const columns = query.withMetadata ? `${LIST_COLUMNS}, http_metadata, custom_metadata` : LIST_COLUMNS
    const run = async (ask: <R extends object>(text: string, params: unknown[]) => Promise<R[]>): Promise<ListPage> => {
      const source: AsyncPageSource = {
        // Only a page with a delimiter seeks ids one at a time (skip-scan.ts walks many seeks per statement).
        nextId: skipScanNextId(ask, { storeId: this.#storeId, prefix, end, delimiter: query.delimiter ?? '' }),
        records: async (after, limit) => {
          const { op, start } = from(after)
          const rows = await ask<PgObjectRow & { id: Buffer }>(`SELECT ${columns} FROM fsbucket.objects
            WHERE store_id = $1 AND id ${op} $2 AND id < $3 ORDER BY id LIMIT $4`, [this.#storeId, start, end, limit])
          return rows.map(row => ({ id: row.id.toString('utf8'), object: toObject(row) }))
        }
      }
      return await assembleListPageAsync(source, query)
    }
    if (query.delimiter === undefined) {
      // One query: a snapshot by itself.
      return await run(async (text, params) => (await this.#catalog.query('listing objects', text, params)).rows)
    }
    return await this.#catalog.transaction('listing objects', async client =>
      await run(async (text, params) => (await client.query(text, params)).rows), 'REPEATABLE READ READ ONLY')
  }

  async createUpload (id: string, upload: StoredUpload): Promise<void> {
    await this.#uploads.create(id, upload)
  }

  async getUpload (uploadId: string): Promise<StoredUpload | null> {
    return await this.#uploads.get(uploadId)
  }

  async putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean> {
    return await this.#uploads.putPart(uploadId, part, body)
  }

  async completeUpload (uploadId: string, id: string, build: CompleteBuilder, options: CompleteOptions = {}): Promise<StoredObject | null> {
    return await this.#uploads.complete(uploadId, id, build, options.now)
  }

  async abortUpload (uploadId: string): Promise<boolean> {
    return await this.#uploads.abort(uploadId)
  }

  async listUploads (query: UploadListQuery): Promise<StoredUpload[]> {
    return await this.#uploads.list(query)
  }

  async listParts (uploadId: string, after: number, limit: number): Promise<StoredPart[] | null> {
    return await this.#uploads.listParts(uploadId, after, limit)
  }

  async sweep (createdBefore: number, leftoversBefore: number, underLock?: () => Promise<void>): Promise<SweepReport> {
    const rooms = { catalog: this.#catalog, storeId: this.#storeId, blobs: this.#blobs, uploads: this.#uploads, root: this.#root, deletedBuckets: this.#deletedBuckets }
    return await sweepPgStore(rooms, createdBefore, leftoversBefore, underLock)
  }

  async close (): Promise<void> {
    // The catalog's connections belong to whoever opened the catalog (the registry storage).
  }
}
