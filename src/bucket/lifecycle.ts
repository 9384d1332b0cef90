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
import { ArgumentTypeError } from './errors.js'
import { isRuleAge, MAX_RULE_AGE_SECONDS, parseRuleDate } from './rule-time.js'
import type { StorageClass } from './types.js'
import { isRuleId, isRulePrefix, keptForm, RULE_ID_REQUIREMENT, RULE_PREFIX_REQUIREMENT } from './keys.js'
import { MAX_LIFECYCLE_CONFIGURATION_BYTES } from './limits.js'
import { xmlDocumentFrameBytes, xmlElementBytes } from './xml-bytes.js'

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
  if (value.type === 'Age' && typeof value.maxAge === 'number' && value.maxAge >= 0 && value.maxAge <= MAX_RULE_AGE_SECONDS) return { type: 'Age', maxAge: value.maxAge }
  // Kept as an ISO instant in UTC, as rules are stored since: S3 clients parse the date S3's document shows.
  if (value.type === 'Date' && typeof value.date === 'string' && !Number.isNaN(Date.parse(value.date))) return { type: 'Date', date: new Date(Date.parse(value.date)).toISOString() }
  return undefined
}

/** The hosted service's most lifecycle rules in a bucket. */
export const MAX_LIFECYCLE_RULES = 1000

function invalid (detail: string): ArgumentTypeError {
  return new ArgumentTypeError(`Invalid argument: ${detail}`)
}

/** A condition as a lifecycle document is given it: an Age in whole seconds (up to 100 years), or, where `allowDate`, a calendar Date. */
function parseCondition (value: unknown, where: string, allowDate: boolean): LifecycleCondition {
  if (!isObject(value)) throw invalid(`${where}.condition must be an object`)
  if (value.type === 'Age') {
    if (!isRuleAge(value.maxAge)) throw invalid(`${where}.condition.maxAge must be a whole number of seconds from 1 to ${MAX_RULE_AGE_SECONDS}`)
    return { type: 'Age', maxAge: value.maxAge }
  }
  if (allowDate && value.type === 'Date') {
    const ms = typeof value.date === 'string' ? parseRuleDate(value.date) : Number.NaN
    // Kept as the instant in UTC (below), which must itself be a date of four digits (an offset can move 9999-12-31 on).
    const year = new Date(ms).getUTCFullYear()
    if (Number.isNaN(ms) || year < 0 || year > 9999) {
      throw invalid(`${where}.condition.date must be a date (YYYY-MM-DD or an ISO 8601 date and time) from the year 0 to 9999 in UTC`)
    }
    // One form whichever door wrote it (`2027-01-01`, an offset): the instant in UTC, as S3's document carries it.
    return { type: 'Date', date: new Date(ms).toISOString() }
  }
  throw invalid(`${where}.condition.type must be Age${allowDate ? ' or Date' : ''}`)
}

/** A stored lifecycle rule, in the management API's shape (the module's comment shows one). */
export interface LifecycleRuleDocument {
  id: string
  enabled: boolean
  conditions: { prefix?: string }
  deleteObjectsTransition?: { condition: LifecycleCondition }
  storageClassTransitions?: Array<{ storageClass: 'InfrequentAccess', condition: LifecycleCondition }>
  abortMultipartUploadsTransition?: { condition: LifecycleCondition }
}

/**
 * The rules of a lifecycle document as a door is given them (the
 * management API's `rules`, or the S3 door's translation) → the rules a
 * bucket keeps: the fields this module reads and nothing else, so what is
 * read back is what acts. Throws an argument error naming the first
 * mistake: a rule without `id`, `enabled` or `conditions`, an id used
 * twice, an age that is not a whole number of seconds from 1 to 100 years,
 * a date the calendar lacks, a transition to another class than
 * InfrequentAccess or a second transition, a rule with no action, a prefix
 * no key could start with (longer than a key, a lone surrogate), more than
 * MAX_LIFECYCLE_RULES rules, rules whose S3 document would be over
 * MAX_LIFECYCLE_CONFIGURATION_BYTES (lifecycleConfigurationBytes). The service's
 * schema makes `conditions` required and its `prefix` optional: `{}` is a
 * rule for the whole bucket (wrangler sends it).
 */
