/**
 * Builds the Fastify app of one server process from a configuration: the
 * bucket registry, the HTTP gateway routes, and the management API under
 * `/client/v4`. `cli.ts` (the composition root) listens with it; tests call
 * `buildApp` and drive it with `app.inject`.
 *
 * Logging: one line per request (http/request-log.ts). The
 * Authorization header (and the management API's X-Auth-Key) is redacted
 * wherever a request object is logged, so a token never reaches a log line.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify'
import { openRegistry, type BucketRegistry } from './index.js'
import { isLoopbackHost } from './http/auth.js'
import { DoorError, errorReply, failure } from './http/errors.js'
import { gatewayRoutes } from './http/routes.js'
import { RequestLog } from './http/request-log.js'
import { orderRoutes, type PublicRoute } from './http/target.js'
import { managementApi, type ManagementCredentials } from './mgmt/index.js'
import { consolePath, webConsole } from './console/serve.js'

export interface GatewayConfig {
  dataDir: string
  /** Address the server listens on; decides whether writes without a token are allowed. */
  host: string
  /** Bearer token for writes and private reads; null for none. */
  token: string | null
  /** Buckets served publicly whatever their settings (`--public`). */
  publicBuckets: string[]
  /** Public read-only routes (`--route`, FSBUCKET_ROUTES, `<dataDir>/routes.json`). */
  routes: PublicRoute[]
  fsync: boolean
  /** Pino level, or false for no logging at all (tests). */
  logLevel: string | false
  /** Smallest multipart part but the last (tests lower it). */
  minPartSize?: number
  /** An already opened registry (tests and the CLI share one); opened from dataDir otherwise. */
  registry?: BucketRegistry
  /** Credentials of the management API; default: the gateway's token, open on loopback when there is none. */
  management?: ManagementCredentials
}

export const redactedHeaders = ['req.headers.authorization', 'req.headers["x-auth-key"]']

export function loggerOptions (level: string | false): FastifyServerOptions['logger'] {
  if (level === false) return false
  return {
    level,
    redact: { paths: redactedHeaders, censor: '[redacted]' }
  }
}

export async function buildApp (config: GatewayConfig): Promise<FastifyInstance> {
  const registry = config.registry ?? await openRegistry(config.dataDir, { fsync: config.fsync, minPartSize: config.minPartSize })
  const options: FastifyServerOptions = {
    logger: loggerOptions(config.logLevel),
    logController: new RequestLog(),
    // Object keys are opaque: never rewrite `//` or a trailing `/` (Fastify 5 leaves `;` alone by default).
    routerOptions: { ignoreDuplicateSlashes: false, ignoreTrailingSlash: false, maxParamLength: 10_000 },
    frameworkErrors: (err, _request, rawReply) => {
      const answer = errorReply(err)
      const reply = rawReply as unknown as FastifyReply
      void reply.code(answer.status).type('application/json').send(failure(answer.code, answer.message))
    }
  }
  const app = Fastify(options)

  app.decorateRequest('logFields', null)

  app.setNotFoundHandler(async (request, reply) => {
    const err = app.supportedMethods.includes(request.method)
      ? new DoorError('NoSuchRoute')
      : new DoorError('MethodNotAllowed', undefined, { allow: 'GET, HEAD, PUT, POST, DELETE, OPTIONS' })
    const answer = errorReply(err)
    return await reply.code(answer.status).headers(answer.headers).send(failure(answer.code, answer.message))
  })

  // The management API v4 (src/mgmt/) mounts here, beside the gateway, on the
  // same registry. Its prefix is more specific than the gateway's catch-all
  // route, so /client/v4/... never reaches the bucket routes.
  await app.register(managementApi, {
    prefix: '/client/v4',
    registry,
    credentials: config.management ?? { tokens: config.token === null ? [] : [config.token], keys: [], open: isLoopbackHost(config.host) }
  })

  // The web console's static files (src/console/serve.ts); `/_console/` is
  // more specific than the gateway's catch-all, and no bucket can be named so.
  await app.register(webConsole)

  await app.register(gatewayRoutes, {
    registry,
    policy: { token: config.token, loopbackOnly: isLoopbackHost(config.host) },
    publicRoutes: orderRoutes(config.routes),
    publicBuckets: new Set(config.publicBuckets),
    browserHome: consolePath
  })

  if (config.registry === undefined) app.addHook('onClose', async () => { await registry.close() })
  return app
}
