/**
 * The plainest object read, answered beside Fastify rather than through it.
 *
 * A GET or HEAD of `/{bucket}/{key}` with no query, no Origin and no body,
 * on a host that is not a public route's or a custom domain, is most of what
 * a busy read-only client sends, and Fastify's life of a request (its
 * routing, hooks, request and reply objects) cost such a read more than the
 * engine's whole read. This listener sits in front of Fastify's on the
 * gateway's server and answers those reads itself, with the same pieces the
 * route uses: the registry's settings, `principalOf` and the engine's
 * `authorize`, `readObject` (the engine decides conditions and ranges), the
 * route's headers (`readHeaders`: the sandbox of the gateway's own host),
 * the request log's line and the metrics' counts, and the connection's
 * order (server/connection.ts, handed in by the app: it starts only when
 * nothing else of its connection is pending, and holds its place while it
 * runs).
 *
 * Anything else is Fastify's, unchanged: every other request at once, and a
 * read taken here that would not answer 200, 206 or 304 with its body or
 * none (a missing bucket or key, a refusal, a 412 or 416, a store failure)
 * is handed to Fastify before anything was written, which reads again and
 * answers it (reads change nothing, so reading twice is safe). So every
 * error, refusal and log line of a failure is the route's own.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import { authorize, hostName, isRecyclingStream } from '../bucket/index.js'
import type { BucketRegistry } from '../bucket/index.js'
import { privateReadCacheControl } from '../doors/request-metadata.js'
import { requestLine } from '../doors/request-log.js'
import type { PortMeter } from '../doors/request-meter.js'
import { principalOf, type AccessPolicy } from './auth.js'
import { readHeaders } from './object-routes.js'
import { readObject } from './read.js'
import { pipeRecycling } from './send-body.js'
import { isLoopbackName, isManagementUrl } from './site-guard.js'
import { mayBeCustomDomain, matchPublicRoute, pathStyleTarget, type PublicRoute } from './target.js'

export interface FastReadOptions {
  registry: BucketRegistry
  policy: AccessPolicy
  publicRoutes: PublicRoute[]
  publicBuckets: ReadonlySet<string>
  routeHosts: ReadonlySet<string>
  /** Whether the site guard of a credential-free loopback server applies (http/site-guard.ts): then only loopback hosts are read here. */
  guarded: boolean
  /** The app's logger: the request line goes there, with a request id as Fastify's would carry; null: no logging. */
  log: Logger | null
  meter: PortMeter | null
  /** Takes the request's place in its connection's order when nothing else of it is pending (server/connection.ts's `beginAlone`); false: Fastify's. */
  beginAlone: (request: IncomingMessage, response: ServerResponse) => boolean
  /** True once the server is closing: then Fastify answers (it closes each connection after its answer). */
  closing: () => boolean
}

/** Longest URL read here; longer ones are Fastify's (which bounds a route's parameter). */
const MAX_URL = 2048

/** The bucket and key a request names when it is a plain read (see the module's comment), else null. */
function plainRead (request: IncomingMessage, options: FastReadOptions): { bucket: string, key: string, host: string } | null {
  const { method, url, headers } = request
  if ((method !== 'GET' && method !== 'HEAD') || url === undefined || url.length > MAX_URL || url.charCodeAt(0) !== 47) return null
  if (url.includes('?') || url.includes('#')) return null
  if (headers.host === undefined || headers.origin !== undefined || headers.expect !== undefined) return null
  if (headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')) return null
  const host = hostName(headers.host)
  if (options.routeHosts.has(host) || matchPublicRoute(options.publicRoutes, host, url) !== null) return null
  if (options.guarded && !isLoopbackName(host)) return null
  let target
  try {
    // Fastify refuses a URL that does not decode (400); it is left to it.
    decodeURI(url)
    target = pathStyleTarget(url)
  } catch {
    return null
  }
  // Names beginning with `_` are the operator's endpoints (`/_health`) and the console, never a bucket; `/client/v4` is the management API.
  if (target.kind !== 'object' || target.bucket.startsWith('_') || isManagementUrl(url)) return null
  return { bucket: target.bucket, key: target.key, host }
}

/** The gateway server's 'request' listener: plain reads here, the rest to `fastify` (Fastify's own listener). */
export function fastReads (fastify: RequestListener, options: FastReadOptions): RequestListener {
  return (request, response) => {
    const read = options.closing() ? null : plainRead(request, options)
    if (read === null || !options.beginAlone(request, response)) {
      fastify(request, response)
      return
    }
    const began = performance.now()
    let handed = false
    options.meter?.began()
    const sent: { length?: string } = {}
    response.once('close', () => { if (!handed) finish(request, response, read, sent.length, began, options) })
    answer(request, response, read, sent, options).then(answered => { if (!answered) handOver() }, handOver)
    function handOver (): void {
      handed = true
      options.meter?.dropped()
      fastify(request, response)
    }
  }
}

/** Answers the read (its Content-Length in `sent`); false (nothing written) when it is Fastify's to answer. */
async function answer (request: IncomingMessage, response: ServerResponse, read: { bucket: string, key: string, host: string }, sent: { length?: string }, options: FastReadOptions): Promise<boolean> {
  const { registry, policy } = options
  const { bucket: name, key, host } = read
  // A custom domain serves its own bucket at every path: the router's to answer.
  if (mayBeCustomDomain(host) && await registry.bucketForDomain(host) !== null) return false
  const info = await registry.info(name)
  if (info === null) return false
  const headers: Record<string, string> = {}
  if (!options.publicBuckets.has(name) && info.settings.public !== true) {
    const principal = await principalOf(policy, request.headers.authorization)
    if (!authorize(principal, 'object:read', name, key, request.method?.toLowerCase())) return false
    if (policy.token !== null || principal.kind !== 'admin') headers['cache-control'] = privateReadCacheControl
  }
  const bucket = await registry.open(name, info)
  if (bucket === null) return false
  const method = request.method as 'GET' | 'HEAD'
  const result = await readObject(bucket, key, method, request.headers, {})
  const body = result.body
  if (body !== undefined && !Buffer.isBuffer(body) && !isRecyclingStream(body)) {
    // An error envelope (412, 416), or a body of a store that does not lend its chunks: the route's.
    if ('destroy' in body) body.destroy()
    return false
  }
  Object.assign(headers, readHeaders(result, false))
  sent.length = headers['content-length']
  if (body === undefined || Buffer.isBuffer(body)) {
    response.writeHead(result.status, headers)
    response.end(body)
  } else {
    await pipeRecycling(response, body, () => { response.writeHead(result.status, headers) })
  }
  return true
}

/** The request's counts and line, once its answer closed. */
function finish (request: IncomingMessage, response: ServerResponse, read: { bucket: string, key: string }, length: string | undefined, began: number, options: FastReadOptions): void {
  const ms = performance.now() - began
  options.meter?.answered(response, request.socket, 'http', request.method === 'GET' ? 'GetObject' : 'HeadObject', ms / 1000)
  if (options.log === null || !options.log.isLevelEnabled('info')) return
  const line = requestLine(request.method ?? 'GET', { bucket: read.bucket, key: read.key }, undefined, response.statusCode, length, ms)
  options.log.child({ reqId: randomUUID() }).info(line, 'request')
}
