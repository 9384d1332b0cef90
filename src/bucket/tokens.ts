/**
 * Scoped tokens: made, listed and revoked here, and looked up by every door
 * (a bearer value on the HTTP routes and the management API, an access key
 * id on the S3 port).
 *
 * A token is a random value (40 characters of base64url, like the hosted
 * service's) with an id (32 hex digits). Its S3 key pair is the hosted
 * service's derivation: the access key id is the token's id, the secret
 * access key the hex SHA-256 of the token's value. The value is shown once,
 * when the token is made, and never stored.
 *
 * Stored: one document `tokens.json` in the registry's state area `tokens`
 * (on a data directory `<dataDir>/.tokens/tokens.json`; in the PostgreSQL
 * catalog its documents table), each record holding the id, name,
 * permission, buckets, dates, and the S3 secret (SHA-256 of the value).
 * SigV4 cannot be verified without the secret itself (the signing key is an
 * HMAC chain keyed by it, over the date and region each request chooses), so
 * the secret is what is kept; a bearer value is checked by hashing it and
 * finding that hash among the secrets.
 *
 * What a stolen catalog gives: every token's S3 secret, hence S3 access with
 * each token's permissions (and the minting of temporary credentials under
 * it) until the token is revoked or expires. It does not give the token
 * values: SHA-256 is not invertible, so the HTTP routes and the management
 * API, which take the value, stay closed to the thief; nor the configured
 * admin credentials (FSBUCKET_TOKEN and the configured S3 pair are never
 * stored). Revoking a token (deleting its record) ends all of it; what is
 * kept of it (revokedMark) opens nothing.
 *
 * A new token works at once everywhere: a lookup that misses reads the
 * records again. A revocation reaches a running server within
 * `TOKEN_CACHE_MS`: each process keeps the document it read for that long,
 * and drops it at once after a change it made itself. What it parsed it
 * keeps longer, while the storage's version of the document says nothing
 * changed (`#read`), so a lookup costs the same with ten tokens or ten
 * thousand; a change anywhere is seen at the next check. An expired token is
 * refused at lookup, as an unknown one is (the lookup says which, for the
 * message). A revoked token is remembered by the hash of its secret (the
 * last 1,000), so that a server which takes any bearer value (loopback, no
 * credentials configured) still refuses one that was revoked.
 */
import { timingSafeEqual } from 'node:crypto'
import { sha256Hex } from './checksums.js'
import { ArgumentRangeError, ArgumentTypeError } from './errors.js'
import { isPermission, type Permission, type Principal } from './access.js'
import { MAX_TOKEN_BUCKETS } from './limits.js'
import { storageFailure, type StateDocuments } from './port.js'
import { randomBase64url, randomHex } from './random.js'
import { mintSession, openSession, type SessionOpening, type SessionSpec, type TemporaryCredentials } from './sessions.js'
import { isValidBucketName } from './settings.js'

/** How long a process trusts the token records it read (a revocation elsewhere is seen within it; a new token at once). */
export const TOKEN_CACHE_MS = 1000

export interface TokenRecord {
  id: string
  name: string
  permission: Permission
  /** null: every bucket. */
  buckets: string[] | null
  /** ISO 8601. */
  createdOn: string
  /** ISO 8601, or null: never. */
  expiresOn: string | null
  /** Hex SHA-256 of the token's value: its S3 secret access key (the value itself is never stored). */
  secretAccessKey: string
  /** The token that asked for this one (a share link's, made with a scoped token): revoking it revokes this one too. */
  madeBy?: string
}

/** What a listing shows of a token: everything but the secret. */
export type TokenSummary = Omit<TokenRecord, 'secretAccessKey'> & { expired: boolean }

export interface TokenSpec {
  name: string
  permission: Permission
  /** Absent or empty: every bucket (object permissions only). */
  buckets?: string[]
  expiresOn?: Date | null
  /** The id of the token this one is made for (TokenRecord.madeBy). */
  madeBy?: string
}

