/**
 * CORS for buckets, so a page on another origin can fetch (and, with rules
 * that allow it, upload) objects.
 *
 * - A bucket with `cors` rules (set through the management API or S3's
 *   PutBucketCors) answers exactly as its rules say, matched as on the S3
 *   port (`matchingCorsRule`): the first rule whose origins, methods and
 *   allowed headers match decides; no match means no CORS headers (and 403
 *   for a preflight). Origins and allowed headers may be `*` or hold one `*`
 *   wildcard (`https://*.example.com`, `x-amz-*`). An empty list of rules
 *   is no configuration.
 * - A public bucket, or a bucket served through a public route, without
 *   rules gets the default: any origin may GET and HEAD, and ETag,
 *   Content-Range, Content-Length, Content-Type, Last-Modified and
 *   Accept-Ranges are exposed.
 * - A private bucket without rules sends no CORS headers.
 * - When a rule echoes the origin (it allows no `*`), every answer of the
 *   bucket says `Vary: Origin`, those to no Origin or to an origin no rule
 *   allows too: a cache must not give an answer made without CORS headers
 *   to a later fetch from an allowed origin. With `*` rules only (the
 *   default's), every request gets the same answer, one without an Origin
 *   too (`Access-Control-Allow-Origin: *` and the exposed headers), and no
 *   `Vary`: as the Fetch standard asks of such a server ("CORS protocol and
 *   HTTP caches"), so that a cached answer to a plain request (a
 *   navigation, an `<img>`) serves a later fetch from any origin.
 *
 * Preflights need no credentials (browsers never send them on OPTIONS).
 */
import { corsVariesByOrigin, matchingCorsRule, type CorsRule } from '../bucket/index.js'
import { corsVary, requestedHeaderNames } from '../doors/request-metadata.js'

export const defaultExposedHeaders = ['ETag', 'Content-Range', 'Content-Length', 'Content-Type', 'Last-Modified', 'Accept-Ranges']

const defaultPublicRule: CorsRule = {
  allowedOrigins: ['*'],
  allowedMethods: ['GET', 'HEAD'],
  allowedHeaders: ['*'],
  exposeHeaders: defaultExposedHeaders,
  maxAgeSeconds: 86_400
}

/** The rules that apply to a bucket, or null when it sends no CORS headers (an empty list is no rules). */
export function effectiveCorsRules (rules: CorsRule[] | null, servedPublicly: boolean): CorsRule[] | null {
  if (rules !== null && rules.length > 0) return rules
  return servedPublicly ? [defaultPublicRule] : null
}

function allowOrigin (rule: CorsRule, origin: string): Record<string, string> {
  return rule.allowedOrigins.includes('*')
    ? { 'access-control-allow-origin': '*' }
    : { 'access-control-allow-origin': origin }
}

/** The origin a request without one is matched as under rules of `*` only: each of them allows it, as it allows any. */
const anyOrigin = '*'

/**
 * CORS headers of an actual (non-preflight) request, or none; with
 * `Vary: Origin` whenever the rules echo an origin, matched or not. Rules
 * of `*` only answer a request without an Origin as they answer any origin.
 */
export function corsHeaders (rules: CorsRule[] | null, origin: string | undefined, method: string): Record<string, string> {
  if (rules === null) return {}
  const varies = corsVariesByOrigin(rules)
  const headers: Record<string, string> = varies ? { vary: 'Origin' } : {}
  const matched = origin ?? (varies ? undefined : anyOrigin)
  if (matched === undefined) return headers
  const rule = matchingCorsRule(rules, matched, method)
  if (rule === undefined) return headers
  Object.assign(headers, allowOrigin(rule, matched))
  if (rule.exposeHeaders !== undefined && rule.exposeHeaders.length > 0) {
    headers['access-control-expose-headers'] = rule.exposeHeaders.join(', ')
  }
  return headers
}

/**
 * The answer to a preflight: headers when allowed, null when refused.
 * `methods` narrows what the answer lists to what the path takes (a
 * read-only route lists GET and HEAD whatever its rule allows).
 */
export function preflightHeaders (
  rules: CorsRule[] | null,
  origin: string,
  requestMethod: string,
  requestHeaders: string | string[] | undefined,
  methods?: readonly string[]
): Record<string, string> | null {
  if (rules === null) return null
  const asked = requestedHeaderNames(requestHeaders)
  const rule = matchingCorsRule(rules, origin, requestMethod, asked)
  if (rule === undefined) return null
  const headers = allowOrigin(rule, origin)
  const allowed = rule.allowedMethods.map(m => m.toUpperCase()).filter(m => methods === undefined || methods.includes(m))
  headers['access-control-allow-methods'] = allowed.join(', ')
  if (asked.length > 0) headers['access-control-allow-headers'] = asked.join(', ')
  if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds)
  if (corsVariesByOrigin(rules)) headers.vary = corsVary
  return headers
}
