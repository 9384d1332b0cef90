/**
 * `fsbucket migrate`: imports the buckets of a data directory kept with
 * SQLite catalogs (one per bucket) into a PostgreSQL catalog. The bodies
 * stay where they are: the PostgreSQL store reads them in the same layout
 * (`<dataDir>/<name>/.fsbucket/blobs/...`), so the import copies rows only.
 * It composes the two stores, hence its place among the composition roots.
 * A small body kept in the SQLite catalog (formats 2 and 3) is written out, durably,
 * as the body file of its version first: the PostgreSQL store keeps every
 * body in a file.
 *
 * What is imported: each bucket's settings document, lock rules, objects,
 * uploads in progress and their parts, the event messages its queues have
 * not yet had acknowledged (a lease in progress ends: the message is
 * delivered again once its visibility timeout passes), and the documents of
 * the state areas
 * (`<dataDir>/.<area>/**.json`, the management API's). A bucket already in
 * the catalog is left alone (so a second run adds only what is new), as is
 * a bucket being deleted. Stop the gateways using the SQLite catalogs first:
 * writes made during the import may be missed. So may, between a run cut
 * short (it leaves no mark, so SQLite gateways may serve again) and the
 * next, whatever changed in a bucket imported already, which is not read
 * again: a bucket deleted meanwhile stays in the catalog. Each bucket of the
 * catalog that is no live bucket of the directory is named
 * (`notInDirectory`) and left there: a `--from` naming another directory
 * than the catalog's would otherwise take every bucket with it.
 *
 * Keys holding U+0000 (which the SQLite store took before the engine refused
 * them; src/bucket/keys.ts) cannot be kept in PostgreSQL's text: every
 * catalog is read for them before anything is written, and the import is
 * refused with their list, so it never stops half done. They can still be
 * read and deleted through the SQLite store, then the import run again. A
 * bucket's damaged settings document refuses the import the same way.
 */
import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { StartupError, why } from './preflight.js'
import { fsyncDirectory } from '../stores/fs/atomic.js'
import { blobFile } from '../stores/fs/blobs.js'
import { isRetiredCatalog, markPostgresql } from '../stores/fs/catalog-mark.js'
import { KEPT_BODY, type ObjectRow, type PartRow, type UploadRow } from '../stores/fs/catalog.js'
import { Database, type SqliteDatabase } from '../stores/fs/sqlite.js'
import { PgCatalog, type CatalogOptions } from '../stores/pg/catalog.js'
import { bodyRoot } from '../stores/pg/registry-storage.js'
import { damageOf, isValidBucketName, type BucketError } from '../bucket/index.js'
import { parseSettingsDocument, type SettingsDocument } from '../bucket/port.js'

/** Rows written per statement. */
const BATCH = 1000

export interface MigrationReport {
  buckets: Array<{ name: string, objects: number, uploads: number, skipped?: string }>
  documents: number
  /** Buckets of the catalog that are no live bucket of the data directory: made by a gateway on the catalog, or deleted from the directory after an earlier run imported them. */
  notInDirectory: string[]
}

/** Imports the buckets of `dataDir` into the catalog at `url` (`catalog`: how to connect to it, as a gateway's options say). */
export async function migrateToCatalog (dataDir: string, url: string, log: (line: string) => void = () => {}, catalogOptions?: CatalogOptions): Promise<MigrationReport> {
  const root = path.resolve(dataDir)
  const entries = await fsp.readdir(root, { withFileTypes: true }).catch((err: unknown) => {
    throw new StartupError(`migrate: cannot read the data directory ${root} (--from): ${why(err)}`, { cause: err })
  })
  const unfit = await keysThatCannotMove(root, entries.filter(e => e.isDirectory() && isValidBucketName(e.name)).map(e => e.name))
  if (unfit.length > 0) {
    const shown = unfit.slice(0, 20).map(k => `  ${k.bucket}: ${k.what} ${JSON.stringify(k.key)}`).join('\n')
    throw new Error(`migrate: nothing was imported: ${unfit.length} key(s) hold U+0000, which the PostgreSQL catalog cannot keep:\n${shown}` +
      (unfit.length > 20 ? `\n  ... and ${unfit.length - 20} more` : '') +
      '\nDelete these objects (or abort these uploads) through a gateway on the SQLite catalogs, then run migrate again.')
  }
  const damaged: string[] = []
  for (const entry of entries) {
    if (entry.isDirectory() && isValidBucketName(entry.name)) await settingsOf(root, entry.name).catch((err: unknown) => { damaged.push(damageOf(err as BucketError)) })
  }
  if (damaged.length > 0) {
    throw new Error(`migrate: nothing was imported: the settings of ${damaged.length} bucket(s) are damaged:\n${damaged.map(d => `  ${d}`).join('\n')}\nMend them (docs/deployment.md says how), then run migrate again.`)
  }
  const catalog = await PgCatalog.connect(url, catalogOptions)
  const report: MigrationReport = { buckets: [], documents: 0, notInDirectory: [] }
  try {
    for (const entry of entries) {
      if (!entry.isDirectory()) continue
      if (isValidBucketName(entry.name)) {
        const outcome = await importBucket(catalog, root, entry.name)
        report.buckets.push(outcome)
        log(outcome.skipped === undefined
          ? `${entry.name}: ${outcome.objects} objects, ${outcome.uploads} uploads in progress`
          : `${entry.name}: skipped (${outcome.skipped})`)
      } else if (/^\.[a-z]+$/.test(entry.name) && entry.name !== '.fsbucket') {
        const count = await importDocuments(catalog, path.join(root, entry.name), entry.name.slice(1))
        report.documents += count
        if (count > 0) log(`${entry.name}: ${count} documents`)
      }
    }
    const live = new Set(report.buckets.filter(b => b.skipped !== 'being deleted').map(b => b.name))
    const { rows } = await catalog.query<{ name: string }>('migrating', 'SELECT name FROM fsbucket.buckets ORDER BY name')
    report.notInDirectory = rows.map(r => r.name).filter(name => !live.has(name))
    for (const name of report.notInDirectory) {
      log(`${name}: in the catalog, but no bucket of ${root}: left as it is (made by a gateway on the catalog, or deleted from the directory after an earlier run imported it: only then delete it through a gateway on the catalog)`)
    }
    await catalog.query('migrating', 'UPDATE fsbucket.registry SET rev = rev + 1')
    // Every bucket is the catalog's now: the SQLite side is fenced off (a gateway or command without --catalog is refused).
    await markPostgresql(root)
  } finally {
    await catalog.close()
  }
  return report
}

