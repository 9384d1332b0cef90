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
import { accessSync } from 'node:fs'
import { createRequire } from 'node:module'

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
const BETTER_SQLITE3 = 'better-sqlite3'
/** The package better-sqlite3 12 is installed as (an alias: see package.json's optionalDependencies); a `better-sqlite3` installed by hand is taken too. */
const BETTER_SQLITE3_PACKAGE = 'better-sqlite3-node20'

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
    /** Transactions open on this connection: nested ones are savepoints. */
    #depth = 0

    constructor (file: string, options: OpenOptions = {}) {
      const readOnly = options.readonly === true
      // node:sqlite creates a missing file unless opened read-only: look first.
      if (options.fileMustExist === true && !readOnly && file !== ':memory:') accessSync(file)
      try {
        this.#db = new DatabaseSync(file, { readOnly })
        // better-sqlite3's default wait is 5 s.
        this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.timeout ?? 5000))}`)
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
      const run = (begin: string) => (...args: Parameters<F>): ReturnType<F> => {
        const nested = this.#depth > 0
        const savepoint = `fsbucket_${this.#depth}`
        this.exec(nested ? `SAVEPOINT ${savepoint}` : begin)
        this.#depth++
        let result: ReturnType<F>
        try {
          result = fn(...args) as ReturnType<F>
        } catch (err) {
          this.#depth--
          try {
            this.exec(nested ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : 'ROLLBACK')
          } catch {
            // SQLite may have rolled the transaction back itself (SQLITE_FULL, SQLITE_IOERR): the error that did it is the one to throw.
          }
          throw err
        }
        this.#depth--
        try {
          this.exec(nested ? `RELEASE ${savepoint}` : 'COMMIT')
        } catch (err) {
          // A COMMIT that fails leaves the transaction open: it is rolled back, as better-sqlite3 does.
          if (!nested) try { this.exec('ROLLBACK') } catch {}
          throw err
        }
        return result
      }
      const transaction = run('BEGIN') as Transaction<F>
      transaction.deferred = run('BEGIN DEFERRED')
      transaction.immediate = run('BEGIN IMMEDIATE')
      return transaction
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
  const loaders: Array<[string, () => DatabaseConstructor]> = [[NODE_SQLITE, loadNodeSqlite], [BETTER_SQLITE3, loadBetterSqlite3]]
  if (wanted !== '' && !loaders.some(([name]) => name === wanted)) {
    throw new Error(`FSBUCKET_SQLITE_DRIVER must be ${NODE_SQLITE} or ${BETTER_SQLITE3}, not ${JSON.stringify(wanted)}`)
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

/** Which driver runs (`node:sqlite` or `better-sqlite3`), its version, and the SQLite version it runs. */
export function sqliteDriver (): { name: string, version: string, sqlite: string } {
  const version = loaded.name === NODE_SQLITE
    ? process.version.slice(1)
    : (require(`${betterSqlite3Package}/package.json`) as { version: string }).version
  const db = new Database(':memory:')
  try {
    return { name: loaded.name, version, sqlite: db.prepare<[], string>('select sqlite_version()').pluck().get() as string }
  } finally {
    db.close()
  }
}
