/**
 * The HTTP routes of the gateway (contract: docs/http.md), one
 * Fastify plugin over the bucket registry.
 *
 * Each request becomes one binding call; this module never touches files.
 * Bodies stream: every content-type parser of this scope is replaced by one
 * that hands the raw request to the handler, so an object PUT or a part
 * flows from the socket into `put`/`uploadPart` with no body limit and no
 * buffering (chunked bodies and `Expect: 100-continue` included: the 100 is
 * sent by `continueBody` just before the body is read, so a request refused
 * for its access or its size never gets one). A client that disconnects mid-body makes the request
 * stream fail, and the binding discards what it had staged. Only the two
 * small JSON bodies (bulk delete, multipart complete) are read whole, up to
 * 2 MiB. `multipart/form-data` POSTs go through @fastify/multipart, each file
 * streamed into its own `put`; a form that fails after storing some files
 * answers the error with those files in `result.stored` (they stay stored),
 * and a bulk delete a bucket lock partly refuses with `result: {deleted, kept}`.
 *
 * One catch-all route decides what a URL names (see target.ts), because
 * public routes and custom domains make the same path mean different things
 * on different hosts, and hands it to the handler of that kind: the root
 * (here), a bucket (bucket-routes.ts), an object (object-routes.ts), a
 * public route (here, reading through object-routes.ts); what they share is
 * route-scope.ts. Errors of every kind leave through one handler and one
 * table (errors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import { authorize, hostName, isStorageFailure, MAX_PUT_BYTES, mayBeCustomDomain } from '../bucket/index.js'
import type { BucketRegistry } from '../bucket/index.js'
import { acceptAnyContentType } from '../doors/any-content-type.js'
import { answeredOnce, clientGone, leavesBodyUnread } from '../doors/cut-off.js'
import { privateReadCacheControl } from '../doors/request-metadata.js'
import { principalOf, type AccessPolicy } from './auth.js'
import { handleBucket, PartialFailure } from './bucket-routes.js'
import { DoorError, errorReply, failure, success } from './errors.js'
import { handleObject, refuseResponseOverrides, sendRead } from './object-routes.js'
import { answerProbe, nameOperation, type OperatorEndpoints } from './probes.js'
import { probeLookup } from '../doors/health.js'
import { enter, methodNotAllowed, preflight, readOnlyMethods, refusalCors } from './route-scope.js'
import { folderLocation } from './website.js'
import { defaultSite, isManagementTarget, matchPublicRoute, pathStyleTarget, rawPath, requireDecodableQuery, routeHostsOf, type PublicRoute, type RequestTarget, type SiteOptions } from './target.js'
import { noteAnswerCode } from '../doors/request-log.js'

export interface GatewayRoutesOptions {
  registry: BucketRegistry
  policy: AccessPolicy
  /** Public routes, most specific first (see `orderRoutes`). */
  publicRoutes: PublicRoute[]
  /** Buckets served publicly whatever their settings say (`--public`). */
  publicBuckets: ReadonlySet<string>
  /** Where a browser's `GET /` (Accept: text/html) is redirected (the web console), or none. */
  browserHome?: string
  /** What `/_health/*` and `/_metrics` answer from (probes.ts). */
  operator: OperatorEndpoints
}

/**
 * The quality (RFC 9110 12.4.2) an `Accept` header gives to each media
 * range it lists, lower-cased and without parameters other than `q`; a
 * range with a malformed `q` is left out, and a range listed twice keeps
 * its higher quality.
 */
function acceptedRanges (accept: string): Map<string, number> {
  const ranges = new Map<string, number>()
  for (const element of accept.split(',')) {
    const [range, ...params] = element.split(';').map(s => s.trim().toLowerCase())
    if (!/^[^/\s]+\/[^/\s]+$/.test(range)) continue
    const q = params.find(p => /^q\s*=/.test(p))?.replace(/^q\s*=\s*/, '') ?? '1'
    if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q)) continue
    ranges.set(range, Math.max(ranges.get(range) ?? 0, Number(q)))
  }
  return ranges
}

/**
 * Whether a client asks for an HTML page rather than JSON: its `Accept`
 * names `text/html` itself with a quality above 0 (`q=0` means "not
 * acceptable"), and no lower than the quality it gives JSON (through
 * `application/json`, `application/*` or `*\/*`, the most specific). A
 * wildcard alone (curl's `*\/*`) is no browser.
 */
function wantsHtml (accept: string | undefined): boolean {
  const ranges = acceptedRanges(accept ?? '')
  const html = ranges.get('text/html') ?? 0
  const json = ranges.get('application/json') ?? ranges.get('application/*') ?? ranges.get('*/*') ?? 0
  return html > 0 && html >= json
}

async function resolveTarget (options: GatewayRoutesOptions, request: FastifyRequest): Promise<RequestTarget> {
  const { publicRoutes, registry } = options
  const host = hostName(request.headers.host ?? '')
  const path = rawPath(request.raw.url ?? '/')
  const routed = matchPublicRoute(publicRoutes, host, path)
  if (routed !== null) return { kind: 'public', ...routed }
  if (mayBeCustomDomain(host)) {
    const bucket = await probeLookup(path, async () => await registry.bucketForDomain(host))
    const domainRoute = bucket === null ? null : matchPublicRoute([{ host, pathPrefix: '/', bucket }], host, path)
    if (domainRoute !== null) return { kind: 'public', ...domainRoute }
  }
  return pathStyleTarget(path)
}

