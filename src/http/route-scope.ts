/**
 * What every handler of the HTTP routes (routes.ts) stands on: the
 * registry and the access policy it was given, one bucket's access check
 * with its CORS headers (`enter`), the CORS preflight, the query and JSON
 * body readers, and the methods each kind of resource allows.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { BucketError, isValidBucketName, requireAccess } from '../bucket/index.js'
import type { Action, Bucket, BucketInfo, BucketRegistry } from '../bucket/index.js'
import { withHeldBody } from '../doors/body-budget.js'
import { continueBody } from '../doors/expect-continue.js'
import { jsonBodyText, parseJsonBody } from '../doors/json-body.js'
import { contentLengthOver, corsVary, privateReadCacheControl } from '../doors/request-metadata.js'
import { principalOf, type AccessPolicy } from './auth.js'
import { corsHeaders, effectiveCorsRules, preflightHeaders } from './cors.js'
import { DoorError } from './errors.js'

/** What the handlers share of the routes' options. */
export interface RouteScope {
  registry: BucketRegistry
  policy: AccessPolicy
  /** Buckets served publicly whatever their settings say (`--public`). */
  publicBuckets: ReadonlySet<string>
}

/** Limit of the JSON bodies this door reads whole (bulk delete of 1,000 keys of 1 KiB fits). */
const maxJsonBytes = 2 * 1024 * 1024

export const objectMethods = 'GET, HEAD, PUT, POST, DELETE, OPTIONS'
export const bucketMethods = 'GET, HEAD, POST, OPTIONS'
export const readOnlyMethods = 'GET, HEAD, OPTIONS'
/** What a read-only route's preflight may grant. */
const readMethods = ['GET', 'HEAD']

export function methodNotAllowed (allow: string): DoorError {
  return new DoorError('MethodNotAllowed', `Allowed: ${allow}.`, { allow })
}

/**
 * Refuses a method a bucket's or an object's path does not take (`allow`
 * lists those it does): 405, unless the path's segment is no bucket name
 * (`UPPER`, `a`, `default%2Fr`), which names no bucket whatever the method:
 * refused as a write is (401, 403), else 404 as its GET is.
 */
export async function refuseMethod (scope: RouteScope, request: FastifyRequest, reply: FastifyReply, name: string, allow: string, key?: string): Promise<never> {
  if (!isValidBucketName(name)) await enter(scope, request, reply, name, 'write', 'object:write', key)
  await refusalCors(scope, request, reply, name, false)
  throw methodNotAllowed(allow)
}

/**
 * The bucket's CORS headers on a refusal made before `enter` (a method or
 * an override a route does not take): an answer that varies by Origin
 * says so whatever its status, or a cache could hand one origin's answer
 * to another.
 */
export async function refusalCors (scope: RouteScope, request: FastifyRequest, reply: FastifyReply, name: string, servedPublicly: boolean): Promise<void> {
  const info = await scope.registry.info(name)
  setCorsHeaders(request, reply, info, servedPublicly || scope.publicBuckets.has(name) || info?.settings.public === true)
}

/** The answer's CORS headers (and Vary) by the bucket's rules, as they apply to a read served publicly or not. */
function setCorsHeaders (request: FastifyRequest, reply: FastifyReply, info: BucketInfo | null, publicRead: boolean): void {
  reply.headers(corsHeaders(effectiveCorsRules(info?.settings.cors ?? null, publicRead), request.headers.origin, request.method))
}

export function queryValue (query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name]
  if (value === undefined || typeof value === 'string') return value
  throw new DoorError('InvalidQuery', `"${name}" given more than once.`)
}

/** A body the process's body budget has no room for: 503 (50300), to retry in a second, its rest not read (the connection closes). */
export function slowDown (): DoorError {
  return new DoorError('SlowDown', undefined, { 'retry-after': '1', connection: 'close' })
}

/**
 * A JSON body must say so: a cross-site page can send `text/plain` or a form
 * without a preflight, never `application/json`. Its bytes are held within
 * the process's body budget: 503 (SlowDown) when a chunk finds no room
 * there, the connection closed rather than the rest read.
 */
