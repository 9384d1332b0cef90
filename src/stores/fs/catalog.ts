/**
 * The catalog of a bucket's filesystem store: the SQLite database (WAL mode)
 * that indexes objects, uploads and parts, its prepared statements, and the
 * two ways into it (one write transaction shared by every process, one read
 * snapshot). It never touches a body file: the other rooms of the store do.
 *
 * Ids are the UTF-8 bytes of the NFC key, stored as BLOBs so SQLite orders
 * them by memcmp, which is the order the service lists in. A row names the
 * body files of its object (`segments`, relative to the store's directory),
 * or names a small body kept in the catalog (`body_ref`, a row of `bodies`;
 * see inline.ts; NULL for file bodies). Older catalogs are brought up to
 * this shape when opened (see `open`).
 *
 * Small bodies have a table of their own because `objects` is keyed by the
 * id (WITHOUT ROWID), and such a table keeps only about a thousand bytes of
 * a row in its B-tree page: a 1 KiB body in the row went to an overflow page
 * of its own, 4 KiB of catalog (and of WAL, and of checkpoint) per object.
 * `bodies` is a rowid table, whose pages hold rows of up to about 4 KiB and
 * fill in insertion order, three 1 KiB bodies to a page. Triggers delete a
 * body with the row that names it (replaced or deleted), so no path can
 * leave one behind. Rows written by format 2 keep their bodies in the
 * row's own `body` column, read as before until the key is written again.
 */
import { bucketRetired, lockRulesOf, lockRulesText, retainingRule, type EventSink, type LockRule, type ObjectChange, type StoredObject, type StoredUpload } from '../../bucket/port.js'
import { recordOfRow, rowOfRecord, uploadOfRow, type ObjectColumns, type UploadColumns } from '../rows.js'
import { ReadCache, type CachedRow } from './read-cache.js'
import { Database, type SqliteDatabase, type Statement, type Transaction } from './sqlite.js'
import { currentTurn } from '../turn.js'

/** How long a write waits for another process's write transaction (and reads for a recovery) to end. */
export const WRITE_LOCK_WAIT_MS = 30_000

const schema = `
CREATE TABLE IF NOT EXISTS objects (
  id BLOB PRIMARY KEY,
  key TEXT NOT NULL,
  version TEXT NOT NULL,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  uploaded INTEGER NOT NULL,
  storage_class TEXT NOT NULL,
  checksums TEXT NOT NULL,
  http_metadata TEXT NOT NULL,
  custom_metadata TEXT NOT NULL,
  segments TEXT NOT NULL,
  body BLOB,
  body_ref INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS objects_by_version ON objects (version);
CREATE TABLE IF NOT EXISTS bodies (
  ref INTEGER PRIMARY KEY,
  bytes BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS uploads (
  upload_id TEXT PRIMARY KEY,
  id BLOB NOT NULL,
  key TEXT NOT NULL,
  created INTEGER NOT NULL,
  storage_class TEXT NOT NULL,
  http_metadata TEXT NOT NULL,
  custom_metadata TEXT NOT NULL,
  checksum TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS uploads_by_created ON uploads (created);
CREATE TABLE IF NOT EXISTS parts (
  upload_id TEXT NOT NULL,
  part_number INTEGER NOT NULL,
  etag TEXT NOT NULL,
  size INTEGER NOT NULL,
  file TEXT NOT NULL,
  checksums TEXT,
  uploaded INTEGER,
  PRIMARY KEY (upload_id, part_number)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bucket_state (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  queue TEXT NOT NULL,
  id TEXT NOT NULL,
  body TEXT NOT NULL,
  created INTEGER NOT NULL,
  visible_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  lease TEXT
);
CREATE INDEX IF NOT EXISTS outbox_by_visibility ON outbox (queue, visible_at, seq);
CREATE INDEX IF NOT EXISTS outbox_by_age ON outbox (queue, created);
CREATE TABLE IF NOT EXISTS view_intents (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id BLOB NOT NULL
);
`

