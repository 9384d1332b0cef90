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
 * a JSON content type (some clients send one on DELETE) is no body. A body
 * sent as `text/plain` or without a content type is read as JSON too, as the
 * hosted API does: wrangler posts JSON strings through fetch, which labels
 * them `text/plain`. The object routes (routes/r2-objects.ts) take their
 * bodies raw, in a scope of their own. A JSON body is read here rather than
 * by Fastify (`parseAs`), chunk by chunk within the process's body budget
 * (src/doors/body-budget.ts), which the object routes' streamed bodies
 * never touch: a chunk it has no room for is 10953 (503), answered with
 * `Retry-After: 1` and without `x-should-retry: false`, since trying again
 * is the cure.
 */
import { errorCodes, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { isStorageFailure, isTransient, Queues, requireAccess, type BucketRegistry, type Principal, type StateDocuments } from '../bucket/index.js'
import { withHeldBody } from '../doors/body-budget.js'
import { clientGone, leavesBodyUnread, wasCutOff } from '../doors/cut-off.js'
import { continueBody } from '../doors/expect-continue.js'
import { contentLengthOver } from '../doors/request-metadata.js'
import { authenticate, type ManagementCredentials } from './auth.js'
import type { ManagementContext } from './context.js'
import { failure } from './envelope.js'
import { isRetriedBySdk, ManagementError, toManagementError } from './errors.js'
import { registerAccountRoutes } from './routes/accounts.js'
import { registerBucketRoutes } from './routes/buckets.js'
import { registerBucketLockRoutes } from './routes/bucket-locks.js'
import { registerCertificatePackRoutes } from './routes/certificate-packs.js'
import { registerDnsRecordRoutes } from './routes/dns-records.js'
import { registerDomainRoutes } from './routes/domains.js'
import { registerGraphqlRoute } from './routes/graphql.js'
import { registerInviteRoutes } from './routes/invites.js'
import { registerObjectRoutes } from './routes/r2-objects.js'
import { registerEventNotificationRoutes } from './routes/event-notifications.js'
import { registerQueueRoutes } from './routes/queues.js'
import { registerTemporaryCredentialRoutes, registerTokenRoutes } from './routes/tokens.js'
import { registerShareLinkRoutes, type ShareEndpoint } from './routes/share-links.js'
import { registerUserRoutes } from './routes/user.js'
import { registerZoneRoutes } from './routes/zones.js'
import { ManagementStore } from './store.js'
import { jsonBodyText, parseJsonBody } from '../doors/json-body.js'
import { noteAnswerCode } from '../doors/request-log.js'

export interface ManagementApiOptions {
  registry: BucketRegistry
  /** The S3 port's public origin, which share links name (routes/share-links.ts); absent: no S3 port, no share links. */
  shareEndpoint?: ShareEndpoint
  /** Where the API's state (zones, records, invites, domains) is kept; default: the registry's `mgmt` area. */
  state?: StateDocuments
  credentials: ManagementCredentials
  clock?: () => Date
  /** Buckets public for this run (`serve --public`): their managed domain reads as enabled, and cannot be turned off here. */
  publicBuckets?: ReadonlySet<string>
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the management API request is (set by its authentication). */
    principal: Principal | null
  }
}

/**
 * Routes judged by their pattern (the router has matched it before
 * `onRequest`), never by the URL, whose object keys can end in anything:
 * `/user/tokens/verify` answers for any good token, whatever it may do; a
 * share link's route asks `authorize` about its object itself; a GraphQL
 * query is a read, whatever its method.
 */
const unchecked = /\/(user\/tokens\/verify|accounts\/:accountId\/r2\/buckets\/:bucketName\/share-links)$/
const graphqlRoute = /\/graphql$/

function send (reply: FastifyReply, err: ManagementError): FastifyReply {
  noteAnswerCode(reply.request.raw, err.code)
  if (err.errorName === 'SlowDown') {
    // Room in the body budget comes back as other bodies are parsed: the SDK's retry is welcome. The body's rest is not read.
    reply.header('retry-after', '1').header('connection', 'close')
  } else if (isRetriedBySdk(err.status)) {
    // The official SDK retries these statuses; the conditions behind them here are final.
    reply.header('x-should-retry', 'false')
  }
  // A large body left unread (a refusal before it was read: authentication, a route that takes none) would be read and
  // thrown away on a kept-alive connection, however long: close it after the answer, as the other doors do.
  if (leavesBodyUnread(reply.request.raw)) reply.header('connection', 'close')
  return reply.code(err.status).type('application/json').send(failure(err))
}

/**
 * A JSON body, read as Fastify's own `parseAs: 'string'` reads it (its body
 * limit, judged first by the length announced, before an `Expect:
 * 100-continue` is answered, then by the bytes received) and held within
 * the process's body budget until it is parsed; empty (white space only):
 * none.
 */
