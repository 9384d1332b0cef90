/**
 * Lifecycle rules, evaluated: which rule acts on an object at an instant,
 * when an object expires, and which key ranges a sweep has to walk. Pure
 * functions over the management API's lifecycle document (the shape the
 * registry stores, whichever door wrote it):
 *
 *     { "rules": [{ "id": "logs-30d", "enabled": true, "conditions": { "prefix": "logs/" },
 *                   "deleteObjectsTransition": { "condition": { "type": "Age", "maxAge": 2592000 } },
 *                   "storageClassTransitions": [{ "storageClass": "InfrequentAccess",
 *                                                "condition": { "type": "Date", "date": "2027-01-01T00:00:00.000Z" } }],
 *                   "abortMultipartUploadsTransition": { "condition": { "type": "Age", "maxAge": 604800 } } }] }
 *
 * Semantics (the hosted service's, as its documentation states them):
 * - A rule applies to the keys that start with `conditions.prefix`; no
 *   prefix (or `conditions: {}`) is the whole bucket. Prefixes are compared
 *   in NFC form, the form objects are stored under (keys.ts).
 * - A disabled rule does nothing.
 * - An Age condition is met once the object has existed `maxAge` seconds
 *   since its `uploaded` time (an upload's since its creation); a Date
 *   condition from that instant on, for every matching object.
 * - When several rules apply, the earliest instant wins; when an expiry and
 *   a storage class transition are both due, the expiry wins (the object
 *   goes, it is not transitioned first).
 * - Transitions only go to InfrequentAccess and never back: an object
 *   already there is left alone.
 *
 * The S3 door announces an object's expiry as AWS does (`x-amz-expiration`),
 * where an Age rule's date is rounded up to the next midnight UTC; the
 * hosted service's documentation says nothing of rounding, so AWS's format
 * is followed. The sweeper acts at the exact instant, never later than the
 * announced date.
 */
import type { StorageClass } from './types.js'

export type LifecycleCondition = { type: 'Age', maxAge: number } | { type: 'Date', date: string }

/** One rule as evaluated: the stored rule, its prefix in NFC form, and its condition instants read once. */
export interface LifecycleRule {
  id: string
  enabled: boolean
  /** `conditions.prefix` in NFC form; '' for the whole bucket. */
  prefix: string
  expire?: LifecycleCondition
  transitions: LifecycleCondition[]
  abortUploads?: LifecycleCondition
}

/** What a rule does to an object at an instant. */
export type LifecycleAction =
  | { action: 'expire', ruleId: string }
  | { action: 'transition', ruleId: string, storageClass: 'InfrequentAccess' }

/** An object's expiry: the instant (ms since the epoch) and the rule that sets it. */
export interface LifecycleExpiry {
  at: number
  ruleId: string
  /** The kind of the rule's condition (an Age date is rounded for S3's header). */
  type: LifecycleCondition['type']
}