/** A body kept in `bodies` goes with the row that names it: when the row names another (or none), and when it is deleted. */
const bodyTriggers = `
CREATE TRIGGER IF NOT EXISTS objects_body_replaced AFTER UPDATE OF body_ref ON objects
  WHEN old.body_ref IS NOT NULL AND old.body_ref IS NOT new.body_ref
  BEGIN DELETE FROM bodies WHERE ref = old.body_ref; END;
CREATE TRIGGER IF NOT EXISTS objects_body_deleted AFTER DELETE ON objects
  WHEN old.body_ref IS NOT NULL
  BEGIN DELETE FROM bodies WHERE ref = old.body_ref; END;
`

/** A row's small body: in `bodies`, or (rows of format 2) in the row itself (`fsbucket migrate` reads it too). */
export const KEPT_BODY = 'coalesce(body, (SELECT bytes FROM bodies WHERE ref = objects.body_ref))'

/** A body file and its size, relative to the store's directory. */
export type Segment = [file: string, size: number]

export interface ObjectRow extends ObjectColumns {
  id: Buffer
  http_metadata: string
  custom_metadata: string
  segments: string
  /** 1 when the body is kept in the catalog (its bytes are read only by `inlineBody`). */
  inline: number
}

export type UploadRow = UploadColumns

/** `uploaded`: NULL in rows stored before parts kept their time (listed with the upload's `created`). */
export interface PartRow { part_number: number, etag: string, size: number, file: string, checksums: string | null, uploaded: number | null }

/** A list query's row: the list columns, then (with metadata) the two metadata columns. */
export type ListRow = [id: Buffer, key: string | Buffer, version: string, size: number, etag: string, uploaded: number,
  storageClass: string, checksums: string, httpMetadata?: string, customMetadata?: string]

export { uploadChecksumText } from '../rows.js'

/**
 * The `key` column as read back. The SQLite drivers on Node 20 (libsql)
 * and 22 (node:sqlite) end a TEXT value at its first U+0000, and keys
 * written before the engine refused that character may hold one: such a
 * key is read as its UTF-8 bytes instead (a BLOB), and turned back into
 * text here. Every other key is read as TEXT, at no extra cost.
 */
const KEY_COLUMN = "CASE WHEN instr(CAST(key AS BLOB), x'00') > 0 THEN CAST(key AS BLOB) ELSE key END AS key"

/** A key read through KEY_COLUMN. */
function keyText (key: string | Buffer): string {
  return typeof key === 'string' ? key : key.toString('utf8')
}

/** An object row (with its key read through KEY_COLUMN) as the port's record. */
export function toRecord (row: ObjectColumns): StoredObject {
  const key = row.key as string | Buffer
  // A key read as its bytes becomes text again (the row is this read's own: changing it touches nothing else).
  if (typeof key !== 'string') row.key = keyText(key)
  return recordOfRow(row)
}

/** An upload row (with its key read through KEY_COLUMN) as the port's upload. */
export function toUpload (row: UploadColumns): StoredUpload {
  const key = row.key as string | Buffer
  if (typeof key !== 'string') row.key = keyText(key)
  return uploadOfRow(row)
}

export function fromListRow (row: ListRow): StoredObject {
  return {
    key: keyText(row[1]),
    version: row[2],
    size: row[3],
    etag: row[4],
    uploaded: row[5],
    storageClass: row[6] as StoredObject['storageClass'],
    checksums: JSON.parse(row[7]),
    httpMetadata: row[8] === undefined ? {} : JSON.parse(row[8]),
    customMetadata: row[9] === undefined ? {} : JSON.parse(row[9])
  }
}

