/**
 * Temporary credentials: a key pair and a session token, made under a
 * scoped token (the parent) for one bucket, one permission the parent
 * holds, a lifetime of 1 s to 7 days, and optionally key prefixes and keys.
 *
 * Nothing is stored. The session token carries its own terms, signed:
 *
 *     base64url(JSON {v, k: accessKeyId, p: parent id, b: bucket, m: permission,
 *                     e: expiry (Unix seconds), x: prefixes, o: objects}) "." base64url(MAC)
 *
 * where MAC = HMAC-SHA256(sessionKey, first part) and sessionKey =
 * HMAC-SHA256(parent's S3 secret, "fsbucket session key"). The temporary
 * secret access key is HMAC-SHA256(sessionKey, "secret:" + accessKeyId),
 * so the S3 door recomputes it from the token and the parent's record. A
 * request is refused when the token's MAC or access key id does not match,
 * when it has expired, or when the parent is gone (revoked or expired):
 * revoking the parent revokes every session made under it.
 *
 * Session tokens minted by the hosted service's client-side recipe (a JWT
 * signed with the parent's secret) are accepted too: signed-sessions.ts.
 * These tokens are not accepted by the hosted service.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ArgumentRangeError, ArgumentTypeError } from './errors.js'
import { isPermission, type Permission, type Principal } from './access.js'
import { randomHex } from './random.js'
import { handsOn, openSignedSession, signedJwtOf, signedSessionParent } from './signed-sessions.js'
import { isValidBucketName } from './settings.js'

/** What a session needs of its parent token (tokens.ts's record). */
interface ParentRecord {
  id: string
  permission: Permission
  buckets: string[] | null
  expiresOn: string | null
  secretAccessKey: string
}

/** The parent as looked up (tokens.ts's lookup): live, expired, or gone. */
type ParentLookup = { record: ParentRecord } | { expired: ParentRecord } | null

/** Longest lifetime of temporary credentials (the hosted service's: 7 days). */
export const MAX_SESSION_SECONDS = 604_800
/** Most prefixes and keys one session may name, together (a token rides on every request). */
const MAX_SESSION_PATHS = 100
/**
 * Longest session token minted: it rides in every request's headers (or a
 * presigned URL), which a server takes up to 16 KiB of in all; 12 KiB
 * leaves the rest of a request room. Longer paths make credentials no
 * request could carry, refused at once.
 */
const MAX_SESSION_TOKEN = 12_288

export interface SessionSpec {
  bucket: string
  permission: Permission
  ttlSeconds: number
  prefixes?: string[]
  objects?: string[]
  /** The latest the credentials may live (the management API gives its caller's own expiry, so a token makes nothing that outlives it). */
  notAfter?: Date
}

export interface TemporaryCredentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken: string
}

interface SessionTerms {
  v: 1
  k: string
  p: string
  b: string
  m: Permission
  e: number
  x: string[]
  o: string[]
}

function sessionKey (parentSecret: string): Buffer {
  return createHmac('sha256', parentSecret).update('fsbucket session key').digest()
}

function mac (key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest()
}

function paths (value: unknown, what: string): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every(p => typeof p === 'string' && p !== '' && Buffer.byteLength(p) <= 1024)) {
    throw new ArgumentTypeError(`createTemporaryCredentials: ${what} must be a list of non-empty keys.`)
  }
  return value
}

