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
 * - Every answer of a bucket with rules (the default's too) says `Vary:
 *   Origin`, those to no Origin or to an origin no rule allows as well: a
 *   request without an Origin gets no CORS headers, one from an allowed
 *   origin gets them, and a cache must not give the answer to a plain
 *   request (a navigation, an `<img>`) to a later fetch from an allowed
 *   origin, which would then fail. Answering `Access-Control-Allow-Origin:
 *   *` to requests without an Origin instead (which the Fetch standard
 *   allows a server of `*` rules) would open private reads: a server
 *   without credentials lets a foreign page's reads through only when they
 *   carry no Origin, their bodies opaque to it (site-guard.ts), and such an
 *   answer, cached, would then serve that page's CORS fetch readably.
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

/** The default as a list, made once: every public read without rules asks for it. */
const defaultPublicRules = [defaultPublicRule]

/** The rules that apply to a bucket, or null when it sends no CORS headers (an empty list is no rules). */
export function effectiveCorsRules (rules: CorsRule[] | null, servedPublicly: boolean): CorsRule[] | null {
  if (rules !== null && rules.length > 0) return rules
  return servedPublicly ? defaultPublicRules : null
}

function allowOrigin (rule: CorsRule, origin: string): Record<string, string> {
  return rule.allowedOrigins.includes('*')
    ? { 'access-control-allow-origin': '*' }
    : { 'access-control-allow-origin': origin }
}

/**
 * CORS headers of an actual (non-preflight) request: those of the rule its
 * Origin matches, if any, and `Vary: Origin` whenever there are rules; none
 * without rules.
 */
export function corsHeaders (rules: CorsRule[] | null, origin: string | undefined, method: string): Record<string, string> {
  if (rules === null || rules.length === 0) return {}
  const headers: Record<string, string> = { vary: 'Origin' }
  if (origin === undefined) return headers
  const rule = matchingCorsRule(rules, origin, method)
  if (rule === undefined) return headers
  Object.assign(headers, allowOrigin(rule, origin))
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
