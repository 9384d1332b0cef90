/**
 * Temporary credentials a client mints itself, by the hosted service's
 * client-side recipe, with no call to any API: the holder of a parent
 * token's S3 pair signs a JWT (HS256, keyed with the parent's secret access
 * key) whose claims say what the credentials may do:
 *
 *     iss: the parent's access key id    bucket: one bucket
 *     scope: one of the four permissions  exp (and iat): Unix seconds
 *     paths?: {prefixPaths, objectPaths}  actions?: S3 operation names
 *     sub: the account, aud: the endpoint's host (both carried, not checked)
 *
 * and derives the rest from it: the access key id is the parent's, the
 * secret access key is the hex SHA-256 of the JWT text, and the session
 * token is base64("jwt/" + JWT). So this module only reads: it finds the
 * JWT in a session token, names its parent, and checks it against the
 * parent's record (signature, what the parent may hand on, expiry).
 *
 * `aud` is not compared with the request's host: a local endpoint answers
 * to many names (localhost, 127.0.0.1, a container's), and the signature
 * already binds the credentials to a parent known here only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { isPermission, type Permission, type Principal } from './access.js'
import { sha256Hex } from './checksums.js'
import { isValidBucketName } from './settings.js'

/** What a check needs of the parent token (tokens.ts's record). */
export interface SigningParent {
  id: string
  permission: Permission
  buckets: string[] | null
  expiresOn: string | null
  secretAccessKey: string
}

/** The longest lifetime the recipe may give (the hosted service's: 7 days). */
const MAX_LIFETIME_SECONDS = 604_800
/** Longest session token read (a token rides on every request). */
const MAX_TOKEN_LENGTH = 16_384

interface Claims {
  iss: string
  bucket: string
  scope: Permission
  exp: number
  iat?: number
  prefixes: string[]
  objects: string[]
  actions?: string[]
}

/** What each permission may hand on: itself and what it includes. */
export const handsOn: Record<Permission, readonly Permission[]> = {
  'admin-read-write': ['admin-read-write', 'admin-read-only', 'object-read-write', 'object-read-only'],
  'admin-read-only': ['admin-read-only', 'object-read-only'],
  'object-read-write': ['object-read-write', 'object-read-only'],
  'object-read-only': ['object-read-only']
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every(v => typeof v === 'string' && v !== '')

/**
 * Whether `paths` has the claim's shape: absent, or an object naming
 * `prefixPaths` and `objectPaths` only. Anything else (a list, a string,
 * a misspelt `prefixpaths`) is a limit this module cannot read, and read
 * as none it would open the whole bucket: the token is refused instead.
 */
function isPathsClaim (paths: unknown): boolean {
  if (paths === undefined || paths === null) return true
  if (typeof paths !== 'object' || Array.isArray(paths)) return false
  return Object.keys(paths).every(name => name === 'prefixPaths' || name === 'objectPaths')
}

/**
 * Whether the claims hold a limit spelt or placed where it is not read: a
 * misspelt `actions` (`action`, `Actions`) or `paths`, or a path list beside
 * `paths` (`prefixPaths`, `prefixes`, ...). Read as absent, it would lift
 * the limit its writer meant (every operation, the whole bucket), as a
 * misshapen `paths` would (isPathsClaim).
 */
function hasUnreadLimit (body: Record<string, unknown>): boolean {
  return Object.keys(body).some(name => {
    const lower = name.toLowerCase()
    return ((lower === 'actions' || lower === 'paths') && name !== lower) ||
      ['action', 'path', 'prefixpaths', 'objectpaths', 'prefixes', 'objects'].includes(lower)
  })
}

/** The JWT inside a session token made by the recipe, or null when the token is not one. */
export function signedJwtOf (sessionToken: string): string | null {
  if (sessionToken.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9+/]+={0,2}$/.test(sessionToken)) return null
  const text = Buffer.from(sessionToken, 'base64').toString('utf8')
  return text.startsWith('jwt/') ? text.slice(4) : null
}

/** The claims of `jwt` when they have the recipe's shape (the signature is not checked here), else null. */
function claimsOf (jwt: string): Claims | null {
  const parts = jwt.split('.')
  if (parts.length !== 3) return null
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as Record<string, unknown>
    const body = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown>
    if (header?.alg !== 'HS256' || typeof body !== 'object' || body === null) return null
    const { iss, bucket, scope, exp, iat, paths, actions } = body
    if (typeof iss !== 'string' || typeof bucket !== 'string' || !isValidBucketName(bucket) || !isPermission(scope) || !Number.isInteger(exp)) return null
    if (iat !== undefined && !Number.isInteger(iat)) return null
    if (actions !== undefined && !isStringList(actions)) return null
    if (!isPathsClaim(paths) || hasUnreadLimit(body)) return null
    const { prefixPaths = [], objectPaths = [] } = (paths ?? {}) as { prefixPaths?: unknown, objectPaths?: unknown }
    if (!isStringList(prefixPaths) || !isStringList(objectPaths)) return null
    // A `paths` naming no key is a limit that cannot be read: never read as none (the whole bucket).
    if (paths !== undefined && paths !== null && prefixPaths.length + objectPaths.length === 0) return null
    const claims: Claims = { iss, bucket, scope, exp: exp as number, prefixes: prefixPaths, objects: objectPaths }
    if (iat !== undefined) claims.iat = iat as number
    if (actions !== undefined) claims.actions = actions
    return claims
  } catch {
    return null
  }
}

/** The parent a recipe's JWT names (its issuer), or null when it is not one. */
export function signedSessionParent (jwt: string): string | null {
  return claimsOf(jwt)?.iss ?? null
}

/** What the JWT opens to under `parent` (a live or an expired record), or why not. */
export function openSignedSession (jwt: string, accessKeyId: string, parent: SigningParent, parentExpired: boolean, now: Date):
{ principal: Principal, secretAccessKey: string } | 'invalid' | 'expired' {
  const claims = claimsOf(jwt)
  if (claims === null || claims.iss !== accessKeyId || parent.id !== claims.iss) return 'invalid'
  const signed = jwt.slice(0, jwt.lastIndexOf('.'))
  const expected = createHmac('sha256', parent.secretAccessKey).update(signed).digest()
  const given = Buffer.from(jwt.slice(jwt.lastIndexOf('.') + 1), 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid'
  if (!handsOn[parent.permission].includes(claims.scope) || (parent.buckets !== null && !parent.buckets.includes(claims.bucket))) return 'invalid'
  const nowSeconds = Math.floor(now.getTime() / 1000)
  if (claims.exp - (claims.iat ?? nowSeconds) > MAX_LIFETIME_SECONDS || claims.exp - nowSeconds > MAX_LIFETIME_SECONDS) return 'invalid'
  if (parentExpired || claims.exp <= nowSeconds) return 'expired'
  const principal: Principal = { kind: 'session', id: parent.id, permission: claims.scope, buckets: [claims.bucket], prefixes: claims.prefixes, objects: claims.objects }
  if (claims.actions !== undefined) principal.operations = claims.actions
  return { principal, secretAccessKey: sha256Hex(jwt) }
}