/** A token just made: its record with its value, shown once, and its S3 pair (`accessKeyId` = `id`). */
export type NewToken = TokenRecord & { token: string, accessKeyId: string }

/** What a lookup finds: a principal, an expired token, or nothing. */
export type TokenLookup = { principal: Principal, record: TokenRecord } | { expired: TokenRecord } | null

/** A bearer value's lookup: also a token that was revoked (a server that takes any token must still refuse it). */
export type BearerLookup = TokenLookup | { revoked: true }

/** At most this many revoked tokens are remembered (the oldest are forgotten first). */
const MAX_REVOKED = 1000

/** What is kept of a revoked token: the hash of its secret (itself the hash of its value), enough to know the value again, never to use it. */
function revokedMark (secret: string): string {
  return sha256Hex(secret)
}

interface TokensDocument {
  format: 1
  tokens: TokenRecord[]
  /** Revoked tokens (`revokedMark`), oldest first; absent in documents written before revocations were remembered. */
  revoked?: string[]
}

/** Whether `record` is a token's record as this version writes it (a hand edit may leave one that is not). */
function isTokenRecord (record: unknown): record is TokenRecord {
  if (typeof record !== 'object' || record === null) return false
  const r = record as Record<string, unknown>
  const isDate = (value: unknown): boolean => typeof value === 'string' && !Number.isNaN(Date.parse(value))
  return typeof r.id === 'string' && typeof r.name === 'string' && isPermission(r.permission) &&
    (r.buckets === null || (Array.isArray(r.buckets) && r.buckets.every(b => typeof b === 'string'))) &&
    isDate(r.createdOn) && (r.expiresOn === null || isDate(r.expiresOn)) &&
    typeof r.secretAccessKey === 'string' && /^[0-9a-f]{64}$/.test(r.secretAccessKey) &&
    (r.madeBy === undefined || typeof r.madeBy === 'string')
}

/** Why `document` is not a tokens document this version reads, or null when it is one. */
function damageOfTokens (document: unknown): string | null {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return 'is not a JSON object'
  const { format, tokens, revoked } = document as { format?: unknown, tokens?: unknown, revoked?: unknown }
  if (format !== undefined && format !== 1) return `is format ${JSON.stringify(format)}, which this version does not read (format 1; written by a newer fsbucket?)`
  if (!Array.isArray(tokens)) return 'has no "tokens" list'
  const bad = tokens.findIndex(record => !isTokenRecord(record))
  if (bad !== -1) return `has a token record that is not one (tokens[${bad}]: each needs id, name, permission, buckets, createdOn, expiresOn and a hex secretAccessKey)`
  if (revoked !== undefined && !(Array.isArray(revoked) && revoked.every(mark => typeof mark === 'string'))) return 'has a "revoked" that is not a list of strings'
  return null
}

/**
 * `document`, read from `where` (the file's full path, or the catalog's
 * row: `StateDocuments.where`), when this version reads it; else
 * StateDamaged (10916, every door's 500), naming `where` and, in its cause,
 * what is wrong, for the log (never a record's fields: they hold secrets).
 * A newer version's tokens, or a hand edit that left a record half made,
 * could grant what they no longer mean (a `buckets` string would match
 * every name it contains): every token request fails instead, and no
 * change is written over the document until it is mended.
 */
function readable (document: TokensDocument, where: string): TokensDocument {
  const damage = damageOfTokens(document)
  if (damage === null) return document
  throw storageFailure('StateDamaged', 'reading the tokens', { path: where, cause: new Error(`${where} ${damage}`) })
}

/** The S3 secret access key of a token value (the hosted derivation): hex SHA-256. */
export function secretOfToken (value: string): string {
  return sha256Hex(value)
}

