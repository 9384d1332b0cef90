/**
 * What the metrics call each request of the HTTP routes (the operation
 * label: a closed set named after the S3 operations the routes mirror,
 * never a bucket or a key), and the operator's endpoints on this door:
 * `/_health/live`, `/_health/ready` and `/_metrics` (doors/health.ts).
 *
 * `/_metrics` takes the token when the server has one, checked as every
 * private read is (auth.ts): without one it answers on a loopback-only
 * server, and a server listening elsewhere refuses it (403, 40301), as it
 * refuses private reads: what it counts is nobody's business but the
 * operator's.
 *
 * `/_health/ready` answers 503 (`shutting-down`) once the server closes:
 * a probe on a connection kept alive through the drain must not be told to
 * send more traffic to a process about to exit.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { healthAnswer, probeOf, sendHealth, sendMetrics, serverClosing, type OperatorEndpoints, type Probe } from '../doors/health.js'
import { requireAccess } from '../bucket/index.js'
import { principalOf, type AccessPolicy } from './auth.js'
import { DoorError } from './errors.js'
import type { RequestTarget } from './target.js'

export type { OperatorEndpoints }

/** The operations of the HTTP routes, as the metrics name them. */
export type GatewayOperation =
  'ListBuckets' | 'ListObjects' | 'DeleteObjects' | 'UploadForm' | 'GetObject' | 'HeadObject' | 'PutObject' | 'DeleteObject' |
  'CreateMultipartUpload' | 'UploadPart' | 'CompleteMultipartUpload' | 'AbortMultipartUpload' | 'Preflight' | 'Health' | 'Metrics' | 'Unsupported'

const objectOperations: Record<string, GatewayOperation> = {
  'PUT ': 'PutObject',
  'PUT mpu-uploadpart': 'UploadPart',
  'POST mpu-create': 'CreateMultipartUpload',
  'POST mpu-complete': 'CompleteMultipartUpload',
  'DELETE ': 'DeleteObject',
  'DELETE mpu-abort': 'AbortMultipartUpload'
}

/** The operation a request of the routes asks for, judged before the route runs (a refused request keeps it). */
export function gatewayOperation (target: RequestTarget, method: string, query: Record<string, unknown>): GatewayOperation {
  if (method === 'OPTIONS' && target.kind !== 'root') return 'Preflight'
  const read = method === 'GET' || method === 'HEAD'
  switch (target.kind) {
    case 'root':
      return read ? 'ListBuckets' : 'Unsupported'
    case 'bucket':
      if (read) return 'ListObjects'
      if (method === 'POST') return query.delete !== undefined ? 'DeleteObjects' : 'UploadForm'
      return 'Unsupported'
    case 'object':
    case 'public':
      if (read) return method === 'GET' ? 'GetObject' : 'HeadObject'
      if (target.kind === 'public') return 'Unsupported'
      return objectOperations[`${method} ${typeof query.action === 'string' ? query.action : query.action === undefined ? '' : '?'}`] ?? 'Unsupported'
  }
}

/** Names the request's operation for the metrics; returns the operator's endpoint it names, if any. */
export function nameOperation (request: FastifyRequest, target: RequestTarget): Probe | null {
  const probe = target.kind === 'bucket' ? probeOf(target.bucket, '') : target.kind === 'object' ? probeOf(target.bucket, target.key) : null
  request.operation = probe === null ? gatewayOperation(target, request.method, request.query as Record<string, unknown>) : probe === 'metrics' ? 'Metrics' : 'Health'
  return probe
}

/** Answers an operator's endpoint: GET or HEAD; `/_metrics` with the gateway's credentials. */
export async function answerProbe (request: FastifyRequest, reply: FastifyReply, probe: Probe, endpoints: OperatorEndpoints, policy: AccessPolicy): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') throw new DoorError('MethodNotAllowed', 'Allowed: GET, HEAD.', { allow: 'GET, HEAD' })
  if (probe !== 'metrics') return await sendHealth(reply, request.method, await healthAnswer(probe, endpoints, serverClosing(request)))
  if (endpoints.metrics === null) throw new DoorError('NoSuchRoute', 'Metrics are off on this server (--metrics off).')
  // The server's figures are the account's: admin tokens read them, object tokens do not.
  requireAccess(await principalOf(policy, request.headers.authorization), 'account:read', undefined, undefined, 'metrics')
  return await sendMetrics(reply, request.method, await endpoints.metrics())
}
