/**
 * The registry's storage on a PostgreSQL catalog and a shared data
 * directory: which buckets exist, their settings documents and the state
 * areas (documents.ts) are rows of the catalog, shared by every gateway;
 * the bodies of bucket `name` are files under `<dataDir>/<name>/.fsbucket/`
 * (the filesystem store's layout, so `migrate` leaves them where they are).
 *
 * A bucket is a row of `buckets` naming its store (a row of `stores`); a
 * bucket deleted and created again gets a new store, so a gateway still
 * holding the old one writes nowhere (10006). Every question the registry
 * asks goes to the catalog (no cache), so a bucket created or a domain
 * attached through one gateway is seen by the next request on every other.
 * A server shares the two looks every request takes (a bucket's settings
 * version, the custom domains' change token) among the requests of one
 * turn of its event loop, as the data directory's storage shares its
 * looks (../turn.ts says why that keeps the promise): under load one
 * statement answers many requests.
 */
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { BucketError, bucketRetired, parseSettingsDocument, type BucketStore, type RegistryStorage, type SettingsDocument, type StateDocuments } from '../../bucket/port.js'
import { isStoreFile, removeTree } from '../fs/blobs.js'
import { DeletedBuckets } from '../fs/deleted-buckets.js'
import { isMarked, markPostgresql, sqliteBuckets } from '../fs/catalog-mark.js'
import { TurnMemo } from '../turn.js'
import { PgCatalog, type CatalogOptions } from './catalog.js'
import { PgDocuments } from './documents.js'
import { PgStore } from './store.js'

export interface PgRegistryOptions extends CatalogOptions {
  /** fsync bodies before a write resolves (default true); the catalog's durability is the server's. */
  fsync?: boolean
}

/** The directory of a bucket's bodies and upload parts. */
export function bodyRoot (dataDir: string, name: string): string {
  return path.join(dataDir, name, '.fsbucket')
}

/** Buckets whose bodies are looked for at start, at most (those with no body to look for count too, up to `ASKED_BUCKETS`). */
const SAMPLED_BUCKETS = 5
const ASKED_BUCKETS = 50
/** Bodies looked for in each bucket, among the first objects of its key index (a bounded look, whatever the bucket holds). */
const SAMPLED_BODIES = 8
const SAMPLE_SQL = `SELECT o.segments->0->>0 AS file
  FROM (SELECT size, segments FROM fsbucket.objects WHERE store_id = $1 LIMIT 200) AS o
  WHERE o.size > 0 LIMIT ${SAMPLED_BODIES}`

/**
 * Refuses a data directory that is not the catalog's shared one: one that
 * holds the body directory of none of the catalog's buckets (the shared
 * mount missing: an empty mount point, or the share mounted at another path
 * than `--data`), or one whose bucket directories hold none of the bodies
 * the catalog names (another data directory with buckets of the same names
 * at the mount point: an old SQLite gateway's, say). A gateway there would
 * answer 500 to every read and acknowledge writes whose bodies no other
 * gateway can read. Up to eight bodies are looked for in each of up to five
 * buckets; one found is enough, so a few bodies lost to a disk fault do not
 * stop a start. A catalog without buckets, or without bodies yet, has
 * nothing to compare.
 */
