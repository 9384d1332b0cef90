/**
 * Bucket locks: retention rules that keep objects from being deleted or
 * overwritten, in the management API's shape (`PUT .../buckets/{b}/lock`):
 *
 *     { "id": "keep-logs", "enabled": true, "prefix": "logs/",
 *       "condition": { "type": "Age", "maxAgeSeconds": 86400 } }
 *
 * with `condition` one of `{type: "Age", maxAgeSeconds}` (from the object's
 * upload), `{type: "Date", date}` (until that instant) or `{type:
 * "Indefinite"}`. A rule without a prefix (or with "") covers every key.
 *
 * This module is pure: `parseLockRules` checks a rule list and returns it
 * normalised (what every store keeps), `retainingRule` answers whether a
 * rule keeps a given object at a given instant. Stores call the latter
 * inside their commit's critical section (port.ts, guarantee 4), so the
 * rule that refuses a write is the rule that held when the write would
 * have landed, at the instant the engine gives (its clock, by which it
 * stamped `uploaded`, or a sweep's `now`).
 *
 * Decisions where the hosted service documents nothing:
 *   - Retention runs out at the instant `uploaded + maxAgeSeconds` (or
 *     `date`): at that instant the object is no longer retained.
 *   - A rule applies to the key as the engine stores it (its NFC form) and
 *     compares its prefix bytewise, like listing does.
 *   - Rule ids are unique within a bucket (wrangler's `lock remove` finds a
 *     rule by its id); at most MAX_LOCK_RULES rules, as many as lifecycle.
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { isRuleAge, MAX_RULE_AGE_SECONDS, parseRuleDate } from './rule-time.js'
import { isRuleId, isRulePrefix, RULE_ID_REQUIREMENT, RULE_PREFIX_REQUIREMENT } from './keys.js'

export type LockCondition =
  | { type: 'Age', maxAgeSeconds: number }
  | { type: 'Date', date: string }
  | { type: 'Indefinite' }

export interface LockRule {
  id: string
  enabled: boolean
  /** Absent: every key. */
  prefix?: string
  condition: LockCondition
}

/** The hosted service limits a bucket to 1000 lifecycle rules; locks take the same bound. */
export const MAX_LOCK_RULES = 1000

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseCondition (value: unknown, where: string): LockCondition {
  if (!isObject(value)) throw new TypeError(`${where}.condition must be an object`)
  switch (value.type) {
    case 'Age': {
      const age = value.maxAgeSeconds
      if (!isRuleAge(age)) {
        throw new TypeError(`${where}.condition.maxAgeSeconds must be a whole number of seconds from 1 to ${MAX_RULE_AGE_SECONDS}`)
      }
      return { type: 'Age', maxAgeSeconds: age }
    }
    case 'Date': {
      const ms = typeof value.date === 'string' ? parseRuleDate(value.date) : Number.NaN
      if (Number.isNaN(ms)) throw new TypeError(`${where}.condition.date must be a date (YYYY-MM-DD or an ISO 8601 date and time)`)
      return { type: 'Date', date: new Date(ms).toISOString() }
    }
    case 'Indefinite':
      return { type: 'Indefinite' }
    default:
      throw new TypeError(`${where}.condition.type must be Age, Date or Indefinite`)
  }
}

/**
 * A rule list as the management API receives it (`rules` of the body) →
 * the rules a store keeps; throws an argument error naming the first
 * mistake. Dates are kept in ISO 8601 (UTC), prefixes in NFC.
 */
export function parseLockRules (value: unknown): LockRule[] {
  if (!Array.isArray(value)) throw new TypeError('rules must be an array')
  if (value.length > MAX_LOCK_RULES) throw new TypeError(`at most ${MAX_LOCK_RULES} lock rules per bucket (got ${value.length})`)
  const ids = new Set<string>()
  return value.map((rule: unknown, i): LockRule => {
    const where = `rules[${i}]`
    if (!isObject(rule)) throw new TypeError(`${where} must be an object`)
    if (typeof rule.id !== 'string' || rule.id === '') throw new TypeError(`${where}.id must be a non-empty string`)
    // Ids are shown by wrangler and the console, and found by `lock remove`: held as lifecycle rule ids are.
    if (!isRuleId(rule.id)) throw new TypeError(`${where}.id must be ${RULE_ID_REQUIREMENT}`)
    if (ids.has(rule.id)) throw new TypeError(`${where}.id "${rule.id}" is used by another rule`)
    ids.add(rule.id)
    if (typeof rule.enabled !== 'boolean') throw new TypeError(`${where}.enabled must be true or false`)
    if (rule.prefix !== undefined && !isRulePrefix(rule.prefix)) throw new TypeError(`${where}.prefix must be ${RULE_PREFIX_REQUIREMENT}`)
    const parsed: LockRule = { id: rule.id, enabled: rule.enabled, condition: parseCondition(rule.condition, where) }
    if (typeof rule.prefix === 'string' && rule.prefix !== '') parsed.prefix = rule.prefix.normalize('NFC')
    return parsed
  })
}

/** The instant (ms) a rule's retention of an object uploaded at `uploaded` runs out; Infinity for Indefinite. */
export function retainedUntil (condition: LockCondition, uploaded: number): number {
  switch (condition.type) {
    case 'Age': return uploaded + condition.maxAgeSeconds * 1000
    case 'Date': return Date.parse(condition.date)
    case 'Indefinite': return Number.POSITIVE_INFINITY
  }
}

/**
 * The first enabled rule that retains the object stored under `id`
 * (uploaded at `uploaded`, ms) at the instant `at` (ms), or null when none
 * does: the object may then be deleted or overwritten.
 */
export function retainingRule (rules: readonly LockRule[], id: string, uploaded: number, at: number): LockRule | null {
  for (const rule of rules) {
    if (!rule.enabled) continue
    if (rule.prefix !== undefined && !id.startsWith(rule.prefix)) continue
    if (at < retainedUntil(rule.condition, uploaded)) return rule
  }
  return null
}

/** The rules as a store keeps them in a text column: null for none. */
export function lockRulesText (rules: readonly LockRule[]): string | null {
  return rules.length === 0 ? null : JSON.stringify(rules)
}

/** The rules of a text column written by `lockRulesText`. */
export function lockRulesOf (text: string | null | undefined): LockRule[] {
  return text === null || text === undefined || text === '' ? [] : JSON.parse(text) as LockRule[]
}