/** The catalog's prepared statements. */
interface Statements {
  head: Statement<[Buffer], ObjectRow>
  dataVersion: Statement<[], number>
  busyNoWait: Statement
  busyWait: Statement
  upsert: Statement
  insertBody: Statement<[Buffer]>
  viewOf: Statement<[Buffer], { version: string, segments: string, body: Buffer | null, checksums: string }>
  inlineBody: Statement<[Buffer, string], { body: Buffer | null }>
  versionOf: Statement<[Buffer], string>
  deleteObject: Statement<[Buffer]>
  listFrom: Statement<[Buffer, Buffer, number], ListRow>
  listAfter: Statement<[Buffer, Buffer, number], ListRow>
  listFromFull: Statement<[Buffer, Buffer, number], ListRow>
  listAfterFull: Statement<[Buffer, Buffer, number], ListRow>
  firstIdFrom: Statement<[Buffer, Buffer], { id: Buffer }>
  firstIdAfter: Statement<[Buffer, Buffer], { id: Buffer }>
  retired: Statement<[], { value: string }>
  retire: Statement
  lockRules: Statement<[], string>
  setLockRules: Statement<[string]>
  clearLockRules: Statement
  anyObject: Statement<[], { one: number }>
  versionExists: Statement<[string], { one: number }>
  insertUpload: Statement
  upload: Statement<[string], UploadRow>
  expiredUploads: Statement<[number], { upload_id: string }>
  deleteUpload: Statement<[string]>
  part: Statement<[string, number], PartRow>
  parts: Statement<[string], PartRow>
  uploadsAfter: Statement<{ prefix: Buffer, prefix_length: number, after_id: Buffer, after_upload: string, limit: number }, UploadRow>
  partsAfter: Statement<[string, number, number], PartRow>
  upsertPart: Statement
  deleteParts: Statement<[string]>
  insertMessage: Statement<[string, string, string, number, number]>
  visibleMessages: Statement<[string, number, number, number, number], OutboxRow>
  spentMessage: Statement<[string, number, number], number>
  dropSpent: Statement<[string, number, number]>
  moveSpent: Statement<[string, number, number, string, number, number]>
  leaseMessage: Statement<[number, string, number]>
  ackMessage: Statement<[number, string, string]>
  retryMessage: Statement<[number, number, string, string]>
  releaseMessage: Statement<[number, number, string, string]>
  backlog: Statement<[string], number>
  dropMessages: Statement<[string, number]>
  oldestMessage: Statement<[string], number | null>
  messageQueues: Statement<[], string>
  recordViewIntent: Statement<[Buffer]>
  viewIntents: Statement<[], { seq: number, id: Buffer }>
  settleViewIntents: Statement<[number, number]>
}

/** A row of the outbox (see outbox.ts). */
export interface OutboxRow { seq: number, id: string, body: string, created: number, attempts: number }

