/**
 * The management API v4 emulation: a Fastify plugin, registered by the app
 * under `/client/v4`.
 *
 * Every answer is the v4 envelope, errors included: this plugin has its own
 * error handler (translating through `errors.ts` and nothing else) and its
 * own not-found handler (7000 for any path under the prefix it does not
 * know). Every request is authenticated first (`auth.ts`).
 *
 * JSON bodies are parsed here rather than by Fastify's default parser so
 * that a malformed body answers the service's 6007, and an empty body with
 * a JSON content type (some clients send one on DELETE) is no body.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import type { BucketRegistry, StateDocuments } from '../bucket/index.js'
import { authenticate, type ManagementCredentials } from './auth.js'
import type { ManagementContext } from './context.js'
import { failure } from './envelope.js'
import { isRetriedBySdk, ManagementError, toManagementError } from './errors.js'
import { registerBucketRoutes } from './routes/buckets.js'
import { registerCertificatePackRoutes } from './routes/certificate-packs.js'
import { registerDnsRecordRoutes } from './routes/dns-records.js'
import { registerDomainRoutes } from './routes/domains.js'
import { registerInviteRoutes } from './routes/invites.js'
import { registerZoneRoutes } from './routes/zones.js'
import { ManagementStore } from './store.js'

export interface ManagementApiOptions {
  registry: BucketRegistry
  /** Where the API's state (zones, records, invites, domains) is kept; default: the registry's `mgmt` area. */
  state?: StateDocuments
  credentials: ManagementCredentials
  clock?: () => Date
}

function send (reply: FastifyReply, err: ManagementError): FastifyReply {
  // The official SDK retries these statuses; the conditions behind them here are final.
  if (isRetriedBySdk(err.status)) reply.header('x-should-retry', 'false')
  return reply.code(err.status).type('application/json').send(failure(err))
}

/** Fastify's own complaints about a request (content type, body size, schema). */
function isFastifyRequestError (error: unknown): error is FastifyError {
  const { code, statusCode } = error as Partial<FastifyError>
  return typeof code === 'string' && code.startsWith('FST_ERR_') && typeof statusCode === 'number' && statusCode < 500
}

export async function managementApi (app: FastifyInstance, options: ManagementApiOptions): Promise<void> {
  const ctx: ManagementContext = {
    store: new ManagementStore(options.state ?? options.registry.state('mgmt')),
    registry: options.registry,
    now: options.clock ?? (() => new Date())
  }

  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim()
    if (text === '') { done(null, undefined); return }
    try {
      done(null, JSON.parse(text))
    } catch {
      done(new ManagementError('MalformedJson'), undefined)
    }
  })

  app.addHook('onRequest', async (request) => {
    authenticate(request.headers, options.credentials)
  })

  app.setErrorHandler((error: FastifyError | ManagementError, request, reply) => {
    let err: ManagementError
    if (error instanceof ManagementError) {
      err = error
    } else if (isFastifyRequestError(error)) {
      err = new ManagementError('InvalidRequestBody', error.message)
    } else {
      err = toManagementError(error)
      if (err.status >= 500) request.log.error({ err: error }, 'management API request failed')
    }
    return send(reply, err)
  })

  app.setNotFoundHandler(async (_request, reply) => await send(reply, new ManagementError('NoRoute')))

  registerZoneRoutes(app, ctx)
  registerDnsRecordRoutes(app, ctx)
  registerCertificatePackRoutes(app, ctx)
  registerInviteRoutes(app, ctx)
  registerBucketRoutes(app, ctx)
  registerDomainRoutes(app, ctx)
}
