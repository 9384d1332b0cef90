/**
 * Custom domains of buckets: the way a bucket is made public on a name.
 *
 * Attaching `cdn.example.test` to a bucket needs a zone containing that
 * name; it creates a proxied CNAME record for the name in the zone and adds
 * the name to the bucket's `settings.domains`, from which the gateway serves
 * the bucket read-only for requests whose Host is that name. A disabled
 * domain keeps its record but is not served. Detaching removes the record
 * and the route. One name serves at most one bucket.
 *
 * The attachment (zone, record, TLS settings) is kept in the management
 * state; the registry holds only what the gateway routes on.
 */
import type { FastifyInstance } from 'fastify'
import { addRecord, detachDomain, routeDomain, zoneNotFound } from '../changes.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import type { DomainAttachment } from '../store.js'
import { isInZone, parseHostname } from '../validate/names.js'
import { validateRecord } from '../validate/records.js'

/** Where the CNAME of a custom domain points (the service points at its public bucket host). */
export const customDomainTarget = 'public.r2.dev'

const tlsVersions = ['1.0', '1.1', '1.2', '1.3'] as const

interface BucketParams { accountId: string, bucketName: string }
interface DomainParams extends BucketParams { domain: string }

async function requireBucket (ctx: ManagementContext, name: string): Promise<void> {
  if (await ctx.registry.info(name) === null) throw new ManagementError('NoSuchBucket')
}

function parseMinTls (value: unknown): DomainAttachment['minTLS'] | undefined {
  if (value === undefined) return undefined
  if (!(tlsVersions as readonly unknown[]).includes(value)) throw new ManagementError('InvalidArgument', 'minTLS must be 1.0, 1.1, 1.2 or 1.3')
  return value as DomainAttachment['minTLS']
}

/** A cipher's name as the hosted service takes them (BoringSSL's: `ECDHE-RSA-AES128-GCM-SHA256`), and how many a domain lists at most. */
const cipherName = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
const MAX_CIPHERS = 64

function parseCiphers (value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length > MAX_CIPHERS || !value.every(c => typeof c === 'string' && cipherName.test(c))) {
    throw new ManagementError('InvalidArgument', `ciphers must be an array of at most ${MAX_CIPHERS} cipher names, each of letters, digits, "-" and "_" (such as ECDHE-RSA-AES128-GCM-SHA256)`)
  }
  return value
}

function listed (a: DomainAttachment): Record<string, unknown> {
  return {
    domain: a.domain,
    enabled: a.enabled,
    status: { ownership: 'active', ssl: 'active' },
    minTLS: a.minTLS,
    ...(a.ciphers !== undefined ? { ciphers: a.ciphers } : {}),
    zoneId: a.zoneId,
    zoneName: a.zoneName
  }
}

export function registerDomainRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  const base = '/accounts/:accountId/r2/buckets/:bucketName/domains/custom'

  app.post<{ Params: BucketParams }>(base, async (request) => {
    const bucket = request.params.bucketName
    const body = (request.body ?? {}) as Record<string, unknown>
    const domain = typeof body.domain === 'string' ? parseHostname(body.domain) : null
    if (domain === null) throw new ManagementError('InvalidArgument', 'domain must be a host name')
    if (typeof body.zoneId !== 'string') throw new ManagementError('InvalidArgument', 'zoneId is required')
    const zoneId = body.zoneId
    const enabled = body.enabled === undefined ? true : body.enabled
    if (typeof enabled !== 'boolean') throw new ManagementError('InvalidArgument', 'enabled must be a boolean')
    const minTLS = parseMinTls(body.minTLS) ?? '1.0'
    const ciphers = parseCiphers(body.ciphers)
    await requireBucket(ctx, bucket)

    const attachment = await ctx.store.update(async tx => {
      const zone = (await tx.zones()).find(z => z.id === zoneId)
      if (zone === undefined) throw zoneNotFound(zoneId)
      if (!isInZone(domain, zone.name)) throw new ManagementError('DomainNotInZone', `${domain} is not in the zone ${zone.name}.`)
      const domains = await tx.domains()
      if (domains.some(d => d.domain === domain)) throw new ManagementError('DomainAlreadyAttached')
      const fields = validateRecord({ type: 'CNAME', name: domain, content: customDomainTarget, proxied: true, ttl: 1, comment: `Custom domain of bucket ${bucket}` }, zone.name)
      const record = await addRecord(tx, zone, fields, ctx.now(), { auto_added: true, managed_by_apps: false, managed_by_svc_tunnel: false, source: 'r2', read_only: true })
      const added: DomainAttachment = { domain, bucket, zoneId: zone.id, zoneName: zone.name, recordId: record.id, enabled, minTLS }
      if (ciphers !== undefined) added.ciphers = ciphers
      domains.push(added)
      await routeDomain(ctx, bucket, domain, enabled)
      return added
    })
    return success({ domain, enabled, zoneId: attachment.zoneId, minTLS, ...(ciphers !== undefined ? { ciphers } : {}) })
  })

  app.get<{ Params: BucketParams }>(base, async (request) => {
    await requireBucket(ctx, request.params.bucketName)
    const domains = (await ctx.store.domains()).filter(d => d.bucket === request.params.bucketName)
    return success({ domains: domains.map(listed) })
  })

  app.get<{ Params: DomainParams }>(`${base}/:domain`, async (request) => {
    await requireBucket(ctx, request.params.bucketName)
    const found = (await ctx.store.domains()).find(d => d.bucket === request.params.bucketName && d.domain === domainOf(request.params.domain))
    if (found === undefined) throw new ManagementError('DomainNotFound')
    return success(listed(found))
  })

  app.put<{ Params: DomainParams }>(`${base}/:domain`, async (request) => {
    const body = (request.body ?? {}) as Record<string, unknown>
    if (body.enabled !== undefined && typeof body.enabled !== 'boolean') throw new ManagementError('InvalidArgument', 'enabled must be a boolean')
    const minTLS = parseMinTls(body.minTLS)
    const ciphers = parseCiphers(body.ciphers)
    await requireBucket(ctx, request.params.bucketName)
    const updated = await ctx.store.update(async tx => {
      const domains = await tx.domains()
      const index = domains.findIndex(d => d.bucket === request.params.bucketName && d.domain === domainOf(request.params.domain))
      if (index === -1) throw new ManagementError('DomainNotFound')
      const next: DomainAttachment = { ...domains[index] }
      if (typeof body.enabled === 'boolean') next.enabled = body.enabled
      if (minTLS !== undefined) next.minTLS = minTLS
      if (ciphers !== undefined) next.ciphers = ciphers
      domains[index] = next
      await routeDomain(ctx, next.bucket, next.domain, next.enabled)
      return next
    })
    return success({ domain: updated.domain, enabled: updated.enabled, minTLS: updated.minTLS, ...(updated.ciphers !== undefined ? { ciphers: updated.ciphers } : {}) })
  })

  app.delete<{ Params: DomainParams }>(`${base}/:domain`, async (request) => {
    await requireBucket(ctx, request.params.bucketName)
    const domain = domainOf(request.params.domain)
    await ctx.store.update(async tx => {
      const found = (await tx.domains()).find(d => d.bucket === request.params.bucketName && d.domain === domain)
      if (found === undefined) throw new ManagementError('DomainNotFound')
      await detachDomain(ctx, tx, found)
    })
    return success({ domain })
  })
}

/** The domain a URL names, as an attachment stores it (lower case, no trailing dot); one no attachment could have matches none. */
function domainOf (param: string): string {
  return parseHostname(param) ?? param.toLowerCase()
}
