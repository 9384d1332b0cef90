/**
 * `POST /graphql`: the one analytics query fsbucket answers, the storage
 * metrics of a bucket (`r2StorageAdaptiveGroups`, which `wrangler r2 bucket
 * info` asks for): its object count and payload size, counted now by walking
 * the bucket's listing page by page (bounded memory), and the bytes of its
 * keys and custom metadata as `metadataSize`. The hosted service samples
 * these figures over time; here they are exact at the moment of asking.
 *
 * GraphQL answers are not the v4 envelope: `{data, errors}`. Any other query
 * answers `data: null` and an error saying what is supported.
 */
import type { FastifyInstance } from 'fastify'
import type { Bucket } from '../../bucket/index.js'
import type { ManagementContext } from '../context.js'

interface GraphqlRequest {
  query?: unknown
  variables?: { accountTag?: unknown, filter?: { bucketName?: unknown } }
}

interface StorageMetrics { objectCount: number, payloadSize: number, metadataSize: number }

async function measure (bucket: Bucket): Promise<StorageMetrics> {
  const metrics: StorageMetrics = { objectCount: 0, payloadSize: 0, metadataSize: 0 }
  let cursor: string | undefined
  do {
    const page = await bucket.list({ cursor, include: ['customMetadata'] })
    for (const object of page.objects) {
      metrics.objectCount++
      metrics.payloadSize += object.size
      metrics.metadataSize += Buffer.byteLength(object.key, 'utf8')
      for (const [k, v] of Object.entries(object.customMetadata ?? {})) metrics.metadataSize += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(v, 'utf8')
    }
    cursor = page.truncated ? page.cursor : undefined
  } while (cursor !== undefined)
  return metrics
}

/**
 * The bucket a filter names. `wrangler r2 bucket info <name> -J eu` names a
 * bucket of a jurisdiction `eu_<name>`; a bucket name holds no `_`, and
 * jurisdictions are accepted and ignored here, so it is `<name>`.
 */
function filteredBucket (name: string): string {
  return /^(?:default|eu|fedramp|fedramp-high)_(.+)$/.exec(name)?.[1] ?? name
}

export function registerGraphqlRoute (app: FastifyInstance, ctx: ManagementContext): void {
  app.post('/graphql', async (request, reply) => {
    const body = (request.body ?? {}) as GraphqlRequest
    const query = typeof body.query === 'string' ? body.query : ''
    const bucketName = body.variables?.filter?.bucketName
    if (!query.includes('r2StorageAdaptiveGroups') || typeof bucketName !== 'string') {
      return await reply.code(200).send({
        data: null,
        errors: [{ message: 'fsbucket answers one query: r2StorageAdaptiveGroups filtered by bucketName.' }]
      })
    }
    const bucket = await ctx.registry.open(filteredBucket(bucketName))
    const groups = bucket === null
      ? []
      : [{ max: await measure(bucket), dimensions: { datetime: ctx.now().toISOString() } }]
    const accountTag = typeof body.variables?.accountTag === 'string' ? body.variables.accountTag : null
    return { data: { viewer: { accounts: [{ accountTag, r2StorageAdaptiveGroups: groups }] } }, errors: null }
  })
}
