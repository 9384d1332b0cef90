/**
 * Scoped tokens through the management API: `GET /user/tokens`,
 * `POST /user/tokens`, `GET /user/tokens/{id}`, `DELETE /user/tokens/{id}`,
 * in the hosted API's shapes where they fit (the plugin lets only an admin
 * read-write token, or the configured credentials, change them, and admin
 * tokens read them).
 *
 * A token is answered as the hosted API answers one (`id`, `name`,
 * `status`, `issued_on`, `modified_on`, `expires_on`, `policies`) plus
 * fsbucket's own `permission` and `buckets`. A creation takes either those
 * two fields, or the hosted `policies`: one allow policy whose permission
 * group is one of the four R2 groups below, on the account (admin) or on
 * buckets (`com.cloudflare.edge.r2.bucket.<account>_default_<bucket>`).
 * Its answer alone carries the value (`value`) and the S3 pair
 * (`accessKeyId`, `secretAccessKey`).
 */
import type { FastifyInstance } from 'fastify'
import { isPermission, parseExpiry, type Permission, type Principal, type TokenSummary } from '../../bucket/index.js'
import type { ManagementContext } from '../context.js'
import { success, timestamp } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { localAccount } from './accounts.js'
import { paginate, parseListQuery, sortBy, type Query } from '../query.js'

/** The hosted service's permission group of each permission. */
const groups: Record<Permission, string> = {
  'admin-read-write': 'Workers R2 Storage Write',
  'admin-read-only': 'Workers R2 Storage Read',
  'object-read-write': 'Workers R2 Storage Bucket Item Write',
  'object-read-only': 'Workers R2 Storage Bucket Item Read'
}

const bucketResource = /^com\.cloudflare\.edge\.r2\.bucket\.[0-9a-f]{32}_(?:default|eu|fedramp)_(.+)$/

function policiesOf (permission: Permission, buckets: string[] | null): unknown[] {
  const resources = buckets === null
    ? { [`com.cloudflare.api.account.${localAccount.id}`]: '*' }
    : Object.fromEntries(buckets.map(b => [`com.cloudflare.edge.r2.bucket.${localAccount.id}_default_${b}`, '*']))
  return [{ id: `${permission}`, effect: 'allow', resources, permission_groups: [{ id: permission, name: groups[permission] }] }]
}

function shown (token: Omit<TokenSummary, 'expired'> & { expired?: boolean }): Record<string, unknown> {
  return {
    id: token.id,
    name: token.name,
    status: token.expired === true ? 'expired' : 'active',
    issued_on: timestamp(new Date(token.createdOn)),
    modified_on: timestamp(new Date(token.createdOn)),
    ...(token.expiresOn === null ? {} : { expires_on: timestamp(new Date(token.expiresOn)) }),
    policies: policiesOf(token.permission, token.buckets),
    permission: token.permission,
    buckets: token.buckets
  }
}

function invalid (detail: string): ManagementError {
  return new ManagementError('InvalidRequestBody', detail)
}

/** The permission and buckets a creation's body asks for: fsbucket's fields, or the hosted policies. */
function scopeFrom (body: Record<string, unknown>): { permission: Permission, buckets: string[] } {
  if (body.policies === undefined) {
    if (!isPermission(body.permission)) throw invalid('permission must be admin-read-write, admin-read-only, object-read-write or object-read-only (or give policies).')
    const buckets = body.buckets ?? []
    if (!Array.isArray(buckets) || !buckets.every(b => typeof b === 'string')) throw invalid('buckets must be a list of bucket names.')
    // An empty list given would read as every bucket: the widest scope is asked for by leaving the field out, never by accident.
    if (body.buckets !== undefined && buckets.length === 0) throw invalid('buckets, when given, names at least one bucket: leave it out for a token of every bucket.')
    return { permission: body.permission, buckets: buckets as string[] }
  }
  const policies = body.policies
  if (!Array.isArray(policies) || policies.length !== 1) throw invalid('policies must hold one policy.')
  const policy = policies[0] as { effect?: unknown, resources?: unknown, permission_groups?: unknown }
  const group = Array.isArray(policy.permission_groups) && policy.permission_groups.length === 1 ? policy.permission_groups[0] as { id?: unknown, name?: unknown } : null
  // A group named by its id and by its name must be one group: the wider of two never stands in for the one asked for.
  // (The hosted API's clients send its own hex id beside the name: an id naming none of fsbucket's groups defers to the name.)
  const byId = (Object.keys(groups) as Permission[]).find(p => p === group?.id)
  const byName = (Object.keys(groups) as Permission[]).find(p => groups[p] === group?.name)
  if (byId !== undefined && group?.name !== undefined && byId !== byName) throw invalid('the permission group\'s id and name name two groups.')
  const permission = byId ?? byName
  if (policy.effect !== 'allow' || permission === undefined || typeof policy.resources !== 'object' || policy.resources === null) {
    throw invalid(`the policy must allow one of the permission groups ${Object.values(groups).join(', ')} on resources.`)
  }
  const resources = Object.entries(policy.resources as Record<string, unknown>)
  // No resource would read as every bucket, and a resource's value other than "*" grants nothing the token could keep.
  if (resources.length === 0) throw invalid('the policy names no resource: give the account, or buckets.')
  const buckets: string[] = []
  for (const [resource, value] of resources) {
    if (value !== '*') throw invalid(`resource ${JSON.stringify(resource)} must be granted with "*".`)
    const bucket = bucketResource.exec(resource)
    if (bucket !== null) buckets.push(bucket[1])
    else if (!resource.startsWith('com.cloudflare.api.account.')) throw invalid(`unknown resource ${JSON.stringify(resource)}.`)
  }
  return { permission, buckets }
}