export async function readJsonBody (source: IncomingMessage): Promise<unknown> {
  const type = (source.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json') {
    throw new DoorError('UnsupportedMediaType', 'This body must be sent with Content-Type: application/json.')
  }
  // One announced over the limit is refused before it is asked for (no 100 Continue), not once the limit's bytes arrived;
  // the connection closes, or Node would read the whole body to find the next request.
  if (contentLengthOver(source.headers, maxJsonBytes)) throw new DoorError('BodyTooLarge', `JSON bodies are limited to ${maxJsonBytes} bytes.`, { connection: 'close' })
  continueBody(source)
  return await withHeldBody(source, {
    bytes: maxJsonBytes,
    tooLarge: () => new DoorError('BodyTooLarge', `JSON bodies are limited to ${maxJsonBytes} bytes.`),
    noRoom: slowDown
  }, body => {
    try {
      return parseJsonBody(jsonBodyText(body))
    } catch {
      throw new DoorError('InvalidJson')
    }
  })
}

/**
 * Checks access to a bucket, sets its CORS headers, and opens it. A
 * private read made with the token is marked for no cache to keep: a
 * browser's cache is keyed by URL alone and would hand the body to a
 * later request without the token (after the console forgets it).
 */
export async function enter (scope: RouteScope, request: FastifyRequest, reply: FastifyReply, name: string, access: 'read' | 'write' | 'public', action: Action, key?: string): Promise<{ bucket: Bucket, info: BucketInfo, publicRead: boolean }> {
  const { registry, policy, publicBuckets } = scope
  const info = await registry.info(name)
  const publicRead = access === 'public' ||
    (access === 'read' && (publicBuckets.has(name) || info?.settings.public === true))
  setCorsHeaders(request, reply, info, publicRead)
  // A HEAD's refusal is its GET's, word for word: its Content-Length announces the body the GET would send. A listing's is the binding's `list`.
  const operation = action === 'objects:list' ? 'list' : request.method === 'HEAD' ? 'get' : request.method.toLowerCase()
  if (!publicRead) {
    const principal = await principalOf(policy, request.headers.authorization)
    // The engine's one decision: what this principal may do to this bucket (and key).
    requireAccess(principal, action, name, key, operation)
    // Read with the token: no browser keeps it (an object's own Cache-Control, set after this, still wins).
    if ((policy.token !== null || principal.kind !== 'admin') && access === 'read') reply.header('cache-control', privateReadCacheControl)
  }
  const bucket = info === null ? null : await registry.open(name, info)
  if (info === null || bucket === null) throw new BucketError('NoSuchBucket', operation)
  return { bucket, info, publicRead }
}

export async function preflight (scope: RouteScope, request: FastifyRequest, reply: FastifyReply, name: string, servedPublicly: boolean): Promise<void> {
  const origin = request.headers.origin
  const method = request.headers['access-control-request-method']
  if (origin === undefined || typeof method !== 'string') {
    await reply.code(204).header('allow', servedPublicly ? readOnlyMethods : objectMethods).send()
    return
  }
  const info = await scope.registry.info(name)
  const isPublic = servedPublicly || scope.publicBuckets.has(name) || info?.settings.public === true
  const rules = effectiveCorsRules(info?.settings.cors ?? null, isPublic)
  // A public route is read-only whatever the rules say: it grants and lists GET and HEAD only.
  const allowed = servedPublicly && !readMethods.includes(method.toUpperCase())
    ? null
    : preflightHeaders(rules, origin, method, request.headers['access-control-request-headers'], servedPublicly ? readMethods : undefined)
  // The same answer whether the bucket is missing or private without rules: a preflight needs no credentials, so it must not tell which buckets exist.
  // Its Vary is every refusal's, whatever the rules: what it varies by would tell them.
  if (info === null || allowed === null) throw new DoorError('CorsRefused', `Origin ${origin}, method ${method}.`, { vary: corsVary })
  await reply.code(204).headers(allowed).send()
}
