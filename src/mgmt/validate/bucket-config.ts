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
import { MAX_CORS_CONFIGURATION_BYTES, MAX_CORS_RULES, MAX_RULE_ID_LENGTH, corsConfigurationBytes, isCorsOrigin, isHeaderText, isRuleId, parseLifecycleRules, type CorsRule, type LifecycleRuleDocument } from '../../bucket/index.js'
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
  return { rules: parseLifecycleRules(body.rules ?? []) }
}

const corsMethods = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD']

function stringArray (value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every(v => typeof v === 'string')) throw invalid(`${where} must be an array of strings`)
  return value
}

/** Strings that go out in response headers; the first that cannot is named. */
function headerTexts (value: unknown, where: string): string[] {
  const texts = stringArray(value, where)
  const bad = texts.findIndex(text => !isHeaderText(text))
  if (bad !== -1) throw invalid(`${where}[${bad}] must be printable ASCII`)
  return texts
}

/**
 * A CORS PUT body → the rules stored in `settings.cors`, no larger than the
 * S3 door takes (MAX_CORS_CONFIGURATION_BYTES, measured as S3's document of
 * the same rules): every preflight walks them, unauthenticated.
 */
export function corsFromApi (body: unknown): CorsRule[] {
  const rules = corsRulesFromApi(body)
  const bytes = corsConfigurationBytes(rules)
  if (bytes > MAX_CORS_CONFIGURATION_BYTES) {
    throw invalid(`the configuration is at most ${MAX_CORS_CONFIGURATION_BYTES} bytes as an S3 CORSConfiguration document, as the S3 API takes it (got ${bytes}); use fewer or shorter origins and headers, or a wildcard origin`)
  }
  return rules
}

function corsRulesFromApi (body: unknown): CorsRule[] {
  if (!isObject(body)) throw invalid('the body must be an object')
  const rules = body.rules ?? []
  if (!Array.isArray(rules)) throw invalid('rules must be an array')
  if (rules.length > MAX_CORS_RULES) throw invalid(`rules holds at most ${MAX_CORS_RULES} rules (got ${rules.length})`)
  return rules.map((rule: unknown, i) => {
    const where = `rules[${i}]`
    if (!isObject(rule) || !isObject(rule.allowed)) throw invalid(`${where}.allowed is required`)
    const origins = stringArray(rule.allowed.origins, `${where}.allowed.origins`)
    const methods = stringArray(rule.allowed.methods, `${where}.allowed.methods`)
    if (origins.length === 0) throw invalid(`${where}.allowed.origins must not be empty`)
    const badOrigin = origins.findIndex(origin => !isCorsOrigin(origin))
    if (badOrigin !== -1) throw invalid(`${where}.allowed.origins[${badOrigin}] must be printable ASCII with one * at most`)
    if (methods.length === 0 || !methods.every(m => corsMethods.includes(m))) {
      throw invalid(`${where}.allowed.methods must be some of ${corsMethods.join(', ')}`)
    }
    const stored: CorsRule = { allowedOrigins: origins, allowedMethods: methods }
    if (rule.allowed.headers !== undefined) stored.allowedHeaders = headerTexts(rule.allowed.headers, `${where}.allowed.headers`)
    if (rule.exposeHeaders !== undefined) stored.exposeHeaders = headerTexts(rule.exposeHeaders, `${where}.exposeHeaders`)
    if (rule.maxAgeSeconds !== undefined) {
      if (typeof rule.maxAgeSeconds !== 'number' || !Number.isInteger(rule.maxAgeSeconds) || rule.maxAgeSeconds < 0) {
        throw invalid(`${where}.maxAgeSeconds must be a non-negative integer`)
      }
      stored.maxAgeSeconds = rule.maxAgeSeconds
    }
    if (rule.id !== undefined) {
      if (typeof rule.id !== 'string' || !isRuleId(rule.id)) throw invalid(`${where}.id must be a string of at most ${MAX_RULE_ID_LENGTH} characters, none of them a control character`)
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
