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
 * its object (200, 206, 304) is the route's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { authorize, hostName, mayBeCustomDomain } from '../bucket/index.js'
import type { BucketRegistry } from '../bucket/index.js'
import { isSendable, plainReadPath, sendAnswer, type Answered, type ReadsBesideOptions } from '../doors/reads-beside.js'
import { privateReadCacheControl } from '../doors/request-metadata.js'
import { principalOf, type AccessPolicy } from './auth.js'
import { corsHeaders, effectiveCorsRules } from './cors.js'
import { readHeaders } from './object-routes.js'
import { readObject } from './read.js'
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

/** Answers the read; false (nothing written) when it is the route's to answer. */
async function answer (options: FastReadOptions, request: IncomingMessage, response: ServerResponse, read: PlainRead, answered: Answered): Promise<boolean> {
  const { registry, policy } = options
  const { bucket: name, key, host } = read
  // A custom domain serves its own bucket at every path: the router's to answer.
  if (mayBeCustomDomain(host) && await registry.bucketForDomain(host) !== null) return false
  const info = await registry.info(name)
  if (info === null) return false
  const publicRead = options.publicBuckets.has(name) || info.settings.public === true
  // As the route's `enter` (cors.ts): `Vary: Origin` for a bucket with rules; a request without an Origin gets no CORS headers.
  const headers = corsHeaders(effectiveCorsRules(info.settings.cors, publicRead), undefined, request.method ?? 'GET')
  if (!publicRead) {
    const principal = await principalOf(policy, request.headers.authorization)
    if (!authorize(principal, 'object:read', name, key, request.method?.toLowerCase())) return false
    if (policy.token !== null || principal.kind !== 'admin') headers['cache-control'] = privateReadCacheControl
  }
  const bucket = await registry.open(name, info)
  if (bucket === null) return false
  const result = await readObject(bucket, key, request.method as 'GET' | 'HEAD', request.headers, {})
  const body = result.body
  if (!isSendable(body)) {
    // An error envelope (412, 416), or a body of a store that does not lend its chunks: the route's.
    if ('destroy' in body) body.destroy()
    return false
  }
  await sendAnswer(response, result.status, Object.assign(headers, readHeaders(result, false)), body, answered)
  return true
}

/** What the routes' reads beside Fastify take and how they answer (doors/reads-beside.ts does the rest). */
export function routeReads (options: FastReadOptions): Pick<ReadsBesideOptions<PlainRead>, 'take' | 'answer' | 'fields'> {
  return {
    take: request => plainRead(request, options),
    answer: async (request, response, read, _requestId, answered) => await answer(options, request, response, read, answered),
    fields: read => ({ bucket: read.bucket, key: read.key })
  }
}
