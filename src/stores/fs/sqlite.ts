/**
 * The SQLite driver of the catalogs, behind the small interface they use
 * (`SqliteDatabase`: prepare, exec, pragma, transaction, close; statements
 * with run, get, all, iterate, raw, pluck), in one of two builds:
 *
 * - `node:sqlite`, built into Node, wherever it loads without a flag (Node
 *   22.13 and later, 24): nothing to compile or download at install.
 * - better-sqlite3 12 (the optional dependency `better-sqlite3-node20`,
 *   compiled at install where its prebuilt binaries cannot be downloaded)
 *   on Node 20 and early Node 22, which have no `node:sqlite`.
 *
 * Both run SQLite's own C library with its unix file locking, so processes
 * on either driver share a catalog (WAL mode) as processes on one driver do.
 *
 * The interface is better-sqlite3's, and `node:sqlite` is adapted to it
 * here rather than the other way round: BLOBs are read as Buffers (node:sqlite
 * gives Uint8Arrays; the catalog's ids are Buffers), errors carry SQLite's
 * result code name in `code` (`SQLITE_BUSY`, `SQLITE_IOERR_WRITE`: the
 * write loop and the storage failures judge by it), and a transaction is a
 * function run between BEGIN and COMMIT, nested ones in savepoints.
 *
 * `FSBUCKET_SQLITE_DRIVER=node:sqlite` or `=better-sqlite3` picks one (the
 * benchmark compares them); the choice fails at start-up when that driver
 * does not load. better-sqlite3 12 is not for Node 24: compiled against
 * Node 24.19's headers or later, it aborts the process when the garbage
 * collector frees one of its statements.
 */
import { accessSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(import.meta.url)

/** What a write statement did. */
export interface RunResult { changes: number, lastInsertRowid: number | bigint }

/** Positional parameters as an array type, or one object of named ones (`@name`). */
type Params<P> = P extends unknown[] ? P : [P]

/** A prepared statement, typed by its parameters and rows. */
export interface Statement<P extends unknown[] | {} = unknown[], R = unknown> {
  run (...params: Params<P>): RunResult
  get (...params: Params<P>): R | undefined
  all (...params: Params<P>): R[]
  iterate (...params: Params<P>): IterableIterator<R>
  /** Rows as arrays of their columns, in order. */
  raw (): Statement<P, R>
  /** Rows as their first column's value. */
  pluck (): Statement<P, R>
}

/** A function run as one transaction, BEGIN DEFERRED by default. */
export interface Transaction<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>
  deferred: (...args: Parameters<F>) => ReturnType<F>
  immediate: (...args: Parameters<F>) => ReturnType<F>
}

export interface SqliteDatabase {
  /** False once closed. */
  readonly open: boolean
  prepare<P extends unknown[] | {} = unknown[], R = unknown> (sql: string): Statement<P, R>
  exec (sql: string): unknown
  /** Runs `PRAGMA <text>`; its rows, or with `simple` the first row's first value. */
  pragma (text: string, options?: { simple?: boolean }): unknown
  transaction<F extends (...args: never[]) => unknown> (fn: F): Transaction<F>
  close (): unknown
}

export interface OpenOptions {
  /** How long a statement waits on another connection's lock before SQLITE_BUSY (ms). */
  timeout?: number
  readonly?: boolean
  /** Fail when the file does not exist (instead of creating it); implied by `readonly`. */
  fileMustExist?: boolean
}

type DatabaseConstructor = new (file: string, options?: OpenOptions) => SqliteDatabase

/** The two drivers' names, as `FSBUCKET_SQLITE_DRIVER` takes them. */
const NODE_SQLITE = 'node:sqlite'
const LIBSQL = 'libsql'
const BETTER_SQLITE3 = 'better-sqlite3'
/** The package better-sqlite3 12 is installed as (an alias: see package.json's optionalDependencies); a `better-sqlite3` installed by hand is taken too. */
const BETTER_SQLITE3_PACKAGE = 'better-sqlite3-node20'

// --- what the adapted drivers share --------------------------------------

/**
 * Transactions as better-sqlite3 runs them: a function between BEGIN and
 * COMMIT, rolled back when it throws, nested ones in savepoints. (libsql has
 * a `transaction` of its own, but it nests none, and a ROLLBACK that fails
 * after SQLite rolled back by itself would hide the error that did it.)
 */
