/**
 * Buckets of an account: create, list, read, change the default storage
 * class, delete; their lifecycle and CORS configurations; and public access
 * (the hosted API's "managed domain" switch, which here turns the bucket's
 * `public` setting on or off: the gateway then serves GET and HEAD of
 * `/{bucket}/{key}` without a token. The `domain` answered keeps the hosted
 * shape, `pub-<bucketId>.r2.dev`; fsbucket does not serve that host).
 *
 * These are the buckets of the data directory, the same ones the gateway
 * serves: the registry does the work. fsbucket has one set of buckets, so
 * the account id of the path is not checked, and a jurisdiction header is
 * ignored. Deleting a bucket detaches its custom domains.
 */
import type { FastifyInstance } from 'fastify'
import { createHash } from 'node:crypto'
import { isValidBucketName, type BucketInfo, type StorageClass } from '../../bucket/index.js'
import { detachDomain } from '../changes.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { pageNumber, perPage, single, type Query } from '../query.js'
import { corsFromApi, corsToApi, defaultLifecycle, parseLifecycle } from '../validate/bucket-config.js'

interface BucketParams { accountId: string, bucketName: string }

function bucketShape (info: BucketInfo): Record<string, unknown> {
  return { name: info.name, creation_date: info.creationDate.toISOString(), storage_class: info.settings.storageClass }
}

/**
 * The hosted API's managed-domain answer: the bucket id is 32 hex digits,
 * stable for a name; enabled when anyone may read the bucket, by its
 * settings or for this run (`serve --public`).
 */
function managedDomainShape (ctx: ManagementContext, info: BucketInfo): Record<string, unknown> {
  const bucketId = createHash('md5').update(info.name).digest('hex')
  return { bucketId, domain: `pub-${bucketId}.r2.dev`, enabled: info.settings.public || ctx.publicBuckets.has(info.name) }
}

function parseStorageClass (value: unknown): StorageClass | undefined {
  if (value === undefined) return undefined
  if (value !== 'Standard' && value !== 'InfrequentAccess') throw new ManagementError('InvalidArgument', 'storageClass must be Standard or InfrequentAccess')
  return value
}

async function requireBucket (ctx: ManagementContext, name: string): Promise<BucketInfo> {
  const info = await ctx.registry.info(name)
  if (info === null) throw new ManagementError('NoSuchBucket')
  return info
}

/** Cursors are the last name of the previous page, opaque to clients. */
function encodeCursor (name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url')
}

/**
 * The name a cursor carries. Only what `encodeCursor` makes is one: a
 * bucket name, written exactly so; anything else is 10040, as the object
 * listing answers a cursor it never returned. The bucket named may have
 * gone since: the listing goes on after its name.
 */
function decodeCursor (cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!isValidBucketName(name) || encodeCursor(name) !== cursor) throw new ManagementError('InvalidArgument', 'cursor is not a cursor returned by the bucket list')
  return name
}

/** The bucket list's `per_page`: 1–1000, default 20. */
const bucketPageSize = { defaultPerPage: 20, minPerPage: 1, maxPerPage: 1000 }

