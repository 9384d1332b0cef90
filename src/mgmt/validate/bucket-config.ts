/**
 * Lifecycle and CORS documents of the API ↔ the bucket settings the
 * gateway and the sweeper read.
 *
 * Lifecycle rules are stored in the API's own shape, which the sweeper
 * carries out (src/bucket/lifecycle.ts); a bucket without rules reads as
 * the service's default: abort uploads in progress after 7 days. A rule
 * needs `conditions`, whose `prefix` may be left out (`{}`: the whole
 * bucket), as the service's schema has it.
 *
 * CORS rules are translated: the API's `{allowed: {origins, methods,
 * headers}, exposeHeaders, maxAgeSeconds, id}` is stored as `{allowedOrigins,
 * allowedMethods, allowedHeaders, exposeHeaders, maxAgeSeconds, id}`.
 */
import type { CorsRule } from '../../bucket/index.js'
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

function checkCondition (condition: unknown, where: string, allowDate: boolean): void {
  if (!isObject(condition)) throw invalid(`${where}.condition must be an object`)
  if (condition.type === 'Age') {
    if (typeof condition.maxAge !== 'number' || !Number.isInteger(condition.maxAge) || condition.maxAge <= 0) {
      throw invalid(`${where}.condition.maxAge must be a positive number of seconds`)
    }
  } else if (allowDate && condition.type === 'Date') {
    if (typeof condition.date !== 'string' || Number.isNaN(Date.parse(condition.date))) throw invalid(`${where}.condition.date must be a date`)
  } else {
    throw invalid(`${where}.condition.type must be Age${allowDate ? ' or Date' : ''}`)
  }
}

/** A lifecycle PUT body → the document stored in `settings.lifecycle`. */
export function parseLifecycle (body: unknown): { rules: Array<Record<string, unknown>> } {
  if (!isObject(body)) throw invalid('the body must be an object')
  const rules = body.rules ?? []
  if (!Array.isArray(rules)) throw invalid('rules must be an array')
  const ids = new Set<string>()
  rules.forEach((rule: unknown, i) => {
    const where = `rules[${i}]`
    if (!isObject(rule)) throw invalid(`${where} must be an object`)
    if (typeof rule.id !== 'string' || rule.id === '') throw invalid(`${where}.id is required`)
    if (ids.has(rule.id)) throw invalid(`${where}.id is used twice`)
    ids.add(rule.id)
    if (typeof rule.enabled !== 'boolean') throw invalid(`${where}.enabled must be a boolean`)
    // The service's schema makes `conditions` required and its `prefix` optional: `{}` is a rule for the whole bucket (wrangler sends it).
    if (!isObject(rule.conditions)) throw invalid(`${where}.conditions must be an object`)
    if (rule.conditions.prefix !== undefined && typeof rule.conditions.prefix !== 'string') throw invalid(`${where}.conditions.prefix must be a string`)
    if (rule.abortMultipartUploadsTransition !== undefined) {
      if (!isObject(rule.abortMultipartUploadsTransition)) throw invalid(`${where}.abortMultipartUploadsTransition must be an object`)
      checkCondition(rule.abortMultipartUploadsTransition.condition, `${where}.abortMultipartUploadsTransition`, false)
    }
    if (rule.deleteObjectsTransition !== undefined) {
      if (!isObject(rule.deleteObjectsTransition)) throw invalid(`${where}.deleteObjectsTransition must be an object`)
      checkCondition(rule.deleteObjectsTransition.condition, `${where}.deleteObjectsTransition`, true)
    }
    if (rule.storageClassTransitions !== undefined) {
      if (!Array.isArray(rule.storageClassTransitions)) throw invalid(`${where}.storageClassTransitions must be an array`)
      rule.storageClassTransitions.forEach((t: unknown, j) => {
        if (!isObject(t) || t.storageClass !== 'InfrequentAccess') throw invalid(`${where}.storageClassTransitions[${j}].storageClass must be InfrequentAccess`)
        checkCondition(t.condition, `${where}.storageClassTransitions[${j}]`, true)
      })
    }
  })
  return { rules: rules as Array<Record<string, unknown>> }
}

const corsMethods = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD']

function stringArray (value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every(v => typeof v === 'string')) throw invalid(`${where} must be an array of strings`)
  return value
}

/** A stored CORS rule; `id` rides along so the API gives back what it was given. */
export type StoredCorsRule = CorsRule & { id?: string }

/** A CORS PUT body → the rules stored in `settings.cors`. */
export function corsFromApi (body: unknown): StoredCorsRule[] {
  if (!isObject(body)) throw invalid('the body must be an object')
  const rules = body.rules ?? []
  if (!Array.isArray(rules)) throw invalid('rules must be an array')
  return rules.map((rule: unknown, i) => {
    const where = `rules[${i}]`
    if (!isObject(rule) || !isObject(rule.allowed)) throw invalid(`${where}.allowed is required`)
    const origins = stringArray(rule.allowed.origins, `${where}.allowed.origins`)
    const methods = stringArray(rule.allowed.methods, `${where}.allowed.methods`)
    if (origins.length === 0) throw invalid(`${where}.allowed.origins must not be empty`)
    if (methods.length === 0 || !methods.every(m => corsMethods.includes(m))) {
      throw invalid(`${where}.allowed.methods must be some of ${corsMethods.join(', ')}`)
    }
    const stored: StoredCorsRule = { allowedOrigins: origins, allowedMethods: methods }
    if (rule.allowed.headers !== undefined) stored.allowedHeaders = stringArray(rule.allowed.headers, `${where}.allowed.headers`)
    if (rule.exposeHeaders !== undefined) stored.exposeHeaders = stringArray(rule.exposeHeaders, `${where}.exposeHeaders`)
    if (rule.maxAgeSeconds !== undefined) {
      if (typeof rule.maxAgeSeconds !== 'number' || !Number.isInteger(rule.maxAgeSeconds) || rule.maxAgeSeconds < 0) {
        throw invalid(`${where}.maxAgeSeconds must be a non-negative integer`)
      }
      stored.maxAgeSeconds = rule.maxAgeSeconds
    }
    if (rule.id !== undefined) {
      if (typeof rule.id !== 'string') throw invalid(`${where}.id must be a string`)
      stored.id = rule.id
    }
    return stored
  })
}

/** Stored CORS rules → the API's document. */
export function corsToApi (rules: StoredCorsRule[]): { rules: Array<Record<string, unknown>> } {
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
