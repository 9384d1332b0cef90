/**
 * The libsql driver (Node 20 and 22.12, or chosen with
 * FSBUCKET_SQLITE_DRIVER=libsql), adapted to the catalogs' interface
 * (sqlite-contract.ts). What differs from better-sqlite3, whose API libsql
 * follows, and how each difference is met, is in sqlite.ts's note and
 * beside each adaptation here.
 */
import { accessSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { AdaptedDatabase, DEFAULT_TIMEOUT_MS, knownSqliteCodeName, sqliteCodeName, type DatabaseConstructor, type OpenOptions, type RunResult } from './sqlite-contract.js'

const require = createRequire(import.meta.url)

interface LibsqlStatement {
  /** Whether it returns rows (libsql's raw() refuses a statement that does not). */
  readonly reader: boolean
  run (params: unknown): RunResult
  get (params: unknown): unknown
  all (params: unknown): unknown[]
  iterate (params: unknown): IterableIterator<unknown>
  raw (enabled?: boolean): unknown
  columns (): Array<{ name: string }>
}
interface LibsqlDatabase {
  prepare (sql: string): LibsqlStatement
  exec (sql: string): void
  close (): void
}
type LibsqlConstructor = new (file: string, options?: { timeout?: number }) => LibsqlDatabase

/**
 * libsql's error, with the code name the callers judge by: from SQLite's
 * code number (`rawCode`) where sqlite-contract.ts's table knows it, so the names
 * are the same on every driver; else libsql's own. Errors libsql's wrapper
 * leaves unconverted (from iterate) carry the same two fields. A database
 * that cannot be opened (a directory in the catalog's place) carries
 * neither: its code number is only in the message,
 * `ConnectionFailed("Unable to open connection to local database …: 14")`,
 * and is read from there, so it is SQLITE_CANTOPEN as on node:sqlite.
 */
function libsqlNamed (err: unknown): unknown {
  const e = err as { code?: unknown, rawCode?: unknown, message?: unknown }
  if (e === null || typeof e !== 'object') return err
  const rawCode = typeof e.rawCode === 'number' ? e.rawCode : connectionFailure(e.message)
  if (rawCode !== undefined) {
    const known = knownSqliteCodeName(rawCode)
    if (known !== undefined) e.code = known
    else if (typeof e.code !== 'string' || !e.code.startsWith('SQLITE_')) e.code = sqliteCodeName(rawCode)
  }
  return err
}

/** SQLite's code number in the message of libsql's failure to open a database, if it is one. */
function connectionFailure (message: unknown): number | undefined {
  const match = typeof message === 'string' ? /^ConnectionFailed\(".*: (\d+)"\)$/s.exec(message) : null
  return match === null ? undefined : Number(match[1])
}

/**
 * A value libsql can bind. Its native side aborts the whole process (a Rust
 * panic) on a boolean and on a Buffer given as the only argument, so values
 * are checked here and always handed over in an array or an object of
 * named ones: a TypeError as better-sqlite3 throws, never an abort.
 */
function bindable (value: unknown): boolean {
  return value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'bigint' || value instanceof Uint8Array
}

/** `@name` parameters: one plain object (not an array, not bytes). */
function isNamed (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array)
}

function bound (params: unknown[]): unknown {
  const values = params.length === 1 && isNamed(params[0]) ? Object.values(params[0]) : params
  for (const value of values) {
    if (!bindable(value)) throw new TypeError('SQLite can only bind numbers, strings, bigints, buffers, and null')
  }
  return params.length === 1 && isNamed(params[0]) ? params[0] : params
}

class LibsqlAdaptedStatement {
  readonly #statement: LibsqlStatement
  /** 'rows': objects; 'raw': arrays; 'pluck': the first column. */
  #shape: 'rows' | 'raw' | 'pluck' = 'rows'
  /**
   * Rows are always read as arrays from libsql and shaped here: its row
   * objects carry an extra `_metadata` key (from get), and its pluck mode
   * applies to all() alone. Set on the first read; null for a statement
   * that returns no rows.
   */
  #arrays: boolean | null = null
  /** The columns' names, for rows as objects. */
  #names: string[] = []

  constructor (statement: LibsqlStatement) {
    this.#statement = statement
  }

  raw (): this {
    this.#shape = 'raw'
    return this
  }

  pluck (): this {
    this.#shape = 'pluck'
    return this
  }

