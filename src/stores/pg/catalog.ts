/**
 * The connection to a PostgreSQL catalog: one `pg` pool per process, the
 * schema migrated on connect, and the three ways the stores use it (one
 * statement, one transaction, one advisory lock). It owns the translation
 * of "the server cannot be reached" into the catalogue's 10908
 * (CatalogUnavailable, HTTP 503): a request fails fast instead of hanging,
 * and the pool reconnects on its own once the server is back.
 *
 * A lock never takes more than one connection: the statements run while it
 * is held go to the connection holding it, and the callers of one lock in
 * this process wait their turn here, not each on a connection of its own.
 * (Waiters each holding a connection while the holder needs one more is how
 * a burst of settings updates would otherwise exhaust the pool and stall.)
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import pg from 'pg'
import { BucketError } from '../../bucket/port.js'
import { commitStarted, notePool, noteCommit } from '../meter.js'
import { migrate } from './schema.js'

/** How long a request waits for a connection before failing with 10908. */
const CONNECT_TIMEOUT_MS = 5_000
/**
 * How long a statement may take before the request fails with 10908. The
 * server cancels it then (`statement_timeout`), so a statement that waited
 * on a lock cannot still commit after its request was answered "try
 * again"; the gateway gives up a little later by itself
 * (QUERY_TIMEOUT_GRACE_MS), for a server that stopped answering at all
 * (whose statements, already sent, may still commit when it wakes: such a
 * write's outcome is unknown, docs/scale-out.md).
 */
const STATEMENT_TIMEOUT_MS = 30_000
const QUERY_TIMEOUT_GRACE_MS = 5_000
/**
 * How long the server keeps a transaction whose gateway sent nothing more
 * (`idle_in_transaction_session_timeout`) before ending the session. A
 * gateway that links files between two statements (completion links every
 * part) says it is alive meanwhile, as long as the work advances (`busy`).
 * Without the limit, a gateway that froze there (a paused VM, a stopped
 * process, a network partition the server's TCP does not notice) keeps its
 * row locks, and every write to those keys through every other gateway
 * fails with 10908 until the freeze ends.
 */
const IDLE_IN_TRANSACTION_MS = 60_000

/** Error codes of a server or network that is down, restarting or unreachable (not of a bad statement). */
const UNAVAILABLE = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ENOENT',
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
  '57014', // canceled: the statement ran past statement_timeout (a lock held elsewhere)
  '08000', '08001', '08003', '08004', '08006', '53300' // connection exceptions, too many connections
])

export function isUnavailable (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  // A system error naming a path is a file's (a part missing as an upload completes), never the catalog's connection.
  if (typeof code === 'string' && UNAVAILABLE.has(code)) return !(code.startsWith('E') && typeof (err as { path?: unknown }).path === 'string')
  const message = err instanceof Error ? err.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended unexpectedly/i.test(message)
}

/**
 * Whether the server refused a login (beside the outages of UNAVAILABLE):
 * SQLSTATE class 28 (authorization: a password rotated under running
 * gateways, a pg_hba.conf line removed) or 3D000 (the database is gone). At
 * start-up that is a setting to correct (`connect` says so); while gateways
 * run it is an outage like the others, answered 10908 until the operator
 * has finished, never 10001 (which is for bugs).
 */
function refusedConnection (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (/^28[0-9A-Z]{3}$/.test(code) || code === '3D000')
}

/** An unreachable catalog, or one refusing connections, becomes 10908; other errors pass through. */
export function catalogError (err: unknown, what: string): unknown {
  if (err instanceof BucketError) return err
  return isUnavailable(err) || refusedConnection(err) ? new BucketError('CatalogUnavailable', what) : err
}

/** `bigint` columns (sizes, times, revisions) read as numbers: all stay below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8 && format !== 'binary') return (value: string) => Number(value)
    return pg.types.getTypeParser(oid, format as 'text')
  }) as typeof pg.types.getTypeParser
}

/** Whether `url` names a PostgreSQL catalog. */
export function isCatalogUrl (url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url)
}

const HIDDEN = '[redacted]'
/** What is shown of a catalog string that is no URL, or that still names a password after the redaction. */
export const NOT_SHOWN = '[not shown: it may hold a password]'

/**
 * The catalog URL without its password, for messages and logs, whatever its
 * scheme (a mistyped one is reported too). The password runs to the last
 * `@`: a URL parser reads `user:p@ss@host` as the password `p@ss`, and one
 * holding a `/` cannot be told from a path, so this hides too much rather
 * than a part (a host, when a later parameter holds an `@`). A `password`
 * parameter is hidden as well. A string that is not a URL (a keyword
 * string, a URL with a stray space or a missing `:`), whose quoting and
 * escapes leave no sure end to a password, is not shown at all, nor is one
 * that still names a password (once percent-decoded, as the driver reads
 * parameters).
 */
