/**
 * CORS on the S3 port, from the bucket's CORS rules (the same rules
 * Get/PutBucketCors and the management API read and write), judged as S3
 * judges them, so that a page on another origin can upload with a
 * presigned URL:
 *
 *   - a preflight (OPTIONS with Origin and Access-Control-Request-Method)
 *     needs no signature; the first rule whose AllowedOrigin matches the
 *     origin, whose AllowedMethod is the requested method and whose
 *     AllowedHeaders cover every requested header decides. No rule, no
 *     configuration, or no such bucket answers the same 403 AccessForbidden
 *     (S3 says NoSuchBucket and "CORS is not enabled" apart; an unsigned
 *     request must not learn which buckets exist);
 *   - an actual request with an Origin gets Access-Control-Allow-Origin (and
 *     the rule's exposed headers) when a rule matches its origin and method.
 *
 * An AllowedOrigin or AllowedHeader may hold one `*` wildcard
 * (`https://*.example.com`, `x-amz-*`), compared case-insensitively. Unlike
 * the HTTP routes, a public bucket without rules sends no CORS headers here:
 * S3 has no default rule.
 */
import type { CorsRule } from '../bucket/index.js'

function wildcardMatches (pattern: string, value: string): boolean {
  const p = pattern.toLowerCase()
  const v = value.toLowerCase()
  const star = p.indexOf('*')
  if (star === -1) return p === v
  const head = p.slice(0, star)
  const tail = p.slice(star + 1)
  return v.length >= head.length + tail.length && v.startsWith(head) && v.endsWith(tail)
}

export function matchingCorsRule (rules: CorsRule[] | null, origin: string, method: string, requestHeaders: string[] = []): CorsRule | undefined {
  if (rules === null) return undefined
  const wanted = method.toUpperCase()
  return rules.find(rule =>
    rule.allowedOrigins.some(pattern => wildcardMatches(pattern, origin)) &&
    rule.allowedMethods.some(m => m.toUpperCase() === wanted) &&
    requestHeaders.every(h => (rule.allowedHeaders ?? []).some(pattern => wildcardMatches(pattern, h))))
}

/** Headers of an answer to `origin` under `rule`. */
export function corsAnswerHeaders (rule: CorsRule, origin: string): Record<string, string> {
  const headers: Record<string, string> = rule.allowedOrigins.includes('*')
    ? { 'access-control-allow-origin': '*' }
    : { 'access-control-allow-origin': origin, vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method' }
  if (rule.exposeHeaders !== undefined && rule.exposeHeaders.length > 0) headers['access-control-expose-headers'] = rule.exposeHeaders.join(', ')
  return headers
}

/** The answer to an allowed preflight. */
export function preflightAnswerHeaders (rule: CorsRule, origin: string, requestHeaders: string[]): Record<string, string> {
  const headers = corsAnswerHeaders(rule, origin)
  headers['access-control-allow-methods'] = rule.allowedMethods.map(m => m.toUpperCase()).join(', ')
  if (requestHeaders.length > 0) headers['access-control-allow-headers'] = requestHeaders.join(', ')
  if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds)
  return headers
}

/** `Access-Control-Request-Headers` → lowercase names. */
export function requestedHeaders (value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(',') : value ?? ''
  return text.split(',').map(h => h.trim().toLowerCase()).filter(h => h !== '')
}