class Transactions {
  readonly #exec: (sql: string) => unknown
  /** Transactions open on this connection: nested ones are savepoints. */
  #depth = 0

  constructor (exec: (sql: string) => unknown) {
    this.#exec = exec
  }

  of<F extends (...args: never[]) => unknown> (fn: F): Transaction<F> {
    const run = (begin: string) => (...args: Parameters<F>): ReturnType<F> => {
      const nested = this.#depth > 0
      const savepoint = `fsbucket_${this.#depth}`
      this.#exec(nested ? `SAVEPOINT ${savepoint}` : begin)
      this.#depth++
      let result: ReturnType<F>
      try {
        result = fn(...args) as ReturnType<F>
      } catch (err) {
        this.#depth--
        try {
          this.#exec(nested ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : 'ROLLBACK')
        } catch {
          // SQLite may have rolled the transaction back itself (SQLITE_FULL, SQLITE_IOERR): the error that did it is the one to throw.
        }
        throw err
      }
      this.#depth--
      try {
        this.#exec(nested ? `RELEASE ${savepoint}` : 'COMMIT')
      } catch (err) {
        // A COMMIT that fails leaves the transaction open: it is rolled back, as better-sqlite3 does.
        if (!nested) try { this.#exec('ROLLBACK') } catch {}
        throw err
      }
      return result
    }
    const transaction = run('BEGIN') as Transaction<F>
    transaction.deferred = run('BEGIN DEFERRED')
    transaction.immediate = run('BEGIN IMMEDIATE')
    return transaction
  }
}

/** better-sqlite3's default wait on another connection's lock (ms). */
const DEFAULT_TIMEOUT_MS = 5000

/**
 * SQLite's primary result codes (the low byte of a code), and the extended
 * codes the catalog's callers tell apart, by number (sqlite3.h).
 */
const primaryCodes = ['OK', 'ERROR', 'INTERNAL', 'PERM', 'ABORT', 'BUSY', 'LOCKED', 'NOMEM', 'READONLY', 'INTERRUPT', 'IOERR',
  'CORRUPT', 'NOTFOUND', 'FULL', 'CANTOPEN', 'PROTOCOL', 'EMPTY', 'SCHEMA', 'TOOBIG', 'CONSTRAINT', 'MISMATCH', 'MISUSE',
  'NOLFS', 'AUTH', 'FORMAT', 'RANGE', 'NOTADB', 'NOTICE', 'WARNING']
const extendedCodes = new Map<number, string>([
  [261, 'BUSY_RECOVERY'], [517, 'BUSY_SNAPSHOT'], [773, 'BUSY_TIMEOUT'],
  [266, 'IOERR_READ'], [522, 'IOERR_SHORT_READ'], [778, 'IOERR_WRITE'], [1034, 'IOERR_FSYNC'], [1290, 'IOERR_DIR_FSYNC'],
  [1546, 'IOERR_TRUNCATE'], [1802, 'IOERR_FSTAT'], [2058, 'IOERR_UNLOCK'], [2314, 'IOERR_RDLOCK'], [2570, 'IOERR_DELETE'],
  [3082, 'IOERR_NOMEM'], [3338, 'IOERR_ACCESS'], [3594, 'IOERR_CHECKRESERVEDLOCK'], [3850, 'IOERR_LOCK'], [4106, 'IOERR_CLOSE'],
  [4618, 'IOERR_SHMOPEN'], [4874, 'IOERR_SHMSIZE'], [5386, 'IOERR_SHMMAP'], [5642, 'IOERR_SEEK'], [5898, 'IOERR_DELETE_NOENT'],
  [6154, 'IOERR_MMAP'], [6410, 'IOERR_GETTEMPPATH'], [6666, 'IOERR_CONVPATH'],
  [264, 'READONLY_RECOVERY'], [520, 'READONLY_CANTLOCK'], [776, 'READONLY_ROLLBACK'], [1032, 'READONLY_DBMOVED'], [1288, 'READONLY_CANTINIT'], [1544, 'READONLY_DIRECTORY'],
  [270, 'CANTOPEN_NOTEMPDIR'], [526, 'CANTOPEN_ISDIR'], [782, 'CANTOPEN_FULLPATH'], [1038, 'CANTOPEN_CONVPATH'],
  [267, 'CORRUPT_VTAB'], [523, 'CORRUPT_SEQUENCE'], [779, 'CORRUPT_INDEX'],
  [275, 'CONSTRAINT_CHECK'], [787, 'CONSTRAINT_FOREIGNKEY'], [1043, 'CONSTRAINT_NOTNULL'], [1555, 'CONSTRAINT_PRIMARYKEY'],
  [1811, 'CONSTRAINT_TRIGGER'], [2067, 'CONSTRAINT_UNIQUE']
])

/** The name of SQLite's result code `errcode`, as better-sqlite3 puts it in an error's `code`. */
export function sqliteCodeName (errcode: number): string {
  return `SQLITE_${extendedCodes.get(errcode) ?? primaryCodes[errcode & 0xff] ?? 'ERROR'}`
}

// --- node:sqlite, adapted -------------------------------------------------

interface NodeStatement {
  run (...params: unknown[]): RunResult
  get (...params: unknown[]): unknown
  all (...params: unknown[]): unknown[]
  iterate (...params: unknown[]): IterableIterator<unknown>
  setReturnArrays?: (enabled: boolean) => void
}
interface NodeDatabase {
  prepare (sql: string): NodeStatement
  exec (sql: string): void
  close (): void
}
interface NodeSqlite { DatabaseSync: new (file: string, options?: { readOnly?: boolean }) => NodeDatabase }

/** node:sqlite's error, with SQLite's code name in `code` (it says `ERR_SQLITE_ERROR` there, and the number in `errcode`). */
function named (err: unknown): unknown {
  const e = err as { code?: unknown, errcode?: unknown }
  if (e !== null && typeof e === 'object' && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') e.code = sqliteCodeName(e.errcode)
  return err
}

/** A row with its BLOBs as Buffers (no copy: the same memory). */
function withBuffers<T> (row: T): T {
  if (row === undefined || row === null) return row
  const values = row as Record<string, unknown>
  for (const name in values) {
    const value = values[name]
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) values[name] = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  }
  return row
}

function asBuffer (value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value
}

class NodeSqliteStatement {
  readonly #statement: NodeStatement
  /** 'rows': objects; 'raw': arrays; 'pluck': the first column. */
  #shape: 'rows' | 'raw' | 'pluck' = 'rows'

