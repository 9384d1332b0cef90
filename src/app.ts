/**
 * Builds the Fastify app of one server process from a configuration: the
 * bucket registry, the HTTP gateway routes, and the management API under
 * `/client/v4` (an app of its own, built at its first request:
 * doors/handed-on.ts). server/gateway.ts (the composition root) listens with it; tests call
 * `buildApp` and drive it with `app.inject`.
 *
 * Logging: one line per request (doors/request-log.ts), through the logger
 * of server/logger.ts, which redacts every credential header at every level.
 * Request ids are random UUIDs, so they are unique across workers.
 *
 * Below the routes, for both doors: the requests of one connection take
 * effect in order, idle clients time out (server/connection.ts), requests
 * Node would refuse with an empty body (no Host, an unmet Expect) are
 * answered in the envelope (server/client-error.ts), and a server
 * without credentials on loopback refuses foreign hosts and cross-site
 * writes (http/site-guard.ts).
 *
 * Operators' endpoints: `/_health/live`, `/_health/ready` and `/_metrics`
 * (doors/health.ts, http/probes.ts, docs/operations.md); every request is
 * counted for the metrics when a meter is given (doors/request-meter.ts),
 * by its door: the management API and the console are named here, by their
 * route patterns, the HTTP routes by the operation they ask for.
 */
import { randomUUID } from 'node:crypto'
import { METHODS, type RequestListener } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify'
import type { DestinationStream, Logger } from 'pino'
import { BucketError, type BucketRegistry } from './bucket/index.js'
import { deferContinue } from './doors/expect-continue.js'
import { serveDefaults } from './server/defaults.js'
import { openRegistry } from './server/open.js'
import { isLoopbackHost } from './http/auth.js'
import { clientErrorAnswer, connectListener, expectationListener, plainHttpAnswer, requireHost } from './server/client-error.js'
import { beginAlone, gatewayIdleListener, inConnectionOrder } from './server/connection.js'
import { createLogger, lazyChildLogger } from './server/logger.js'
import { customDomainLookup, isManagementUrl, siteGuardHook, siteHostHook } from './http/site-guard.js'
import { DoorError, errorReply, failure } from './http/errors.js'
import { routeReads } from './http/fast-read.js'
import { gatewayRoutes } from './http/routes.js'
import { readsBeside } from './doors/reads-beside.js'
import { guardRequestHead } from './doors/request-head.js'
import { lazySchemaCompilers } from './doors/schema-compilers.js'
import { logRefusedRequest, noteAnswerCode, RequestLog } from './doors/request-log.js'
import type { OperatorEndpoints } from './doors/health.js'
import type { DoorName, RequestMeter } from './doors/request-meter.js'
import { readinessChecks } from './server/readiness.js'
import { isPublicPath, orderRoutes, rawPath, routeHostsOf, type PublicRoute } from './http/target.js'
import type { ManagementCredentials, ShareEndpoint } from './mgmt/index.js'
import { handedFrom, handedId, handOn } from './doors/handed-on.js'
import { answerPlainHttp } from './doors/bare-answer.js'
import { consolePath, webConsole, type ConsoleRefusal } from './console/serve.js'

