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
 *   - an actual request with an Origin gets the same headers as that
 *     preflight (Access-Control-Allow-Origin, the rule's AllowedMethods
 *     joined by ", ", its MaxAgeSeconds when it has one, its exposed
 *     headers) when a rule matches its origin and method, whatever its status
 *     (a 404 NoSuchKey or a 403 AccessDenied too), as S3 answers: the
 *     headers are decided before the request is judged;
 *   - both answers carry `Access-Control-Allow-Credentials: true` when they
 *     echo the origin (a rule without `*`), as S3's do. Only a preflight
 *     says Access-Control-Allow-Headers (the headers it was asked for).
 *
 * Matching is the engine's `matchingCorsRule`, the HTTP routes' too: an
 * AllowedOrigin or AllowedHeader may hold one `*` wildcard
 * (`https://*.example.com`, `x-amz-*`), compared case-insensitively. Unlike
 * the HTTP routes, a public bucket without rules sends no CORS headers here:
 * S3 has no default rule.
 *
 * `Vary`: as S3, only answers to a request with an Origin say `Vary: Origin,
 * Access-Control-Request-Headers, Access-Control-Request-Method`: every
 * answer a rule matched, one of `*` too (its Access-Control-Allow-Origin is
 * `*`, but the answer to no Origin has none), and here also those no rule
 * matched when the rules echo origins; an answer to a request without
 * Origin carries none, as S3 sends none there: a cache in front of this
 * port must key on Origin, as CloudFront is told to for S3. The HTTP routes
 * vary every answer of a bucket with rules (http/cors.ts).
 */
import { corsVariesByOrigin, matchingCorsRule, type CorsRule } from '../bucket/index.js'
import { corsVary } from '../doors/request-metadata.js'

/**
 * Headers of an answer to `origin` under `rule`, preflight or not: S3 sends the matched rule's methods and max age on
 * both (recorded S3 answers: a GET from an allowed origin says `Access-Control-Allow-Methods: GET, PUT` and
 * `Access-Control-Max-Age: 3000`, as its preflight does; a rule without MaxAgeSeconds sends no max age). Varied by
 * Origin, as S3 varies every answer a rule matched (one of `*` too). An echoed origin comes with
 * `Access-Control-Allow-Credentials: true`, as S3 sends it on preflights and answers alike: without it a browser
 * refuses the answer to a request made with credentials (`fetch(url, { credentials: 'include' })`, `withCredentials`),
 * and `*` cannot be combined with them (Fetch), so S3 sends it with `*` never. It grants nothing here: this port reads
 * no cookie, and every request is still signed or judged as it would be.
 */
function corsAnswerHeaders (rule: CorsRule, origin: string): Record<string, string> {
  const wildcard = rule.allowedOrigins.includes('*')
  const headers: Record<string, string> = { 'access-control-allow-origin': wildcard ? '*' : origin, vary: corsVary }
  if (!wildcard) headers['access-control-allow-credentials'] = 'true'
  headers['access-control-allow-methods'] = rule.allowedMethods.map(m => m.toUpperCase()).join(', ')
  if (rule.maxAgeSeconds !== undefined) headers['access-control-max-age'] = String(rule.maxAgeSeconds)
  if (rule.exposeHeaders !== undefined && rule.exposeHeaders.length > 0) headers['access-control-expose-headers'] = rule.exposeHeaders.join(', ')
  return headers
}

/**
 * The CORS headers of an answer (not a preflight) to a request from `origin`: the matching rule's, or, when none
 * matches but the rules echo origins, only `Vary`: another origin's answer differs, and a cache must not give it this one.
 */
export function actualCorsHeaders (rules: CorsRule[] | null, origin: string, method: string): Record<string, string> {
  const rule = matchingCorsRule(rules, origin, method)
  if (rule !== undefined) return corsAnswerHeaders(rule, origin)
  return corsVariesByOrigin(rules) ? { vary: corsVary } : {}
}

/** The answer to a preflight `rule` allows: an actual answer's headers and the requested headers it allows. */
export function preflightAnswerHeaders (rule: CorsRule, origin: string, requestHeaders: string[]): Record<string, string> {
  const headers = corsAnswerHeaders(rule, origin)
  if (requestHeaders.length > 0) headers['access-control-allow-headers'] = requestHeaders.join(', ')
  return headers
}