  constructor (statement: NodeStatement) {
    this.#statement = statement
  }

  raw (): this {
    this.#arrays()
    this.#shape = 'raw'
    return this
  }

  pluck (): this {
    this.#arrays()
    this.#shape = 'pluck'
    return this
  }

  #arrays (): void {
    // Before Node 22.16 there is no array mode: rows are turned into arrays here.
    this.#statement.setReturnArrays?.(true)
  }

  #row (row: unknown): unknown {
    if (row === undefined || this.#shape === 'rows') return withBuffers(row)
    const values = Array.isArray(row) ? row : Object.values(row as object)
    return this.#shape === 'pluck' ? asBuffer(values[0]) : withBuffers(values)
  }

  run (...params: unknown[]): RunResult {
    try {
      return this.#statement.run(...params)
    } catch (err) {
      throw named(err)
    }
  }

  get (...params: unknown[]): unknown {
    try {
      return this.#row(this.#statement.get(...params))
    } catch (err) {
      throw named(err)
    }
  }

  all (...params: unknown[]): unknown[] {
    try {
      const rows = this.#statement.all(...params)
      for (let i = 0; i < rows.length; i++) rows[i] = this.#row(rows[i])
      return rows
    } catch (err) {
      throw named(err)
    }
  }

  * iterate (...params: unknown[]): IterableIterator<unknown> {
    let rows: IterableIterator<unknown>
    try {
      rows = this.#statement.iterate(...params)
    } catch (err) {
      throw named(err)
    }
    for (;;) {
      let next: IteratorResult<unknown>
      try {
        next = rows.next()
      } catch (err) {
        throw named(err)
      }
      if (next.done === true) return
      yield this.#row(next.value)
    }
  }
}

