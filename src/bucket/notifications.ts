/**
 * Event notification rules of a bucket, as data: their shape, validation,
 * the overlap refusal, matching a change against them, and the message
 * body a queue receives. Pure functions, shared by the engine (which turns
 * a committed change into outbox messages inside the store's transaction),
 * the registry (which keeps the rules in the bucket's settings) and the
 * management API (which edits them).
 *
 * A bucket's rules are grouped by the queue they send to, as the hosted
 * API answers them. A rule matches a change when its actions name the
 * change's action and the key starts with its prefix and ends with its
 * suffix (empty: any). Two rules of one bucket overlap, and the second is
 * refused as the hosted API refuses it, when some key and action would
 * match both: they share an action, one prefix starts the other and one
 * suffix ends the other (a key can always be made long enough to carry
 * both). So a change matches at most one rule, and each queue gets one
 * message per change at most. Keys, prefixes and suffixes are compared in
 * the form keys are kept in (NFC, keys.ts): `café/` matches a key sent
 * decomposed too, which names the same object. The message names the key as
 * the change spelled it.
 *
 * Limits: at most MAX_NOTIFICATION_RULES rules a bucket; a prefix or suffix
 * of at most 1,024 bytes (a key's longest), a description of at most 1,024
 * characters, none holding a control character (wrangler prints them).
 *
 * The message body is the hosted one:
 *
 *     { "account": "...", "action": "PutObject", "bucket": "photos",
 *       "object": { "key": "cats/tom.jpg", "size": 1024, "eTag": "..." },
 *       "eventTime": "2026-01-01T00:00:00.000Z" }
 *
 * with no size or eTag for DeleteObject and LifecycleDeletion, and
 * `copySource: {bucket, object}` for CopyObject only.
 */
import type { ChangeAction, ObjectChange, OutboxMessage } from './events.js'
import { hasControlCharacter, keptForm } from './keys.js'
import { MAX_KEY_BYTES } from './limits.js'
import { randomHex } from './random.js'

/** Rules of one bucket, over every queue. */
export const MAX_NOTIFICATION_RULES = 1000
const MAX_DESCRIPTION_LENGTH = 1024

export const changeActions: readonly ChangeAction[] = ['PutObject', 'CopyObject', 'CompleteMultipartUpload', 'DeleteObject', 'LifecycleDeletion']

export interface NotificationRule {
  ruleId: string
  prefix: string
  suffix: string
  actions: ChangeAction[]
  description?: string
  /** ISO 8601. */
  createdAt: string
}

/** The rules of a bucket that send to one queue, and the account named in its messages. */
export interface QueueNotifications {
  queueId: string
  account: string
  rules: NotificationRule[]
}

/** A rule as a request gives it, before it has an id. */
export interface RuleInput {
  prefix: string
  suffix: string
  actions: ChangeAction[]
  description?: string
}

/** Why a change of rules is refused: a rule of the wrong shape, two overlapping rules, or a rule id the queue has no rule of. */
export class RuleRefusal extends Error {
  constructor (readonly reason: 'invalid' | 'overlap' | 'unknown', message: string) {
    super(message)
  }
}

/** The `rules` of a PUT body → checked rules; throws RuleRefusal('invalid'). */
export function parseRuleInputs (body: unknown): RuleInput[] {
  const rules = (body as { rules?: unknown } | null)?.rules
  if (!Array.isArray(rules) || rules.length === 0) throw new RuleRefusal('invalid', 'rules must be a non-empty array')
  return rules.map((rule: unknown, i): RuleInput => {
    if (typeof rule !== 'object' || rule === null) throw new RuleRefusal('invalid', `rules[${i}] must be an object`)
    const r = rule as Record<string, unknown>
    for (const field of ['prefix', 'suffix', 'description'] as const) {
      const value = r[field]
      if (value === undefined || value === null) continue
      if (typeof value !== 'string' || hasControlCharacter(value) || !value.isWellFormed()) {
        throw new RuleRefusal('invalid', `rules[${i}].${field} must be a string without control characters`)
      }
      const long = field === 'description' ? value.length > MAX_DESCRIPTION_LENGTH : Buffer.byteLength(value) > MAX_KEY_BYTES
      if (long) throw new RuleRefusal('invalid', `rules[${i}].${field} is longer than ${field === 'description' ? `${MAX_DESCRIPTION_LENGTH} characters` : `${MAX_KEY_BYTES} bytes`}`)
    }
    if (!Array.isArray(r.actions) || r.actions.length === 0 || !r.actions.every(a => (changeActions as readonly unknown[]).includes(a))) {
      throw new RuleRefusal('invalid', `rules[${i}].actions must list actions among ${changeActions.join(', ')}`)
    }
    const out: RuleInput = { prefix: (r.prefix as string | null | undefined) ?? '', suffix: (r.suffix as string | null | undefined) ?? '', actions: [...new Set(r.actions as ChangeAction[])] }
    if (typeof r.description === 'string') out.description = r.description
    return out
  })
}

/** Whether some key and action would match both rules. */
export function rulesOverlap (a: Pick<RuleInput, 'prefix' | 'suffix' | 'actions'>, b: Pick<RuleInput, 'prefix' | 'suffix' | 'actions'>): boolean {
  if (!a.actions.some(action => b.actions.includes(action))) return false
  const [aPrefix, bPrefix, aSuffix, bSuffix] = [a.prefix, b.prefix, a.suffix, b.suffix].map(keptForm)
  const prefixes = aPrefix.startsWith(bPrefix) || bPrefix.startsWith(aPrefix)
  const suffixes = aSuffix.endsWith(bSuffix) || bSuffix.endsWith(aSuffix)
  return prefixes && suffixes
}

