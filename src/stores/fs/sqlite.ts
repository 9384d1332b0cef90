/**
 * The SQLite driver of the catalogs: better-sqlite3, in the build the
 * running Node can load.
 *
 * - `better-sqlite3` 13 is a Node-API addon with its binaries in the
 *   package. It needs Node-API 10 (Node 22.14 and later). On Node 24 it is
 *   the only safe choice: 12's addon, compiled against Node 24.19's headers
 *   or later, aborts the process when the garbage collector frees one of
 *   its statements.
 * - `better-sqlite3-node20` (an alias of better-sqlite3 12, an optional
 *   dependency built at install) serves Node 20 and early Node 22, whose
 *   Node-API stops at 9.
 *
 * Both have the same API and read and write the same files.
 */
import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

const require = createRequire(import.meta.url)

/** The Node-API version that better-sqlite3 13 is built for. */
const NAPI_OF_13 = 10

function load (): { Database: typeof BetterSqlite3, module: string } {
  const napi = Number(process.versions.napi ?? 0)
  const candidates = napi >= NAPI_OF_13 ? ['better-sqlite3', 'better-sqlite3-node20'] : ['better-sqlite3-node20']
  const failures: string[] = []
  for (const module of candidates) {
    try {
      const Database = require(module) as typeof BetterSqlite3
      // The addon itself loads with the first database: open one now, so
      // that a build whose binary cannot load here is passed over.
      new Database(':memory:').close()
      return { Database, module }
    } catch (err) {
      failures.push(`${module}: ${(err as Error).message.split('\n')[0]}`)
    }
  }
  throw new Error(`No SQLite driver loads on Node ${process.version} (Node-API ${napi}). ` +
    `Reinstall the dependencies with this Node (npm ci). ${failures.join('; ')}`)
}

const loaded = load()

/** The catalogs' SQLite database class (types: `better-sqlite3`'s). */
export const Database: typeof BetterSqlite3 = loaded.Database

/** Which driver package runs, and the SQLite version it embeds. */
export function sqliteDriver (): { module: string, version: string, sqlite: string } {
  const version = (require(`${loaded.module}/package.json`) as { version: string }).version
  const db = new Database(':memory:')
  try {
    return { module: loaded.module, version, sqlite: db.prepare('select sqlite_version()').pluck().get() as string }
  } finally {
    db.close()
  }
}
