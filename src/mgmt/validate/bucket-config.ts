/**
 * Lifecycle and CORS documents of the API ↔ the bucket settings the
 * gateway and the sweeper read.
 *
 * Lifecycle rules are stored in the API's own shape, which the sweeper
 * carries out (src/bucket/lifecycle.ts); a bucket without rules reads as
 * the service's default: abort uploads in progress after 7 days. A rule
 * needs `conditions`, whose `prefix` may be left out (`{}`: the whole
 * bucket), as the service's schema has it; the engine checks them and
 * keeps only the fields it reads (bucket/lifecycle.ts).
 *
 * CORS rules are translated: the API's `{allowed: {origins, methods,
 * headers}, exposeHeaders, maxAgeSeconds, id}` is stored as `{allowedOrigins,
 * allowedMethods, allowedHeaders, exposeHeaders, maxAgeSeconds, id}`.
 */
import { MAX_CORS_CONFIGURATION_BYTES, MAX_CORS_MAX_AGE_SECONDS, MAX_CORS_RULES, RULE_ID_REQUIREMENT, corsConfigurationBytes, isCorsAllowedHeader, isCorsOrigin, isHeaderText, isRuleId, parseLifecycleRules, type CorsRule, type LifecycleRuleDocument } from '../../bucket/index.js'
import { ManagementError } from '../errors.js'

/** The service's default lifecycle of a new bucket (7 days, as the engine's sweeper). */
export const defaultLifecycle = {
  rules: [{
    id: 'Default Multipart Abort Rule',
    enabled: true,
    conditions: { prefix: '' },
    abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 604800 } }
  }]
}

