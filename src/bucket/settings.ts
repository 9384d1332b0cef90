/**
 * Bucket settings as data: their shape, defaults and validation, bucket
 * names, host names, and the upload abort age read from a lifecycle
 * document. Pure functions, shared by the registry, its storages and doors.
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { isRuleId } from './keys.js'
import { parseLifecycleRules } from './lifecycle.js'
import { MAX_CORS_CONFIGURATION_BYTES, MAX_CORS_RULES } from './limits.js'
import type { StorageClass } from './types.js'
import { isQueueNotificationsList, type QueueNotifications } from './notifications.js'
import { xmlDocumentFrameBytes, xmlElementBytes } from './xml-bytes.js'

export interface CorsRule {
  allowedOrigins: string[]
  allowedMethods: string[]
  allowedHeaders?: string[]
  exposeHeaders?: string[]
  maxAgeSeconds?: number
  /** The rule's name, given back by every door as it was given. */
  id?: string
}

export interface BucketSettings {
  /** GET/HEAD without credentials. */
  public: boolean
  /** null (or an empty list, as older files may hold) = no rules: the default CORS of public buckets on the HTTP routes. */
  cors: CorsRule[] | null
  /** The management API's lifecycle document, `{rules}`, as `parseLifecycleRules` keeps it (see the notes above). */
  lifecycle: unknown | null
  /** Custom domains: requests whose Host is one of these are served from this bucket, read-only and public. */
  domains: string[]
  /** Storage class of objects put without one. */
  storageClass: StorageClass
  /** Event notification rules, by the queue they send to (notifications.ts). */
  notifications: QueueNotifications[]
}

export const defaultSettings: Readonly<BucketSettings> = Object.freeze({
  public: false,
  cors: null,
  lifecycle: null,
  domains: [],
  storageClass: 'Standard',
  notifications: []
})

/** Settings with every field present (files written by older versions may lack some). */
export function withDefaults (settings: Partial<BucketSettings>): BucketSettings {
  return { ...defaultSettings, domains: [], notifications: [], ...settings }
}

/** 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit. */
const bucketNamePattern = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/

export function isValidBucketName (name: string): boolean {
  return bucketNamePattern.test(name)
}

/** Whether a host name (`hostName`'s) may be a custom domain: an IP literal never is, so no door looks one up for it (which keeps the registry off the hot path). */
export function mayBeCustomDomain (host: string): boolean {
  return host !== '' && !host.startsWith('[') && !/^\d{1,3}(\.\d{1,3}){3}$/.test(host)
}

/** `Host` header value → the lowercase host name without port (IPv6 brackets kept). */
export function hostName (host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '')
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']')
    return end === -1 ? lower : lower.slice(0, end + 1)
  }
  const colon = lower.indexOf(':')
  return (colon === -1 ? lower : lower.slice(0, colon)).replace(/\.$/, '')
}

/**
 * Abort age (ms) of uploads in progress from a lifecycle document, or
 * undefined when no enabled whole-bucket rule sets one (the engine's 7 days).
 */
export function uploadMaxAgeFromLifecycle (lifecycle: unknown): number | undefined {
  const rules = (lifecycle as { rules?: unknown } | null)?.rules
  if (!Array.isArray(rules)) return undefined
  let smallest: number | undefined
  for (const rule of rules as Array<Record<string, any>>) {
    // Enabled only when `enabled` is true, as the sweep reads a stored rule (lifecycle.ts).
    if (rule?.enabled !== true) continue
    const prefix = rule?.conditions?.prefix
    if (typeof prefix === 'string' && prefix !== '') continue
    const condition = rule?.abortMultipartUploadsTransition?.condition
    if (condition?.type !== 'Age' || typeof condition.maxAge !== 'number' || !(condition.maxAge >= 0)) continue
    const ms = condition.maxAge * 1000
    if (smallest === undefined || ms < smallest) smallest = ms
  }
  return smallest
}