async function checkSharedDirectory (catalog: PgCatalog, dataDir: string): Promise<void> {
  const { rows } = await catalog.query<{ name: string, store_id: string }>('opening the catalog', 'SELECT name, store_id FROM fsbucket.buckets ORDER BY name')
  if (rows.length === 0) return
  const named = (list: typeof rows): string => list.slice(0, 3).map(r => r.name).join(', ') + (list.length > 3 ? ', ...' : '')
  const present: typeof rows = []
  let asked = 0
  let looked = 0
  for (const row of rows) {
    if (looked === SAMPLED_BUCKETS || asked === ASKED_BUCKETS) break
    const root = bodyRoot(dataDir, row.name)
    if ((await fsp.stat(root).catch(() => null))?.isDirectory() !== true) continue
    present.push(row)
    asked++
    const { rows: sampled } = await catalog.query<{ file: string | null }>('opening the catalog', SAMPLE_SQL, [row.store_id])
    const files = sampled.map(r => r.file).filter(isStoreFile)
    if (files.length === 0) continue
    looked += 1
    for (const file of files) {
      if (await fsp.access(path.join(root, file)).then(() => true, () => false)) return
    }
  }
  if (present.length === 0) {
    throw new Error(`The data directory ${dataDir} holds none of the catalog's ${rows.length} bucket(s) (${named(rows)}): every gateway over one catalog must see the shared body directory at --data. Is it mounted there?`)
  }
  if (looked === 0) return
  throw new Error(`The data directory ${dataDir} has directories named like the catalog's buckets (${named(present)}), but none of the object bodies looked for in ${looked} of them: it is another data directory, not the one the catalog's gateways share. Mount the shared body directory at --data.`)
}

/**
 * Puts back the directories that deletes moved away and did not commit
 * (`.deleted-<name>-<store id>` of a bucket still in the catalog), before
 * the directory is judged: such a bucket is there, and so are its files.
 */
async function takeBackMoved (catalog: PgCatalog, dataDir: string): Promise<void> {
  const moved = (await fsp.readdir(dataDir).catch(() => [])).map(entry => /^\.deleted-(.+)-([0-9a-f]{24})$/.exec(entry)).filter(m => m !== null)
  if (moved.length === 0) return
  const { rows } = await catalog.query<{ name: string, store_id: string }>('opening the catalog',
    'SELECT name, store_id FROM fsbucket.buckets WHERE store_id = ANY($1::text[])', [moved.map(m => m[2])])
  for (const row of rows) await putBack(catalog, dataDir, row.name, row.store_id)
}

/**
 * Puts the moved directory of bucket `name` (store `storeId`) back, holding
 * the bucket's row: a delete in flight, which moved it and holds the row
 * until it commits, is waited for, and once it committed there is no row
 * and nothing is moved (the directory would outlive the bucket, and a
 * bucket of the name created later would start in it).
 */