export interface GatewayConfig {
  dataDir: string
  /** Address the server listens on; decides whether writes without a token are allowed (unless `loopbackOnly` says). */
  host: string
  /** Whether `host` reaches loopback only, as the server judged it from its addresses (server/listen-host.ts); default: by its name. */
  loopbackOnly?: boolean
  /** Bearer token for writes and private reads; null for none. */
  token: string | null
  /** Buckets served publicly whatever their settings (`--public`). */
  publicBuckets: string[]
  /** Public read-only routes (`--route`, FSBUCKET_ROUTES, `<dataDir>/routes.json`). */
  routes: PublicRoute[]
  fsync: boolean
  /** A `postgres://` URL: the catalog shared by several gateways (`--catalog`); absent: SQLite per bucket. */
  catalog?: string
  /** Pino level, or false for no logging at all (tests). */
  logLevel: string | false
  /** Where log lines go (tests); stdout otherwise. */
  logDestination?: DestinationStream
  /** Seconds a connection may send and receive nothing (`--idle-timeout`); also the headers' deadline. Default 60. */
  idleTimeout?: number
  /** Smallest multipart part but the last (tests lower it). */
  minPartSize?: number
  /** An already opened registry (tests and the CLI share one); opened from dataDir otherwise. */
  registry?: BucketRegistry
  /** Credentials of the management API; default: the gateway's token, open on loopback when there is none. */
  management?: ManagementCredentials
  /** What `/_health/*` and `/_metrics` answer from; default: this process's readiness, and no metrics. */
  operator?: OperatorEndpoints
  /** Where requests are counted for the metrics; none when absent. */
  meter?: RequestMeter | null
  /** The S3 port's public origin for a request's Host, which share links name; absent: no S3 port (the management API refuses share links). */
  shareEndpoint?: ShareEndpoint
  /** Serve HTTPS with this certificate chain and key (PEM); plain HTTP when absent. */
  https?: { cert: Buffer | string, key: Buffer | string }
}

export const defaultIdleTimeout = serveDefaults.idleTimeout

/** Where the management API v4 answers. */
const managementPrefix = '/client/v4'

/** The management API's catch-alls (this app's, which hands the API its requests, and the API's own `NoRoute`): no route of the API. */
const unrouted = new Set(['', managementPrefix, `${managementPrefix}/`, `${managementPrefix}/*`])

/** The metrics' operation of the management API and the console: the method and route pattern; one series for a method or path no route has. */
function routeOperation (method: string, route: string): string {
  if (unrouted.has(route)) return 'Unsupported'
  // The console's routes for other methods than GET and HEAD only refuse them (console/serve.ts): no route of its.
  if (route.startsWith(consolePath.slice(0, -1)) && method !== 'GET' && method !== 'HEAD') return 'Unsupported'
  return `${method} ${route}`
}

/** The door of a request no route takes, for the metrics: the console's or the management API's by its path, else the routes'. */
function unroutedDoor (url: string): DoorName | null {
  const path = rawPath(url)
  if (path === consolePath.slice(0, -1) || path.startsWith(consolePath)) return 'console'
  return isManagementUrl(url) ? 'mgmt' : null
}

