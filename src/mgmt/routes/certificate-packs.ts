/**
 * Certificate packs of a zone. Each zone has the universal pack made with
 * it; nothing issues or renews certificates locally, so packs are read-only.
 * `status=all` (the SDK's name) or `ssl_status=all` (the seed's) lists every
 * pack; without it, only active ones, which are all of them here.
 */
import type { FastifyInstance } from 'fastify'
import { requireZone } from '../changes.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { paginate, parseListQuery, single, type Query } from '../query.js'

export function registerCertificatePackRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.get<{ Params: { zoneId: string } }>('/zones/:zoneId/ssl/certificate_packs', async (request) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    const query = request.query as Query
    const list = parseListQuery(query, { orders: [], defaultPerPage: 20, minPerPage: 5, maxPerPage: 50 })
    const all = single(query, 'status') === 'all' || single(query, 'ssl_status') === 'all'
    const packs = (await ctx.store.zoneFile(zone.id)).certificatePacks.filter(p => all || p.status === 'active')
    const page = paginate(packs, list)
    return success(page.result, page.resultInfo)
  })

  app.get<{ Params: { zoneId: string, packId: string } }>('/zones/:zoneId/ssl/certificate_packs/:packId', async (request) => {
    const zone = await requireZone(ctx, request.params.zoneId)
    const pack = (await ctx.store.zoneFile(zone.id)).certificatePacks.find(p => p.id === request.params.packId)
    if (pack === undefined) throw new ManagementError('CertificatePackNotFound')
    return success(pack)
  })
}