export function parseLifecycleRules (value: unknown): LifecycleRuleDocument[] {
  if (!Array.isArray(value)) throw invalid('rules must be an array')
  if (value.length > MAX_LIFECYCLE_RULES) throw invalid(`at most ${MAX_LIFECYCLE_RULES} lifecycle rules per bucket (got ${value.length})`)
  const ids = new Set<string>()
  const rules = value.map((rule: unknown, i): LifecycleRuleDocument => {
    const where = `rules[${i}]`
    if (!isObject(rule)) throw invalid(`${where} must be an object`)
    if (typeof rule.id !== 'string' || rule.id === '') throw invalid(`${where}.id is required`)
    // As S3 has them, so that every rule can be read back through either door (XML carries no control character).
    if (!isRuleId(rule.id)) throw invalid(`${where}.id must be ${RULE_ID_REQUIREMENT}`)
    if (ids.has(rule.id)) throw invalid(`${where}.id is used twice`)
    ids.add(rule.id)
    if (typeof rule.enabled !== 'boolean') throw invalid(`${where}.enabled must be a boolean`)
    if (!isObject(rule.conditions)) throw invalid(`${where}.conditions must be an object`)
    const prefix: unknown = rule.conditions.prefix
    if (prefix !== undefined && !isRulePrefix(prefix)) throw invalid(`${where}.conditions.prefix must be ${RULE_PREFIX_REQUIREMENT}`)
    const kept: LifecycleRuleDocument = { id: rule.id, enabled: rule.enabled, conditions: prefix === undefined ? {} : { prefix } }
    const transition = (field: 'abortMultipartUploadsTransition' | 'deleteObjectsTransition', allowDate: boolean): { condition: LifecycleCondition } | undefined => {
      const given: unknown = rule[field]
      if (given === undefined) return undefined
      if (!isObject(given)) throw invalid(`${where}.${field} must be an object`)
      return { condition: parseCondition(given.condition, `${where}.${field}`, allowDate) }
    }
    const abort = transition('abortMultipartUploadsTransition', false)
    if (abort !== undefined) kept.abortMultipartUploadsTransition = abort
    const expire = transition('deleteObjectsTransition', true)
    if (expire !== undefined) kept.deleteObjectsTransition = expire
    if (rule.storageClassTransitions !== undefined) {
      if (!Array.isArray(rule.storageClassTransitions)) throw invalid(`${where}.storageClassTransitions must be an array`)
      // One transition a class, as S3 has them: InfrequentAccess is the only one to go to.
      if (rule.storageClassTransitions.length > 1) throw invalid(`${where}.storageClassTransitions has one transition at most (to InfrequentAccess, the one class there is to go to)`)
      kept.storageClassTransitions = rule.storageClassTransitions.map((t: unknown, j) => {
        if (!isObject(t) || t.storageClass !== 'InfrequentAccess') throw invalid(`${where}.storageClassTransitions[${j}].storageClass must be InfrequentAccess`)
        return { storageClass: 'InfrequentAccess' as const, condition: parseCondition(t.condition, `${where}.storageClassTransitions[${j}]`, true) }
      })
    }
    // As S3 refuses one: a rule that does nothing would be read back through S3 as a document S3 itself refuses to take back.
    if (abort === undefined && expire === undefined && (kept.storageClassTransitions ?? []).length === 0) {
      throw invalid(`${where} has no action: give it deleteObjectsTransition, storageClassTransitions or abortMultipartUploadsTransition`)
    }
    return kept
  })
  const bytes = lifecycleConfigurationBytes(rules)
  if (bytes > MAX_LIFECYCLE_CONFIGURATION_BYTES) {
    throw invalid(`the rules are at most ${MAX_LIFECYCLE_CONFIGURATION_BYTES} bytes as the S3 API's GetBucketLifecycleConfiguration document of them, which its PutBucketLifecycleConfiguration takes back (got ${bytes}); use fewer rules, or shorter ids and prefixes`)
  }
  return rules
}

const DAY_SECONDS = 86_400

/** The whole days S3's lifecycle document shows for an age in seconds (the management API's may be any number of them): at least one. */
export function shownDays (maxAge: number): number {
  return Math.max(1, Math.round(maxAge / DAY_SECONDS))
}

/**
 * The size of `rules` as the S3 door's GetBucketLifecycleConfiguration
 * writes them, byte for byte (declaration, namespace and escapes
 * included): what MAX_LIFECYCLE_CONFIGURATION_BYTES bounds on every door,
 * so that what one door stores the S3 door gives back in a body its
 * PutBucketLifecycleConfiguration takes (its cap on the body is the same
 * number).
 */