async function handlePublic (options: GatewayRoutesOptions, request: FastifyRequest, reply: FastifyReply, name: string, key: string, site: SiteOptions, ownHost: boolean): Promise<void> {
  if (request.method === 'OPTIONS') return await preflight(options, request, reply, name, true)
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    await refusalCors(options, request, reply, name, true)
    throw methodNotAllowed(readOnlyMethods)
  }
  try {
    refuseResponseOverrides(request.query, 'A public route')
  } catch (err) {
    await refusalCors(options, request, reply, name, true)
    throw err
  }
  const { bucket } = await enter(options, request, reply, name, 'public', 'object:read', key)
  return await sendRead(request, reply, bucket, key, ownHost, site)
}

/**
 * A public route's path without its slash (`/docs` of a `/docs/` route):
 * 302 to the slash form, as a folder of a site is sent (relative, so no
 * request makes it a redirect to another site; the query kept).
 */
async function toRouteRoot (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(readOnlyMethods)
  return await reply.code(302).header('location', folderLocation(request.raw.url ?? '/')).header('cache-control', 'no-cache').send()
}

/** `/`: the buckets, or a browser sent to the web console (never from a route host: the console is not served there). */
async function handleRoot (options: GatewayRoutesOptions, routeHosts: ReadonlySet<string>, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { policy, registry } = options
  if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed('GET, HEAD')
  if (options.browserHome !== undefined && !routeHosts.has(hostName(request.headers.host ?? ''))) {
    reply.header('vary', 'Accept')
    if (wantsHtml(request.headers.accept)) return await reply.code(302).header('location', options.browserHome).send()
  }
  const principal = await principalOf(policy, request.headers.authorization)
  if (policy.token !== null || principal.kind !== 'admin') reply.header('cache-control', privateReadCacheControl)
  const buckets = (await registry.list()).filter(b => authorize(principal, 'buckets:list', b.name))
  return await reply.send(success(buckets.map(b => ({ name: b.name, creationDate: b.creationDate }))))
}

async function route (options: GatewayRoutesOptions, routeHosts: ReadonlySet<string>, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const target = await resolveTarget(options, request)
  const probe = nameOperation(request, target)
  // A probe names no bucket: its log line gives its URL.
  if (probe !== null) return await answerProbe(request, reply, probe, options.operator, options.policy)
  // The management API's paths, spelled so that its router did not take them: the API has no such route.
  if (isManagementTarget(target)) throw new DoorError('ManagementPath')
  if (target.kind !== 'root') request.logFields = { bucket: target.bucket, key: target.kind === 'bucket' ? undefined : target.key }
  // The API's parameters must decode; a public site's query (`?ref=50%off`) is its pages' own, and a preflight reads none.
  if (target.kind !== 'public' && request.method !== 'OPTIONS') requireDecodableQuery(request.raw.url ?? '/')
  switch (target.kind) {
    case 'root': return await handleRoot(options, routeHosts, request, reply)
    case 'bucket': return await handleBucket(options, request, reply, target.bucket)
    case 'object': return await handleObject(options, request, reply, target.bucket, target.key)
    case 'public':
      // A preflight is the route's own, as at `<path>/`.
      if (target.toRoot === true && request.method !== 'OPTIONS') {
        await refusalCors(options, request, reply, target.bucket, true)
        return await toRouteRoot(request, reply)
      }
      return await handlePublic(options, request, reply, target.bucket, target.key, target.site ?? defaultSite, target.ownHost)
  }
}

export async function gatewayRoutes (app: FastifyInstance, options: GatewayRoutesOptions): Promise<void> {
  const routeHosts = routeHostsOf(options.publicRoutes)

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => { done(null, payload) })
  acceptAnyContentType(app)
  await app.register(multipart, {
    limits: { fileSize: MAX_PUT_BYTES, fieldSize: 64 * 1024, fields: 100, files: 1000, parts: 1100 }
  })

  app.setErrorHandler(async (thrown, request, reply) => {
    const partial = thrown instanceof PartialFailure ? thrown : null
    const err = partial === null ? thrown : partial.cause
    const answer = errorReply(err)
    noteAnswerCode(request.raw, answer.code)
    // A client that went away mid-body is not a server fault; the binding already discarded its upload.
    if (clientGone(request.raw)) request.log.debug({ err }, 'client went away')
    else if (answer.log === 'warn') request.log.warn({ err, path: answer.path }, isStorageFailure(err) ? 'storage failure' : 'try again later')
    else if (answer.log === 'error') request.log.error({ err }, 'request failed')
    reply.code(answer.status).headers(answer.headers).type('application/json')
    // A large body left unread (refused before or while it streamed) would stall a kept-alive connection: close it after the answer.
    if (leavesBodyUnread(request.raw)) reply.header('connection', 'close')
    if (partial === null) return await reply.send(failure(answer.code, answer.message))
    const message = partial.detail === '' ? answer.message : `${answer.message.replace(/\.?$/, '.')} ${partial.detail}`
    return await reply.send(Object.assign(failure(answer.code, message), { result: partial.result }))
  })

  app.route({
    method: app.supportedMethods,
    url: '/*',
    exposeHeadRoute: false,
    handler: async (request, reply) => await answeredOnce(request, reply, async () => await route(options, routeHosts, request, reply))
  })
}
