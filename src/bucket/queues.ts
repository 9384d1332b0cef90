/**
 * Queues: where the event notifications of buckets are delivered, read by
 * HTTP pull consumers (the management API) and by push delivery (the
 * server's `--queue-push`). What a queue is (name, id, settings, its
 * consumer) is a document kept beside the buckets (the registry's state
 * area `queues`, shared by every process); its messages are not kept
 * here: each bucket's store keeps the messages of its own changes in its
 * outbox, written in the change's transaction (port.ts), and a pull leases
 * them from the outboxes of the buckets linked to the queue (a rule sends
 * to it, or did), at most a batch at a time, so a queue of any length
 * costs no memory and a pull does not read every bucket.
 *
 * Delivery is at least once: a leased message is invisible for the
 * visibility timeout, then handed out again unless acknowledged; a retry
 * makes it visible again after its delay. Messages older than the queue's
 * retention period are dropped when the queue is pulled. A lease id names
 * the bucket, the message's place in its outbox and the lease's secret.
 *
 * The queue's settings apply at each pull: a message is handed out only
 * once it is `delivery_delay` seconds old; a paused queue hands out
 * nothing (its backlog still counts); a message delivered 1 + `max_retries`
 * times (the consumer's, 3 by default) and not acknowledged is moved to the
 * consumer's dead-letter queue, or dropped when it has none. A queue
 * without a consumer (read only by push delivery) retries until a message
 * is acknowledged or expires.
 *
 * Differences from the hosted service: messages of a bucket go with it
 * when the bucket is deleted; a queue receives only event notifications
 * (no producer API); a dead-letter queue named but not created drops the
 * messages it would receive.
 */
import { addRules, linkQueue, type RuleInput } from './notifications.js'
import type { BucketInfo, BucketRegistry } from './registry.js'
import type { LeasedMessage, LeaseRef, LeaseRetry, Outbox } from './port.js'
import { randomHex } from './random.js'

/** The hosted default retention: 4 days. */
export const DEFAULT_RETENTION_SECONDS = 345_600
/** The hosted defaults of an HTTP pull consumer. */
export const DEFAULT_BATCH_SIZE = 10
export const MAX_BATCH_SIZE = 100
export const DEFAULT_VISIBILITY_TIMEOUT_MS = 30_000
export const DEFAULT_MAX_RETRIES = 3
/** The hosted bound of a visibility timeout and of a retry delay: 12 hours. */
export const MAX_VISIBILITY_TIMEOUT_MS = 12 * 3600 * 1000

export interface QueueConsumer {
  consumer_id: string
  type: 'http_pull'
  created_on: string
  settings: { batch_size?: number, max_retries?: number, visibility_timeout_ms?: number, retry_delay?: number }
  dead_letter_queue?: string
}

export interface QueueRecord {
  queue_id: string
  queue_name: string
  created_on: string
  modified_on: string
  settings: { delivery_delay: number, delivery_paused: boolean, message_retention_period: number }
  consumers: QueueConsumer[]
}

interface QueuesDocument { queues: QueueRecord[] }

/** A message as a consumer receives it (the hosted pull answer's fields). */
export interface PulledMessage {
  id: string
  lease_id: string
  body: string
  attempts: number
  timestamp_ms: number
  metadata: Record<string, string>
}

/** 3 to 63 lowercase letters, digits and hyphens (the hosted rule for queue names). */
export function isValidQueueName (name: unknown): name is string {
  return typeof name === 'string' && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name)
}

function leaseIdOf (bucket: string, message: LeasedMessage): string {
  return Buffer.from(JSON.stringify([bucket, message.seq, message.lease]), 'utf8').toString('base64url')
}

/** A lease id → its bucket and lease; undefined for anything `leaseIdOf` did not make. */
export function parseLeaseId (leaseId: unknown): { bucket: string, ref: LeaseRef } | undefined {
  if (typeof leaseId !== 'string') return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(leaseId, 'base64url').toString('utf8'))
    if (!Array.isArray(parsed) || parsed.length !== 3) return undefined
    const [bucket, seq, lease] = parsed as unknown[]
    if (typeof bucket !== 'string' || !Number.isSafeInteger(seq) || typeof lease !== 'string') return undefined
    return { bucket, ref: { seq: seq as number, lease } }
  } catch {
    return undefined
  }
}

export class Queues {
  readonly #registry: BucketRegistry
  readonly #clock: () => Date
  /** Pulls made by this process, which pick the bucket a pull starts at. */
  #pulls = 0

  constructor (registry: BucketRegistry, clock: () => Date = () => new Date()) {
    this.#registry = registry
    this.#clock = clock
  }

