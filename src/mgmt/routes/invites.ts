/** The user's invites: list, read, accept or reject (see `../invites.ts`). */
import type { FastifyInstance } from 'fastify'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { answerInvite, currentInvite } from '../invites.js'
import { paginate, parseListQuery, type Query } from '../query.js'

export function registerInviteRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.get('/user/invites', async (request) => {
    const list = parseListQuery(request.query as Query, { orders: [], defaultPerPage: 20, minPerPage: 5, maxPerPage: 50 })
    const now = ctx.now()
    const { result, resultInfo } = paginate((await ctx.store.invites()).map(i => currentInvite(i, now)), list)
    return success(result, resultInfo)
  })

  app.get<{ Params: { inviteId: string } }>('/user/invites/:inviteId', async (request) => {
    const invite = (await ctx.store.invites()).find(i => i.id === request.params.inviteId)
    if (invite === undefined) throw new ManagementError('InviteNotFound')
    return success(currentInvite(invite, ctx.now()))
  })

  app.patch<{ Params: { inviteId: string } }>('/user/invites/:inviteId', async (request) => {
    const status = (request.body as { status?: unknown } | undefined)?.status
    return success(await answerInvite(ctx.store, request.params.inviteId, status, ctx.now()))
  })
}