/**
 * A bucket's settings document, judged as the registry judges it (null:
 * none yet, a directory made by hand); a damaged one throws SettingsDamaged,
 * so it is neither reset to a new bucket's nor copied damaged.
 */
async function settingsOf (root: string, name: string): Promise<SettingsDocument | null> {
  const file = path.join(bodyRoot(root, name), 'settings.json')
  const text = await fsp.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null
    throw err
  })
  return text === null ? null : parseSettingsDocument(text, file)
}

interface UnfitKey { bucket: string, what: 'object' | 'upload', key: string }

/** The keys of objects and uploads, in the buckets `names` not being deleted, that hold U+0000. */
async function keysThatCannotMove (root: string, names: string[]): Promise<UnfitKey[]> {
  const unfit: UnfitKey[] = []
  for (const bucket of names) {
    const dbFile = path.join(bodyRoot(root, bucket), 'catalog.db')
    if (!await fsp.access(dbFile).then(() => true, () => false)) continue
    const db = new Database(dbFile, { readonly: true, fileMustExist: true })
    try {
      if (isRetiredCatalog(db)) continue
      for (const what of ['object', 'upload'] as const) {
        // Found and read as bytes: SQLite's string functions, and the SQLite drivers of Node 20 and 22, stop at a NUL.
        for (const bytes of db.prepare(`SELECT CAST(key AS BLOB) FROM ${what}s WHERE instr(CAST(key AS BLOB), x'00') > 0`).pluck().iterate() as IterableIterator<Buffer>) {
          unfit.push({ bucket, what, key: bytes.toString('utf8') })
        }
      }
    } finally {
      db.close()
    }
  }
  return unfit
}

async function readJson (file: string): Promise<unknown> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

