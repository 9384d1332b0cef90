/**
 * Bucket locks of the management API: `GET` and `PUT
 * /accounts/{account}/r2/buckets/{bucket}/lock`, the calls wrangler's
 * `r2 bucket lock list|add|remove|set` make (`add` and `remove` read the
 * rules, change the list and put it back whole).
 *
 * The rules (src/bucket/locks.ts) are kept by the bucket's store, beside its
 * objects, not in the settings document with CORS and lifecycle: a write
 * judges them inside its own commit, and a change of the rules is ordered
 * with the writes (port.ts, guarantee 4). A body of the wrong shape is 10040
 * with a message naming the first mistake (no body, or `null`, included); a
 * PUT of an object without `rules` clears them, as the hosted API's `rules`
 * is optional.
 */
import type { FastifyInstance } from 'fastify'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'

interface BucketParams { accountId: string, bucketName: string }

/** A PUT body → its `rules` (checked further by the engine's `parseLockRules`). */
export function lockRulesFromBody (body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ManagementError('InvalidArgument', 'Invalid argument: the body must be an object {"rules": [...]}')
  // Without `rules`, no rule; `"rules": null` is no list, refused by the engine as any other value that is none.
  const rules = (body as { rules?: unknown }).rules
  return rules === undefined ? [] : rules
}

export function registerBucketLockRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  const path = '/accounts/:accountId/r2/buckets/:bucketName/lock'

  app.get<{ Params: BucketParams }>(path, async (request) => {
    return success({ rules: await ctx.registry.lockRules(request.params.bucketName) })
  })

  app.put<{ Params: BucketParams }>(path, async (request) => {
    // No body, or `null`, is no object: refused as the lifecycle's and CORS's PUTs refuse it, never taken as "clear every rule".
    await ctx.registry.setLockRules(request.params.bucketName, lockRulesFromBody(request.body))
    return success({})
  })
}
