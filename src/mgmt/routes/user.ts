/**
 * The user behind the credentials: `/user` and `/user/tokens/verify`.
 *
 * fsbucket keeps no user records. With the key pair, the user is the
 * X-Auth-Email the request carries; with a token, a fixed local user
 * (`localUser`). Verifying a token answers that it is active: the check that
 * matters has already been made by the plugin's authentication, which refused
 * a wrong token before this route ran. The token's id is fixed too, so that
 * nothing derived from the secret is ever sent back. A request made with the
 * key pair has no token to verify: 1000, as the hosted API answers (wrangler
 * reads that code as "an account token"). A scoped token (routes/tokens.ts)
 * answers with its own id.
 *
 * Beside the hosted fields, verifying answers fsbucket's `permission` and
 * `buckets` of the credentials (the configured ones: admin-read-write on
 * every bucket, `buckets` null) and, for a scoped token that expires,
 * `expires_on`: what the web console reads to offer only what the token
 * may do. They say nothing a token's holder could not learn by trying.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { ADMIN } from '../../bucket/index.js'
import type { ManagementContext } from '../context.js'
import { success, timestamp } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { memberAccounts } from './accounts.js'

export const localUser = {
  id: createHash('md5').update('fsbucket user').digest('hex'),
  email: 'user@fsbucket.invalid'
} as const

const localTokenId = createHash('md5').update('fsbucket token').digest('hex')

function bearer (authorization: string | undefined): boolean {
  return authorization !== undefined && authorization.startsWith('Bearer ')
}

export function registerUserRoutes (app: FastifyInstance, ctx: ManagementContext): void {
  app.get('/user', async (request) => {
    const email = request.headers['x-auth-email']
    const accounts = await memberAccounts(ctx)
    const epoch = timestamp(new Date(0))
    return success({
      id: localUser.id,
      email: !bearer(request.headers.authorization) && typeof email === 'string' ? email : localUser.email,
      username: localUser.id,
      first_name: null,
      last_name: null,
      telephone: null,
      country: null,
      zipcode: null,
      two_factor_authentication_enabled: false,
      two_factor_authentication_locked: false,
      has_pro_zones: false,
      has_business_zones: false,
      has_enterprise_zones: false,
      suspended: false,
      created_on: epoch,
      modified_on: epoch,
      betas: [],
      organizations: accounts.map(a => ({ id: a.id, name: a.name, status: 'member', roles: a.roles, permissions: [] }))
    })
  })

  app.get('/user/tokens/verify', async (request) => {
    if (!bearer(request.headers.authorization)) throw new ManagementError('InvalidApiToken')
    // A scoped token is verified as itself (an expired one was refused by the authentication, 1000).
    const principal = request.principal ?? ADMIN
    const own = principal.kind === 'token' ? (await ctx.registry.tokens.list()).find(t => t.id === principal.id) : undefined
    return success({
      id: principal.id ?? localTokenId,
      status: 'active',
      ...(own?.expiresOn == null ? {} : { expires_on: timestamp(new Date(own.expiresOn)) }),
      permission: principal.permission,
      buckets: principal.buckets
    })
  })
}