export async function buildApp (config: GatewayConfig): Promise<FastifyInstance> {
  const registry = config.registry ?? await openRegistry(config.dataDir, { fsync: config.fsync, minPartSize: config.minPartSize, catalog: config.catalog })
  const idleMs = (config.idleTimeout ?? defaultIdleTimeout) * 1000
  const portMeter = config.meter?.port('http') ?? null
  const options: FastifyServerOptions & { https?: GatewayConfig['https'] & { handshakeTimeout?: number } } = {
    // A TLS handshake that stalls is a silent connection: closed after the idle timeout, not Node's 120 s.
    ...(config.https === undefined ? {} : { https: Object.assign({}, config.https, { handshakeTimeout: idleMs }) }),
    ...(config.logLevel === false
      ? { logger: false }
      : { loggerInstance: createLogger({ level: config.logLevel, destination: config.logDestination }) }),
    logController: new RequestLog({ meter: portMeter }),
    childLoggerFactory: lazyChildLogger as unknown as FastifyServerOptions['childLoggerFactory'],
    genReqId: () => randomUUID(),
    // No route declares a schema: the compilers load only if one ever does.
    schemaController: { compilersFactory: lazySchemaCompilers as NonNullable<FastifyServerOptions['schemaController']>['compilersFactory'] },
    // While the server drains, a request already on an open connection (pipelined behind one in flight) is served like
    // those in flight, its connection closed after it, rather than refused with Fastify's own JSON 503.
    return503OnClosing: false,
    connectionTimeout: idleMs,
    // A kept-alive connection silent between requests is closed after the same time (Fastify's own is 72 s).
    keepAliveTimeout: idleMs,
    clientErrorHandler: clientErrorAnswer(portMeter),
    // Object keys are opaque: never rewrite `//` or a trailing `/` (Fastify 5 leaves `;` alone by default).
    routerOptions: { ignoreDuplicateSlashes: false, ignoreTrailingSlash: false, maxParamLength: 10_000 },
    frameworkErrors: (err, request, rawReply) => {
      const answer = errorReply(err)
      const reply = rawReply as unknown as FastifyReply
      const body = JSON.stringify(failure(answer.code, answer.message))
      // Made before any hook: it takes its place in the connection's order here (behind an answer that closed it, it is never sent).
      inConnectionOrder(request, reply, () => {
        logRefusedRequest(request, answer.status, Buffer.byteLength(body), answer.code)
        void reply.code(answer.status).type('application/json').send(body)
      })
    }
  }
  const app = Fastify(options)
  // Every method Node parses reaches the routes (PROPFIND, MKCOL, ...), which answer it as any method they do not
  // take (404 for a segment that names no bucket, 405 naming what a resource takes); CONNECT is Node's own event.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true })
  }
  // The 100 of Expect: 100-continue waits until a handler asks for the body, after access and size are judged.
  deferContinue(app.server)
  app.server.headersTimeout = idleMs
  // Node checks the headers' deadline on this period (30 s by default): a fraction of it keeps the deadline close.
  // Node's own refusal of a request without Host has an empty body: requireHost answers it in the envelope.
  Object.assign(app.server, { connectionsCheckingInterval: Math.min(30_000, Math.max(100, idleMs / 4)), requireHostHeader: false })
  app.server.on('timeout', gatewayIdleListener((socket, status) => { portMeter?.refused(socket, status) }))
  app.server.on('checkExpectation', expectationListener(app.log, portMeter))
  app.server.on('connect', connectListener(portMeter, idleMs, app.server))
  if (config.https !== undefined) answerPlainHttp(app.server, plainHttpAnswer)

  app.decorateRequest('logFields', null)
  app.decorateRequest('operation', null)
  app.decorateRequest('door', null)
  // One hook for every request: the connection's order, then (only when Host is missing) the HTTP/1.1 Host rule.
  app.addHook('onRequest', (request, reply, done) => {
    inConnectionOrder(request, reply, request.headers.host !== undefined ? done : () => { requireHost(request, reply, done) })
  })

  const loopbackOnly = config.loopbackOnly ?? isLoopbackHost(config.host)
  /** Buckets public for this run (`--public`): the routes read them without credentials, and the management API says so. */
  const publicBuckets = new Set(config.publicBuckets)
  const management = config.management ?? { tokens: config.token === null ? [] : [config.token], keys: [], open: loopbackOnly }
  const gatewayOpen = config.token === null && loopbackOnly
  const managementOpen = management.open === true && management.tokens.length + management.keys.length === 0
  const routes = orderRoutes(config.routes)
  const guard = {
    routeHosts: routeHostsOf(routes),
    isRouted: (host: string, url: string, customDomain: boolean) => isPublicPath(routes, host, rawPath(url), customDomain),
    isCustomDomain: customDomainLookup(registry)
  }
  const refuse = (reply: FastifyReply, err: DoorError): void => {
    const answer = errorReply(err)
    noteAnswerCode(reply.request.raw, answer.code)
    void reply.code(answer.status).headers(answer.headers).type('application/json').send(failure(answer.code, answer.message))
  }
  if (gatewayOpen || managementOpen) {
    app.addHook('onRequest', siteGuardHook(guard, request => isManagementUrl(request.url) ? managementOpen : gatewayOpen, refuse))
  }

  app.setNotFoundHandler(async (request, reply) => {
    request.operation ??= 'Unsupported'
    // A method the console's or the API's routes do not take (PROPFIND, PATCH of a page) comes here under their prefixes.
    request.door ??= unroutedDoor(request.url)
    const answer = errorReply(new DoorError('NoSuchRoute'))
    noteAnswerCode(request.raw, answer.code)
    return await reply.code(answer.status).headers(answer.headers).send(failure(answer.code, answer.message))
  })

  // The management API v4 (src/mgmt/) and the web console (src/console/serve.ts)
  // mount here, beside the gateway, in a scope that keeps them off route hosts
  // and custom domains (a site's pages must not share their origin). Their
  // prefixes are more specific than the gateway's catch-all route, and no
  // bucket can be named `_console`.
  const consoleErrors: Record<ConsoleRefusal, () => Error> = {
    NoSuchFile: () => new DoorError('NoSuchRoute'),
    PreconditionFailed: () => new DoorError('PreconditionFailed'),
    RangeNotSatisfiable: () => new BucketError('InvalidRange', 'get')
  }
  await app.register(async scope => {
    if (config.meter != null) {
      scope.addHook('onRequest', (request, _reply, done) => {
        const route = request.routeOptions.url ?? ''
        request.door = route.startsWith(consolePath.slice(0, -1)) ? 'console' : 'mgmt'
        request.operation = routeOperation(request.method, route)
        done()
      })
    }
    scope.addHook('onRequest', siteHostHook(guard, refuse))
    // What fails before the API or the console runs (the guards' custom-domain lookup while the catalog is down) in the v4 envelope.
    scope.setErrorHandler(async (err, request, reply) => {
      const answer = errorReply(err)
      noteAnswerCode(request.raw, answer.code)
      if (answer.log !== null) request.log[answer.log]({ err }, 'request failed')
      return await reply.code(answer.status).headers(answer.headers).type('application/json').send(failure(answer.code, answer.message))
    })
    // Built at its first request (doors/handed-on.ts), with this app's options, logger and error envelope.
    await handOn(scope, managementPrefix, async () => {
      const { managementApi } = await import('./mgmt/plugin.js')
      // This app's options but its server's (it has none listening); it writes its requests' lines, this app counts them.
      const apiOptions: typeof options = { ...options, https: undefined, logger: undefined, loggerInstance: app.log, logController: new RequestLog(), genReqId: handedId }
      const api = Fastify(apiOptions)
      if (config.meter != null) {
        api.addHook('onRequest', (request, _reply, done) => {
          const port = handedFrom(request.raw)?.request
          if (port !== undefined) port.operation = routeOperation(request.method, request.routeOptions.url ?? '')
          done()
        })
      }
      await api.register(managementApi, { prefix: managementPrefix, registry, credentials: management, shareEndpoint: config.shareEndpoint, publicBuckets })
      return api
    }, (reply, err) => {
      reply.log.error({ err }, 'the management API could not be built')
      refuse(reply, new DoorError('InternalError'))
    })
    await scope.register(webConsole, {
      // What the console refuses is answered in the gateway's envelope.
      refuse: async (reply, refusal) => {
        const err = typeof refusal === 'string' ? consoleErrors[refusal]() : refusal.fault
        const answer = errorReply(err)
        noteAnswerCode(reply.request.raw, answer.code)
        if (answer.log !== null) reply.log.error({ err }, 'console request failed')
        return await reply.code(answer.status).headers(answer.headers).type('application/json').send(failure(answer.code, answer.message))
      }
    })
  })

  const policy = { token: config.token, loopbackOnly, tokens: registry.tokens }
  await app.register(gatewayRoutes, {
    registry,
    policy,
    publicRoutes: routes,
    publicBuckets,
    browserHome: consolePath,
    operator: config.operator ?? { ready: readinessChecks(config.dataDir, registry, { log: app.log }), metrics: null }
  })

  // Plain object reads are answered in front of Fastify (http/fast-read.ts), everything else through it.
  let closing = false
  app.addHook('preClose', done => { closing = true; done() })
  const [fastify] = app.server.listeners('request') as RequestListener[]
  app.server.removeListener('request', fastify)
  app.server.on('request', readsBeside(fastify, {
    ...routeReads({ registry, policy, publicRoutes: routes, publicBuckets, routeHosts: guard.routeHosts, guarded: gatewayOpen }),
    door: 'http',
    requestId: randomUUID,
    log: config.logLevel === false ? null : app.log as unknown as Logger,
    meter: portMeter,
    beginAlone,
    closing: () => closing
  }))
  guardRequestHead(app.server)

  if (config.registry === undefined) app.addHook('onClose', async () => { await registry.close() })
  return app
}