  /** Whether rows come as arrays: true for every statement that returns rows. */
  #reading (): boolean {
    if (this.#arrays === null) {
      this.#arrays = this.#statement.reader
      if (this.#arrays) {
        this.#statement.raw(true)
        this.#names = this.#statement.columns().map(column => column.name)
      }
    }
    return this.#arrays
  }

  #row (values: unknown): unknown {
    if (values === undefined || !Array.isArray(values)) return values
    if (this.#shape === 'raw') return values
    if (this.#shape === 'pluck') return values[0]
    // A schema change re-prepares the statement; its columns may have changed with it.
    if (values.length !== this.#names.length) this.#names = this.#statement.columns().map(column => column.name)
    const row: Record<string, unknown> = {}
    for (let i = 0; i < values.length; i++) row[this.#names[i] as string] = values[i]
    return row
  }

  run (...params: unknown[]): RunResult {
    try {
      const { changes, lastInsertRowid } = this.#statement.run(bound(params))
      return { changes, lastInsertRowid }
    } catch (err) {
      throw libsqlNamed(err)
    }
  }

  get (...params: unknown[]): unknown {
    try {
      if (!this.#reading()) return this.#statement.get(bound(params))
      return this.#row(this.#statement.get(bound(params)))
    } catch (err) {
      throw libsqlNamed(err)
    }
  }

  all (...params: unknown[]): unknown[] {
    try {
      if (!this.#reading()) return this.#statement.all(bound(params))
      const rows = this.#statement.all(bound(params))
      if (this.#shape !== 'raw') for (let i = 0; i < rows.length; i++) rows[i] = this.#row(rows[i])
      return rows
    } catch (err) {
      throw libsqlNamed(err)
    }
  }

  * iterate (...params: unknown[]): IterableIterator<unknown> {
    let rows: IterableIterator<unknown>
    try {
      this.#reading()
      rows = this.#statement.iterate(bound(params))
    } catch (err) {
      throw libsqlNamed(err)
    }
    for (;;) {
      let next: IteratorResult<unknown>
      try {
        next = rows.next()
      } catch (err) {
        throw libsqlNamed(err)
      }
      if (next.done === true) return
      yield this.#row(next.value)
    }
  }
}

function libsqlDatabase (Libsql: LibsqlConstructor): DatabaseConstructor {
  const adapter = {
    named: libsqlNamed,
    wrap: (statement: LibsqlStatement) => new LibsqlAdaptedStatement(statement),
    // libsql's close lets go of the connection, but SQLite closes its
    // files only when the garbage collector has freed the statements
    // too, so the checkpoint SQLite runs as the last connection closes
    // may come late or never. It is run here, without waiting on other
    // connections (PASSIVE), so that a catalog closed by its last user
    // has its rows in the main file as with the other drivers.
    beforeClose: (connection: { exec: (sql: string) => unknown }) => {
      try {
        connection.exec('PRAGMA wal_checkpoint(PASSIVE)')
      } catch {
        // Busy or failed: the WAL keeps the rows, and the next open or close checkpoints them.
      }
    }
  }
  return class LibsqlAdaptedDatabase extends AdaptedDatabase<LibsqlStatement> {
    constructor (file: string, options: OpenOptions = {}) {
      const readonly = options.readonly === true
      // libsql creates a missing file whatever the options say, and opens
      // every file for writing: look first, and refuse writes with query_only.
      if ((options.fileMustExist === true || readonly) && file !== ':memory:') accessSync(file)
      super(() => {
        const db = new Libsql(file, { timeout: Math.max(0, Math.trunc(options.timeout ?? DEFAULT_TIMEOUT_MS)) })
        if (readonly) db.exec('PRAGMA query_only = ON')
        return db
      }, adapter)
    }
  }
}

/**
 * libsql's module. Its loader (@neon-rs/load), first thing, picks the
 * package of its binary by asking `process.report.getReport()` whether the
 * C library is glibc: a whole diagnostic report of the process, which cost
 * each process here 7 ms and left it almost a MiB larger for good. The
 * answer is detect-libc's (which reads the ELF interpreter of the running
 * binary, else `ldd`, else that report itself): the first report asked for
 * while libsql loads is that answer alone, and every other one, from then
 * on, Node's own.
 */
function requireLibsql (): LibsqlConstructor {
  const report = process.platform === 'linux' ? process.report : undefined
  if (report === undefined) return require('libsql') as LibsqlConstructor
  const { familySync, GLIBC } = require('detect-libc') as { familySync: () => string | null, GLIBC: string }
  // The loader asks only whether the header names a glibc version, not which.
  const header = familySync() === GLIBC ? { glibcVersionRuntime: GLIBC } : {}
  const getReport = Object.getOwnPropertyDescriptor(report, 'getReport')
  const restore = (): void => {
    if (getReport === undefined) Reflect.deleteProperty(report, 'getReport')
    else Object.defineProperty(report, 'getReport', getReport)
  }
  report.getReport = () => {
    restore()
    return { header }
  }
  try {
    return require('libsql') as LibsqlConstructor
  } finally {
    restore()
  }
}

/** libsql, whose prebuilt binary npm installs as a package of the platform's (`@libsql/linux-x64-gnu`, ...). */
export function loadLibsql (): DatabaseConstructor {
  const Database = libsqlDatabase(requireLibsql())
  // A binary that cannot work here fails now, at start-up, not at the first catalog.
  new Database(':memory:').close()
  return Database
}

/** libsql's version, from the package.json beside its main file (its `exports` do not list `libsql/package.json`). */
export function libsqlVersion (): string {
  return (require(path.join(path.dirname(require.resolve('libsql')), 'package.json')) as { version: string }).version
}
