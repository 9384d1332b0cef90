/**
 * CORS for buckets, so a page on another origin can fetch (and, with rules
 * that allow it, upload) objects.
 *
 * - A bucket with `cors` rules (set through the management API) answers
 *   exactly as its rules say: the first rule whose origins and methods match
 *   decides; no match means no CORS headers (and 403 for a preflight).
 *   Origins may be `*` or contain one `*` wildcard (`https://*.example.com`);
 *   allowed headers may be `*`.
 * - A public bucket, or a bucket served through a public route, without
 *   rules gets the default: any origin may GET and HEAD, and ETag,
 *   Content-Range, Content-Length, Content-Type, Last-Modified and
 *   Accept-Ranges are exposed.
 * - A private bucket without rules sends no CORS headers.
 *
 * Preflights need no credentials (browsers never send them on OPTIONS).
 */
import type { CorsRule } from '../bucket/index.js'

export const defaultExposedHeaders = ['ETag', 'Content-Range', 'Content-Length', 'Content-Type', 'Last-Modified', 'Accept-Ranges']

const defaultPublicRule: CorsRule = {
  allowedOrigins: ['*'],
  allowedMethods: ['GET', 'HEAD'],
  allowedHeaders: ['*'],
  exposeHeaders: defaultExposedHeaders,
  maxAgeSeconds: 86_400
}

/** The rules that apply to a bucket, or null when it sends no CORS headers. */
export function effectiveCorsRules (rules: CorsRule[] | null, servedPublicly: boolean): CorsRule[] | null {
  if (rules !== null) return rules
  return servedPublicly ? [defaultPublicRule] : null
}

/** `origin` is lowercased once by the caller: an 8 KB Origin against a configuration's thousands of patterns is not lowercased for each. */
function originMatches (pattern: string, lowerOrigin: string): boolean {
  if (pattern === '*') return true
  const star = pattern.indexOf('*')
  if (star === -1) return pattern.toLowerCase() === lowerOrigin
  const head = pattern.slice(0, star).toLowerCase()
  const tail = pattern.slice(star + 1).toLowerCase()
  return lowerOrigin.length >= head.length + tail.length && lowerOrigin.startsWith(head) && lowerOrigin.endsWith(tail)
}

function matchingRule (rules: CorsRule[], origin: string, method: string): CorsRule | undefined {
  const wanted = method.toUpperCase()
  const lower = origin.toLowerCase()
  return rules.find(rule =>
    rule.allowedOrigins.some(pattern => originMatches(pattern, lower)) &&
    rule.allowedMethods.some(m => m.toUpperCase() === wanted))
}

function allowOrigin (rule: CorsRule, origin: string): Record<string, string> {
  // A literal `*` needs no Vary; an echoed origin does, so caches keep one copy per origin.
  return rule.allowedOrigins.includes('*')
    ? { 'access-control-allow-origin': '*' }
    : { 'access-control-allow-origin': origin, vary: 'Origin' }
}

/** CORS headers of an actual (non-preflight) request, or none. */
export function corsHeaders (rules: CorsRule[] | null, origin: string | undefined, method: string): Record<string, string> {
  if (rules === null || origin === undefined) return {}
  const rule = matchingRule(rules, origin, method)
  if (rule === undefined) return {}
  const headers = allowOrigin(rule, origin)
  if (rule.exposeHeaders !== undefined && rule.exposeHeaders.length > 0) {
    headers['access-control-expose-headers'] = rule.exposeHeaders.join(', ')
  }
  return headers
}

/** The answer to a preflight: headers when allowed, null when refused. */
export function preflightHeaders (
  rules: CorsRule[] | null,
  origin: string,
  requestMethod: string,
  requestHeaders: string | undefined
): Record<string, string> | null {
  if (rules === null) return null
  const rule = matchingRule(rules, origin, requestMethod)
  if (rule === undefined) return null
  const asked = (requestHeaders ?? '').split(',').map(h => h.trim().toLowerCase()).filter(h => h !== '')
  const allowed = (rule.allowedHeaders ?? []).map(h => h.toLowerCase())
  if (!allowed.includes('*') && !asked.every(h => allowed.includes(h))) return null
  const headers = allowOrigin(rule, origin)
  headers['access-control-allow-methods'] = rule.allowedMethods.map(m => m.toUpperCase()).join(', ')
  if (asked.length > 0) headers['access-control-allow-headers'] = asked.join(', ')
  if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds)
  if (headers.vary !== undefined) headers.vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers'
  return headers
}