function nodeSqliteDatabase ({ DatabaseSync }: NodeSqlite): DatabaseConstructor {
  return class NodeSqliteDatabase implements SqliteDatabase {
    readonly #db: NodeDatabase
    #open = true
    readonly #transactions = new Transactions(sql => this.exec(sql))

    constructor (file: string, options: OpenOptions = {}) {
      const readOnly = options.readonly === true
      // node:sqlite creates a missing file unless opened read-only: look first.
      if (options.fileMustExist === true && !readOnly && file !== ':memory:') accessSync(file)
      try {
        this.#db = new DatabaseSync(file, { readOnly })
        this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.timeout ?? DEFAULT_TIMEOUT_MS))}`)
      } catch (err) {
        throw named(err)
      }
    }

    get open (): boolean {
      return this.#open
    }

    prepare<P extends unknown[] | {} = unknown[], R = unknown> (sql: string): Statement<P, R> {
      try {
        return new NodeSqliteStatement(this.#db.prepare(sql)) as unknown as Statement<P, R>
      } catch (err) {
        throw named(err)
      }
    }

    exec (sql: string): this {
      try {
        this.#db.exec(sql)
      } catch (err) {
        throw named(err)
      }
      return this
    }

    pragma (text: string, options: { simple?: boolean } = {}): unknown {
      const statement = this.prepare(`PRAGMA ${text}`)
      return options.simple === true ? statement.pluck().get() : statement.all()
    }

    transaction<F extends (...args: never[]) => unknown> (fn: F): Transaction<F> {
      return this.#transactions.of(fn)
    }

    close (): this {
      if (this.#open) {
        this.#open = false
        this.#db.close()
      }
      return this
    }
  }
}

// --- libsql, adapted ------------------------------------------------------

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
 * code number (`rawCode`) where the table above knows it, so that the names
 * are the same on every driver; else libsql's own. Errors libsql's wrapper
 * leaves unconverted (from iterate) carry the same two fields.
 */
function libsqlNamed (err: unknown): unknown {
  const e = err as { code?: unknown, rawCode?: unknown }
  if (e !== null && typeof e === 'object' && typeof e.rawCode === 'number') {
    const known = extendedCodes.has(e.rawCode) || (e.rawCode & 0xff) === e.rawCode
    if (known || typeof e.code !== 'string' || !e.code.startsWith('SQLITE_')) e.code = sqliteCodeName(e.rawCode)
  }
  return err
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
  return class LibsqlAdaptedDatabase implements SqliteDatabase {
    readonly #db: LibsqlDatabase
    #open = true
    readonly #transactions = new Transactions(sql => this.exec(sql))

    constructor (file: string, options: OpenOptions = {}) {
      const readonly = options.readonly === true
      // libsql creates a missing file whatever the options say, and opens
      // every file for writing: look first, and refuse writes with query_only.
      if ((options.fileMustExist === true || readonly) && file !== ':memory:') accessSync(file)
      try {
        this.#db = new Libsql(file, { timeout: Math.max(0, Math.trunc(options.timeout ?? DEFAULT_TIMEOUT_MS)) })
        if (readonly) this.#db.exec('PRAGMA query_only = ON')
      } catch (err) {
        throw libsqlNamed(err)
      }
    }

    get open (): boolean {
      return this.#open
    }

    prepare<P extends unknown[] | {} = unknown[], R = unknown> (sql: string): Statement<P, R> {
      try {
        return new LibsqlAdaptedStatement(this.#db.prepare(sql)) as unknown as Statement<P, R>
      } catch (err) {
        throw libsqlNamed(err)
      }
    }

    exec (sql: string): this {
      try {
        this.#db.exec(sql)
      } catch (err) {
        throw libsqlNamed(err)
      }
      return this
    }

    pragma (text: string, options: { simple?: boolean } = {}): unknown {
      const statement = this.prepare(`PRAGMA ${text}`)
      return options.simple === true ? statement.pluck().get() : statement.all()
    }

    transaction<F extends (...args: never[]) => unknown> (fn: F): Transaction<F> {
      return this.#transactions.of(fn)
    }

    close (): this {
      if (this.#open) {
        this.#open = false
        // libsql's close lets go of the connection, but SQLite closes its
        // files only when the garbage collector has freed the statements
        // too, so the checkpoint SQLite runs as the last connection closes
        // may come late or never. It is run here, without waiting on other
        // connections (PASSIVE), so that a catalog closed by its last user
        // has its rows in the main file as with the other drivers.
        try {
          this.#db.exec('PRAGMA wal_checkpoint(PASSIVE)')
        } catch {
          // Busy or failed: the WAL keeps the rows, and the next open or close checkpoints them.
        }
        this.#db.close()
      }
      return this
    }
  }
}

// --- loading ---------------------------------------------------------------

/** node:sqlite, where it loads without a flag; its experimental warning (Node 22) is not printed. */
function loadNodeSqlite (): DatabaseConstructor {
  const original = Object.getOwnPropertyDescriptor(process, 'emitWarning')
  const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message
    if (!/^SQLite is an experimental feature/.test(text)) emitWarning(warning, ...rest)
  }) as typeof process.emitWarning
  try {
    return nodeSqliteDatabase(require(NODE_SQLITE) as NodeSqlite)
  } finally {
    if (original !== undefined) Object.defineProperty(process, 'emitWarning', original)
    else delete (process as { emitWarning?: unknown }).emitWarning
  }
}

/** libsql, whose prebuilt binary npm installs as a package of the platform's (`@libsql/linux-x64-gnu`, ...). */
function loadLibsql (): DatabaseConstructor {
  const Database = libsqlDatabase(require(LIBSQL) as LibsqlConstructor)
  // As for better-sqlite3 below: a binary that cannot load here fails now, not at the first catalog.
  new Database(':memory:').close()
  return Database
}

/** The package better-sqlite3 was loaded from, when it was. */
let betterSqlite3Package = ''

/** better-sqlite3: the optional dependency's build, else one installed beside fsbucket by its own name. */
function loadBetterSqlite3 (): DatabaseConstructor {
  const failures: string[] = []
  for (const name of [BETTER_SQLITE3_PACKAGE, BETTER_SQLITE3]) {
    try {
      const Database = require(name) as DatabaseConstructor
      // A native addon loads with its first database: open one now, so
      // that a build whose binary cannot load here is passed over.
      new Database(':memory:').close()
      betterSqlite3Package = name
      return Database
    } catch (err) {
      failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`)
    }
  }
  throw new Error(failures.join('; '))
}