function statements (db: SqliteDatabase): Statements {
  const prepare = <P extends unknown[] | {} = unknown[], R = unknown>(sql: string): Statement<P, R> => db.prepare<P, R>(sql)
  const raw = <P extends unknown[] | {} = unknown[], R = unknown>(sql: string): Statement<P, R> => db.prepare<P, R>(sql).raw() as Statement<P, R>
  const pluck = <R>(sql: string): Statement<[], R> => db.prepare<[], R>(sql).pluck() as Statement<[], R>
  // List pages read rows as arrays (raw mode): a third cheaper than objects with better-sqlite3 (see ListRow).
  const listColumns = `id, ${KEY_COLUMN}, version, size, etag, uploaded, storage_class, checksums`
  const fullColumns = `${listColumns}, http_metadata, custom_metadata`
  const uploadColumns = `upload_id, id, ${KEY_COLUMN}, created, storage_class, http_metadata, custom_metadata, checksum`
  return {
    // Rows are read without the body kept in them: only a reader wants it (inlineBody).
    head: prepare<[Buffer], ObjectRow>(`SELECT id, ${KEY_COLUMN}, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments,
      (body_ref IS NOT NULL OR body IS NOT NULL) AS inline FROM objects WHERE id = ?`),
    dataVersion: pluck<number>('PRAGMA data_version'),
    busyNoWait: prepare('PRAGMA busy_timeout = 0'),
    busyWait: prepare(`PRAGMA busy_timeout = ${WRITE_LOCK_WAIT_MS}`),
    upsert: prepare(`INSERT INTO objects (id, key, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments, body_ref)
      VALUES (@id, @key, @version, @size, @etag, @uploaded, @storage_class, @checksums, @http_metadata, @custom_metadata, @segments, @body_ref)
      ON CONFLICT (id) DO UPDATE SET key = excluded.key, version = excluded.version, size = excluded.size, etag = excluded.etag,
        uploaded = excluded.uploaded, storage_class = excluded.storage_class, checksums = excluded.checksums,
        http_metadata = excluded.http_metadata, custom_metadata = excluded.custom_metadata, segments = excluded.segments,
        body = NULL, body_ref = excluded.body_ref`),
    insertBody: prepare<[Buffer]>('INSERT INTO bodies (bytes) VALUES (?)'),
    viewOf: prepare<[Buffer], { version: string, segments: string, body: Buffer | null, checksums: string }>(`SELECT version, segments, ${KEPT_BODY} AS body, checksums FROM objects WHERE id = ?`),
    inlineBody: prepare<[Buffer, string], { body: Buffer | null }>(`SELECT ${KEPT_BODY} AS body FROM objects WHERE id = ? AND version = ?`),
    versionOf: db.prepare<[Buffer], string>('SELECT version FROM objects WHERE id = ?').pluck() as Statement<[Buffer], string>,
    deleteObject: prepare<[Buffer]>('DELETE FROM objects WHERE id = ?'),
    listFrom: raw<[Buffer, Buffer, number], ListRow>(`SELECT ${listColumns} FROM objects WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`),
    listAfter: raw<[Buffer, Buffer, number], ListRow>(`SELECT ${listColumns} FROM objects WHERE id > ? AND id < ? ORDER BY id LIMIT ?`),
    listFromFull: raw<[Buffer, Buffer, number], ListRow>(`SELECT ${fullColumns} FROM objects WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`),
    listAfterFull: raw<[Buffer, Buffer, number], ListRow>(`SELECT ${fullColumns} FROM objects WHERE id > ? AND id < ? ORDER BY id LIMIT ?`),
    firstIdFrom: prepare<[Buffer, Buffer], { id: Buffer }>('SELECT id FROM objects WHERE id >= ? AND id < ? ORDER BY id LIMIT 1'),
    firstIdAfter: prepare<[Buffer, Buffer], { id: Buffer }>('SELECT id FROM objects WHERE id > ? AND id < ? ORDER BY id LIMIT 1'),
    retired: prepare<[], { value: string }>("SELECT value FROM bucket_state WHERE name = 'retired'"),
    retire: prepare("INSERT OR REPLACE INTO bucket_state (name, value) VALUES ('retired', 'yes')"),
    // The bucket's lock rules (locks.ts) as JSON; no row when it has none.
    lockRules: pluck<string>("SELECT value FROM bucket_state WHERE name = 'lock'"),
    setLockRules: prepare<[string]>("INSERT OR REPLACE INTO bucket_state (name, value) VALUES ('lock', ?)"),
    clearLockRules: prepare("DELETE FROM bucket_state WHERE name = 'lock'"),
    anyObject: prepare<[], { one: number }>('SELECT 1 AS one FROM objects LIMIT 1'),
    versionExists: prepare<[string], { one: number }>('SELECT 1 AS one FROM objects WHERE version = ?'),
    insertUpload: prepare(`INSERT INTO uploads (upload_id, id, key, created, storage_class, http_metadata, custom_metadata, checksum)
      VALUES (@upload_id, @id, @key, @created, @storage_class, @http_metadata, @custom_metadata, @checksum)`),
    upload: prepare<[string], UploadRow>(`SELECT ${uploadColumns} FROM uploads WHERE upload_id = ?`),
    expiredUploads: prepare<[number], { upload_id: string }>('SELECT upload_id FROM uploads WHERE created < ?'),
    deleteUpload: prepare<[string]>('DELETE FROM uploads WHERE upload_id = ?'),
    part: prepare<[string, number], PartRow>('SELECT * FROM parts WHERE upload_id = ? AND part_number = ?'),
    parts: prepare<[string], PartRow>('SELECT * FROM parts WHERE upload_id = ?'),
    // BLOB and BINARY TEXT comparisons are bytewise: the order is the ids' UTF-8 byte order, then the upload ids'.
    uploadsAfter: prepare(`SELECT ${uploadColumns} FROM uploads WHERE substr(id, 1, @prefix_length) = @prefix
      AND (id > @after_id OR (id = @after_id AND upload_id > @after_upload)) ORDER BY id, upload_id LIMIT @limit`),
    partsAfter: prepare<[string, number, number], PartRow>('SELECT * FROM parts WHERE upload_id = ? AND part_number > ? ORDER BY part_number LIMIT ?'),
    upsertPart: prepare(`INSERT INTO parts (upload_id, part_number, etag, size, file, checksums, uploaded) VALUES (@upload_id, @part_number, @etag, @size, @file, @checksums, @uploaded)
      ON CONFLICT (upload_id, part_number) DO UPDATE SET etag = excluded.etag, size = excluded.size, file = excluded.file, checksums = excluded.checksums,
        uploaded = excluded.uploaded`),
    deleteParts: prepare<[string]>('DELETE FROM parts WHERE upload_id = ?'),
    insertMessage: prepare<[string, string, string, number, number]>('INSERT INTO outbox (queue, id, body, created, visible_at) VALUES (?, ?, ?, ?, ?)'),
    visibleMessages: prepare<[string, number, number, number, number], OutboxRow>(`SELECT seq, id, body, created, attempts FROM outbox
      WHERE queue = ? AND visible_at <= ? AND created <= ? AND attempts < ? ORDER BY visible_at, seq LIMIT ?`),
    spentMessage: db.prepare<[string, number, number], number>('SELECT seq FROM outbox WHERE queue = ? AND visible_at <= ? AND attempts >= ? LIMIT 1').pluck() as Statement<[string, number, number], number>,
    dropSpent: prepare<[string, number, number]>('DELETE FROM outbox WHERE queue = ? AND visible_at <= ? AND attempts >= ?'),
    // A new message of the dead-letter queue: a new id, its age from now (retention and delivery delay count again).
    moveSpent: prepare<[string, number, number, string, number, number]>(`UPDATE outbox SET queue = ?, id = lower(hex(randomblob(16))), created = ?, attempts = 0, lease = NULL, visible_at = ?
      WHERE queue = ? AND visible_at <= ? AND attempts >= ?`),
    leaseMessage: prepare<[number, string, number]>('UPDATE outbox SET visible_at = ?, lease = ?, attempts = attempts + 1 WHERE seq = ?'),
    ackMessage: prepare<[number, string, string]>('DELETE FROM outbox WHERE seq = ? AND queue = ? AND lease = ?'),
    retryMessage: prepare<[number, number, string, string]>('UPDATE outbox SET visible_at = ?, lease = NULL WHERE seq = ? AND queue = ? AND lease = ?'),
    // A retry whose delivery counts for nothing (LeaseRetry.uncounted): the lease's attempt is taken back.
    releaseMessage: prepare<[number, number, string, string]>('UPDATE outbox SET visible_at = ?, lease = NULL, attempts = max(attempts - 1, 0) WHERE seq = ? AND queue = ? AND lease = ?'),
    backlog: db.prepare<[string], number>('SELECT count(*) FROM outbox WHERE queue = ?').pluck() as Statement<[string], number>,
    dropMessages: prepare<[string, number]>('DELETE FROM outbox WHERE queue = ? AND created < ?'),
    oldestMessage: db.prepare<[string], number | null>('SELECT min(created) FROM outbox WHERE queue = ?').pluck() as Statement<[string], number | null>,
    messageQueues: db.prepare<[], string>('SELECT DISTINCT queue FROM outbox').pluck() as Statement<[], string>,
    // Keys a commit of several keys owes the readable view (view-intents.ts); AUTOINCREMENT: a settled range is never reused by a later batch.
    recordViewIntent: prepare<[Buffer]>('INSERT INTO view_intents (id) VALUES (?)'),
    viewIntents: prepare<[], { seq: number, id: Buffer }>('SELECT seq, id FROM view_intents ORDER BY seq'),
    settleViewIntents: prepare<[number, number]>('DELETE FROM view_intents WHERE seq BETWEEN ? AND ?')
  }
}