/** Checks a settings patch and returns it with normalised values; throws TypeError on a wrong shape. */
export function validateSettingsPatch (patch: Partial<BucketSettings>): Partial<BucketSettings> {
  const out: Partial<BucketSettings> = {}
  if (patch.public !== undefined) {
    if (typeof patch.public !== 'boolean') throw new TypeError('settings.public must be a boolean')
    out.public = patch.public
  }
  if (patch.storageClass !== undefined) {
    if (patch.storageClass !== 'Standard' && patch.storageClass !== 'InfrequentAccess') {
      throw new TypeError('settings.storageClass must be "Standard" or "InfrequentAccess"')
    }
    out.storageClass = patch.storageClass
  }
  if (patch.domains !== undefined) {
    if (!Array.isArray(patch.domains) || !patch.domains.every(d => typeof d === 'string' && d.length > 0)) {
      throw new TypeError('settings.domains must be an array of host names')
    }
    out.domains = [...new Set(patch.domains.map(hostName))]
  }
  if (patch.cors !== undefined) {
    if (patch.cors !== null && !(Array.isArray(patch.cors) && patch.cors.every(isCorsRule))) {
      throw new TypeError('settings.cors must be null or an array of {allowedOrigins, allowedMethods, allowedHeaders?, exposeHeaders?, maxAgeSeconds?}: strings of printable ASCII, one * at most in an origin or an allowed header, maxAgeSeconds a whole number of seconds')
    }
    if (patch.cors !== null && patch.cors.length > MAX_CORS_RULES) throw new TypeError(`settings.cors holds at most ${MAX_CORS_RULES} rules (got ${patch.cors.length})`)
    const bytes = patch.cors === null ? 0 : corsConfigurationBytes(patch.cors)
    if (bytes > MAX_CORS_CONFIGURATION_BYTES) throw new TypeError(`settings.cors is at most ${MAX_CORS_CONFIGURATION_BYTES} bytes as an S3 CORSConfiguration (got ${bytes})`)
    // No rule is no configuration, as every door reads it back.
    out.cors = patch.cors === null || patch.cors.length === 0 ? null : patch.cors
  }
  if (patch.lifecycle !== undefined) {
    const lifecycle = patch.lifecycle
    if (lifecycle !== null && (typeof lifecycle !== 'object' || Array.isArray(lifecycle))) throw new TypeError('settings.lifecycle must be null or {rules: [...]}')
    out.lifecycle = lifecycle === null ? null : { rules: parseLifecycleRules((lifecycle as { rules?: unknown }).rules ?? []) }
  }
  if (patch.notifications !== undefined) {
    if (!isQueueNotificationsList(patch.notifications)) throw new TypeError('settings.notifications must be an array of {queueId, account, rules}')
    out.notifications = patch.notifications
  }
  return out
}

function isStringArray (value: unknown): value is string[] {
  return Array.isArray(value) && value.every(v => typeof v === 'string')
}

/** Origins, methods and header names go out in response headers: printable ASCII only (a CR or LF could never be sent). */
export function isHeaderText (value: string): boolean {
  return /^[\x20-\x7e]*$/.test(value)
}

/** Whether `value` holds one `*` at most: S3's rule for an AllowedOrigin and an AllowedHeader ("can not have more than one wildcard"). */
function hasOneWildcardAtMost (value: string): boolean {
  const star = value.indexOf('*')
  return star === -1 || value.indexOf('*', star + 1) === -1
}

/** An allowed CORS origin: header text with one `*` at most. */
export function isCorsOrigin (origin: string): boolean {
  return isHeaderText(origin) && hasOneWildcardAtMost(origin)
}

/** An allowed CORS request header: header text with one `*` at most (`*`, `x-amz-*`). */
export function isCorsAllowedHeader (header: string): boolean {
  return isHeaderText(header) && hasOneWildcardAtMost(header)
}

/** The largest `maxAgeSeconds`: S3's MaxAgeSeconds is an xsd:int. */
export const MAX_CORS_MAX_AGE_SECONDS = 2 ** 31 - 1

/**
 * CORS matching, the one every door uses. A pattern (an allowed origin or
 * header) is compared case-insensitively and may hold one `*`, which stands
 * for any run of characters (`https://*.example.com`, `x-amz-*`, `*`).
 * `lowerValue` is lowercased once by the caller: an 8 KB Origin against a
 * configuration's thousands of patterns is not lowercased for each.
 */