async function readJson (request: FastifyRequest, payload: IncomingMessage): Promise<unknown> {
  const bytes = request.routeOptions.bodyLimit
  if (contentLengthOver(request.headers, bytes)) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()
  // Authenticated (onRequest ran) and within the limit: the client may send it now.
  continueBody(request.raw)
  return await withHeldBody(payload, { bytes, tooLarge: () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), noRoom: () => new ManagementError('SlowDown') }, body => {
    try {
      const text = jsonBodyText(body).trim()
      return text === '' ? undefined : parseJsonBody(text)
    } catch {
      throw new ManagementError('MalformedJson')
    }
  })
}

/** Fastify's own complaints about a request (content type, body size, schema). */
function isFastifyRequestError (error: unknown): error is FastifyError {
  const { code, statusCode } = error as Partial<FastifyError>
  return typeof code === 'string' && code.startsWith('FST_ERR_') && typeof statusCode === 'number' && statusCode < 500
}

export async function managementApi (app: FastifyInstance, options: ManagementApiOptions): Promise<void> {
  const now = options.clock ?? (() => new Date())
  const ctx: ManagementContext = {
    store: new ManagementStore(options.state ?? options.registry.state('mgmt')),
    registry: options.registry,
    queues: new Queues(options.registry, now),
    now,
    publicBuckets: options.publicBuckets ?? new Set()
  }

  app.decorateRequest('principal', null)
  app.removeContentTypeParser(['application/json', 'text/plain'])
  for (const type of ['application/json', 'text/plain', '*']) {
    app.addContentTypeParser(type, async (request: FastifyRequest, payload: IncomingMessage) => {
      try {
        return await readJson(request, payload)
      } catch (err) {
        if (!wasCutOff(request.raw)) throw err
        // The idle timer answered this request and failed its body (doors/cut-off.ts): thrown, the failure would be
        // sent to the reply already answered. The request goes no further; its connection is closed.
        request.log.debug({ err }, 'failed after the idle timeout\'s answer')
        return await new Promise<never>(() => {})
      }
    })
  }

  app.addHook('onRequest', async (request, reply) => {
    // Answers carry account state and token details: no cache keeps them (an object read sets its own).
    reply.header('cache-control', 'no-store')
    const principal = await authenticate(request.headers, options.credentials, request.url, options.registry.tokens)
    request.principal = principal
    // Reads (GraphQL queries included) need an admin token's read, changes its write; object tokens have nothing here.
    const route = request.routeOptions.url ?? ''
    if (!unchecked.test(route)) {
      const reads = request.method === 'GET' || request.method === 'HEAD' || graphqlRoute.test(route)
      requireAccess(principal, reads ? 'account:read' : 'account:write', undefined, undefined, 'management')
    }
  })

  app.setErrorHandler((error: FastifyError | ManagementError, request, reply) => {
    let err: ManagementError
    if (error instanceof ManagementError) {
      err = error
    } else if (isFastifyRequestError(error)) {
      err = new ManagementError('InvalidRequestBody', error.message)
    } else {
      err = toManagementError(error)
      // A client that went away (an upload cut short): no fault of the server, as on the other doors.
      if (clientGone(request.raw)) request.log.debug({ err: error }, 'client went away')
      else if (isStorageFailure(error)) request.log.warn({ err: error, path: err.path }, 'storage failure')
      else if (isTransient(error)) request.log.warn({ err: error }, 'try again later')
      else if (err.status >= 500) request.log.error({ err: error }, 'management API request failed')
    }
    return send(reply, err)
  })

  app.setNotFoundHandler(async (_request, reply) => await send(reply, new ManagementError('NoRoute')))
  // Everything under the prefix is this API's, whatever the method: without
  // these, an unknown path would fall through to the gateway's catch-all and
  // name an object of a bucket called "client".
  // It answers before any body is parsed, so the body's type cannot change the answer.
  const noRoute = async (_request: unknown, reply: FastifyReply): Promise<FastifyReply> => await send(reply, new ManagementError('NoRoute'))
  for (const url of ['/', '/*']) {
    app.route({ method: app.supportedMethods, url, exposeHeadRoute: false, onRequest: noRoute, handler: noRoute })
  }

  registerZoneRoutes(app, ctx)
  registerDnsRecordRoutes(app, ctx)
  registerCertificatePackRoutes(app, ctx)
  registerInviteRoutes(app, ctx)
  registerBucketRoutes(app, ctx)
  registerBucketLockRoutes(app, ctx)
  registerDomainRoutes(app, ctx)
  registerAccountRoutes(app, ctx)
  registerUserRoutes(app, ctx)
  registerTokenRoutes(app, ctx)
  registerTemporaryCredentialRoutes(app, ctx)
  registerShareLinkRoutes(app, ctx, options.shareEndpoint ?? (() => null))
  registerGraphqlRoute(app, ctx)
  registerQueueRoutes(app, ctx)
  registerEventNotificationRoutes(app, ctx)
  await app.register(registerObjectRoutes, { ctx })
}
