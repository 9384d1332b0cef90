/**
 * The SQLite driver of the catalogs, behind the small interface they use
 * (`SqliteDatabase`: prepare, exec, pragma, transaction, close; statements
 * with run, get, all, iterate, raw, pluck), in one of two builds:
 *
 * - `node:sqlite`, built into Node, wherever it loads without a flag (Node
 *   22.13 and later, 24).
 * - libsql (the optional dependency `libsql`, a fork of SQLite with a
 *   better-sqlite3-like binding) on Node 20 and 22.12, which have no
 *   `node:sqlite`. Its binary is an N-API addon that npm installs as a
 *   package of the platform's (`@libsql/linux-x64-gnu`, ...): no install
 *   script, no compile, one build for every Node.
 *
 * Neither needs anything built at install. Both run SQLite's C library
 * (libsql's is SQLite 3.45 with additions the catalog does not use) with
 * its unix file locking and WAL format, so processes on either driver share
 * a catalog as processes on one driver do; the multiprocess test mixes them
 * where both load.
 *
 * The interface is better-sqlite3's (the driver before these), and both are
 * adapted to it here rather than the other way round:
 *
 * - BLOBs are read as Buffers (node:sqlite gives Uint8Arrays; the catalog's
 *   ids are Buffers).
 * - Errors carry SQLite's result code name in `code` (`SQLITE_BUSY`,
 *   `SQLITE_IOERR_WRITE`: the write loop and the storage failures judge by
 *   it), from SQLite's number, so the names are the same on both.
 * - A transaction is a function run between BEGIN and COMMIT, nested ones
 *   in savepoints (libsql's own nests none).
 * - `fileMustExist` and `readonly` are checked before opening (neither
 *   driver refuses a missing file otherwise, and libsql opens every file
 *   for writing: a read-only one gets `query_only`).
 * - libsql's rows carry an extra `_metadata` key and its pluck mode applies
 *   to all() alone, so its rows are read as arrays and shaped here; values
 *   are checked before binding (its binding aborts the process on a
 *   boolean, or on a Buffer given as the only argument).
 * - libsql's close lets go of the connection, but SQLite closes the files
 *   only once the garbage collector has freed the statements too: the
 *   WAL is checkpointed at close, so that a catalog closed by its last user
 *   has its rows in the main file as with `node:sqlite`.
 *
 * `FSBUCKET_SQLITE_DRIVER=node:sqlite` or `=libsql` picks one (the driver
 * test and the benchmark use it); the choice fails at start-up when that
 * driver does not load.
 */
import { loadLibsql, libsqlVersion } from './sqlite-libsql.js'
import { loadNodeSqlite } from './sqlite-node.js'
import type { DatabaseConstructor } from './sqlite-contract.js'

export type { RunResult, SqliteDatabase, Statement, Transaction } from './sqlite-contract.js'
export { sqliteCodeName } from './sqlite-contract.js'

/** The drivers' names, as `FSBUCKET_SQLITE_DRIVER` takes them. */
const NODE_SQLITE = 'node:sqlite'
const LIBSQL = 'libsql'

function load (): { Database: DatabaseConstructor, name: string } {
  const wanted = process.env.FSBUCKET_SQLITE_DRIVER ?? ''
  const loaders: Array<[string, () => DatabaseConstructor]> = [[NODE_SQLITE, loadNodeSqlite], [LIBSQL, loadLibsql]]
  if (wanted !== '' && !loaders.some(([name]) => name === wanted)) {
    throw new Error(`FSBUCKET_SQLITE_DRIVER must be ${NODE_SQLITE} or ${LIBSQL}, not ${JSON.stringify(wanted)}`)
  }
  const failures: string[] = []
  for (const [name, loader] of loaders) {
    if (wanted !== '' && name !== wanted) continue
    try {
      return { Database: loader(), name }
    } catch (err) {
      failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`)
    }
  }
  throw new Error(`No SQLite driver loads on Node ${process.version}` +
    (wanted === '' ? '' : ` (FSBUCKET_SQLITE_DRIVER=${wanted})`) +
    `. Node 22.13 and later have node:sqlite; elsewhere, install the dependencies with optional ones included (libsql and its package for this platform). ${failures.join('; ')}`)
}

const loaded = load()

/** The catalogs' SQLite database class. */
export const Database: DatabaseConstructor = loaded.Database

/** Which driver runs (`node:sqlite` or `libsql`), its version, and the SQLite version it runs. */
export function sqliteDriver (): { name: string, version: string, sqlite: string } {
  const version = loaded.name === NODE_SQLITE ? process.version.slice(1) : libsqlVersion()
  const db = new Database(':memory:')
  try {
    return { name: loaded.name, version, sqlite: db.prepare<[], string>('select sqlite_version()').pluck().get() as string }
  } finally {
    db.close()
  }
}