export function redactUrl (url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return NOT_SHOWN
  const shown = url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:).*@/i, `$1${HIDDEN}@`)
    .replace(/([?&]password=)[^&#]*/gi, `$1${HIDDEN}`)
  return /password(?!=\[redacted\])/i.test(percentDecoded(shown)) ? NOT_SHOWN : shown
}

function percentDecoded (text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  }
}

export interface CatalogOptions {
  /** Most connections this process opens (default 10). */
  maxConnections?: number
  /** How long a statement may run before the server cancels it (default 30 s). */
  statementTimeoutMs?: number
  /** How long the server waits on a transaction whose gateway went silent before ending it (default 60 s). */
  idleInTransactionMs?: number
}

/** The connection a lock holds, for the statements run while it is held. */
interface Holder { client: pg.PoolClient, held: boolean }

export class PgCatalog {
  readonly pool: pg.Pool
  readonly #holder = new AsyncLocalStorage<Holder>()
  /** Per lock name, the end of the queue of this process's callers. */
  readonly #turns = new Map<string, Promise<void>>()
  /** The server's limit on a silent transaction (`idle_in_transaction_session_timeout`). */
  readonly #idleInTransactionMs: number
  /** Stops counting the pool in the metrics. */
  readonly #unnotePool: () => void

  private constructor (pool: pg.Pool, idleInTransactionMs: number, max: number) {
    this.pool = pool
    this.#idleInTransactionMs = idleInTransactionMs
    this.#unnotePool = notePool(() => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }))
  }