/**
 * The bucket's notifications with `inputs` added to the rules of `queueId`
 * (sent on behalf of `account`); throws RuleRefusal('overlap') when a new
 * rule overlaps an existing one of any queue, or another new one.
 */
export function addRules (current: QueueNotifications[], queueId: string, account: string, inputs: RuleInput[], now: Date): QueueNotifications[] {
  const existing = current.flatMap(q => q.rules)
  if (existing.length + inputs.length > MAX_NOTIFICATION_RULES) {
    throw new RuleRefusal('invalid', `a bucket has at most ${MAX_NOTIFICATION_RULES} event notification rules (it has ${existing.length}; ${inputs.length} more asked)`)
  }
  inputs.forEach((input, i) => {
    const clash = [...existing, ...inputs.slice(0, i)].find(rule => rulesOverlap(rule, input))
    if (clash !== undefined) {
      throw new RuleRefusal('overlap', `a rule (prefix "${input.prefix}", suffix "${input.suffix}") overlaps an existing rule (prefix "${clash.prefix}", suffix "${clash.suffix}") for the same action`)
    }
  })
  const added = inputs.map((input): NotificationRule => ({ ruleId: randomHex(16), ...input, createdAt: now.toISOString() }))
  const found = current.some(q => q.queueId === queueId)
  return found
    ? current.map(q => q.queueId === queueId ? Object.assign({}, q, { rules: [...q.rules, ...added] }) : q)
    : [...current, { queueId, account, rules: added }]
}

/**
 * The notifications without the rules of `queueId` named in `ruleIds` (all
 * of them without it). The queue's entry stays, with no rules, as a link:
 * the bucket's outbox may still hold messages for the queue, and a pull
 * reads only the outboxes of the buckets linked to it (queues.ts). Links
 * go when the queue is deleted. An id that names no rule of the queue (a
 * typo, a rule of another queue, one already removed) refuses the whole
 * change, RuleRefusal('unknown'), and removes nothing: answering success
 * would tell the caller (wrangler prints "deleted successfully") that a
 * rule which still sends events is gone.
 */
export function removeRules (current: QueueNotifications[], queueId: string, ruleIds?: string[]): QueueNotifications[] {
  if (ruleIds !== undefined) {
    const rules = current.find(q => q.queueId === queueId)?.rules ?? []
    const unknown = ruleIds.filter(id => !rules.some(r => r.ruleId === id))
    if (unknown.length > 0) throw new RuleRefusal('unknown', `no rule of this queue has the id ${unknown.map(id => JSON.stringify(id)).join(', ')}`)
  }
  return current.map(q => q.queueId !== queueId ? q : Object.assign({}, q, { rules: ruleIds === undefined ? [] : q.rules.filter(r => !ruleIds.includes(r.ruleId)) }))
}

/** The notifications with `queueId` linked (see removeRules): unchanged when it is already. */
export function linkQueue (current: QueueNotifications[], queueId: string, account: string): QueueNotifications[] {
  return current.some(q => q.queueId === queueId) ? current : [...current, { queueId, account, rules: [] }]
}

/** The queues with rules, which is what a configuration shows: not the bare links. */
export function withRules (notifications: readonly QueueNotifications[]): QueueNotifications[] {
  return notifications.filter(q => q.rules.length > 0)
}

/** Checks stored notifications (a settings document); throws TypeError on a wrong shape. */
export function isQueueNotificationsList (value: unknown): value is QueueNotifications[] {
  return Array.isArray(value) && value.every(q => typeof q === 'object' && q !== null &&
    typeof q.queueId === 'string' && typeof q.account === 'string' && Array.isArray(q.rules) &&
    q.rules.every((r: Partial<NotificationRule>) => typeof r === 'object' && r !== null && typeof r.ruleId === 'string' &&
      typeof r.prefix === 'string' && typeof r.suffix === 'string' && Array.isArray(r.actions)))
}

/** The message body of `change` in `bucket` (JSON text), as the hosted service writes it. */
export function eventBody (account: string, bucket: string, change: ObjectChange, eventTime: Date): string {
  const deletion = change.action === 'DeleteObject' || change.action === 'LifecycleDeletion'
  const object = deletion ? { key: change.key } : { key: change.key, size: change.size, eTag: change.etag }
  const body: Record<string, unknown> = { account, action: change.action, bucket, object, eventTime: eventTime.toISOString() }
  if (change.action === 'CopyObject' && change.copySource !== undefined) body.copySource = { bucket: change.copySourceBucket ?? bucket, object: change.copySource }
  return JSON.stringify(body)
}

/** The messages `change` sends: one per queue with a matching rule. */
export function messagesFor (notifications: readonly QueueNotifications[], bucket: string, change: ObjectChange, now: Date): OutboxMessage[] {
  const out: OutboxMessage[] = []
  const key = keptForm(change.key)
  for (const queue of notifications) {
    const matches = queue.rules.some(rule => rule.actions.includes(change.action) && key.startsWith(keptForm(rule.prefix)) && key.endsWith(keptForm(rule.suffix)))
    if (matches) out.push({ queue: queue.queueId, id: randomHex(16), body: eventBody(queue.account, bucket, change, now), created: now.getTime() })
  }
  return out
}
