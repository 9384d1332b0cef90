/**
 * Zones: list, read, create and delete.
 *
 * A zone created here is active at once (there is no registrar to wait for)
 * and gets its universal certificate pack, covering the apex and the
 * wildcard. Deleting a zone removes its records and packs and detaches the
 * custom domains of buckets that lived in it.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { detachDomain, requireZone, zoneNotFound } from '../changes.js'
import { idFormat, newId, type ManagementContext } from '../context.js'
import { success, timestamp } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { applyFilters, paginate, parseListQuery, sortBy, textFilters, values, type Predicate, type Query } from '../query.js'
import type { CertificatePack, StoreTransaction, Zone } from '../store.js'
import { parseZoneName } from '../validate/names.js'

const zoneOrders = ['name', 'status', 'account.id', 'account.name', 'plan.id'] as const

const orderKeys: Record<string, (z: Zone) => string> = {
  name: z => z.name,
  status: z => z.status,
  'account.id': z => z.account.id,
  'account.name': z => z.account.name,
  'plan.id': z => String(z.plan.id ?? '')
}

function universalPack (zone: Zone, now: Date): CertificatePack {
  const certificateId = newId()
  const issued = timestamp(now)
  const validityDays = 90
  const expires = timestamp(new Date(now.getTime() + validityDays * 86_400_000))
  const hosts = [zone.name, `*.${zone.name}`]
  return {
    id: randomUUID(),
    type: 'universal',
    hosts,
    primary_certificate: certificateId,
    status: 'active',
    certificates: [{
      id: certificateId,
      hosts,
      issuer: 'GoogleTrustServices',
      signature: 'ECDSAWithSHA256',
      status: 'active',
      bundle_method: 'ubiquitous',
      zone_id: zone.id,
      uploaded_on: issued,
      modified_on: issued,
      expires_on: expires,
      priority: null
    }],
    created_on: issued,
    validity_days: validityDays,
    validation_method: 'txt',
    certificate_authority: 'google'
  }
}

function newZone (name: string, account: { id: string, name: string }, type: Zone['type'], now: Date): Zone {
  const created = timestamp(now)
  return {
    id: newId(),
    name,
    status: 'active',
    paused: false,
    type,
    development_mode: 0,
    name_servers: ['ns1.fsbucket.invalid', 'ns2.fsbucket.invalid'],
    original_name_servers: null,
    original_registrar: null,
    original_dnshost: null,
    created_on: created,
    modified_on: created,
    activated_on: created,
    account,
    owner: { id: null, type: 'user', email: null },
    plan: { id: '0feeeeeeeeeeeeeeeeeeeeeeeeeeeeee', name: 'Free Website', price: 0, currency: 'USD', frequency: '', is_subscribed: false, can_subscribe: false, legacy_id: 'free', legacy_discount: false, externally_managed: false },
    meta: { step: 2, custom_certificate_quota: 0, page_rule_quota: 3, phishing_detected: false, cdn_only: false, dns_only: false, foundation_dns: false },
    permissions: ['#dns_records:edit', '#dns_records:read', '#ssl:read', '#zone:edit', '#zone:read']
  }
}

function parseZoneCreate (body: unknown): { name: string, account: { id: string, name: string }, type: Zone['type'] } {
  const b = body as { name?: unknown, account?: { id?: unknown, name?: unknown }, type?: unknown } | undefined
  if (typeof b !== 'object' || b === null) throw new ManagementError('InvalidRequestBody')
  const name = typeof b.name === 'string' ? parseZoneName(b.name) : null
  if (name === null) throw new ManagementError('InvalidZoneName')
  const accountId = b.account?.id
  if (typeof accountId !== 'string' || accountId === '') throw new ManagementError('InvalidRequestBody', 'account.id is required')
  const accountName = typeof b.account?.name === 'string' ? b.account.name : 'fsbucket'
  const type = b.type ?? 'full'
  if (type !== 'full' && type !== 'partial' && type !== 'secondary' && type !== 'internal') {
    throw new ManagementError('InvalidRequestBody', 'type must be full, partial, secondary or internal')
  }
  return { name, account: { id: accountId, name: accountName }, type }
}

/** Removes a zone and everything in it (records, packs, the custom domains it carried). */
async function removeZone (ctx: ManagementContext, tx: StoreTransaction, zone: Zone): Promise<void> {
  const attached = (await tx.domains()).filter(d => d.zoneId === zone.id)
  for (const attachment of attached) await detachDomain(ctx, tx, attachment)
  const zones = await tx.zones()
  zones.splice(zones.findIndex(z => z.id === zone.id), 1)
  tx.removeZoneFile(zone.id)
}

export function registerZoneRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.get('/zones', async (request) => {
    const query = request.query as Query
    const list = parseListQuery(query, { orders: zoneOrders, defaultPerPage: 20, minPerPage: 5, maxPerPage: 50 })
    const filters: Array<Predicate<Zone>> = [
      ...textFilters<Zone>(query, 'name', z => z.name),
      ...textFilters<Zone>(query, 'account.id', z => z.account.id),
      ...textFilters<Zone>(query, 'account.name', z => z.account.name)
    ]
    const statuses = values(query, 'status')
    if (statuses.length > 0) filters.push(z => statuses.includes(z.status))
    const types = values(query, 'type')
    if (types.length > 0) filters.push(z => types.includes(z.type))
    const matching = applyFilters(await ctx.store.zones(), filters, list.match)
    const ordered = sortBy(sortBy(matching, z => z.name, 'asc'), list.order === undefined ? undefined : orderKeys[list.order], list.direction)
    const page = paginate(ordered, list)
    return success(page.result, page.resultInfo)
  })

  app.get<{ Params: { zoneId: string } }>('/zones/:zoneId', async (request) => {
    return success(await requireZone(ctx, request.params.zoneId))
  })

  app.post('/zones', async (request) => {
    const wanted = parseZoneCreate(request.body)
    const zone = await ctx.store.update(async tx => {
      const zones = await tx.zones()
      if (zones.some(z => z.name === wanted.name)) throw new ManagementError('ZoneAlreadyExists', `${wanted.name} already exists`)
      const now = ctx.now()
      const created = newZone(wanted.name, wanted.account, wanted.type, now)
      zones.push(created)
      const file = await tx.zoneFile(created.id)
      file.certificatePacks.push(universalPack(created, now))
      return created
    })
    return success(zone)
  })

  app.delete<{ Params: { zoneId: string } }>('/zones/:zoneId', async (request) => {
    const id = request.params.zoneId
    await ctx.store.update(async tx => {
      const zone = idFormat.test(id) ? (await tx.zones()).find(z => z.id === id) : undefined
      if (zone === undefined) throw zoneNotFound(id)
      await removeZone(ctx, tx, zone)
    })
    return success({ id })
  })
}