/**
 * `expires_on`: a date and time with a zone (`2026-12-31T00:00:00Z`) or a
 * date alone (midnight UTC), as the engine reads an expiry (`parseExpiry`,
 * strict: no other text, no February 30). One in the past is the engine's
 * to refuse (10040).
 */
function expiresFrom (value: unknown): Date | null {
  if (value === undefined || value === null) return null
  const at = typeof value === 'string' ? parseExpiry(value) : null
  if (at === null) throw invalid('expires_on must be an ISO 8601 date and time with a zone (2026-12-31T00:00:00Z) or a date (midnight UTC).')
  return at
}

/** When the caller's own token expires (null: never, or the caller is no scoped token). What it makes ends with it. */
export async function callerExpiry (ctx: ManagementContext, principal: Principal | null): Promise<Date | null> {
  if (principal?.kind !== 'token') return null
  const own = (await ctx.registry.tokens.list()).find(t => t.id === principal.id)
  // Revoked since it was checked: it makes nothing (no record would mean no limit).
  if (own === undefined) throw new ManagementError('AuthenticationError')
  return own.expiresOn == null ? null : new Date(own.expiresOn)
}

export function registerTokenRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  // Paged as the hosted list is (`page`, `per_page` 5 to 50, 20 by default, `direction` of the creation order), and as every list here reads its query.
  app.get('/user/tokens', async (request) => {
    const list = parseListQuery(request.query as Query, { orders: [], defaultPerPage: 20, minPerPage: 5, maxPerPage: 50 })
    const tokens = (await ctx.registry.tokens.list()).map(shown)
    const { result, resultInfo } = paginate(sortBy(tokens, undefined, list.direction), list)
    return success(result, resultInfo)
  })

  app.get<{ Params: { id: string } }>('/user/tokens/:id', async (request) => {
    const token = (await ctx.registry.tokens.list()).find(t => t.id === request.params.id)
    if (token === undefined) throw new ManagementError('TokenNotFound')
    return success(shown(token))
  })

  app.post('/user/tokens', async (request) => {
    const body = request.body
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object.')
    const fields = body as Record<string, unknown>
    if (typeof fields.name !== 'string') throw invalid('name is required.')
    // A token made by a token that expires expires with it, at the latest: an expiry would otherwise be no limit.
    const asked = expiresFrom(fields.expires_on)
    const limit = await callerExpiry(ctx, request.principal)
    const expiresOn = limit !== null && (asked == null || asked > limit) ? limit : asked
    const created = await ctx.registry.tokens.create({ name: fields.name, ...scopeFrom(fields), expiresOn })
    return success({
      ...shown(created),
      value: created.token,
      accessKeyId: created.accessKeyId,
      secretAccessKey: created.secretAccessKey
    })
  })

  app.delete<{ Params: { id: string } }>('/user/tokens/:id', async (request) => {
    if (!await ctx.registry.tokens.revoke(request.params.id)) throw new ManagementError('TokenNotFound')
    return success({ id: request.params.id })
  })
}

/**
 * `POST /accounts/{account_id}/r2/temp-access-credentials`: temporary
 * credentials under the scoped token `parentAccessKeyId` (its id), as the
 * hosted API makes them: `{bucket, parentAccessKeyId, permission,
 * ttlSeconds, prefixes?, objects?}` → `{accessKeyId, secretAccessKey,
 * sessionToken}`. The parent must hold the permission on the bucket
 * (sessions.ts); the bucket must exist.
 */
export function registerTemporaryCredentialRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.post('/accounts/:accountId/r2/temp-access-credentials', async (request) => {
    const body = request.body
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object.')
    const fields = body as Record<string, unknown>
    if (typeof fields.parentAccessKeyId !== 'string') throw invalid('parentAccessKeyId is required.')
    if (typeof fields.bucket !== 'string') throw invalid('bucket is required.')
    if (fields.ttlSeconds !== undefined && typeof fields.ttlSeconds !== 'number') throw invalid('ttlSeconds must be a number.')
    if (await ctx.registry.info(fields.bucket) === null) throw new ManagementError('NoSuchBucket')
    // A token that expires makes nothing that outlives it, whichever parent it names (as for the tokens and share links it makes).
    const notAfter = await callerExpiry(ctx, request.principal)
    const credentials = await ctx.registry.tokens.createTemporaryCredentials(fields.parentAccessKeyId, {
      bucket: fields.bucket,
      permission: fields.permission as Permission,
      ttlSeconds: fields.ttlSeconds ?? 900,
      prefixes: fields.prefixes as string[] | undefined,
      objects: fields.objects as string[] | undefined,
      ...(notAfter === null ? {} : { notAfter })
    })
    if (credentials === null) throw new ManagementError('TokenNotFound', 'parentAccessKeyId names no live token.')
    return success(credentials)
  })
}
