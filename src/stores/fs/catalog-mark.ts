/**
 * Which catalog keeps a data directory's buckets. A data directory served
 * over a PostgreSQL catalog (stores/pg) holds its bodies in the filesystem
 * store's layout, and one imported by `fsbucket migrate` still holds each
 * bucket's old SQLite catalog: opened with SQLite catalogs, such a
 * directory looks like buckets of its own, which would answer from old
 * rows, acknowledge writes no gateway on the catalog sees, and sweep away
 * the bodies the catalog names as leftovers. And a gateway on a catalog
 * that does not know the SQLite buckets of its directory would serve them
 * as new, empty buckets, with the same sweep.
 *
 * So the two are fenced by one file, `<data>/.fsbucket/catalog.json`
 * (`{"format": 1, "catalog": "postgresql"}`): written by a gateway on a
 * PostgreSQL catalog as it opens (once no SQLite bucket of the directory
 * is unknown to the catalog) and by `migrate` once every bucket is
 * imported; the filesystem registry refuses a directory that has it.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { readText, writeJsonAtomic } from './atomic.js'
import { ensureDirectory, subdirectories } from './data-directory.js'
import { Database, type SqliteDatabase } from './sqlite.js'

/** The mark's place in a data directory. */
export function catalogMarkFile (dataDir: string): string {
  return path.join(dataDir, '.fsbucket', 'catalog.json')
}

/** Marks `dataDir` as kept in a PostgreSQL catalog (flushed: it fences what a crash must not undo). */
export async function markPostgresql (dataDir: string): Promise<void> {
  await ensureDirectory(path.join(dataDir, '.fsbucket'))
  await writeJsonAtomic(catalogMarkFile(dataDir), { format: 1, catalog: 'postgresql' }, { fsync: true })
}

/** Whether `dataDir` is marked as kept in a catalog other than its buckets' own SQLite files. */
export async function isMarked (dataDir: string): Promise<boolean> {
  return await readText(catalogMarkFile(dataDir)) !== null
}

/** Refuses to open `dataDir` with SQLite catalogs when it is marked (filesystem registry, and a bucket of it opened alone). */
export async function refuseMarked (dataDir: string): Promise<void> {
  if (!await isMarked(dataDir)) return
  throw new Error(`The data directory ${dataDir} is kept in a PostgreSQL catalog (${catalogMarkFile(dataDir)} says so: ` +
    'fsbucket migrate imported its buckets, or gateways with --catalog serve it): open it with its catalog (--catalog or FSBUCKET_CATALOG; ' +
    'openRegistry\'s catalog option). The SQLite files left in its buckets are no longer current: opened on them, writes would go where no ' +
    'gateway reads and a sweep would remove live bodies.')
}

/**
 * The buckets of `dataDir` that hold a SQLite catalog of their own
 * (`<name>/.fsbucket/catalog.db`) and are not being deleted (a delete
 * cut short leaves the bucket retired, its catalog says so): what an
 * import would bring in. Hidden directories (`.deleted-*`, the state
 * areas) are no buckets.
 */
export async function sqliteBuckets (dataDir: string): Promise<string[]> {
  const names = (await subdirectories(dataDir)).filter(name => !name.startsWith('.'))
  const found: string[] = []
  for (const name of names) {
    const file = path.join(dataDir, name, '.fsbucket', 'catalog.db')
    if (!await fsp.access(file).then(() => true, () => false)) continue
    if (!retired(file)) found.push(name)
  }
  return found
}

/** Whether the open SQLite catalog `db` is a bucket's being deleted (its delete closed it to writes). */
export function isRetiredCatalog (db: SqliteDatabase): boolean {
  return db.prepare("SELECT 1 FROM bucket_state WHERE name = 'retired'").get() !== undefined
}

/** Whether the SQLite catalog `file` belongs to a bucket being deleted (one that cannot be read counts as not: the import says why). */
function retired (file: string): boolean {
  let db: SqliteDatabase | null = null
  try {
    db = new Database(file, { readonly: true, fileMustExist: true })
    return isRetiredCatalog(db)
  } catch {
    return false
  } finally {
    db?.close()
  }
}