/** Checks a new token's fields; the engine's argument errors (400 at every door). */
function checkSpec (spec: TokenSpec, now: Date): void {
  if (typeof spec.name !== 'string' || spec.name.trim() === '' || spec.name.length > 120) {
    throw new ArgumentTypeError('createToken: a token needs a name of 1 to 120 characters.')
  }
  if (!isPermission(spec.permission)) {
    throw new ArgumentTypeError('createToken: the permission must be admin-read-write, admin-read-only, object-read-write or object-read-only.')
  }
  const buckets = spec.buckets ?? []
  // Counted before each name is checked: a refusal of a huge list costs no more than its length.
  if (Array.isArray(buckets) && buckets.length > MAX_TOKEN_BUCKETS) {
    throw new ArgumentRangeError(`createToken: a token is limited to at most ${MAX_TOKEN_BUCKETS} buckets (got ${buckets.length}); give it every bucket instead, or make several tokens.`)
  }
  if (!Array.isArray(buckets) || buckets.some(b => typeof b !== 'string' || !isValidBucketName(b))) {
    throw new ArgumentTypeError('createToken: buckets must be valid bucket names.')
  }
  if (buckets.length > 0 && spec.permission.startsWith('admin-')) {
    throw new ArgumentTypeError('createToken: admin permissions cover every bucket; limit a token to buckets with object-read-write or object-read-only.')
  }
  if (spec.expiresOn != null && !(spec.expiresOn.getTime() > now.getTime())) {
    throw new ArgumentRangeError('createToken: the expiry must be in the future.')
  }
}

function principalOf (record: TokenRecord): Principal {
  return { kind: 'token', id: record.id, permission: record.permission, buckets: record.buckets }
}

function summaryOf (record: TokenRecord, now: Date): TokenSummary {
  const { secretAccessKey: _secret, ...shown } = record
  return Object.assign({}, shown, { expired: isExpired(record, now) })
}

function isExpired (record: TokenRecord, now: Date): boolean {
  return record.expiresOn !== null && Date.parse(record.expiresOn) <= now.getTime()
}

/** The shapes of what `create` makes: a value of 30 random bytes in base64url, an id of 16 in hex. */
const tokenValue = /^[A-Za-z0-9_-]{40}$/

/**
 * A new token's value: 30 random bytes in base64url (`draw`), drawn again
 * while it begins with `-`, which a command line would read as an option
 * (`fsbucket token revoke -d...` takes the rest for `--data` and may print
 * it). That costs a value 0.02 of its 240 random bits.
 */
export function newTokenValue (draw: () => string = () => randomBase64url(30)): string {
  for (;;) {
    const value = draw()
    if (!value.startsWith('-')) return value
  }
}

/** Whether `text` has the shape of a token's value (not its id): the CLI tells one given for the other. */
export function looksLikeTokenValue (text: string): boolean {
  return tokenValue.test(text)
}
const tokenId = /^[0-9a-f]{32}$/

interface Snapshot {
  readAt: number
  /** The document's version when it was read (`StateDocuments.version`; undefined: the storage keeps none). */
  version: string | null | undefined
  byId: Map<string, TokenRecord>
  bySecret: Map<string, TokenRecord>
  /** The marks of the revoked tokens. */
  revoked: Set<string>
}

/** A token asked for by one (`madeBy`) that was revoked, or has expired, since it was checked: nothing is made. */
export class MakerGoneError extends Error {
  constructor () {
    super('create: the token this one would be made for (madeBy) was revoked or has expired.')
    this.name = 'MakerGoneError'
  }
}

/** The tokens of one registry (its state area `tokens`), with a short-lived cache for lookups. */
export class TokenDirectory {
  readonly #state: StateDocuments
  /** How a damaged document is named: the file's full path, or the catalog's row. */
  readonly #where: string
  readonly #clock: () => Date
  #snapshot: Snapshot | null = null
  #reading: Promise<Snapshot> | null = null
  /** When this process last changed the records: a read begun before it may hold what was revoked, and is not kept. */
  #changedAt = -Infinity