export function lifecycleConfigurationBytes (rules: readonly LifecycleRuleDocument[]): number {
  const condition = (c: LifecycleCondition): number => c.type === 'Age' ? xmlElementBytes('Days', String(shownDays(c.maxAge))) : xmlElementBytes('Date', c.date)
  let bytes = xmlDocumentFrameBytes('LifecycleConfiguration')
  for (const rule of rules) {
    bytes += '<Rule><Filter></Filter></Rule>'.length + xmlElementBytes('ID', rule.id) + xmlElementBytes('Prefix', rule.conditions.prefix ?? '') +
      xmlElementBytes('Status', rule.enabled ? 'Enabled' : 'Disabled')
    if (rule.deleteObjectsTransition !== undefined) bytes += '<Expiration></Expiration>'.length + condition(rule.deleteObjectsTransition.condition)
    for (const transition of rule.storageClassTransitions ?? []) {
      bytes += '<Transition></Transition>'.length + condition(transition.condition) + xmlElementBytes('StorageClass', 'STANDARD_IA')
    }
    const abort = rule.abortMultipartUploadsTransition?.condition
    if (abort?.type === 'Age') bytes += '<AbortIncompleteMultipartUpload></AbortIncompleteMultipartUpload>'.length + xmlElementBytes('DaysAfterInitiation', String(shownDays(abort.maxAge)))
  }
  return bytes
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
      enabled: rule.enabled === true,
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
  return transitionAt(rules, id, uploaded, storageClass, now)
}

/**
 * The transition due for the object at `now`, whatever its expiry: what
 * the sweep does to an object whose expiry a bucket lock holds back.
 */
export function transitionAt (rules: LifecycleRule[], id: string, uploaded: number, storageClass: StorageClass, now: number): LifecycleAction | null {
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
  // A rule ID is free text: a quote or backslash is escaped, as in a quoted-string (RFC 9110, 5.6.4).
  const id = headerText(expiry.ruleId.replace(/[\\"]/g, c => `\\${c}`))
  return `expiry-date="${new Date(announcedInstant(expiry)).toUTCString()}", rule-id="${id}"`
}

/** The instant S3 announces for a rule's action: an Age rule's rounded up to the next midnight UTC (AWS's rule), a Date rule's its own. */
function announcedInstant (due: { at: number, type: LifecycleCondition['type'] }): number {
  return due.type === 'Age' ? Math.ceil(due.at / DAY_MS) * DAY_MS : due.at
}

/** Free text as a header value: what a header cannot carry (controls, non-ASCII) percent-encoded. */
function headerText (text: string): string {
  return text.replace(/[^\x20-\x7e]/gu, c => c.isWellFormed() ? encodeURIComponent(c) : '%EF%BF%BD')
}

/**
 * S3's `x-amz-abort-date` and `x-amz-abort-rule-id` for an upload of `key`
 * created at `created`, by the lifecycle document `document`: the earliest
 * abort of the enabled rules that match it; undefined when none does (the
 * default abort of uploads after 7 days is no rule, and S3 announces rules).
 */
export function uploadAbortHeaders (document: unknown, key: string, created: Date): Record<string, string> | undefined {
  const rules = lifecycleRules(document)
  const id = keptForm(key)
  let found: { at: number, type: LifecycleCondition['type'], ruleId: string } | undefined
  for (const rule of rules) {
    if (rule.abortUploads === undefined || !applies(rule, id)) continue
    const at = conditionInstant(rule.abortUploads, created.getTime())
    if (found === undefined || at < found.at) found = { at, type: rule.abortUploads.type, ruleId: rule.id }
  }
  return found === undefined ? undefined : { 'x-amz-abort-date': new Date(announcedInstant(found)).toUTCString(), 'x-amz-abort-rule-id': headerText(found.ruleId) }
}

/**
 * The `x-amz-expiration` value for an object of key `key` uploaded at
 * `uploaded`, by the lifecycle document `document`; undefined when no
 * enabled expiry rule matches it.
 */
export function objectExpirationHeader (document: unknown, key: string, uploaded: Date): string | undefined {
  const rules = lifecycleRules(document)
  if (rules.length === 0) return undefined
  const id = keptForm(key)
  const expiry = objectExpiry(rules, id, uploaded.getTime())
  return expiry === null ? undefined : expirationHeader(expiry)
}
