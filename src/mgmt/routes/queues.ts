/**
 * Queues, the part wrangler 4 and HTTP pull consumers use: create, list,
 * read, change and delete queues; one `http_pull` consumer per queue;
 * pull a batch of messages under a lease and acknowledge or retry them;
 * read a queue's backlog (`/metrics`, the count of messages not yet
 * acknowledged, leased or not).
 * The shapes are the hosted API's, so `wrangler queues ...` and a
 * consumer's own pull loop work unchanged. The queues and their messages
 * are `Queues` (src/bucket/queues.ts); this module reads requests and
 * shapes answers. The account id of the path is not checked, as for
 * buckets.
 *
 * A queue receives the event notifications of buckets; there is no
 * producer API (sending messages of one's own), and a queue has no
 * Worker consumer: pull (or the server's `--queue-push`) is how messages
 * leave it. Pulling needs an `http_pull` consumer, as in the hosted service.
 */
import type { FastifyInstance } from 'fastify'
import {
  DEFAULT_BATCH_SIZE, DEFAULT_VISIBILITY_TIMEOUT_MS, isValidQueueName, MAX_BATCH_SIZE, MAX_VISIBILITY_TIMEOUT_MS,
  type QueueConsumer, type QueueRecord
} from '../../bucket/index.js'
import { newId, type ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { paginate, pageNumber, parseListQuery, perPage, values, type Query } from '../query.js'

interface QueueParams { accountId: string, queueId: string }

/** The hosted bounds of `message_retention_period`: 60 s to 14 days. */
const MIN_RETENTION_SECONDS = 60
const MAX_RETENTION_SECONDS = 1_209_600
/** The hosted bound of `delivery_delay` and of a retry's `delay_seconds`: 12 hours. */
const MAX_DELAY_SECONDS = 43_200

const queuePageSize = { defaultPerPage: 100, minPerPage: 1, maxPerPage: 1000 }

function consumerShape (queue: QueueRecord, consumer: QueueConsumer): Record<string, unknown> {
  return { ...consumer, queue_name: queue.queue_name }
}

function queueShape (queue: QueueRecord): Record<string, unknown> {
  return {
    queue_id: queue.queue_id,
    queue_name: queue.queue_name,
    created_on: queue.created_on,
    modified_on: queue.modified_on,
    producers: [],
    producers_total_count: 0,
    consumers: queue.consumers.map(c => consumerShape(queue, c)),
    consumers_total_count: queue.consumers.length,
    settings: queue.settings
  }
}

/** An optional whole number in [min, max] of a body; 11004 otherwise. */
function wholeNumber (value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ManagementError('InvalidQueueSettings', `${name} must be a whole number from ${min} to ${max}`)
  }
  return value
}

function objectOf (body: unknown, name: string): Record<string, unknown> {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw new ManagementError('InvalidRequestBody', `${name} must be an object`)
  return body as Record<string, unknown>
}

/** A queue's `settings` of a create or update request: the fields given, checked. */
export function parseQueueSettings (raw: unknown): Partial<QueueRecord['settings']> {
  const settings = objectOf(raw, 'settings')
  const out: Partial<QueueRecord['settings']> = {}
  const retention = wholeNumber(settings.message_retention_period, 'settings.message_retention_period', MIN_RETENTION_SECONDS, MAX_RETENTION_SECONDS)
  if (retention !== undefined) out.message_retention_period = retention
  const delay = wholeNumber(settings.delivery_delay, 'settings.delivery_delay', 0, MAX_DELAY_SECONDS)
  if (delay !== undefined) out.delivery_delay = delay
  if (settings.delivery_paused !== undefined) {
    if (typeof settings.delivery_paused !== 'boolean') throw new ManagementError('InvalidQueueSettings', 'settings.delivery_paused must be true or false')
    out.delivery_paused = settings.delivery_paused
  }
  return out
}

/** An `http_pull` consumer of a consumer request body. */
export function parseConsumer (body: unknown, createdOn: string): QueueConsumer {
  const fields = objectOf(body, 'the body')
  if (fields.type !== 'http_pull') throw new ManagementError('InvalidQueueSettings', 'type must be "http_pull": a queue here has no Worker consumers')
  const settings = objectOf(fields.settings, 'settings')
  const consumer: QueueConsumer = { consumer_id: newId(), type: 'http_pull', created_on: createdOn, settings: {} }
  const batchSize = wholeNumber(settings.batch_size, 'settings.batch_size', 1, MAX_BATCH_SIZE)
  if (batchSize !== undefined) consumer.settings.batch_size = batchSize
  const maxRetries = wholeNumber(settings.max_retries, 'settings.max_retries', 0, 100)
  if (maxRetries !== undefined) consumer.settings.max_retries = maxRetries
  const visibility = wholeNumber(settings.visibility_timeout_ms, 'settings.visibility_timeout_ms', 0, MAX_VISIBILITY_TIMEOUT_MS)
  if (visibility !== undefined) consumer.settings.visibility_timeout_ms = visibility
  const retryDelay = wholeNumber(settings.retry_delay, 'settings.retry_delay', 0, MAX_DELAY_SECONDS)
  if (retryDelay !== undefined) consumer.settings.retry_delay = retryDelay
  if (fields.dead_letter_queue !== undefined && fields.dead_letter_queue !== null && fields.dead_letter_queue !== '') {
    if (!isValidQueueName(fields.dead_letter_queue)) throw new ManagementError('InvalidQueueName', 'dead_letter_queue is not a valid queue name')
    consumer.dead_letter_queue = fields.dead_letter_queue
  }
  return consumer
}

