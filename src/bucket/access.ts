/**
 * Who may do what: principals, their permissions, and the one decision
 * every door asks (`authorize`). Doors find out who a request is (a bearer
 * token, a SigV4 key pair, a session token) and name the action it asks
 * for; the answer is decided here and nowhere else.
 *
 * Permissions are the hosted service's four:
 *
 * | permission        | may                                                                  |
 * |-------------------|----------------------------------------------------------------------|
 * | admin-read-write  | everything                                                           |
 * | admin-read-only   | list buckets, read settings, list and read objects, read the account |
 * | object-read-write | list, read, write, delete objects (multipart too) of its buckets     |
 * | object-read-only  | list and read objects of its buckets                                 |
 *
 * An object permission may be limited to some buckets (`buckets`; null:
 * every bucket). Listing buckets is allowed to every principal, and the
 * doors show only the buckets `authorize(p, 'buckets:list', name)` admits,
 * so a token scoped to one bucket sees that one. Admin permissions cover
 * every bucket: a bucket list with them is refused when a token is made.
 *
 * Temporary credentials (`kind: 'session'`) are one bucket's, possibly
 * limited to key prefixes and to whole keys: an object action with a key
 * is allowed when the key is one of `objects` or starts with one of
 * `prefixes` (neither given: every key); a listing is allowed when its
 * prefix starts with one of `prefixes`. They never act on the account, and
 * admin permissions in them act on their bucket only. A session may also
 * be limited to some operations (`operations`, S3 operation names), which
 * the S3 door passes with each question. A session limited to keys changes
 * no setting of its bucket (`bucket:write`): a setting reaches every key.
 *
 * Actions name what is touched, not the door's operation:
 * `buckets:list` (which buckets exist), `bucket:read` / `bucket:write`
 * (a bucket's settings, its creation and deletion), `objects:list`,
 * `object:read`, `object:write` (puts, deletes, multipart uploads), and
 * `account:read` / `account:write` (the management API's other state:
 * zones, records, tokens). A key of `undefined` asks about the bucket's
 * objects in general; a door that learns keys later (a bulk delete, a form
 * upload) asks again for each.
 */
import { BucketError } from './errors.js'
import { keptForm } from './keys.js'
import { parseRuleDate } from './rule-time.js'

export const permissions = ['admin-read-write', 'admin-read-only', 'object-read-write', 'object-read-only'] as const
export type Permission = typeof permissions[number]

export function isPermission (value: unknown): value is Permission {
  return typeof value === 'string' && (permissions as readonly string[]).includes(value)
}

export type Action =
  'buckets:list' | 'bucket:read' | 'bucket:write' | 'objects:list' | 'object:read' | 'object:write' | 'account:read' | 'account:write'

export interface Principal {
  /** `admin`: the configured credentials; `token`: a scoped token; `session`: temporary credentials. */
  kind: 'admin' | 'token' | 'session'
  /** The token's id (its S3 access key id); for a session, the parent token's; null for the configured credentials. */
  id: string | null
  permission: Permission
  /** The buckets it may act on; null: every bucket. */
  buckets: readonly string[] | null
  /** A session's key scope: keys starting with one of these (absent with `objects`: none). */
  prefixes?: readonly string[]
  /** A session's key scope: these keys. */
  objects?: readonly string[]
  /** A session's operations (S3 operation names, as the hosted client-side recipe's `actions` claim names them); absent: every one. */
  operations?: readonly string[]
}

/** The configured credentials (FSBUCKET_TOKEN, the configured S3 pair, the tokenless loopback mode): everything. */
export const ADMIN: Principal = Object.freeze({ kind: 'admin', id: null, permission: 'admin-read-write', buckets: null })

const readActions = new Set<Action>(['buckets:list', 'bucket:read', 'objects:list', 'object:read', 'account:read'])

function permits (permission: Permission, action: Action): boolean {
  switch (permission) {
    case 'admin-read-write': return true
    case 'admin-read-only': return readActions.has(action)
    case 'object-read-write': return action === 'buckets:list' || action === 'objects:list' || action === 'object:read' || action === 'object:write'
    case 'object-read-only': return action === 'buckets:list' || action === 'objects:list' || action === 'object:read'
  }
}