async function importBucket (catalog: PgCatalog, root: string, name: string): Promise<MigrationReport['buckets'][number]> {
  const internal = bodyRoot(root, name)
  const settings = await settingsOf(root, name) ?? { format: 1, creationDate: new Date().toISOString(), settings: {} }
  const dbFile = path.join(internal, 'catalog.db')
  const db = await fsp.access(dbFile).then(() => new Database(dbFile, { readonly: true, fileMustExist: true }), () => null)
  try {
    const retired = db !== null && isRetiredCatalog(db)
    if (retired) return { name, objects: 0, uploads: 0, skipped: 'being deleted' }
    // A bucket directory no store ever opened has no body directory yet; a store the registry opens never makes one.
    await fsp.mkdir(internal, { recursive: true })
    const storeId = randomBytes(12).toString('hex')
    return await catalog.transaction('migrating', async client => {
      const inserted = await client.query('INSERT INTO fsbucket.buckets (name, store_id, document) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
        [name, storeId, JSON.stringify(settings)])
      if (inserted.rowCount === 0) return { name, objects: 0, uploads: 0, skipped: 'already in the catalog' }
      if (db === null) {
        await client.query('INSERT INTO fsbucket.stores (id) VALUES ($1)', [storeId])
        return { name, objects: 0, uploads: 0 }
      }
      // Both stores keep the rules as the same JSON text (locks.ts): a retained object stays retained.
      const lockRules = db.prepare("SELECT value FROM bucket_state WHERE name = 'lock'").pluck().get() as string | undefined
      await client.query('INSERT INTO fsbucket.stores (id, lock_rules) VALUES ($1, $2)', [storeId, lockRules ?? null])
      await importOutbox(client, db, storeId)
      let objects = 0
      let batch: ObjectRow[] = []
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return
        const column = <K extends keyof ObjectRow>(k: K): Array<ObjectRow[K]> => batch.map(r => r[k])
        await client.query(`INSERT INTO fsbucket.objects (store_id, id, key, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments)
          SELECT $1, * FROM unnest($2::bytea[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[])`,
        [storeId, column('id'), column('key'), column('version'), column('size'), column('etag'), column('uploaded'), column('storage_class'),
          column('checksums'), column('http_metadata'), column('custom_metadata'), column('segments')])
        objects += batch.length
        batch = []
      }
      // Small bodies are in `bodies` (format 3), in the row's own column (format 2, and rows not written since), or nowhere (format 1).
      const columns = new Set((db.pragma('table_info(objects)') as Array<{ name: string }>).map(c => c.name))
      const body = columns.has('body_ref') ? KEPT_BODY : columns.has('body') ? 'body' : 'NULL'
      const written = new Set<string>()
      // Up to BATCH bodies written and flushed between two statements: the server is told the transaction is alive meanwhile
      // (a slow mount would otherwise outlast its limit on silent transactions, and the bucket's import would fail).
      await catalog.busy(client, async progress => {
        for (const row of db.prepare(`SELECT id, key, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments,
          ${body} AS body FROM objects`).iterate() as IterableIterator<ObjectRow & { body: Buffer | null }>) {
          const { body, ...fields } = row
          if (body !== null) {
            const file = blobFile(row.version)
            await writeBody(path.join(internal, file), body)
            written.add(path.dirname(path.join(internal, file)))
            fields.segments = JSON.stringify([[file, body.byteLength]])
            progress()
          }
          batch.push(fields)
          if (batch.length === BATCH) await flush()
        }
        for (const dir of written) {
          await fsyncDirectory(dir)
          progress()
        }
      })
      await flush()
      const uploads = db.prepare('SELECT * FROM uploads').all() as Array<UploadRow & { id: Buffer }>
      for (const u of uploads) {
        await client.query(`INSERT INTO fsbucket.uploads (store_id, upload_id, id, key, created, storage_class, http_metadata, custom_metadata, checksum)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [storeId, u.upload_id, u.id, u.key, u.created, u.storage_class, u.http_metadata, u.custom_metadata, u.checksum ?? null])
        for (const p of db.prepare('SELECT * FROM parts WHERE upload_id = ?').all(u.upload_id) as PartRow[]) {
          await client.query('INSERT INTO fsbucket.parts (store_id, upload_id, part_number, etag, size, file, checksums, uploaded) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
            [storeId, u.upload_id, p.part_number, p.etag, p.size, p.file, p.checksums ?? null, p.uploaded ?? null])
        }
      }
      return { name, objects, uploads: uploads.length }
    })
  } finally {
    db?.close()
  }
}

/** The messages of the SQLite outbox (catalogs made before it have none), oldest first, so the queues deliver them in the same order. */
async function importOutbox (client: pg.ClientBase, db: SqliteDatabase, storeId: string): Promise<void> {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'").get() === undefined) return
  const read = db.prepare('SELECT seq, queue, id, body, created, visible_at, attempts FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?')
  for (let after = 0; ;) {
    const rows = read.all(after, BATCH) as Array<{ seq: number, queue: string, id: string, body: string, created: number, visible_at: number, attempts: number }>
    if (rows.length === 0) return
    const column = (k: 'queue' | 'id' | 'body' | 'created' | 'visible_at' | 'attempts'): unknown[] => rows.map(r => r[k])
    await client.query(`INSERT INTO fsbucket.outbox (store_id, queue, id, body, created, visible_at, attempts)
      SELECT $1, m.queue, m.id, m.body, m.created, m.visible_at, m.attempts
      FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::int[]) WITH ORDINALITY AS m(queue, id, body, created, visible_at, attempts, n) ORDER BY m.n`,
    [storeId, column('queue'), column('id'), column('body'), column('created'), column('visible_at'), column('attempts')])
    after = rows[rows.length - 1].seq
  }
}

/** Writes a body file and flushes it (its directory is flushed once all are written). */
async function writeBody (file: string, bytes: Buffer): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true })
  const handle = await fsp.open(file, 'w', 0o644)
  try {
    await handle.writeFile(bytes)
    await handle.datasync()
  } finally {
    await handle.close()
  }
}

/** The JSON documents under `dir`, by their path relative to it; existing documents of the catalog are kept. */
async function importDocuments (catalog: PgCatalog, dir: string, area: string): Promise<number> {
  const files = (await fsp.readdir(dir, { recursive: true })).filter(f => f.endsWith('.json'))
  let count = 0
  for (const file of files) {
    const value = await readJson(path.join(dir, file))
    if (value === undefined) continue
    const result = await catalog.query('migrating', 'INSERT INTO fsbucket.documents (area, name, value) VALUES ($1, $2, $3) ON CONFLICT (area, name) DO NOTHING',
      [area, file.split(path.sep).join('/'), JSON.stringify(value)])
    count += result.rowCount ?? 0
  }
  return count
}