/** A pull request's batch size and visibility timeout, defaulting to the consumer's, then the hosted defaults. */
export function parsePull (body: unknown, consumer: QueueConsumer): { batchSize: number, visibilityMs: number } {
  const fields = objectOf(body, 'the body')
  return {
    batchSize: wholeNumber(fields.batch_size, 'batch_size', 1, MAX_BATCH_SIZE) ?? consumer.settings.batch_size ?? DEFAULT_BATCH_SIZE,
    visibilityMs: wholeNumber(fields.visibility_timeout_ms, 'visibility_timeout_ms', 0, MAX_VISIBILITY_TIMEOUT_MS) ?? consumer.settings.visibility_timeout_ms ?? DEFAULT_VISIBILITY_TIMEOUT_MS
  }
}

/** An ack request: the lease ids acknowledged, and those retried with their delays (the consumer's `retry_delay` by default). */
export function parseAck (body: unknown, consumer: QueueConsumer): { acks: unknown[], retries: Array<{ leaseId: unknown, delaySeconds: number }> } {
  const fields = objectOf(body, 'the body')
  const list = (value: unknown, name: string): Array<Record<string, unknown>> => {
    if (value === undefined || value === null) return []
    if (!Array.isArray(value) || !value.every(v => typeof v === 'object' && v !== null && typeof (v as { lease_id?: unknown }).lease_id === 'string')) {
      throw new ManagementError('InvalidRequestBody', `${name} must be an array of {lease_id}`)
    }
    return value as Array<Record<string, unknown>>
  }
  return {
    acks: list(fields.acks, 'acks').map(a => a.lease_id),
    retries: list(fields.retries, 'retries').map(r => ({
      leaseId: r.lease_id,
      delaySeconds: wholeNumber(r.delay_seconds, 'retries[].delay_seconds', 0, MAX_DELAY_SECONDS) ?? consumer.settings.retry_delay ?? 0
    }))
  }
}

async function requireQueue (ctx: ManagementContext, queueId: string): Promise<QueueRecord> {
  const queue = await ctx.queues.get(queueId)
  if (queue === undefined) throw new ManagementError('QueueNotFound')
  return queue
}

function pullConsumer (queue: QueueRecord): QueueConsumer {
  const consumer = queue.consumers.find(c => c.type === 'http_pull')
  if (consumer === undefined) throw new ManagementError('ConsumerNotFound', 'This queue has no http_pull consumer: add one to pull messages (wrangler queues consumer http add).')
  return consumer
}