  get #documents (): ReturnType<BucketRegistry['state']> {
    return this.#registry.state('queues')
  }

  async list (): Promise<QueueRecord[]> {
    return (await this.#documents.read<QueuesDocument>('queues.json', { queues: [] })).queues
  }

  async get (queueId: string): Promise<QueueRecord | undefined> {
    return (await this.list()).find(q => q.queue_id === queueId)
  }

  async byName (name: string): Promise<QueueRecord | undefined> {
    return (await this.list()).find(q => q.queue_name === name)
  }

  /** A new queue; undefined when the name is taken. */
  async create (name: string, settings: Partial<QueueRecord['settings']> = {}): Promise<QueueRecord | undefined> {
    return await this.#documents.transaction(async tx => {
      const doc = await tx.load<QueuesDocument>('queues.json', { queues: [] })
      if (doc.queues.some(q => q.queue_name === name)) return undefined
      const now = this.#clock().toISOString()
      const queue: QueueRecord = {
        queue_id: randomHex(16),
        queue_name: name,
        created_on: now,
        modified_on: now,
        settings: { delivery_delay: 0, delivery_paused: false, message_retention_period: DEFAULT_RETENTION_SECONDS, ...settings },
        consumers: []
      }
      doc.queues.push(queue)
      return queue
    })
  }

  /**
   * Changes a queue with `change` (which may throw to refuse), given every
   * queue as this transaction reads them (a rename checks its name there);
   * undefined when there is no such queue.
   */
  async update (queueId: string, change: (queue: QueueRecord, queues: readonly QueueRecord[]) => void): Promise<QueueRecord | undefined> {
    return await this.#documents.transaction(async tx => {
      const doc = await tx.load<QueuesDocument>('queues.json', { queues: [] })
      const queue = doc.queues.find(q => q.queue_id === queueId)
      if (queue === undefined) return undefined
      change(queue, doc.queues)
      queue.modified_on = this.#clock().toISOString()
      return queue
    })
  }

  /**
   * The buckets a pull of `queue` reads: those linked to it (a rule sends
   * to it, or did: notifications.ts), not every bucket, so a pull costs
   * the same however many buckets there are.
   */
  async #sources (queueId: string): Promise<BucketInfo[]> {
    return (await this.#registry.list()).filter(info => info.settings.notifications.some(q => q.queueId === queueId))
  }

  /**
   * Adds event notification rules of `bucket` that send to `queueId`;
   * false when there is no such queue. The queue is looked for again once
   * the rules are written: a delete of the queue running meanwhile removes
   * the rules it finds bucket by bucket, and may have passed this bucket
   * before they were there. Then they are taken back, with any message
   * they sent, so no rule is ever left sending to a deleted queue.
   */
  async addRules (bucket: string, queueId: string, account: string, inputs: RuleInput[]): Promise<boolean> {
    if (await this.get(queueId) === undefined) return false
    await this.#registry.changeNotifications(bucket, current => addRules(current, queueId, account, inputs, this.#clock()))
    if (await this.get(queueId) !== undefined) return true
    await this.#registry.changeNotifications(bucket, current => current.filter(q => q.queueId !== queueId))
    await (await this.#registry.outbox(bucket))?.drop(queueId)
    return false
  }

  /** Removes the queue, the rules that send to it and its waiting messages; false when there was none. */
  async delete (queueId: string): Promise<boolean> {
    const removed = await this.#documents.transaction(async tx => {
      const doc = await tx.load<QueuesDocument>('queues.json', { queues: [] })
      const before = doc.queues.length
      doc.queues = doc.queues.filter(q => q.queue_id !== queueId)
      return doc.queues.length !== before
    })
    if (!removed) return false
    for (const info of await this.#registry.list()) {
      if (info.settings.notifications.some(q => q.queueId === queueId)) {
        await this.#registry.changeNotifications(info.name, current => current.filter(q => q.queueId !== queueId))
      }
      await (await this.#registry.outbox(info.name))?.drop(queueId)
    }
    return true
  }

  /**
   * Leases at most `batchSize` messages of the queue for `visibilityMs`,
   * dropping those past the retention period first; with the backlog
   * (messages waiting, leased or not) after the pull.
   */
  async pull (queue: QueueRecord, batchSize: number, visibilityMs: number): Promise<{ messages: PulledMessage[], backlog: number }> {
    const now = this.#clock().getTime()
    const expired = now - queue.settings.message_retention_period * 1000
    const rules = { writtenBy: now - queue.settings.delivery_delay * 1000, maxDeliveries: Number.MAX_SAFE_INTEGER }
    const consumer = queue.consumers.find(c => c.type === 'http_pull')
    let deadLetter: string | null = null
    if (consumer !== undefined) {
      rules.maxDeliveries = 1 + (consumer.settings.max_retries ?? DEFAULT_MAX_RETRIES)
      const name = consumer.dead_letter_queue
      deadLetter = name === undefined ? null : (await this.byName(name))?.queue_id ?? null
      if (deadLetter === queue.queue_id) deadLetter = null
    }
    const messages: PulledMessage[] = []
    let backlog = 0
    // Each pull starts at another of the queue's buckets: one bucket's flood of messages never holds another's back.
    const sources = await this.#sources(queue.queue_id)
    const start = sources.length === 0 ? 0 : this.#pulls++ % sources.length
    for (const { name, settings } of [...sources.slice(start), ...sources.slice(0, start)]) {
      const outbox = await this.#registry.outbox(name)
      if (outbox === null) continue
      await outbox.drop(queue.queue_id, expired)
      if (consumer !== undefined) {
        if (deadLetter !== null && !settings.notifications.some(q => q.queueId === deadLetter)) {
          const account = settings.notifications.find(q => q.queueId === queue.queue_id)?.account ?? ''
          await this.#registry.changeNotifications(name, current => linkQueue(current, deadLetter as string, account))
        }
        await outbox.retire(queue.queue_id, rules.maxDeliveries, now, deadLetter)
        // The dead-letter queue deleted meanwhile (its delete may have passed this bucket before the link above):
        // what moved to it goes, as that delete drops it, or it would wait for a queue that is no more.
        if (deadLetter !== null && await this.get(deadLetter) === undefined) {
          const gone = deadLetter
          await outbox.drop(gone)
          await this.#registry.changeNotifications(name, current => current.filter(q => q.queueId !== gone))
          deadLetter = null
        }
      }
      if (messages.length < batchSize && !queue.settings.delivery_paused) {
        for (const message of await outbox.lease(queue.queue_id, batchSize - messages.length, now, visibilityMs, rules)) {
          messages.push({
            id: message.id,
            lease_id: leaseIdOf(name, message),
            body: message.body,
            attempts: message.attempts,
            timestamp_ms: message.created,
            metadata: { 'CF-sourceMessageSource': 'r2', 'CF-Content-Type': 'json' }
          })
        }
      }
      backlog += await outbox.backlog(queue.queue_id)
    }
    return { messages, backlog }
  }

  /**
   * Acknowledges and retries leased messages (by lease id); lease ids that
   * name no current lease (unknown, or handed out again since) count for
   * nothing, as the hosted API counts them.
   */
  async settle (queue: QueueRecord, acks: unknown[], retries: Array<{ leaseId: unknown, delaySeconds: number, uncounted?: boolean }>): Promise<{ acked: number, retried: number }> {
    const now = this.#clock().getTime()
    const byBucket = new Map<string, { acks: LeaseRef[], retries: LeaseRetry[] }>()
    const of = (bucket: string): { acks: LeaseRef[], retries: LeaseRetry[] } => {
      let entry = byBucket.get(bucket)
      if (entry === undefined) byBucket.set(bucket, entry = { acks: [], retries: [] })
      return entry
    }
    for (const leaseId of acks) {
      const parsed = parseLeaseId(leaseId)
      if (parsed !== undefined) of(parsed.bucket).acks.push(parsed.ref)
    }
    for (const { leaseId, delaySeconds, uncounted } of retries) {
      const parsed = parseLeaseId(leaseId)
      if (parsed !== undefined) of(parsed.bucket).retries.push(Object.assign({}, parsed.ref, { visibleAt: now + delaySeconds * 1000, uncounted }))
    }
    const total = { acked: 0, retried: 0 }
    for (const [bucket, settle] of byBucket) {
      const outbox = await this.#registry.outbox(bucket).catch(() => null)
      if (outbox === null) continue
      const done = await outbox.settle(queue.queue_id, settle.acks, settle.retries)
      total.acked += done.acked
      total.retried += done.retried
    }
    return total
  }

  /**
   * Drops the messages of queues that no longer exist, in every bucket's
   * outbox: a write that read its rules before a queue's deletion (another
   * process's, within its second of cached rules) may commit a message
   * after the deletion dropped the queue's; nothing would ever read or
   * expire it. The sweeper calls this. The outboxes are read before the
   * queues, so a queue made meanwhile (whose messages may be among them) is
   * never taken for a deleted one. Counts the messages dropped.
   */
  async dropOrphans (): Promise<number> {
    const found: Array<{ outbox: Outbox, queues: string[] }> = []
    for (const info of await this.#registry.list()) {
      const outbox = await this.#registry.outbox(info.name)
      if (outbox !== null) found.push({ outbox, queues: await outbox.queues() })
    }
    const live = new Set((await this.list()).map(q => q.queue_id))
    let dropped = 0
    for (const { outbox, queues } of found) {
      for (const queue of queues) if (!live.has(queue)) dropped += await outbox.drop(queue)
    }
    return dropped
  }

  /** Removes every message waiting in the queue. */
  async purge (queueId: string): Promise<void> {
    for (const info of await this.#registry.list()) await (await this.#registry.outbox(info.name))?.drop(queueId)
  }

  /** Messages waiting in the queue (leased or not). */
  async backlog (queueId: string): Promise<number> {
    let total = 0
    for (const { name } of await this.#sources(queueId)) total += await (await this.#registry.outbox(name))?.backlog(queueId) ?? 0
    return total
  }
}
