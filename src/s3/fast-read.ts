/**
 * The S3 port's plain GetObject and HeadObject, answered beside Fastify
 * (doors/reads-beside.ts says why, and what every such read keeps): a GET
 * or HEAD of one object, path or virtual-host style, with no query (so
 * signed in its Authorization header, or unsigned), no Origin, no body and
 * no `x-amz-copy-source`. It is answered with the route's own pieces:
 * `verifySignature` and the key lookup, the engine's `authorize` for the
 * operation, `readAnswer` (the engine decides conditions, ranges and the
 * SSE-C key) and the request id headers. Anything the route would refuse or
 * answer with an error (a bad signature, an unsupported header, a missing
 * key, a 304's precondition's 412) is handed to it, and answered by it.
 *
 * In development mode the site guard (server/s3-guard.ts) applies to the
 * port: then only reads whose Host it would let through are taken (a
 * loopback name or one of the port's own domains, not a public site's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ADMIN, authorize, hostName, mayBeCustomDomain, type BucketRegistry, type Principal } from '../bucket/index.js'
import { isSendable, plainReadPath, sendAnswer, type Answered, type ReadsBesideOptions } from '../doors/reads-beside.js'
import { keyLookup, type S3AccessPolicy } from './auth.js'
import { refuseUnsupportedHeaders } from './headers.js'
import { checkKey, readAnswer } from './objects.js'
import { resolveTarget } from './plugin.js'
import { verifySignature } from './sigv4.js'

/** Who may be read from beside Fastify while the development mode's site guard applies. */
export interface S3ReadsGuard {
  /** The gateway's route hosts: public sites, never this port's names. */
  routeHosts: ReadonlySet<string>
  /** A name the guard takes as this port's own (a loopback name, or under one of its domains). */
  isOwnHost: (host: string) => boolean
}

export interface S3FastReadOptions {
  registry: BucketRegistry
  policy: S3AccessPolicy
  /** The virtual-host domains, as the route resolves them (`localhost` first). */
  domains: string[]
  /** The site guard's rules, when it applies (development mode); null otherwise. */
  guard: S3ReadsGuard | null
}

interface PlainRead { bucket: string, key: string, host: string, path: string }

function plainRead (request: IncomingMessage, options: S3FastReadOptions): PlainRead | null {
  const path = plainReadPath(request)
  if (path === null || request.headers['x-amz-copy-source'] !== undefined) return null
  const host = hostName(request.headers.host ?? '')
  const guard = options.guard
  if (guard !== null && (guard.routeHosts.has(host) || !guard.isOwnHost(host))) return null
  let target
  try {
    target = resolveTarget(request.headers.host ?? '', path, options.domains)
  } catch {
    return null
  }
  // `_health` is the operator's endpoint, never a bucket.
  if (target.bucket === '' || target.key === '' || target.bucket.startsWith('_')) return null
  return { bucket: target.bucket, key: target.key, host, path }
}

async function answer (options: S3FastReadOptions, secretOf: ReturnType<typeof keyLookup>, request: IncomingMessage, response: ServerResponse, read: PlainRead, requestId: () => string, answered: Answered): Promise<boolean> {
  const { registry, policy } = options
  const { bucket: name, key, host, path } = read
  // A public site's name (a custom domain) is refused by the guard: the route's to answer.
  if (options.guard !== null && mayBeCustomDomain(host) && await registry.bucketForDomain(host) !== null) return false
  const method = request.method as 'GET' | 'HEAD'
  const operation = method === 'GET' ? 'GetObject' : 'HeadObject'
  let principal: Principal | null
  if (request.headers.authorization !== undefined) {
    let signer: Principal | null = null
    await verifySignature({ method, rawPath: path, rawQuery: '', headers: request.headers, rawHeaders: request.rawHeaders }, {}, async (id, sessionToken) => {
      const known = await secretOf(id, sessionToken)
      signer = known?.principal ?? null
      return known?.secretAccessKey
    })
    principal = signer
  } else if (request.headers['x-amz-security-token'] !== undefined) {
    return false // a session token without its signature: the route refuses it
  } else if (policy.anonymousWrites) {
    principal = ADMIN
  } else {
    principal = null
  }
  refuseUnsupportedHeaders(request.headers)
  checkKey(key)
  const info = await registry.info(name)
  if (info === null) return false
  if (principal === null) {
    // Unsigned, outside development mode: only a public bucket's objects.
    if (!policy.publicBuckets.has(name) && info.settings.public !== true) return false
  } else if (!authorize(principal, 'object:read', name, key, operation)) {
    return false
  }
  const bucket = await registry.open(name, info)
  if (bucket === null) return false
  const result = await readAnswer(request.headers, {}, bucket, info, key, method)
  const body = result.body
  if (!isSendable(body)) {
    body.destroy()
    return false
  }
  // The answer's own headers (readAnswer makes them for each read).
  const headers = result.headers
  headers['x-amz-request-id'] = headers['x-amz-id-2'] = requestId()
  await sendAnswer(response, result.status, headers, body, answered)
  return true
}

/** What the S3 port's reads beside Fastify take and how they answer (doors/reads-beside.ts does the rest). */
export function s3Reads (options: S3FastReadOptions): Pick<ReadsBesideOptions<PlainRead>, 'take' | 'answer' | 'fields'> {
  const secretOf = keyLookup(options.policy, options.registry.tokens)
  return {
    take: request => plainRead(request, options),
    answer: async (request, response, read, requestId, answered) => await answer(options, secretOf, request, response, read, requestId, answered),
    fields: read => ({ bucket: read.bucket, key: read.key })
  }
}
