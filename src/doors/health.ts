/**
 * The operator's endpoints, answered by the doors that serve HTTP
 * (docs/operations.md): `/_health/live`, `/_health/ready` (both ports) and
 * `/_metrics` (the HTTP port). They sit where a path-style bucket named
 * `_health` or `_metrics` would, and no bucket can be named so (bucket
 * names are `[a-z0-9-]`); a route host, a custom domain or an S3 virtual
 * host names its bucket by the host, so there these paths are keys like any
 * other and reach the bucket.
 *
 * Health answers need no credentials and say nothing but the outcome:
 * `{"status":"ok"}`, or 503 `{"status":"unavailable","failed":[...]}` with
 * the names of the failed checks. No paths, versions or reasons (the log
 * has the reasons). Never cached. HEAD answers the same without a body.
 */
import { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** What a process answers its probes from; the composition root (src/server/) makes it. */
export interface OperatorEndpoints {
  /** Names of the readiness checks that failed (empty: ready); answers within a bounded time. */
  ready: () => Promise<string[]>
  /** The metrics in the Prometheus text format; null when metrics are off (`/_metrics` then answers 404). */
  metrics: (() => Promise<string>) | null
}

export type Probe = 'live' | 'ready' | 'metrics'

/** The content type of the Prometheus text format. */
export const metricsContentType = 'text/plain; version=0.0.4; charset=utf-8'

/** Which endpoint a path-style request names: bucket `_health` with key `live` or `ready`, or bucket `_metrics` alone; null for none. */
export function probeOf (bucket: string, key: string): Probe | null {
  if (bucket === '_health') return key === 'live' ? 'live' : key === 'ready' ? 'ready' : null
  if (bucket === '_metrics' && key === '') return 'metrics'
  return null
}

export interface HealthAnswer {
  status: 200 | 503
  body: { status: 'ok' } | { status: 'unavailable', failed: string[] }
}

/**
 * Whether the server that took the request is closing: it came over a
 * connection the server accepted (not `app.inject`'s), and the server no
 * longer listens, which it stops doing as its close begins (Fastify's
 * `close`, on SIGTERM), while the connections it has drain.
 */
export function serverClosing (request: FastifyRequest): boolean {
  return request.raw.socket instanceof Socket && !request.server.server.listening
}

/** The answer of `live` (the process serves: always 200) or `ready` (503 `shutting-down` while its server closes: `closing`). */
export async function healthAnswer (probe: 'live' | 'ready', endpoints: OperatorEndpoints, closing = false): Promise<HealthAnswer> {
  if (probe === 'live') return { status: 200, body: { status: 'ok' } }
  if (closing) return { status: 503, body: { status: 'unavailable', failed: ['shutting-down'] } }
  const failed = await endpoints.ready()
  return failed.length === 0 ? { status: 200, body: { status: 'ok' } } : { status: 503, body: { status: 'unavailable', failed } }
}

/** Sends a health answer (GET or HEAD). */
export async function sendHealth (reply: FastifyReply, method: string, answer: HealthAnswer): Promise<void> {
  reply.code(answer.status).header('cache-control', 'no-store').type('application/json; charset=utf-8')
  if (method === 'HEAD') {
    return await reply.header('content-length', Buffer.byteLength(JSON.stringify(answer.body))).send()
  }
  return await reply.send(JSON.stringify(answer.body))
}

/** Sends the metrics (GET or HEAD). */
export async function sendMetrics (reply: FastifyReply, method: string, text: string): Promise<void> {
  reply.code(200).header('cache-control', 'no-store').type(metricsContentType)
  if (method === 'HEAD') return await reply.header('content-length', Buffer.byteLength(text)).send()
  return await reply.send(text)
}

/**
 * The custom-domain lookup of a request for an operator's endpoint (its
 * exact path), bounded, as the router and the foreign-Host guard make it:
 * a probe answers even when the catalog does not. A Host the lookup cannot
 * confirm as a custom domain within `ms` is taken
 * for none (only such a domain's keys `_health/live`, `_health/ready` and
 * `_metrics` are at stake, while the catalog is down).
 */
export async function probeLookup<T> (path: string, lookup: () => Promise<T | null>, ms = 1000): Promise<T | null> {
  return isProbePath(path) ? await boundedLookup(lookup, ms) : await lookup()
}

/** The exact paths of the operator's endpoints. */
export function isProbePath (path: string): boolean {
  return path === '/_health/live' || path === '/_health/ready' || path === '/_metrics'
}

/** `lookup`, or null when it fails or takes longer than `ms`. */
export async function boundedLookup<T> (lookup: () => Promise<T | null>, ms = 1000): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined
  return await Promise.race([
    lookup().catch(() => null),
    new Promise<null>(resolve => { timer = setTimeout(() => { resolve(null) }, ms) })
  ]).finally(() => { clearTimeout(timer) })
}
