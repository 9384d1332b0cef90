/**
 * The HTTP routes' plain object reads, answered beside Fastify
 * (doors/reads-beside.ts says why, and what every such read keeps): a GET
 * or HEAD of a path-style `/{bucket}/{key}` with no query, no Origin and no
 * body, on a host that is not a public route's or a custom domain, nor
 * refused by the site guard of a credential-free loopback server. It is
 * answered with the route's own pieces: the registry's settings,
 * `principalOf` and the engine's `authorize`, `readObject` (the engine
 * decides conditions and ranges) and the route's headers (`readHeaders`,
 * with the sandbox of the gateway's own host, and the CORS headers the
 * route gives a request without an Origin). A read that would not answer
 * its object (200, 206, 304) is the route's. It is answered in the turn
 * its request came when none of those pieces must be waited for
 * (`answerNow`), else awaited (`answer`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { authorize, hostName, mayBeCustomDomain } from '../bucket/index.js'
import type { BucketInfo, BucketRegistry, Principal } from '../bucket/index.js'
import { plainReadPath, sendIfSendable, type Answered, type ReadsBesideOptions } from '../doors/reads-beside.js'
import { privateReadCacheControl } from '../doors/request-metadata.js'
import { principalNow, principalOf, type AccessPolicy } from './auth.js'
import { corsHeaders, effectiveCorsRules } from './cors.js'
import { readHeaders } from './object-routes.js'
import { readObject, readObjectNow, type ReadResult } from './read.js'
import { isLoopbackName, isManagementUrl } from './site-guard.js'
import { isManagementTarget, matchPublicRoute, pathStyleTarget, type PublicRoute } from './target.js'

export interface FastReadOptions {
  registry: BucketRegistry
  policy: AccessPolicy
  publicRoutes: PublicRoute[]
  publicBuckets: ReadonlySet<string>
  routeHosts: ReadonlySet<string>
  /** Whether the site guard of a credential-free loopback server applies (http/site-guard.ts): then only loopback hosts are read here. */
  guarded: boolean
}

interface PlainRead { bucket: string, key: string, host: string }

/** The bucket and key a request names when it is a plain read of the routes, else null. */
function plainRead (request: IncomingMessage, options: FastReadOptions): PlainRead | null {
  const path = plainReadPath(request)
  if (path === null) return null
  const host = hostName(request.headers.host ?? '')
  if (options.routeHosts.has(host) || (options.guarded && !isLoopbackName(host))) return null
  let target
  try {
    // Both decode the path: one that does not decode is the route's to refuse (400).
    if (matchPublicRoute(options.publicRoutes, host, path) !== null) return null
    target = pathStyleTarget(path)
  } catch {
    return null
  }
  // Names beginning with `_` are the operator's endpoints (`/_health`) and the console, never a bucket; `/client/v4` is the management API.
  if (target.kind !== 'object' || target.bucket.startsWith('_') || isManagementUrl(path) || isManagementTarget(target)) return null
  return { bucket: target.bucket, key: target.key, host }
}

/** What a read of bucket `name` (with `info`) answers with before the object's: its CORS headers; and whether it is public. */
function accessOf (options: FastReadOptions, request: IncomingMessage, name: string, info: BucketInfo): { headers: Record<string, string>, publicRead: boolean } {
  const publicRead = options.publicBuckets.has(name) || info.settings.public === true
  // As the route's `enter` (cors.ts): `Vary: Origin` for a bucket with rules; a request without an Origin gets no CORS headers.
  return { headers: corsHeaders(effectiveCorsRules(info.settings.cors, publicRead), undefined, request.method ?? 'GET'), publicRead }
}

/** Whether `principal` may read the object, marking the answer private (Cache-Control) when it may. */
function mayRead (policy: AccessPolicy, principal: Principal, request: IncomingMessage, read: PlainRead, headers: Record<string, string>): boolean {
  if (!authorize(principal, 'object:read', read.bucket, read.key, request.method?.toLowerCase())) return false
  if (policy.token !== null || principal.kind !== 'admin') headers['cache-control'] = privateReadCacheControl
  return true
}

/** Sends the engine's answer with `headers` first; false (nothing written) when it is the route's to send (doors/reads-beside.ts). */
function send (response: ServerResponse, result: ReadResult, headers: Record<string, string>, answered: Answered): boolean | Promise<boolean> {
  return sendIfSendable(response, result.status, Object.assign(headers, readHeaders(result, false)), result.body, answered)
}

/** Answers the read; false (nothing written) when it is the route's to answer. */
async function answer (options: FastReadOptions, request: IncomingMessage, response: ServerResponse, read: PlainRead, answered: Answered): Promise<boolean> {
  const { registry, policy } = options
  // A custom domain serves its own bucket at every path: the router's to answer.
  if (mayBeCustomDomain(read.host) && await registry.bucketForDomain(read.host) !== null) return false
  const info = await registry.info(read.bucket)
  if (info === null) return false
  const { headers, publicRead } = accessOf(options, request, read.bucket, info)
  if (!publicRead && !mayRead(policy, await principalOf(policy, request.headers.authorization), request, read, headers)) return false
  const bucket = await registry.open(read.bucket, info)
  if (bucket === null) return false
  return await send(response, await readObject(bucket, read.key, request.method as 'GET' | 'HEAD', request.headers, {}), headers, answered)
}

/**
 * `answer` at once, in the turn the request came, when nothing it needs
 * must be waited for: the bucket open with its settings unchanged, the
 * principal known without a look in the scoped tokens, the object's row
 * and small body held by its store. Undefined when one must be: then
 * `answer` does it all.
 */
function answerNow (options: FastReadOptions, request: IncomingMessage, response: ServerResponse, read: PlainRead, answered: Answered): boolean | Promise<boolean> | undefined {
  const { registry, policy } = options
  if (mayBeCustomDomain(read.host)) {
    // A custom domain serves its own bucket at every path: the router's to answer.
    const domain = registry.bucketForDomainNow(read.host)
    if (domain !== null) return domain === undefined ? undefined : false
  }
  const open = registry.openNow(read.bucket)
  if (open === undefined) return undefined
  const { headers, publicRead } = accessOf(options, request, read.bucket, open.info)
  if (!publicRead) {
    const principal = principalNow(policy, request.headers.authorization)
    if (principal === undefined) return undefined
    if (!mayRead(policy, principal, request, read, headers)) return false
  }
  const result = readObjectNow(open.bucket, read.key, request.method as 'GET' | 'HEAD', request.headers)
  return result === undefined ? undefined : send(response, result, headers, answered)
}

/** What the routes' reads beside Fastify take and how they answer (doors/reads-beside.ts does the rest). */
export function routeReads (options: FastReadOptions): Pick<ReadsBesideOptions<PlainRead>, 'take' | 'answer' | 'fields'> {
  return {
    take: request => plainRead(request, options),
    answer: (request, response, read, _requestId, answered) => answerNow(options, request, response, read, answered) ?? answer(options, request, response, read, answered),
    fields: read => ({ bucket: read.bucket, key: read.key })
  }
}