export function registerBucketRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  const base = '/accounts/:accountId/r2/buckets'

  app.get<{ Params: BucketParams }>(base, async (request) => {
    const query = request.query as Query
    // A cursor list: `page` means nothing here, but is read as every list reads it (a malformed one is 1198).
    pageNumber(query)
    const limit = perPage(query, bucketPageSize)
    const direction = (single(query, 'direction') ?? 'asc').toLowerCase()
    if (direction !== 'asc' && direction !== 'desc') throw new ManagementError('InvalidQuery', 'direction must be asc or desc')
    const order = single(query, 'order')
    if (order !== undefined && order !== 'name') throw new ManagementError('InvalidQuery', 'order must be name')
    const contains = single(query, 'name_contains')
    const startAfter = single(query, 'start_after')
    const cursor = single(query, 'cursor')
    const after = cursor !== undefined && cursor !== '' ? decodeCursor(cursor) : startAfter

    let buckets = await ctx.registry.list()
    if (direction === 'desc') buckets = buckets.reverse()
    if (contains !== undefined) buckets = buckets.filter(b => b.name.includes(contains))
    if (after !== undefined && after !== '') buckets = buckets.filter(b => direction === 'asc' ? b.name > after : b.name < after)
    const page = buckets.slice(0, limit)
    const more = buckets.length > limit
    return success({ buckets: page.map(bucketShape) }, {
      cursor: more ? encodeCursor(page[page.length - 1].name) : '',
      per_page: limit
    })
  })

  app.post<{ Params: BucketParams }>(base, async (request) => {
    const body = (request.body ?? {}) as Record<string, unknown>
    if (typeof body.name !== 'string') throw new ManagementError('InvalidBucketName')
    const storageClass = parseStorageClass(body.storageClass)
    const info = await ctx.registry.create(body.name, storageClass === undefined ? {} : { storageClass })
    return success(bucketShape(info))
  })

  app.get<{ Params: BucketParams }>(`${base}/:bucketName`, async (request) => {
    return success(bucketShape(await requireBucket(ctx, request.params.bucketName)))
  })

  app.patch<{ Params: BucketParams }>(`${base}/:bucketName`, async (request) => {
    const storageClass = parseStorageClass(request.headers['cf-r2-storage-class'])
    await requireBucket(ctx, request.params.bucketName)
    if (storageClass !== undefined) await ctx.registry.updateSettings(request.params.bucketName, { storageClass })
    return success(bucketShape(await requireBucket(ctx, request.params.bucketName)))
  })

  app.delete<{ Params: BucketParams }>(`${base}/:bucketName`, async (request) => {
    const name = request.params.bucketName
    await ctx.registry.delete(name)
    await ctx.store.update(async tx => {
      for (const attachment of (await tx.domains()).filter(d => d.bucket === name)) await detachDomain(ctx, tx, attachment)
    })
    return success({})
  })

  app.get<{ Params: BucketParams }>(`${base}/:bucketName/lifecycle`, async (request) => {
    const info = await requireBucket(ctx, request.params.bucketName)
    return success(info.settings.lifecycle ?? defaultLifecycle)
  })

  app.put<{ Params: BucketParams }>(`${base}/:bucketName/lifecycle`, async (request) => {
    // No body, or `null`, is refused as CORS refuses it: only `{"rules": []}` removes every rule.
    const lifecycle = parseLifecycle(request.body)
    await requireBucket(ctx, request.params.bucketName)
    await ctx.registry.updateSettings(request.params.bucketName, { lifecycle })
    return success({})
  })

  app.get<{ Params: BucketParams }>(`${base}/:bucketName/domains/managed`, async (request) => {
    return success(managedDomainShape(ctx, await requireBucket(ctx, request.params.bucketName)))
  })

  app.put<{ Params: BucketParams }>(`${base}/:bucketName/domains/managed`, async (request) => {
    const enabled = (request.body as { enabled?: unknown } | null)?.enabled
    if (typeof enabled !== 'boolean') throw new ManagementError('InvalidArgument', 'enabled must be true or false')
    await requireBucket(ctx, request.params.bucketName)
    // Stored, it would change nothing the server serves: the flag keeps the bucket public until a restart without it.
    if (!enabled && ctx.publicBuckets.has(request.params.bucketName)) {
      throw new ManagementError('InvalidArgument', `the bucket ${request.params.bucketName} is public for this run (serve --public), whatever its setting: restart the server without that flag, then turn its public access off if it is still on`)
    }
    await ctx.registry.updateSettings(request.params.bucketName, { public: enabled })
    return success(managedDomainShape(ctx, await requireBucket(ctx, request.params.bucketName)))
  })

  app.get<{ Params: BucketParams }>(`${base}/:bucketName/cors`, async (request) => {
    const info = await requireBucket(ctx, request.params.bucketName)
    // No rule is no configuration (a bucket written before that rule may hold an empty list).
    if (info.settings.cors === null || info.settings.cors.length === 0) throw new ManagementError('NoCorsConfiguration')
    return success(corsToApi(info.settings.cors))
  })

  app.put<{ Params: BucketParams }>(`${base}/:bucketName/cors`, async (request) => {
    // A body that is none or `null` is refused (10040) as `[]` is: only `{"rules": []}` or DELETE removes the rules.
    const cors = corsFromApi(request.body)
    await requireBucket(ctx, request.params.bucketName)
    await ctx.registry.updateSettings(request.params.bucketName, { cors })
    return success({})
  })

  app.delete<{ Params: BucketParams }>(`${base}/:bucketName/cors`, async (request) => {
    await requireBucket(ctx, request.params.bucketName)
    await ctx.registry.updateSettings(request.params.bucketName, { cors: null })
    return success({})
  })
}