export function registerQueueRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  const base = '/accounts/:accountId/queues'

  app.get(base, async (request) => {
    const query = request.query as Query
    const page = pageNumber(query)
    const size = perPage(query, queuePageSize)
    const names = values(query, 'name')
    const queues = (await ctx.queues.list()).filter(q => names.length === 0 || names.includes(q.queue_name))
    const { result, resultInfo } = paginate(queues, { page, perPage: size })
    return success(result.map(queueShape), resultInfo)
  })

  app.post(base, async (request) => {
    const body = objectOf(request.body, 'the body')
    if (!isValidQueueName(body.queue_name)) throw new ManagementError('InvalidQueueName')
    const queue = await ctx.queues.create(body.queue_name, parseQueueSettings(body.settings))
    if (queue === undefined) throw new ManagementError('QueueAlreadyExists')
    return success(queueShape(queue))
  })

  app.get<{ Params: QueueParams }>(`${base}/:queueId`, async (request) => {
    return success(queueShape(await requireQueue(ctx, request.params.queueId)))
  })

  const update = async (request: { params: QueueParams, body: unknown }): Promise<unknown> => {
    const body = objectOf(request.body, 'the body')
    if (body.queue_name !== undefined && !isValidQueueName(body.queue_name)) throw new ManagementError('InvalidQueueName')
    const settings = parseQueueSettings(body.settings)
    const name = body.queue_name as string | undefined
    // The name is checked in the rename's own transaction: two renames at once never leave two queues of one name.
    const queue = await ctx.queues.update(request.params.queueId, (q, queues) => {
      if (name !== undefined) {
        if (queues.some(other => other.queue_name === name && other.queue_id !== q.queue_id)) throw new ManagementError('QueueAlreadyExists')
        q.queue_name = name
      }
      Object.assign(q.settings, settings)
    })
    if (queue === undefined) throw new ManagementError('QueueNotFound')
    return success(queueShape(queue))
  }
  app.patch<{ Params: QueueParams }>(`${base}/:queueId`, update)
  app.put<{ Params: QueueParams }>(`${base}/:queueId`, update)

  app.delete<{ Params: QueueParams }>(`${base}/:queueId`, async (request) => {
    if (!await ctx.queues.delete(request.params.queueId)) throw new ManagementError('QueueNotFound')
    return success({})
  })

  app.get<{ Params: QueueParams }>(`${base}/:queueId/consumers`, async (request) => {
    const list = parseListQuery(request.query as Query, { orders: [], defaultPerPage: 100, minPerPage: 1, maxPerPage: 1000 })
    const queue = await requireQueue(ctx, request.params.queueId)
    const { result, resultInfo } = paginate(queue.consumers.map(c => consumerShape(queue, c)), list)
    return success(result, resultInfo)
  })

  app.post<{ Params: QueueParams }>(`${base}/:queueId/consumers`, async (request) => {
    const consumer = parseConsumer(request.body, ctx.now().toISOString())
    let refused = false
    const queue = await ctx.queues.update(request.params.queueId, q => {
      if (q.consumers.length > 0) { refused = true; return }
      q.consumers.push(consumer)
    })
    if (queue === undefined) throw new ManagementError('QueueNotFound')
    if (refused) throw new ManagementError('ConsumerAlreadyExists')
    return success(consumerShape(queue, consumer))
  })

  app.put<{ Params: QueueParams & { consumerId: string } }>(`${base}/:queueId/consumers/:consumerId`, async (request) => {
    const changed = parseConsumer(request.body, '')
    let consumer: QueueConsumer | undefined
    const queue = await ctx.queues.update(request.params.queueId, q => {
      consumer = q.consumers.find(c => c.consumer_id === request.params.consumerId)
      if (consumer === undefined) return
      consumer.settings = changed.settings
      if (changed.dead_letter_queue === undefined) delete consumer.dead_letter_queue
      else consumer.dead_letter_queue = changed.dead_letter_queue
    })
    if (queue === undefined) throw new ManagementError('QueueNotFound')
    if (consumer === undefined) throw new ManagementError('ConsumerNotFound')
    return success(consumerShape(queue, consumer))
  })

  app.delete<{ Params: QueueParams & { consumerId: string } }>(`${base}/:queueId/consumers/:consumerId`, async (request) => {
    let found = false
    const queue = await ctx.queues.update(request.params.queueId, q => {
      found = q.consumers.some(c => c.consumer_id === request.params.consumerId)
      q.consumers = q.consumers.filter(c => c.consumer_id !== request.params.consumerId)
    })
    if (queue === undefined) throw new ManagementError('QueueNotFound')
    if (!found) throw new ManagementError('ConsumerNotFound')
    return success({})
  })

  app.post<{ Params: QueueParams }>(`${base}/:queueId/messages/pull`, async (request) => {
    const queue = await requireQueue(ctx, request.params.queueId)
    const { batchSize, visibilityMs } = parsePull(request.body, pullConsumer(queue))
    const { messages, backlog } = await ctx.queues.pull(queue, batchSize, visibilityMs)
    return success({ message_backlog_count: backlog, messages })
  })

  app.post<{ Params: QueueParams }>(`${base}/:queueId/messages/ack`, async (request) => {
    const queue = await requireQueue(ctx, request.params.queueId)
    const { acks, retries } = parseAck(request.body, pullConsumer(queue))
    const { acked, retried } = await ctx.queues.settle(queue, acks, retries)
    return success({ ackCount: acked, retryCount: retried, warnings: [] })
  })

  // The hosted answer also has backlog_bytes and oldest_message_timestamp_ms; the outboxes count messages only (port.ts).
  app.get<{ Params: QueueParams }>(`${base}/:queueId/metrics`, async (request) => {
    const queue = await requireQueue(ctx, request.params.queueId)
    return success({ backlog_count: await ctx.queues.backlog(queue.queue_id) })
  })

  app.post<{ Params: QueueParams }>(`${base}/:queueId/purge`, async (request) => {
    const queue = await requireQueue(ctx, request.params.queueId)
    await ctx.queues.purge(queue.queue_id)
    return success({ started_on: ctx.now().toISOString(), complete: true })
  })
}
