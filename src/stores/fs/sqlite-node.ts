/**
 * The node:sqlite driver (Node 22.13 and later, 24), adapted to the
 * catalogs' interface (sqlite-contract.ts): BLOBs read as Buffers, SQLite's
 * code name in an error's `code`, `fileMustExist` checked before opening,
 * better-sqlite3's transactions and row shapes. See sqlite.ts.
 */
import { accessSync } from 'node:fs'
import { createRequire, isBuiltin } from 'node:module'
import { AdaptedDatabase, DEFAULT_TIMEOUT_MS, sqliteCodeName, type DatabaseConstructor, type OpenOptions, type RunResult } from './sqlite-contract.js'

const require = createRequire(import.meta.url)

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
  const adapter = { named, wrap: (statement: NodeStatement) => new NodeSqliteStatement(statement) }
  return class NodeSqliteDatabase extends AdaptedDatabase<NodeStatement> {
    constructor (file: string, options: OpenOptions = {}) {
      const readOnly = options.readonly === true
      // node:sqlite creates a missing file unless opened read-only: look first.
      if (options.fileMustExist === true && !readOnly && file !== ':memory:') accessSync(file)
      super(() => {
        const db = new DatabaseSync(file, { readOnly })
        db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.timeout ?? DEFAULT_TIMEOUT_MS))}`)
        return db
      }, adapter)
    }
  }
}

/** node:sqlite, where it loads without a flag; its experimental warning (Node 22) is not printed. */
export function loadNodeSqlite (): DatabaseConstructor {
  // Asked first: the error of requiring a module Node lacks (Node 20) costs a process 10 ms to format.
  if (!isBuiltin('node:sqlite')) throw new Error(`Node ${process.version} has no node:sqlite`)
  const original = Object.getOwnPropertyDescriptor(process, 'emitWarning')
  const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message
    if (!/^SQLite is an experimental feature/.test(text)) emitWarning(warning, ...rest)
  }) as typeof process.emitWarning
  try {
    return nodeSqliteDatabase(require('node:sqlite') as NodeSqlite)
  } finally {
    if (original !== undefined) Object.defineProperty(process, 'emitWarning', original)
    else delete (process as { emitWarning?: unknown }).emitWarning
  }
}