export function corsPatternMatches (pattern: string, lowerValue: string): boolean {
  if (pattern === '*') return true
  const star = pattern.indexOf('*')
  if (star === -1) return pattern.length === lowerValue.length && pattern.toLowerCase() === lowerValue
  const head = pattern.slice(0, star).toLowerCase()
  const tail = pattern.slice(star + 1).toLowerCase()
  return lowerValue.length >= head.length + tail.length && lowerValue.startsWith(head) && lowerValue.endsWith(tail)
}

/**
 * The rule that decides a CORS request, as S3 judges it on every door: the
 * first whose allowed origins match `origin`, whose allowed methods hold
 * `method`, and whose allowed headers cover every one of `requestHeaders`
 * (a preflight's `Access-Control-Request-Headers`, lowercase; none for an
 * actual request). An empty list is no configuration.
 */
export function matchingCorsRule (rules: readonly CorsRule[] | null, origin: string, method: string, requestHeaders: readonly string[] = []): CorsRule | undefined {
  if (rules === null || rules.length === 0) return undefined
  const wanted = method.toUpperCase()
  const lowerOrigin = origin.toLowerCase()
  return rules.find(rule =>
    rule.allowedOrigins.some(pattern => corsPatternMatches(pattern, lowerOrigin)) &&
    rule.allowedMethods.some(m => m.toUpperCase() === wanted) &&
    requestHeaders.every(h => (rule.allowedHeaders ?? []).some(pattern => corsPatternMatches(pattern, h))))
}

/**
 * Whether answers under `rules` depend on the request's Origin beyond its
 * presence: some rule echoes the origin (it allows no `*`), so a cache must
 * keep one answer per Origin (`Vary: Origin`), the answers to no Origin or
 * to an origin no rule allows included.
 */
export function corsVariesByOrigin (rules: readonly CorsRule[] | null): boolean {
  if (rules === null) return false
  // Asked on every read of the bucket: judged once per rules (settings are read anew, not changed, when they change).
  let varies = varyingRules.get(rules)
  if (varies === undefined) varyingRules.set(rules, varies = rules.some(rule => !rule.allowedOrigins.includes('*')))
  return varies
}

const varyingRules = new WeakMap<readonly CorsRule[], boolean>()

/**
 * The size of `rules` as the S3 door's GetBucketCors writes them, byte for
 * byte (declaration, namespace and escapes included): what
 * MAX_CORS_CONFIGURATION_BYTES bounds on every door. Measured on that one
 * canonical form so that what one door stores the S3 door gives back in a
 * body its PutBucketCors takes (its cap on the body is the same number), and
 * JSON's terser spelling buys no more.
 */
export function corsConfigurationBytes (rules: CorsRule[]): number {
  const elements = (name: string, values: readonly string[] | undefined): number =>
    (values ?? []).reduce((sum, value) => sum + xmlElementBytes(name, value), 0)
  let bytes = xmlDocumentFrameBytes('CORSConfiguration')
  for (const rule of rules) {
    bytes += '<CORSRule></CORSRule>'.length + elements('ID', rule.id === undefined ? undefined : [rule.id]) +
      elements('AllowedOrigin', rule.allowedOrigins) + elements('AllowedMethod', rule.allowedMethods) +
      elements('AllowedHeader', rule.allowedHeaders) + elements('ExposeHeader', rule.exposeHeaders) +
      elements('MaxAgeSeconds', rule.maxAgeSeconds === undefined ? undefined : [String(rule.maxAgeSeconds)])
  }
  return bytes
}

function isHeaderTextArray (value: unknown): value is string[] {
  return isStringArray(value) && value.every(isHeaderText)
}

function isCorsRule (rule: unknown): rule is CorsRule {
  const r = rule as CorsRule
  return typeof r === 'object' && r !== null &&
    isStringArray(r.allowedOrigins) && r.allowedOrigins.every(isCorsOrigin) && isHeaderTextArray(r.allowedMethods) &&
    (r.allowedHeaders === undefined || (isStringArray(r.allowedHeaders) && r.allowedHeaders.every(isCorsAllowedHeader))) &&
    (r.exposeHeaders === undefined || isHeaderTextArray(r.exposeHeaders)) &&
    (r.id === undefined || (typeof r.id === 'string' && isRuleId(r.id))) &&
    (r.maxAgeSeconds === undefined || (Number.isInteger(r.maxAgeSeconds) && r.maxAgeSeconds >= 0 && r.maxAgeSeconds <= MAX_CORS_MAX_AGE_SECONDS))
}