  /** The connection of the lock the caller runs under, while it is held. */
  #held (): pg.PoolClient | undefined {
    const holder = this.#holder.getStore()
    return holder?.held === true ? holder.client : undefined
  }

  /** Whether the caller runs under a lock of this catalog (its statements then go through the lock's connection). */
  holdsLock (): boolean {
    return this.#held() !== undefined
  }

  /** Connects to the catalog at `url` and migrates its schema; fails when the server cannot be reached. */
  static async connect (url: string, options: CatalogOptions = {}): Promise<PgCatalog> {
    if (!isCatalogUrl(url)) throw new TypeError(`The catalog must be a postgres:// URL (got ${redactUrl(url) === NOT_SHOWN ? 'a string that is not one, not shown as it may hold a password' : JSON.stringify(redactUrl(url))}).`)
    const statementMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS
    const idleInTransactionMs = options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: statementMs,
      query_timeout: statementMs + QUERY_TIMEOUT_GRACE_MS,
      idle_in_transaction_session_timeout: idleInTransactionMs,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
      types
    })
    // An idle connection the server closed (a restart): the pool drops it; the next request opens another.
    pool.on('error', () => {})
    const catalog = new PgCatalog(pool, idleInTransactionMs, options.maxConnections ?? 10)
    try {
      const client = await pool.connect()
      // Ended by the server mid-migration: the next statement fails, not the process (see withClient).
      let broken: Error | undefined
      const onError = (err: Error): void => { broken ??= err }
      client.on('error', onError)
      try {
        await migrate(client)
      } finally {
        client.off('error', onError)
        client.release(broken)
      }
    } catch (err) {
      await catalog.close()
      if (isUnavailable(err)) throw new Error(`The catalog ${redactUrl(url)} cannot be reached: ${(err as Error).message}`, { cause: err })
      // A refused password, a missing database, a malformed URL: say which setting is wrong.
      throw new Error(`The catalog ${redactUrl(url)} cannot be used: ${(err as Error).message}`, { cause: err })
    }
    return catalog
  }

  /** Runs one statement. */
  async query<R extends pg.QueryResultRow = any> (what: string, text: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await (this.#held() ?? this.pool).query<R>(text, params)
    } catch (err) {
      throw catalogError(err, what)
    }
  }

  /** Runs `fn` with one connection of the pool (the lock's, under a lock: `fn` must not run statements of its own beside it then). */
  async withClient<T> (what: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const held = this.#held()
    if (held !== undefined) {
      try {
        return await fn(held)
      } catch (err) {
        throw catalogError(err, what)
      }
    }
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (err) {
      throw catalogError(err, what)
    }
    let broken: unknown
    // The pool listens for errors of idle connections only: one the server
    // ends while `fn` works between two statements (a restart, a terminated
    // session) would otherwise be an unhandled 'error' event and end the
    // process. Its next statement fails (10908) and it is not reused.
    const onError = (err: Error): void => { broken ??= err }
    client.on('error', onError)
    try {
      return await fn(client)
    } catch (err) {
      if (isUnavailable(err)) broken ??= err
      throw catalogError(err, what)
    } finally {
      client.off('error', onError)
      // A connection that failed is not handed to the next request.
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /**
   * Runs `work`, file work between two statements of a transaction on
   * `client` (linking an upload's parts, a copy's segments), which calls
   * `progress` after each step. A `SELECT 1` goes to the server every third
   * of its limit on silent transactions when a step was made since the last
   * one: the server ends the transactions of gateways that froze, or whose
   * file work hangs (a stuck mount), but not one linking thousands of parts
   * on a slow mount. A failed `SELECT 1` is the next statement's to report.
   */
  async busy<T> (client: pg.PoolClient, work: (progress: () => void) => Promise<T>): Promise<T> {
    let steps = 0
    let told = 0
    let alive: Promise<unknown> = Promise.resolve()
    const timer = this.#idleInTransactionMs > 0
      ? setInterval(() => {
        if (steps === told) return
        told = steps
        alive = client.query('SELECT 1').catch(() => {})
      }, this.#idleInTransactionMs / 3)
      : undefined
    try {
      return await work(() => { steps++ })
    } finally {
      clearInterval(timer)
      await alive
    }
  }

  /** Runs `fn` in one READ COMMITTED transaction (or the given isolation); rolled back when it throws. */
  async transaction<T> (what: string, fn: (client: pg.PoolClient) => Promise<T>, isolation = 'READ COMMITTED'): Promise<T> {
    return await this.withClient(what, async client => {
      const started = commitStarted()
      await client.query(`BEGIN ISOLATION LEVEL ${isolation}`)
      try {
        const result = await fn(client)
        await client.query('COMMIT')
        noteCommit('postgresql', started, null)
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      }
    })
  }

  /**
   * Runs `fn` holding the session advisory lock named `name`, shared by
   * every process using the catalog. With `wait` false, returns undefined at
   * once when another session (or another caller in this process) holds it.
   * A process that dies loses the lock. The statements `fn` runs through
   * this catalog go to the connection holding the lock.
   *
   * With `scope` 'transaction', `fn` runs in one transaction that holds the
   * lock (`fn` must not open a transaction of its own then): a gateway that
   * freezes inside it loses the lock when the server ends the silent
   * transaction (IDLE_IN_TRANSACTION_MS), where a session lock would stay
   * held as long as the connection does. For short critical sections (a
   * settings update); a sweep, long and mostly file work, keeps a session lock.
   */
  async withLock<T> (what: string, name: string, fn: () => Promise<T>, wait = true, scope: 'session' | 'transaction' = 'session'): Promise<T | undefined> {
    const xact = scope === 'transaction' ? '_xact' : ''
    const locked = async (client: pg.PoolClient): Promise<T | undefined> => {
      const lock = wait ? `SELECT pg_advisory${xact}_lock(hashtextextended($1, 0))` : `SELECT pg_try_advisory${xact}_lock(hashtextextended($1, 0)) AS got`
      const result = await client.query<{ got?: boolean }>(lock, [`fsbucket:${name}`])
      if (!wait && result.rows[0].got !== true) return undefined
      const holder: Holder = { client, held: true }
      try {
        return await this.#holder.run(holder, fn)
      } finally {
        holder.held = false
        // A transaction's lock goes with the transaction.
        if (xact === '') await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [`fsbucket:${name}`])
      }
    }
    return await this.#inTurn(name, wait, async () => scope === 'transaction'
      ? await this.transaction(what, locked)
      : await this.withClient(what, locked))
  }

  /** Runs `take` after this process's earlier callers of the lock `name`; undefined at once, without `wait`, when one is running. */
  async #inTurn<T> (name: string, wait: boolean, take: () => Promise<T | undefined>): Promise<T | undefined> {
    if (!wait && this.#turns.has(name)) return undefined
    const before = this.#turns.get(name)
    let done = (): void => {}
    const mine = new Promise<void>(resolve => { done = resolve })
    this.#turns.set(name, mine)
    try {
      await before
      return await take()
    } finally {
      if (this.#turns.get(name) === mine) this.#turns.delete(name)
      done()
    }
  }

  /** Runs a trivial statement: resolves when the server answers (readiness). */
  async ping (): Promise<void> {
    await this.query('checking the catalog', 'SELECT 1')
  }

  async close (): Promise<void> {
    this.#unnotePool()
    await this.pool.end().catch(() => {})
  }
}