function invalid (detail: string): ManagementError {
  return new ManagementError('InvalidArgument', `Invalid argument: ${detail}`)
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A lifecycle PUT body → the document stored in `settings.lifecycle` (the engine checks the rules: `parseLifecycleRules`). */
export function parseLifecycle (body: unknown): { rules: LifecycleRuleDocument[] } {
  if (!isObject(body)) throw invalid('the body must be an object')
  // Without `rules`, no rule (as the lock's PUT); `"rules": null` is no list, refused by the engine as any other value that is none.
  return { rules: parseLifecycleRules(body.rules === undefined ? [] : body.rules) }
}

const corsMethods = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD']

/** A value as a refusal quotes it: JSON, cut short when long (a 64 KiB header is named, not echoed whole). */
function quoted (value: unknown): string {
  // A number past a double's range (1e400) arrives as Infinity, which JSON would write as null.
  const text = typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

function stringArray (value: unknown, where: string): string[] {
  if (!Array.isArray(value)) throw invalid(`${where} must be an array of strings (got ${quoted(value)})`)
  const bad = value.findIndex(v => typeof v !== 'string')
  if (bad !== -1) throw invalid(`${where}[${bad}] must be a string (got ${quoted(value[bad])})`)
  return value
}

/** Strings that go out in response headers, each passing `ok`; the first that does not is named with its value. */
function checkedTexts (value: unknown, where: string, ok: (text: string) => boolean, what: string): string[] {
  const texts = stringArray(value, where)
  const bad = texts.findIndex(text => !ok(text))
  if (bad !== -1) throw invalid(`${where}[${bad}] must be ${what} (got ${quoted(texts[bad])})`)
  return texts
}

/**
 * A CORS PUT body → the rules stored in `settings.cors`, no larger than the
 * S3 door gives back and takes (MAX_CORS_CONFIGURATION_BYTES, measured on
 * GetBucketCors's document of the same rules): every preflight walks them,
 * unauthenticated. A body that is no object (`null`, `[]`, none), or whose
 * `rules` is `null`, is refused, never read as no rules: `{"rules": []}`, an
 * object without `rules`, or DELETE removes them.
 */
export function corsFromApi (body: unknown): CorsRule[] {
  const rules = corsRulesFromApi(body)
  const bytes = corsConfigurationBytes(rules)
  if (bytes > MAX_CORS_CONFIGURATION_BYTES) {
    throw invalid(`the configuration is at most ${MAX_CORS_CONFIGURATION_BYTES} bytes as the S3 API's GetBucketCors document of the same rules, which its PutBucketCors takes back (got ${bytes}); use fewer or shorter origins and headers, or a wildcard origin`)
  }
  return rules
}

function corsRulesFromApi (body: unknown): CorsRule[] {
  if (!isObject(body)) throw invalid(`the body must be an object {"rules": [...]} (got ${body === undefined ? 'none' : quoted(body)})`)
  const rules = body.rules === undefined ? [] : body.rules
  if (!Array.isArray(rules)) throw invalid(`rules must be an array (got ${quoted(rules)})`)
  if (rules.length > MAX_CORS_RULES) throw invalid(`rules holds at most ${MAX_CORS_RULES} rules (got ${rules.length})`)
  return rules.map((rule: unknown, i) => {
    const where = `rules[${i}]`
    if (!isObject(rule) || !isObject(rule.allowed)) throw invalid(`${where}.allowed is required`)
    const origins = checkedTexts(rule.allowed.origins, `${where}.allowed.origins`, isCorsOrigin, 'printable ASCII with one * at most')
    const methods = stringArray(rule.allowed.methods, `${where}.allowed.methods`)
    if (origins.length === 0) throw invalid(`${where}.allowed.origins must not be empty`)
    if (methods.length === 0) throw invalid(`${where}.allowed.methods must not be empty`)
    const badMethod = methods.findIndex(m => !corsMethods.includes(m))
    if (badMethod !== -1) throw invalid(`${where}.allowed.methods[${badMethod}] must be one of ${corsMethods.join(', ')} (got ${quoted(methods[badMethod])})`)
    const stored: CorsRule = { allowedOrigins: origins, allowedMethods: methods }
    if (rule.allowed.headers !== undefined) {
      stored.allowedHeaders = checkedTexts(rule.allowed.headers, `${where}.allowed.headers`, isCorsAllowedHeader, 'printable ASCII with one * at most')
    }
    if (rule.exposeHeaders !== undefined) stored.exposeHeaders = checkedTexts(rule.exposeHeaders, `${where}.exposeHeaders`, isHeaderText, 'printable ASCII')
    if (rule.maxAgeSeconds !== undefined) {
      const age = rule.maxAgeSeconds
      if (typeof age !== 'number' || !Number.isInteger(age) || age < 0 || age > MAX_CORS_MAX_AGE_SECONDS) {
        throw invalid(`${where}.maxAgeSeconds must be a whole number of seconds from 0 to ${MAX_CORS_MAX_AGE_SECONDS} (got ${quoted(age)})`)
      }
      stored.maxAgeSeconds = age
    }
    if (rule.id !== undefined) {
      if (typeof rule.id !== 'string' || !isRuleId(rule.id)) throw invalid(`${where}.id must be a string of ${RULE_ID_REQUIREMENT} (got ${quoted(rule.id)})`)
      stored.id = rule.id
    }
    return stored
  })
}

/** Stored CORS rules → the API's document. */
export function corsToApi (rules: CorsRule[]): { rules: Array<Record<string, unknown>> } {
  return {
    rules: rules.map(rule => {
      const allowed: Record<string, unknown> = { origins: rule.allowedOrigins, methods: rule.allowedMethods }
      if (rule.allowedHeaders !== undefined) allowed.headers = rule.allowedHeaders
      const out: Record<string, unknown> = { allowed }
      if (rule.id !== undefined) out.id = rule.id
      if (rule.exposeHeaders !== undefined) out.exposeHeaders = rule.exposeHeaders
      if (rule.maxAgeSeconds !== undefined) out.maxAgeSeconds = rule.maxAgeSeconds
      return out
    })
  }
}