async function putBack (catalog: PgCatalog, dataDir: string, name: string, storeId: string): Promise<void> {
  const directory = path.join(dataDir, name)
  if (await fsp.lstat(directory).then(() => true, () => false)) return
  await catalog.transaction('taking back a bucket\'s directory', async client => {
    const { rowCount } = await client.query('SELECT 1 FROM fsbucket.buckets WHERE name = $1 AND store_id = $2 FOR SHARE', [name, storeId])
    if (rowCount !== 1 || await fsp.lstat(directory).then(() => true, () => false)) return
    await fsp.rename(path.join(dataDir, `.deleted-${name}-${storeId}`), directory).catch((err: unknown) => {
      // None there (another process put it back, or it was never moved): the open says what is missing.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    })
  })
}

/**
 * Refuses a data directory holding buckets kept in SQLite catalogs that the
 * catalog does not know (a gateway started before `fsbucket migrate`): it
 * would serve them as new, empty buckets, and its sweep would remove their
 * bodies. Otherwise marks the directory as the catalog's, which fences off
 * the SQLite side (fs/catalog-mark.ts). A directory marked already is not
 * looked through again.
 */
async function fenceSqliteBuckets (catalog: PgCatalog, dataDir: string): Promise<void> {
  if (await isMarked(dataDir)) return
  const sqlite = await sqliteBuckets(dataDir)
  if (sqlite.length > 0) {
    const { rows } = await catalog.query<{ name: string }>('opening the catalog', 'SELECT name FROM fsbucket.buckets WHERE name = ANY($1::text[])', [sqlite])
    const known = new Set(rows.map(r => r.name))
    const unknown = sqlite.filter(name => !known.has(name))
    if (unknown.length > 0) {
      const named = unknown.slice(0, 3).join(', ') + (unknown.length > 3 ? `, ... (${unknown.length})` : '')
      throw new Error(`The data directory ${dataDir} holds buckets kept in SQLite catalogs that the PostgreSQL catalog does not know (${named}): ` +
        `import them first, with the gateways on them stopped: fsbucket migrate --from ${dataDir} --catalog <url>. ` +
        'Served over the catalog as they are, they would be new, empty buckets, and a sweep would remove their bodies. ' +
        '(A directory left by a bucket deleted through the catalog is no bucket to import: move it out of the data directory.)')
    }
  }
  await markPostgresql(dataDir)
}

export class PgRegistryStorage implements RegistryStorage {
  readonly location: string
  readonly catalog: PgCatalog
  readonly #fsync: boolean
  readonly #deleted: DeletedBuckets
  /** Settings versions and the change token, asked once per turn where the server shares looks (../turn.ts). */
  readonly #looks = new TurnMemo<Promise<string | null>>()

  private constructor (dataDir: string, catalog: PgCatalog, fsync: boolean) {
    this.location = dataDir
    this.catalog = catalog
    this.#fsync = fsync
    // A directory moved away by a delete that did not commit (its store is still there) is the bucket's, not garbage.
    this.#deleted = new DeletedBuckets(dataDir, async storeId =>
      (await catalog.query('sweeping deleted buckets', 'SELECT 1 FROM fsbucket.stores WHERE id = $1', [storeId])).rowCount === 1)
  }

  /** Connects to the catalog at `url` (migrating it) with the bodies in `dataDir` (created when missing). */
  static async open (dataDir: string, url: string, options: PgRegistryOptions = {}): Promise<PgRegistryStorage> {
    await fsp.mkdir(dataDir, { recursive: true })
    const catalog = await PgCatalog.connect(url, options)
    try {
      await takeBackMoved(catalog, path.resolve(dataDir))
      await checkSharedDirectory(catalog, path.resolve(dataDir))
      await fenceSqliteBuckets(catalog, path.resolve(dataDir))
    } catch (err) {
      await catalog.close()
      throw err
    }
    return new PgRegistryStorage(path.resolve(dataDir), catalog, options.fsync ?? true)
  }

  async names (): Promise<string[]> {
    const { rows } = await this.catalog.query<{ name: string }>('listing buckets', 'SELECT name FROM fsbucket.buckets ORDER BY name')
    return rows.map(r => r.name)
  }

  async placeExists (name: string): Promise<boolean> {
    const { rowCount } = await this.catalog.query('reading a bucket', 'SELECT 1 FROM fsbucket.buckets WHERE name = $1', [name])
    return rowCount === 1
  }

  async settingsVersion (name: string): Promise<string | null> {
    return await this.#look(`settings:${name}`, async () => {
      const { rows } = await this.catalog.query<{ rev: number }>('reading a bucket',
        'SELECT rev FROM fsbucket.buckets WHERE name = $1 AND document IS NOT NULL', [name])
      return rows.length === 0 ? null : String(rows[0].rev)
    })
  }

  /**
   * A look shared within the turn; never under a lock: there it runs on the
   * lock's connection, inside its transaction, and must neither wait for a
   * look that waits for a pool connection (the lock may hold the last one)
   * nor hand its transaction's answer to requests outside it.
   */
  async #look (key: string, ask: () => Promise<string | null>): Promise<string | null> {
    return await (this.catalog.holdsLock() ? ask() : this.#looks.get(key, ask))
  }

  async readSettings (name: string): Promise<SettingsDocument | null> {
    const { rows } = await this.catalog.query<{ document: string | null }>('reading a bucket',
      'SELECT document FROM fsbucket.buckets WHERE name = $1', [name])
    const text = rows[0]?.document ?? null
    return text === null ? null : parseSettingsDocument(text, `the settings of bucket ${name} in the catalog`)
  }

  async writeSettings (name: string, document: SettingsDocument): Promise<void> {
    const { rowCount } = await this.catalog.query('writing bucket settings',
      "UPDATE fsbucket.buckets SET document = $2, rev = nextval('fsbucket.revisions') WHERE name = $1", [name, JSON.stringify(document)])
    // The bucket was deleted meanwhile (through any gateway): as on the data directory, NoSuchBucket.
    if (rowCount === 0) throw new BucketError('NoSuchBucket', 'settings')
  }

  async withSettingsLock<T> (name: string, critical: () => Promise<T>): Promise<T> {
    // In a transaction: a gateway frozen while it holds the lock loses it (catalog.ts).
    return await this.catalog.withLock('writing bucket settings', `settings:${name}`, critical, true, 'transaction') as T
  }

  async createPlace (name: string): Promise<boolean> {
    const storeId = randomBytes(12).toString('hex')
    const created = await this.catalog.transaction('creating a bucket', async client => {
      const inserted = await client.query('INSERT INTO fsbucket.buckets (name, store_id) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, storeId])
      if (inserted.rowCount === 0) return false
      await client.query('INSERT INTO fsbucket.stores (id) VALUES ($1)', [storeId])
      await client.query('UPDATE fsbucket.registry SET rev = rev + 1')
      return true
    })
    if (created) await fsp.mkdir(bodyRoot(this.location, name), { recursive: true })
    return created
  }

  async removePlace (name: string): Promise<boolean> {
    const directory = path.join(this.location, name)
    let trash = ''
    let moved = false
    let storeId: string | null
    try {
      storeId = await this.catalog.transaction('deleting a bucket', async client => {
        const { rows } = await client.query<{ store_id: string }>('DELETE FROM fsbucket.buckets WHERE name = $1 RETURNING store_id', [name])
        if (rows.length === 0) return null
        const id = rows[0].store_id
        for (const table of ['objects', 'parts', 'uploads', 'garbage']) {
          await client.query(`DELETE FROM fsbucket.${table} WHERE store_id = $1`, [id])
        }
        await client.query('DELETE FROM fsbucket.stores WHERE id = $1', [id])
        await client.query('UPDATE fsbucket.registry SET rev = rev + 1')
        // Out of the way before the commit: a gateway creating a bucket of this name waits on the deleted row until then,
        // so the new bucket starts in a directory of its own, never this one (which would then be moved from under it).
        // Named by the store: should the delete not commit (a crash, a lost connection), the sweep keeps it and the
        // bucket's next open puts it back (openStore).
        trash = this.#deleted.place(name, id)
        moved = await fsp.rename(directory, trash).then(() => true, () => false)
        return id
      })
    } catch (err) {
      // Not deleted after all: the bucket keeps its directory.
      if (moved) await fsp.rename(trash, directory).catch(() => {})
      throw err
    }
    if (storeId === null) return false
    // What a crash leaves there, the sweep of any bucket removes (blobs.ts).
    if (moved) await removeTree(trash)
    return true
  }

  async changeToken (): Promise<string | null> {
    return await this.#look('change', async () => {
      const { rows } = await this.catalog.query<{ rev: number }>('reading the buckets', 'SELECT rev FROM fsbucket.registry')
      return String(rows[0].rev)
    })
  }

  async touch (): Promise<void> {
    await this.catalog.query('writing the buckets', 'UPDATE fsbucket.registry SET rev = rev + 1')
  }

  async openStore (name: string): Promise<BucketStore> {
    const { rows } = await this.catalog.query<{ store_id: string }>('opening a bucket', 'SELECT store_id FROM fsbucket.buckets WHERE name = $1', [name])
    if (rows.length === 0) throw bucketRetired('openBucket') // deleted meanwhile
    // A directory a delete moved and did not commit (the gateway died between the two) is the bucket's: put back.
    await putBack(this.catalog, this.location, name, rows[0].store_id)
    return await PgStore.open(this.catalog, rows[0].store_id, bodyRoot(this.location, name), { fsync: this.#fsync, deletedBuckets: this.#deleted })
  }

  state (area: string): StateDocuments {
    if (!/^[a-z]+$/.test(area)) throw new TypeError(`state: the area must be lowercase letters (got ${JSON.stringify(area)}).`)
    return new PgDocuments(this.catalog, area)
  }

  async ping (): Promise<void> {
    await this.catalog.ping()
  }

  async close (): Promise<void> {
    await this.catalog.close()
  }
}
