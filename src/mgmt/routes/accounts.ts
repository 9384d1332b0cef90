/**
 * Accounts and memberships: who the caller is a member of.
 *
 * fsbucket has one account of its own, the local account, whose buckets are
 * the data directory's; its id is fixed (`localAccount.id`), so a client that
 * looks its account up (wrangler does when CLOUDFLARE_ACCOUNT_ID is unset)
 * always finds the same one. The accounts of accepted invites are listed
 * beside it, with the roles the invite granted. The account id in bucket
 * paths is still not checked (see buckets.ts).
 *
 * Lists are paged as the hosted API pages them (`page`, `per_page` 5–50,
 * default 20, `result_info` with `total_count`), which is what wrangler
 * follows: it asks for the next page while `page * per_page < total_count`.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { currentInvite } from '../invites.js'
import { applyFilters, paginate, parseListQuery, sortBy, textFilters, type ListSpec, type Query } from '../query.js'

function fixedId (label: string): string {
  return createHash('md5').update(`fsbucket ${label}`).digest('hex')
}

/** The account every fsbucket data directory has. */
export const localAccount = { id: fixedId('account'), name: 'fsbucket' } as const

export interface MemberAccount {
  id: string
  name: string
  roles: string[]
}

const listSpec: ListSpec = { orders: ['name'], defaultPerPage: 20, minPerPage: 5, maxPerPage: 50 }

/** The local account, then the accounts of accepted invites (first invite wins for an id). */
export async function memberAccounts (ctx: ManagementContext): Promise<MemberAccount[]> {
  const accounts: MemberAccount[] = [{ ...localAccount, roles: ['Super Administrator - All Privileges'] }]
  const now = ctx.now()
  for (const invite of (await ctx.store.invites()).map(i => currentInvite(i, now))) {
    if (invite.status !== 'accepted' || accounts.some(a => a.id === invite.organization_id)) continue
    accounts.push({ id: invite.organization_id, name: invite.organization_name, roles: [...invite.roles] })
  }
  return accounts
}

function accountShape (account: MemberAccount): Record<string, unknown> {
  return {
    id: account.id,
    name: account.name,
    type: 'standard',
    settings: {
      enforce_twofactor: false,
      api_access_enabled: null,
      use_account_custom_ns_by_default: false,
      default_nameservers: 'cloudflare.standard',
      abuse_contact_email: null
    }
  }
}

function membershipShape (account: MemberAccount): Record<string, unknown> {
  return {
    id: fixedId(`membership ${account.id}`),
    account: accountShape(account),
    api_access_enabled: null,
    roles: account.roles,
    status: 'accepted',
    policies: []
  }
}

function listed (query: Query, accounts: MemberAccount[], read: (account: MemberAccount) => string): { result: MemberAccount[], resultInfo: ReturnType<typeof paginate>['resultInfo'] } {
  const list = parseListQuery(query, listSpec)
  const filtered = applyFilters(accounts, textFilters(query, 'name', read), list.match)
  return paginate(sortBy(filtered, list.order === undefined ? undefined : read, list.direction), list)
}

export function registerAccountRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.get('/accounts', async (request) => {
    const { result, resultInfo } = listed(request.query as Query, await memberAccounts(ctx), a => a.name)
    return success(result.map(accountShape), resultInfo)
  })

  app.get<{ Params: { accountId: string } }>('/accounts/:accountId', async (request) => {
    const account = (await memberAccounts(ctx)).find(a => a.id === request.params.accountId)
    if (account === undefined) throw new ManagementError('AccountNotFound')
    return success(accountShape(account))
  })

  app.get('/memberships', async (request) => {
    const query = request.query as Query
    const { result, resultInfo } = listed({ ...query, name: query['account.name'] }, await memberAccounts(ctx), a => a.name)
    return success(result.map(membershipShape), resultInfo)
  })
}
