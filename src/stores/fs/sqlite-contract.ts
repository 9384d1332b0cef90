/**
 * What the catalogs' SQLite drivers (sqlite.ts) are adapted to: the small
 * interface the catalogs use, better-sqlite3's in shape, and what the
 * adapters share: transactions as functions, nested in savepoints, and
 * SQLite's result code names.
 */
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

export type DatabaseConstructor = new (file: string, options?: OpenOptions) => SqliteDatabase

/**
 * Transactions as better-sqlite3 runs them: a function between BEGIN and
 * COMMIT, rolled back when it throws, nested ones in savepoints. (libsql has
 * a `transaction` of its own, but it nests none, and a ROLLBACK that fails
 * after SQLite rolled back by itself would hide the error that did it.)
 */
export class Transactions {
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

/** A driver's own connection, as an adapter calls it. */
export interface NativeConnection<S> {
  prepare (sql: string): S
  exec (sql: string): unknown
  close (): unknown
}

/** How a driver is adapted: its errors named (SQLite's code names in `code`), its statements wrapped, what runs before it closes. */
export interface Adapter<S> {
  named: (err: unknown) => unknown
  wrap: (statement: S) => unknown
  beforeClose?: (connection: NativeConnection<S>) => void
}

/** A driver's connection under the catalog's interface: what both adapters share. */
export class AdaptedDatabase<S> implements SqliteDatabase {
  readonly #native: NativeConnection<S>
  readonly #adapter: Adapter<S>
  #open = true
  readonly #transactions = new Transactions(sql => this.exec(sql))

  constructor (connect: () => NativeConnection<S>, adapter: Adapter<S>) {
    this.#adapter = adapter
    try {
      this.#native = connect()
    } catch (err) {
      throw adapter.named(err)
    }
  }

  get open (): boolean {
    return this.#open
  }

  prepare<P extends unknown[] | {} = unknown[], R = unknown> (sql: string): Statement<P, R> {
    try {
      return this.#adapter.wrap(this.#native.prepare(sql)) as Statement<P, R>
    } catch (err) {
      throw this.#adapter.named(err)
    }
  }

  exec (sql: string): this {
    try {
      this.#native.exec(sql)
    } catch (err) {
      throw this.#adapter.named(err)
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
      this.#adapter.beforeClose?.(this.#native)
      this.#native.close()
    }
    return this
  }
}

/** The wait on another connection's lock when the caller gives none (ms): better-sqlite3's default, kept. */
export const DEFAULT_TIMEOUT_MS = 5000

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

/** The name of SQLite's result code `errcode` where the tables above have it (every primary code, the extended ones listed). */
export function knownSqliteCodeName (errcode: number): string | undefined {
  const name = extendedCodes.get(errcode) ?? (errcode === (errcode & 0xff) ? primaryCodes[errcode] : undefined)
  return name === undefined ? undefined : `SQLITE_${name}`
}

/** The name of SQLite's result code `errcode`, as better-sqlite3 puts it in an error's `code`. */
export function sqliteCodeName (errcode: number): string {
  return knownSqliteCodeName(errcode) ?? `SQLITE_${primaryCodes[errcode & 0xff] ?? 'ERROR'}`
}
