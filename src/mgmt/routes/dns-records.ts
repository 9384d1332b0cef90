/**
 * DNS records of a zone: create, list, read, patch, replace, delete.
 *
 * Validation is `validate/records.ts`; this module adds what needs the
 * zone's other records (CNAME exclusivity, identical records) and keeps the
 * bookkeeping fields (`id`, `created_on`, `modified_on`, `meta`). A PATCH
 * is merged onto the stored record and the result validated as a whole, so
 * a record can never be patched into a state a POST would refuse.
 */
import type { FastifyInstance } from 'fastify'
import { addRecord, requireZone, toRecord, zoneNotFound } from '../changes.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { applyFilters, booleanFilters, paginate, parseListQuery, single, sortBy, textFilters, values, type Predicate, type Query } from '../query.js'
import type { DnsRecord, StoreTransaction, Zone } from '../store.js'
import { findRecordConflict, validateRecord } from '../validate/records.js'

const recordOrders = ['type', 'name', 'content', 'ttl', 'proxied'] as const

const orderKeys: Record<string, (r: DnsRecord) => string | number | boolean> = {
  type: r => r.type,
  name: r => r.name,
  content: r => r.content,
  ttl: r => r.ttl,
  proxied: r => r.proxied
}

interface RecordParams { zoneId: string, recordId: string }

async function zoneInTransaction (tx: StoreTransaction, id: string): Promise<Zone> {
  const zone = (await tx.zones()).find(z => z.id === id)
  if (zone === undefined) throw zoneNotFound(id)
  return zone
}

function recordFilters (query: Query): Array<Predicate<DnsRecord>> {
  const filters: Array<Predicate<DnsRecord>> = [
    ...textFilters<DnsRecord>(query, 'name', r => r.name),
    ...textFilters<DnsRecord>(query, 'content', r => r.content),
    ...textFilters<DnsRecord>(query, 'comment', r => r.comment),
    ...booleanFilters<DnsRecord>(query, 'proxied', r => r.proxied)
  ]
  const types = values(query, 'type').map(t => t.toUpperCase())
  if (types.length > 0) filters.push(r => types.includes(r.type))
  const tags = values(query, 'tag.exact').concat(values(query, 'tag'))
  if (tags.length > 0) filters.push(r => tags.some(t => r.tags.includes(t)))
  const search = single(query, 'search')
  if (search !== undefined && search !== '') {
    const needle = search.toLowerCase()
    filters.push(r => r.name.includes(needle) || r.content.toLowerCase().includes(needle) || (r.comment ?? '').toLowerCase().includes(needle))
  }
  return filters
}

export function registerDnsRecordRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.get<{ Params: { zoneId: string } }>('/zones/:zoneId/dns_records', async (request) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    const query = request.query as Query
    const list = parseListQuery(query, { orders: recordOrders, defaultPerPage: 100, minPerPage: 5, maxPerPage: 5000 })
    const { records } = await ctx.store.zoneFile(zone.id)
    // Unordered lists come back by type then name, as the service lists them.
    const byTypeAndName = sortBy(sortBy(records, r => r.name, 'asc'), r => r.type, 'asc')
    const matching = applyFilters(byTypeAndName, recordFilters(query), list.match)
    const ordered = list.order === undefined ? (list.direction === 'desc' ? matching.reverse() : matching) : sortBy(matching, orderKeys[list.order], list.direction)
    const page = paginate(ordered, list)
    return success(page.result, page.resultInfo)
  })

  app.post<{ Params: { zoneId: string } }>('/zones/:zoneId/dns_records', async (request) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    const fields = validateRecord(request.body, zone.name)
    const record = await ctx.store.update(async tx => await addRecord(tx, await zoneInTransaction(tx, zone.id), fields, ctx.now()))
    return success(record)
  })

  app.get<{ Params: RecordParams }>('/zones/:zoneId/dns_records/:recordId', async (request) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    const record = (await ctx.store.zoneFile(zone.id)).records.find(r => r.id === request.params.recordId)
    if (record === undefined) throw new ManagementError('RecordNotFound')
    return success(record)
  })

  const replace = (merge: boolean) => async (request: { params: RecordParams, body: unknown }) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    if (typeof request.body !== 'object' || request.body === null) throw new ManagementError('InvalidRequestBody')
    const record = await ctx.store.update(async tx => {
      const current = await zoneInTransaction(tx, zone.id)
      const file = await tx.zoneFile(zone.id)
      const index = file.records.findIndex(r => r.id === request.params.recordId)
      if (index === -1) throw new ManagementError('RecordNotFound')
      const previous = file.records[index]
      refuseReadOnly(previous)
      const body = request.body as Record<string, unknown>
      const input = merge ? { ...previous, name: previous.name, ...body } : { ...body }
      // A PATCH naming a new type carries new content; the old SRV data must not leak into it.
      if (merge && body.type !== undefined && body.type !== previous.type && body.data === undefined) delete (input as Record<string, unknown>).data
      if (merge && body.proxied === undefined && body.type !== undefined && body.type !== previous.type) (input as Record<string, unknown>).proxied = false
      const fields = validateRecord(input, current.name)
      const conflict = findRecordConflict(fields, file.records.filter((_, i) => i !== index))
      if (conflict !== null) throw new ManagementError(conflict)
      const updated = toRecord(current, fields, ctx.now(), previous)
      file.records[index] = updated
      return updated
    })
    return success(record)
  }
  app.patch<{ Params: RecordParams }>('/zones/:zoneId/dns_records/:recordId', replace(true))
  app.put<{ Params: RecordParams }>('/zones/:zoneId/dns_records/:recordId', replace(false))

  app.delete<{ Params: RecordParams }>('/zones/:zoneId/dns_records/:recordId', async (request) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    const id = request.params.recordId
    await ctx.store.update(async tx => {
      const file = await tx.zoneFile(zone.id)
      const index = file.records.findIndex(r => r.id === id)
      if (index === -1) throw new ManagementError('RecordNotFound')
      refuseReadOnly(file.records[index])
      file.records.splice(index, 1)
    })
    return success({ id })
  })
}

/** A custom domain's CNAME goes with its attachment (detached, it is removed): changed alone, the domain would be served with no record. */
function refuseReadOnly (record: DnsRecord): void {
  if (record.meta?.read_only === true) throw new ManagementError('RecordReadOnly')
}