/** Makes temporary credentials under `parent` (a token found and not expired), checking that it may hand on what is asked. */
export function mintSession (parent: ParentRecord, spec: SessionSpec, now: Date): TemporaryCredentials {
  if (typeof spec.bucket !== 'string' || !isValidBucketName(spec.bucket)) throw new ArgumentTypeError('createTemporaryCredentials: bucket must be a valid bucket name.')
  if (!isPermission(spec.permission)) {
    throw new ArgumentTypeError('createTemporaryCredentials: permission must be admin-read-write, admin-read-only, object-read-write or object-read-only.')
  }
  if (!Number.isInteger(spec.ttlSeconds) || spec.ttlSeconds < 1 || spec.ttlSeconds > MAX_SESSION_SECONDS) {
    throw new ArgumentRangeError(`createTemporaryCredentials: ttlSeconds must be a whole number from 1 to ${MAX_SESSION_SECONDS}.`)
  }
  if (spec.notAfter !== undefined && !(spec.notAfter instanceof Date && !Number.isNaN(spec.notAfter.getTime()))) {
    throw new ArgumentTypeError('createTemporaryCredentials: notAfter must be a valid Date.')
  }
  const prefixes = paths(spec.prefixes, 'prefixes')
  const objects = paths(spec.objects, 'objects')
  // A limit given that names no key is no limit to read as none (the whole bucket): refused, as an empty list of buckets is.
  if ((spec.prefixes !== undefined || spec.objects !== undefined) && prefixes.length + objects.length === 0) {
    throw new ArgumentTypeError('createTemporaryCredentials: prefixes and objects name no key: give at least one, or neither for the whole bucket.')
  }
  if (prefixes.length + objects.length > MAX_SESSION_PATHS) throw new ArgumentRangeError(`createTemporaryCredentials: at most ${MAX_SESSION_PATHS} prefixes and objects.`)
  if (!handsOn[parent.permission].includes(spec.permission) || (parent.buckets !== null && !parent.buckets.includes(spec.bucket))) {
    throw new ArgumentTypeError(`createTemporaryCredentials: the parent token (${parent.permission}${parent.buckets === null ? '' : ` on ${parent.buckets.join(', ')}`}) cannot grant ${spec.permission} on ${spec.bucket}.`)
  }
  const key = sessionKey(parent.secretAccessKey)
  const accessKeyId = randomHex(16)
  // Rounded up to the second: credentials minted late in a second still live their whole ttlSeconds.
  const expires = Math.ceil(now.getTime() / 1000) + spec.ttlSeconds
  const parentExpires = parent.expiresOn === null ? Infinity : Math.floor(Date.parse(parent.expiresOn) / 1000)
  const callerExpires = spec.notAfter === undefined ? Infinity : Math.floor(spec.notAfter.getTime() / 1000)
  const terms: SessionTerms = { v: 1, k: accessKeyId, p: parent.id, b: spec.bucket, m: spec.permission, e: Math.min(expires, parentExpires, callerExpires), x: prefixes, o: objects }
  const body = Buffer.from(JSON.stringify(terms)).toString('base64url')
  const sessionToken = `${body}.${mac(key, body).toString('base64url')}`
  if (sessionToken.length > MAX_SESSION_TOKEN) {
    throw new ArgumentRangeError(`createTemporaryCredentials: these prefixes and objects make a session token of ${sessionToken.length} characters, and at most ${MAX_SESSION_TOKEN} fit in a request: name fewer or shorter ones.`)
  }
  return { accessKeyId, secretAccessKey: mac(key, `secret:${accessKeyId}`).toString('hex'), sessionToken }
}

/** The parent id a session token names, or null when it is not one (read before its parent is looked up). */
export function sessionParent (sessionToken: string): string | null {
  const jwt = signedJwtOf(sessionToken)
  return jwt !== null ? signedSessionParent(jwt) : termsOf(sessionToken)?.p ?? null
}

function termsOf (sessionToken: string): SessionTerms | null {
  const dot = sessionToken.indexOf('.')
  if (dot <= 0 || sessionToken.length > 16_384) return null
  try {
    const terms = JSON.parse(Buffer.from(sessionToken.slice(0, dot), 'base64url').toString('utf8')) as SessionTerms
    if (terms?.v !== 1 || typeof terms.k !== 'string' || typeof terms.p !== 'string' || typeof terms.b !== 'string' || !isPermission(terms.m) ||
        !Number.isInteger(terms.e) || !Array.isArray(terms.x) || !Array.isArray(terms.o)) return null
    return terms
  } catch {
    return null
  }
}

/** What a session token opens to: its principal and the secret its requests are signed with, or why not. */
export type SessionOpening = { principal: Principal, secretAccessKey: string } | 'invalid' | 'expired'

/**
 * Checks a session token presented with `accessKeyId`, given the lookup of
 * its parent: invalid when malformed, forged, for another key, or its
 * parent is gone; expired past its time (or its parent's).
 */
export function openSession (sessionToken: string, accessKeyId: string, parent: ParentLookup, now: Date): SessionOpening {
  const jwt = signedJwtOf(sessionToken)
  if (jwt !== null) return parent === null ? 'invalid' : openSignedSession(jwt, accessKeyId, 'expired' in parent ? parent.expired : parent.record, 'expired' in parent, now)
  const terms = termsOf(sessionToken)
  if (terms === null || parent === null || terms.k !== accessKeyId) return 'invalid'
  const record = 'expired' in parent ? parent.expired : parent.record
  if (record.id !== terms.p) return 'invalid'
  const key = sessionKey(record.secretAccessKey)
  const dot = sessionToken.indexOf('.')
  const expected = mac(key, sessionToken.slice(0, dot))
  const given = Buffer.from(sessionToken.slice(dot + 1), 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid'
  if ('expired' in parent || terms.e * 1000 <= now.getTime()) return 'expired'
  return {
    principal: { kind: 'session', id: terms.p, permission: terms.m, buckets: [terms.b], prefixes: terms.x, objects: terms.o },
    secretAccessKey: mac(key, `secret:${accessKeyId}`).toString('hex')
  }
}