function load (): { Database: DatabaseConstructor, name: string } {
  const wanted = process.env.FSBUCKET_SQLITE_DRIVER ?? ''
  const loaders: Array<[string, () => DatabaseConstructor]> = [[NODE_SQLITE, loadNodeSqlite], [LIBSQL, loadLibsql], [BETTER_SQLITE3, loadBetterSqlite3]]
  if (wanted !== '' && !loaders.some(([name]) => name === wanted)) {
    throw new Error(`FSBUCKET_SQLITE_DRIVER must be ${NODE_SQLITE}, ${LIBSQL} or ${BETTER_SQLITE3}, not ${JSON.stringify(wanted)}`)
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
    `. Node 22.13 and later have node:sqlite; on Node 20, reinstall the dependencies with this Node (npm ci), optional ones included. ${failures.join('; ')}`)
}

const loaded = load()

/** The catalogs' SQLite database class. */
export const Database: DatabaseConstructor = loaded.Database

/** The version of an installed package; its package.json is found beside its main file (libsql's `exports` do not list it). */
function packageVersion (name: string): string {
  let dir = path.dirname(require.resolve(name))
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir)
  return (require(path.join(dir, 'package.json')) as { version: string }).version
}

/** Which driver runs (`node:sqlite`, `libsql` or `better-sqlite3`), its version, and the SQLite version it runs. */
export function sqliteDriver (): { name: string, version: string, sqlite: string } {
  const version = loaded.name === NODE_SQLITE
    ? process.version.slice(1)
    : packageVersion(loaded.name === LIBSQL ? LIBSQL : betterSqlite3Package)
  const db = new Database(':memory:')
  try {
    return { name: loaded.name, version, sqlite: db.prepare<[], string>('select sqlite_version()').pluck().get() as string }
  } finally {
    db.close()
  }
}