function isObject (value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A stored condition, or undefined when it is not one (a document edited by hand is read leniently, never trusted). */
function conditionOf (value: unknown): LifecycleCondition | undefined {
  if (!isObject(value)) return undefined
  if (value.type === 'Age' && typeof value.maxAge === 'number' && Number.isFinite(value.maxAge) && value.maxAge >= 0) return { type: 'Age', maxAge: value.maxAge }
  if (value.type === 'Date' && typeof value.date === 'string' && !Number.isNaN(Date.parse(value.date))) return { type: 'Date', date: value.date }
  return undefined
}

/**
 * The rules of a stored lifecycle document (null: none), in document
 * order. Rules or conditions of an unknown shape are skipped, never
 * widened: a condition that cannot be read acts on nothing.
 */
export function lifecycleRules (document: unknown): LifecycleRule[] {
  const rules = isObject(document) ? document.rules : undefined
  if (!Array.isArray(rules)) return []
  const out: LifecycleRule[] = []
  for (const rule of rules) {
    if (!isObject(rule) || typeof rule.id !== 'string') continue
    const prefix = isObject(rule.conditions) && typeof rule.conditions.prefix === 'string' ? rule.conditions.prefix : ''
    const transitions = Array.isArray(rule.storageClassTransitions)
      ? rule.storageClassTransitions
        .filter((t: unknown) => isObject(t) && t.storageClass === 'InfrequentAccess')
        .map((t: Record<string, unknown>) => conditionOf(t.condition))
        .filter((c: LifecycleCondition | undefined): c is LifecycleCondition => c !== undefined)
      : []
    out.push({
      id: rule.id,
      enabled: rule.enabled !== false,
      prefix: prefix.isWellFormed() ? prefix.normalize('NFC') : prefix,
      expire: conditionOf(rule.deleteObjectsTransition?.condition),
      transitions,
      abortUploads: conditionOf(rule.abortMultipartUploadsTransition?.condition)
    })
  }
  return out
}

/** The instant (ms) `condition` is met for something created at `created` (ms). */
export function conditionInstant (condition: LifecycleCondition, created: number): number {
  return condition.type === 'Age' ? created + condition.maxAge * 1000 : Date.parse(condition.date)
}

function applies (rule: LifecycleRule, id: string): boolean {
  return rule.enabled && id.startsWith(rule.prefix)
}

/** The earliest expiry of the object `id` uploaded at `uploaded` by the enabled rules that match it; null when none. */
export function objectExpiry (rules: LifecycleRule[], id: string, uploaded: number): LifecycleExpiry | null {
  let found: LifecycleExpiry | null = null
  for (const rule of rules) {
    if (rule.expire === undefined || !applies(rule, id)) continue
    const at = conditionInstant(rule.expire, uploaded)
    if (found === null || at < found.at) found = { at, ruleId: rule.id, type: rule.expire.type }
  }
  return found
}

/**
 * What the rules do to the object `id` (uploaded at `uploaded`, now of
 * `storageClass`) at `now`: expire it, transition it, or nothing (null).
 * An expiry that is due wins over any transition.
 */
export function actionAt (rules: LifecycleRule[], id: string, uploaded: number, storageClass: StorageClass, now: number): LifecycleAction | null {
  const expiry = objectExpiry(rules, id, uploaded)
  if (expiry !== null && expiry.at <= now) return { action: 'expire', ruleId: expiry.ruleId }
  if (storageClass === 'InfrequentAccess') return null
  let due: { at: number, ruleId: string } | null = null
  for (const rule of rules) {
    if (!applies(rule, id)) continue
    for (const transition of rule.transitions) {
      const at = conditionInstant(transition, uploaded)
      if (at <= now && (due === null || at < due.at)) due = { at, ruleId: rule.id }
    }
  }
  return due === null ? null : { action: 'transition', ruleId: due.ruleId, storageClass: 'InfrequentAccess' }
}

/** Whether the upload of `id` created at `created` is to be aborted at `now` by an enabled rule. */
export function uploadAbortDue (rules: LifecycleRule[], id: string, created: number, now: number): boolean {
  return rules.some(rule => rule.abortUploads !== undefined && applies(rule, id) && conditionInstant(rule.abortUploads, created) <= now)
}

/**
 * The key prefixes a sweep walks so that every object an enabled rule may
 * act on is read once: the prefixes of the rules with object actions,
 * without those inside another (a walk of `logs/` already reads
 * `logs/2026/`). Sorted; [''] when some rule covers the whole bucket.
 */
export function objectSweepPrefixes (rules: LifecycleRule[]): string[] {
  const prefixes = [...new Set(rules.filter(r => r.enabled && (r.expire !== undefined || r.transitions.length > 0)).map(r => r.prefix))].sort()
  const kept: string[] = []
  for (const prefix of prefixes) {
    // Sorted, so an enclosing prefix comes before every prefix it encloses.
    if (!kept.some(outer => prefix.startsWith(outer))) kept.push(prefix)
  }
  return kept
}

/** The prefixes of enabled rules limited to a prefix that abort uploads (whole-bucket ones are the store's upload age). */
export function uploadSweepPrefixes (rules: LifecycleRule[]): string[] {
  const prefixes = [...new Set(rules.filter(r => r.enabled && r.abortUploads !== undefined && r.prefix !== '').map(r => r.prefix))].sort()
  return prefixes.filter((prefix, i) => !prefixes.slice(0, i).some(outer => prefix.startsWith(outer)))
}

const DAY_MS = 86_400_000

/**
 * S3's `x-amz-expiration` value for an expiry: `expiry-date="<HTTP date>",
 * rule-id="<id>"`. An Age rule's date is rounded up to the next midnight
 * UTC (AWS's rule); a Date rule's date is its own.
 */
export function expirationHeader (expiry: LifecycleExpiry): string {
  const at = expiry.type === 'Age' ? Math.ceil(expiry.at / DAY_MS) * DAY_MS : expiry.at
  // A rule ID is free text: a quote or backslash is escaped, as in a quoted-string (RFC 9110, 5.6.4), and
  // what a header cannot carry (controls, non-ASCII) is percent-encoded.
  const id = expiry.ruleId
    .replace(/[\\"]/g, c => `\\${c}`)
    .replace(/[^\x20-\x7e]/gu, c => c.isWellFormed() ? encodeURIComponent(c) : '%EF%BF%BD')
  return `expiry-date="${new Date(at).toUTCString()}", rule-id="${id}"`
}

/**
 * The `x-amz-expiration` value for an object of key `key` uploaded at
 * `uploaded`, by the lifecycle document `document`; undefined when no
 * enabled expiry rule matches it.
 */
export function objectExpirationHeader (document: unknown, key: string, uploaded: Date): string | undefined {
  const rules = lifecycleRules(document)
  if (rules.length === 0) return undefined
  const id = key.isWellFormed() ? key.normalize('NFC') : key
  const expiry = objectExpiry(rules, id, uploaded.getTime())
  return expiry === null ? undefined : expirationHeader(expiry)
}