export class Catalog {
  readonly sql: Statements
  /** Rows recently read, and small bodies (see read-cache.ts). */
  readonly cache = new ReadCache()
  readonly #db: SqliteDatabase
  readonly #transaction: Transaction<(fn: () => unknown) => unknown>
  /** The turn of the event loop in which the data version was last looked at (see ../turn.ts). */
  #checkedTurn = -1
  /** Where committed changes send their events (the engine's rules), null for none. */
  sink: EventSink | null = null

  private constructor (db: SqliteDatabase) {
    this.#db = db
    this.#transaction = db.transaction((fn: () => unknown) => fn())
    this.sql = statements(db)
  }

  /** Opens (creating when missing) the catalog in `file`; the caller holds the store's creation lock. */
  static open (file: string, fsync: boolean): Catalog {
    const db = new Database(file, { timeout: WRITE_LOCK_WAIT_MS })
    db.pragma('journal_mode = WAL')
    // NORMAL: SQLite does not fsync the WAL at commit; the store does, on
    // the thread pool, before a write resolves (see commit.ts).
    db.pragma(`synchronous = ${fsync ? 'NORMAL' : 'OFF'}`)
    db.exec(schema)
    // A catalog of format 1 has no body column, one of format 2 no body_ref: add them (NULL in every old row).
    const columns = db.pragma('table_info(objects)') as Array<{ name: string }>
    if (!columns.some(column => column.name === 'body')) db.exec('ALTER TABLE objects ADD COLUMN body BLOB')
    if (!columns.some(column => column.name === 'body_ref')) db.exec('ALTER TABLE objects ADD COLUMN body_ref INTEGER')
    db.exec(bodyTriggers)
    // Catalogs made before parts kept their checksums gain the column (NULL: none).
    const partColumns = db.pragma('table_info(parts)') as Array<{ name: string }>
    if (!partColumns.some(c => c.name === 'checksums')) db.exec('ALTER TABLE parts ADD COLUMN checksums TEXT')
    // And those made before parts kept their upload time (NULL: listed with the upload's creation time).
    if (!partColumns.some(c => c.name === 'uploaded')) db.exec('ALTER TABLE parts ADD COLUMN uploaded INTEGER')
    // And those made before uploads kept their checksum algorithm and type (NULL: none).
    const uploadColumns = db.pragma('table_info(uploads)') as Array<{ name: string }>
    if (!uploadColumns.some(c => c.name === 'checksum')) db.exec('ALTER TABLE uploads ADD COLUMN checksum TEXT')
    return new Catalog(db)
  }