/**
 * Whether a session's key scope admits `key` (for a listing: the listing's
 * prefix). Judged on the NFC forms of both, as the engine keeps and lists
 * keys: `cafe\u0301/x` is the object `café/x`, outside a scope of `cafe`.
 */
function keyInScope (principal: Principal, action: Action, key: string | undefined): boolean {
  const prefixes = principal.prefixes ?? []
  const objects = principal.objects ?? []
  if (!limitedToKeys(principal)) return true
  // A listing that names no prefix lists the whole bucket.
  if (key === undefined && action !== 'objects:list') return true
  const kept = keptForm(key ?? '')
  if (action === 'objects:list') return prefixes.some(p => kept.startsWith(keptForm(p)))
  return objects.some(o => keptForm(o) === kept) || prefixes.some(p => kept.startsWith(keptForm(p)))
}

/** Whether a session is limited to some keys of its bucket (`prefixes`, `objects`). */
function limitedToKeys (principal: Principal): boolean {
  return (principal.prefixes ?? []).length > 0 || (principal.objects ?? []).length > 0
}

/**
 * The decision: may `principal` do `action` (on `bucket`, on `key`)?
 * `buckets:list` with a bucket asks whether that bucket is shown.
 */
export function authorize (principal: Principal, action: Action, bucket?: string, key?: string, operation?: string): boolean {
  if (!permits(principal.permission, action)) return false
  if (principal.operations !== undefined && (operation === undefined || !principal.operations.includes(operation))) return false
  if (principal.kind === 'session' && (action === 'account:read' || action === 'account:write')) return false
  if (action === 'account:read' || action === 'account:write') return principal.permission.startsWith('admin-')
  if (bucket !== undefined && principal.buckets !== null && !principal.buckets.includes(bucket)) return false
  if (bucket === undefined && principal.buckets !== null && action !== 'buckets:list') return false
  if (principal.kind === 'session' && action.startsWith('object')) return keyInScope(principal, action, key)
  // A setting reaches every key (a lifecycle rule expires objects outside the scope, CORS opens them all to a site): a session limited to keys changes none.
  if (principal.kind === 'session' && action === 'bucket:write') return !limitedToKeys(principal)
  return true
}

/**
 * `authorize`, or the catalogue's AccessDenied (10950) for the binding
 * method `method` (the S3 door passes its operation's name, which a
 * session's `operations` are checked against).
 */
export function requireAccess (principal: Principal, action: Action, bucket?: string, key?: string, method = 'authorize'): void {
  if (!authorize(principal, action, bucket, key, method)) throw new BucketError('AccessDenied', method)
}

const durationForm = /^(\d{1,6})([smhd])$/
const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/**
 * When a token expires, from text: a date and time as lifecycle and lock
 * dates are written (`parseRuleDate`: `2026-12-31`, midnight UTC, or
 * `2026-12-31T00:00:00Z` with a zone, `Z` or `+02:00`; a day the calendar
 * lacks, such as February 30, is refused rather than moved into March) or,
 * given `now`, a duration from it (`90s`, `15m`, `12h`, `30d`). Null for
 * text of neither form, and, given `now`, for a time not after it. Without
 * `now` (the management API's `expires_on`) only a date and time is read,
 * past or not: the token's maker refuses one that is not in the future.
 */
export function parseExpiry (text: string, now?: Date): Date | null {
  const trimmed = text.trim()
  const duration = durationForm.exec(trimmed)
  if (duration !== null) {
    if (now === undefined) return null
    const seconds = Number(duration[1]) * unitSeconds[duration[2]]
    return seconds > 0 ? new Date(now.getTime() + seconds * 1000) : null
  }
  const ms = parseRuleDate(trimmed)
  if (Number.isNaN(ms) || (now !== undefined && ms <= now.getTime())) return null
  return new Date(ms)
}
