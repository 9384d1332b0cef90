/**
 * Event notification rules of buckets, as wrangler's `r2 bucket
 * notification create|list|delete` send and read them: the bucket's rules
 * grouped by queue (GET), rules added for one queue (PUT, `{rules:
 * [{prefix, suffix, actions, description}]}`), and rules removed (DELETE,
 * with `{ruleIds}` or without a body for all the queue's rules). A rule that
 * overlaps another of the bucket for the same action is refused (10091),
 * as the hosted API refuses it. A `ruleIds` naming a rule the queue does
 * not have is refused whole (10092, fsbucket's own: the hosted API
 * documents no answer for it), so a mistyped id is never reported as
 * deleted. The rules are kept in the bucket's settings
 * (src/bucket/notifications.ts says what they match and what a message
 * holds); the account of the path is the one each message names.
 */
import type { FastifyInstance } from 'fastify'
import { parseRuleInputs, removeRules, RuleRefusal, withRules, type BucketInfo, type QueueNotifications } from '../../bucket/index.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'

interface ConfigParams { accountId: string, bucketName: string }
interface QueueConfigParams extends ConfigParams { queueId: string }

async function requireBucket (ctx: ManagementContext, name: string): Promise<BucketInfo> {
  const info = await ctx.registry.info(name)
  if (info === null) throw new ManagementError('NoSuchBucket')
  return info
}

async function queueShape (ctx: ManagementContext, queue: QueueNotifications): Promise<Record<string, unknown>> {
  return {
    queueId: queue.queueId,
    queueName: (await ctx.queues.get(queue.queueId))?.queue_name ?? '',
    rules: queue.rules.map(rule => ({ ...rule }))
  }
}

function refusal (err: unknown): unknown {
  if (!(err instanceof RuleRefusal)) return err
  if (err.reason === 'unknown') return new ManagementError('NoSuchNotificationRule', `Rule not found: ${err.message}; nothing was deleted.`)
  return new ManagementError(err.reason === 'overlap' ? 'OverlappingNotificationRule' : 'InvalidNotificationRule', `${err.reason === 'overlap' ? 'Overlapping rules' : 'Invalid rule'}: ${err.message}.`)
}

export function registerEventNotificationRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  const base = '/accounts/:accountId/event_notifications/r2/:bucketName/configuration'

  app.get<{ Params: ConfigParams }>(base, async (request) => {
    const info = await requireBucket(ctx, request.params.bucketName)
    const queues = await Promise.all(withRules(info.settings.notifications).map(async q => await queueShape(ctx, q)))
    return success({ bucketName: info.name, queues })
  })

  app.get<{ Params: QueueConfigParams }>(`${base}/queues/:queueId`, async (request) => {
    const info = await requireBucket(ctx, request.params.bucketName)
    const queue = withRules(info.settings.notifications).find(q => q.queueId === request.params.queueId)
    if (queue === undefined) throw new ManagementError('QueueNotFound', 'No event notification rules send to this queue.')
    return success(await queueShape(ctx, queue))
  })

  app.put<{ Params: QueueConfigParams }>(`${base}/queues/:queueId`, async (request) => {
    const { accountId, bucketName, queueId } = request.params
    let inputs
    try {
      inputs = parseRuleInputs(request.body)
    } catch (err) {
      throw refusal(err)
    }
    await requireBucket(ctx, bucketName)
    let added
    try {
      added = await ctx.queues.addRules(bucketName, queueId, accountId, inputs)
    } catch (err) {
      throw refusal(err)
    }
    if (!added) throw new ManagementError('QueueNotFound')
    return success({})
  })

  app.delete<{ Params: QueueConfigParams }>(`${base}/queues/:queueId`, async (request) => {
    const { bucketName, queueId } = request.params
    // No body (or `null`) removes every rule sending to the queue; a body of another shape than an object says nothing that can be taken so.
    const body: unknown = request.body
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
      throw new ManagementError('InvalidNotificationRule', 'Invalid rule: the body must be an object {"ruleIds": [...]}, or none to remove every rule of the queue.')
    }
    const ruleIds = (body as { ruleIds?: unknown } | null | undefined)?.ruleIds
    if (ruleIds !== undefined && !(Array.isArray(ruleIds) && ruleIds.every(id => typeof id === 'string'))) {
      throw new ManagementError('InvalidNotificationRule', 'Invalid rule: ruleIds must be an array of rule ids.')
    }
    const info = await requireBucket(ctx, bucketName)
    if (!withRules(info.settings.notifications).some(q => q.queueId === queueId)) throw new ManagementError('QueueNotFound', 'No event notification rules send to this queue.')
    try {
      // Judged under the settings lock, with the rules as they stand: a rule removed meanwhile is unknown by then.
      await ctx.registry.changeNotifications(bucketName, current => removeRules(current, queueId, ruleIds as string[] | undefined))
    } catch (err) {
      throw refusal(err)
    }
    return success({})
  })
}