  constructor (state: StateDocuments, clock: () => Date) {
    this.#state = state
    this.#where = state.where('tokens.json')
    this.#clock = clock
  }

  /** The records, from the cache unless it is older than `TOKEN_CACHE_MS`, or was read before `asked` (a `performance.now()` instant) or before this process's last change. */
  async #records (asked = -Infinity): Promise<Snapshot> {
    for (;;) {
      const notBefore = Math.max(asked, this.#changedAt)
      const snapshot = this.#snapshot
      if (snapshot !== null && snapshot.readAt >= notBefore && performance.now() - snapshot.readAt < TOKEN_CACHE_MS) return snapshot
      // One read at a time: a burst of requests after the cache ran out waits for the same read.
      const read = await (this.#reading ??= this.#read().finally(() => { this.#reading = null }))
      // A read that began before `notBefore` may have missed what it asks for: then the next one.
      if (read.readAt >= notBefore) return read
    }
  }

  /**
   * The records as they stand. When the storage says the document is the
   * one already parsed (its version is unchanged), that parse is kept and
   * only its time renewed: a second's worth of lookups, and every miss of a
   * token-shaped value, then costs one cheap check (a stat of the file, one
   * row's version), not a read and parse of every token's record. The
   * version is asked before the document is read, so a change landing in
   * between is kept under the old version and read again at the next check,
   * never the other way round.
   */
  async #read (): Promise<Snapshot> {
    const readAt = performance.now()
    const version = this.#state.version === undefined ? undefined : await this.#state.version('tokens.json')
    const kept = this.#snapshot
    if (version !== undefined && kept !== null && kept.version === version) {
      const renewed = { readAt, version, byId: kept.byId, bySecret: kept.bySecret, revoked: kept.revoked }
      this.#snapshot = renewed
      return renewed
    }
    const document = readable(await this.#state.read<TokensDocument>('tokens.json', { format: 1, tokens: [] }), this.#where)
    const records = document.tokens
    const snapshot = {
      readAt,
      version,
      byId: new Map(records.map(r => [r.id, r])),
      bySecret: new Map(records.map(r => [r.secretAccessKey, r])),
      revoked: new Set(document.revoked ?? [])
    }
    this.#snapshot = snapshot
    return snapshot
  }

  /**
   * The record `find` finds. A miss in a cached snapshot of a value shaped
   * as this directory makes them (`shaped`) reads the records again before
   * it is believed: a token made by another process (a worker, the command
   * line, another gateway) works at once, as a share link must the moment
   * it is printed. Misses share one read in flight; a value no token could
   * have (a configured secret, a stranger's guess of another shape) is
   * answered from the cache.
   */
  async #lookup (shaped: boolean, find: (snapshot: Snapshot) => TokenRecord | undefined): Promise<TokenRecord | undefined> {
    const asked = performance.now()
    const cached = await this.#records()
    return find(cached) ?? (!shaped || cached.readAt >= asked ? undefined : find(await this.#records(asked)))
  }

  /** Makes a token; its value is in the answer and nowhere else. */
  async create (spec: TokenSpec): Promise<NewToken> {
    const now = this.#clock()
    checkSpec(spec, now)
    const token = newTokenValue()
    const record: TokenRecord = {
      id: randomHex(16),
      name: spec.name.trim(),
      permission: spec.permission,
      buckets: spec.buckets === undefined || spec.buckets.length === 0 ? null : [...new Set(spec.buckets)].sort(),
      createdOn: now.toISOString(),
      expiresOn: spec.expiresOn == null ? null : spec.expiresOn.toISOString(),
      secretAccessKey: secretOfToken(token)
    }
    if (spec.madeBy !== undefined) record.madeBy = spec.madeBy
    const made = await this.#state.transaction(async tx => {
      const document = readable(await tx.load<TokensDocument>('tokens.json', { format: 1, tokens: [] }), this.#where)
      if (spec.madeBy !== undefined) {
        // Judged where a revocation commits: a token made for one revoked meanwhile would outlive it.
        const maker = document.tokens.find(r => r.id === spec.madeBy)
        if (maker === undefined || isExpired(maker, now)) return false
      }
      document.tokens.push(record)
      return true
    })
    if (!made) throw new MakerGoneError()
    this.#changedAt = performance.now()
    const { secretAccessKey, ...fields } = record
    return Object.assign({}, fields, { token, accessKeyId: record.id, secretAccessKey })
  }

  /** Every token, oldest first, without secrets. */
  async list (): Promise<TokenSummary[]> {
    const now = this.#clock()
    const document = readable(await this.#state.read<TokensDocument>('tokens.json', { format: 1, tokens: [] }), this.#where)
    return document.tokens.map(r => summaryOf(r, now))
  }

  /**
   * Removes the token `id`; false when there was none. Its key pair and its
   * temporary credentials stop working with it, and so do the tokens made
   * for it (`madeBy`: the share links it made), theirs in turn.
   */
  async revoke (id: string): Promise<boolean> {
    const removed = await this.#state.transaction(async tx => {
      const document = readable(await tx.load<TokensDocument>('tokens.json', { format: 1, tokens: [] }), this.#where)
      if (!document.tokens.some(r => r.id === id)) return false
      const ending = new Set([id])
      // The tokens made for one that ends, and for those in turn, until no more are found.
      let found = true
      while (found) {
        const more = document.tokens.filter(r => r.madeBy !== undefined && ending.has(r.madeBy) && !ending.has(r.id))
        for (const r of more) ending.add(r.id)
        found = more.length > 0
      }
      const gone = document.tokens.filter(r => ending.has(r.id))
      document.tokens = document.tokens.filter(r => !ending.has(r.id))
      document.revoked = [...document.revoked ?? [], ...gone.map(r => revokedMark(r.secretAccessKey))].slice(-MAX_REVOKED)
      return gone.length > 0
    })
    this.#changedAt = performance.now()
    return removed
  }

  /** The token whose value is `value` (a bearer token), or word that it was revoked. */
  async byValue (value: string): Promise<BearerLookup> {
    const secret = secretOfToken(value)
    const record = await this.#lookup(tokenValue.test(value), snapshot => snapshot.bySecret.get(secret))
    if (record === undefined) return (await this.#records()).revoked.has(revokedMark(secret)) ? { revoked: true } : null
    // The map found it by the hash; the comparison is the constant-time one all secrets get.
    if (!timingSafeEqual(Buffer.from(record.secretAccessKey), Buffer.from(secret))) return null
    return this.#found(record)
  }

  /** The token whose S3 access key id is `id`. */
  async byAccessKey (id: string): Promise<TokenLookup> {
    const record = await this.#lookup(tokenId.test(id), snapshot => snapshot.byId.get(id))
    return record === undefined ? null : this.#found(record)
  }

  /** Temporary credentials under the token `parentId` (sessions.ts); null when there is no such token, or it expired. */
  async createTemporaryCredentials (parentId: string, spec: SessionSpec): Promise<TemporaryCredentials | null> {
    const parent = await this.byAccessKey(parentId)
    if (parent === null || 'expired' in parent) return null
    return mintSession(parent.record, spec, this.#clock())
  }

  /** What the session token `sessionToken`, presented with `accessKeyId`, opens to. */
  async openSession (sessionToken: string, accessKeyId: string, parentId: string): Promise<SessionOpening> {
    return openSession(sessionToken, accessKeyId, await this.byAccessKey(parentId), this.#clock())
  }

  #found (record: TokenRecord): TokenLookup {
    if (isExpired(record, this.#clock())) return { expired: record }
    return { principal: principalOf(record), record }
  }
}