  /**
   * Runs `fn` as one write transaction: the critical section shared by every
   * process. The write lock is asked for without waiting, because SQLite's
   * busy handler would sleep on the event loop; while another process holds
   * the lock, the attempt is repeated from the event loop, which goes on
   * serving meanwhile. `fn` must not touch the file system.
   */
  async write<T> (fn: () => T): Promise<T> {
    // A store closed under a write (its bucket was deleted) takes no more writes.
    if (!this.#db.open) throw bucketRetired()
    const deadline = Date.now() + WRITE_LOCK_WAIT_MS
    for (let attempt = 0; ; attempt++) {
      try {
        return this.#writeNow(fn)
      } catch (err) {
        if (!String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY') || Date.now() > deadline) throw err
      }
      await new Promise(resolve => attempt < 8 ? setImmediate(resolve) : setTimeout(resolve, Math.min(attempt - 7, 10)))
    }
  }

  #writeNow<T> (fn: () => T): T {
    this.sql.busyNoWait.get()
    try {
      return this.#transaction.immediate(() => {
        // A bucket being deleted takes no more writes, from any process.
        if (this.sql.retired.get() !== undefined) throw bucketRetired()
        return fn()
      }) as T
    } finally {
      this.sql.busyWait.get()
      // This connection's own commits do not move its data version.
      this.cache.clearRows()
    }
  }

  /**
   * Writes the row of `id`, inside `write`: its body files, or `body` kept
   * in the catalog. The row it replaces lets go of its own kept body (see
   * the triggers).
   */
  putRow (id: Buffer, object: StoredObject, segments: Segment[], body: Buffer | null = null): void {
    const bodyRef = body === null ? null : this.sql.insertBody.run(body).lastInsertRowid
    this.sql.upsert.run({ id, ...rowOfRecord(object), segments: JSON.stringify(segments), body_ref: bodyRef })
  }

  /** The lock rules as last parsed, with the text they came from (the text is read in every judgement). */
  #parsedRules: { text: string | undefined, rules: LockRule[] } = { text: undefined, rules: [] }

  /** The bucket's lock rules, as the current transaction (or snapshot) sees them. */
  lockRules (): LockRule[] {
    const text = this.sql.lockRules.get()
    if (this.#parsedRules.text !== text) this.#parsedRules = { text, rules: lockRulesOf(text) }
    return this.#parsedRules.rules
  }

  /** Inside `write`: replaces the lock rules (their judgement and every write share the catalog's write lock). */
  setLockRules (rules: LockRule[]): void {
    const text = lockRulesText(rules)
    if (text === null) this.sql.clearLockRules.run()
    else this.sql.setLockRules.run(text)
  }

  /**
   * Inside `write`: whether a lock rule retains the row `current` of `id`
   * at `now`, the write's instant (port.ts, guarantee 4: the engine's, from
   * the write's options; the real time when it gives none). A key without
   * a row has nothing to retain, and costs no look at the rules.
   */
  retained (id: string, current: { uploaded: number } | undefined, now = Date.now()): boolean {
    if (current === undefined) return false
    const rules = this.lockRules()
    return rules.length > 0 && retainingRule(rules, id, current.uploaded, now) !== null
  }

  /**
   * Inside `write`: deletes the rows of `ids` but those a lock rule retains
   * at `now` (`refused`); the ids deleted and the body files their rows named.
   */
  deleteRows (ids: string[], versions: ReadonlyMap<string, string> | undefined, action: 'DeleteObject' | 'LifecycleDeletion', now = Date.now()): { deleted: string[], removed: Segment[], refused: string[] } {
    const done = { deleted: [] as string[], removed: [] as Segment[], refused: [] as string[] }
    for (const id of ids) {
      const idBytes = Buffer.from(id, 'utf8')
      const row = this.sql.head.get(idBytes)
      if (row === undefined) continue
      // A row rewritten since it was judged (a lifecycle expiry's `versions`) is not the one judged: kept.
      const version = versions?.get(id)
      if (version !== undefined && row.version !== version) continue
      if (this.retained(id, row, now)) {
        done.refused.push(id)
        continue
      }
      this.sql.deleteObject.run(idBytes)
      this.emit({ action, key: keyText(row.key as string | Buffer) })
      done.deleted.push(id)
      done.removed.push(...JSON.parse(row.segments) as Segment[])
    }
    return done
  }

  /**
   * Writes the messages of a committed change into the outbox, inside
   * `write`, in the change's own transaction: they are durable with it,
   * and roll back with it.
   */
  emit (change: ObjectChange): void {
    if (this.sink === null) return
    for (const message of this.sink(change)) this.sql.insertMessage.run(message.queue, message.id, message.body, message.created, message.created)
  }

  /** Runs `fn` in one read transaction: one snapshot for several statements. */
  read<T> (fn: () => T): T {
    if (!this.#db.open) throw bucketRetired('read')
    return this.#transaction.deferred(fn) as T
  }

  /** The current row of `id` (record and body files), from the cache while the catalog is unchanged. */
  lookup (id: string): CachedRow | null {
    if (!this.#db.open) throw bucketRetired('read')
    const turn = currentTurn()
    if (this.#checkedTurn !== turn) {
      this.cache.validate(this.sql.dataVersion.get())
      this.#checkedTurn = turn
    }
    let row = this.cache.row(id)
    if (row === undefined) {
      const found = this.sql.head.get(Buffer.from(id, 'utf8'))
      row = found === undefined ? null : { object: toRecord(found), segments: JSON.parse(found.segments), inline: found.inline === 1 }
      this.cache.setRow(id, row)
    }
    return row
  }

  close (): void {
    if (this.#db.open) this.#db.close()
  }
}
