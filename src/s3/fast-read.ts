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
import { ADMIN, authorize, hostName, mayBeCustomDomain, type BucketInfo, type BucketRegistry, type Principal } from '../bucket/index.js'
import { isSendable, plainReadPath, sendAnswer, type Answered, type ReadsBesideOptions } from '../doors/reads-beside.js'
import { configuredKeys, keyLookup, type S3AccessPolicy } from './auth.js'
import { refuseUnsupportedHeaders } from './headers.js'
import { checkKey, readAnswer, readAnswerNow, type ReadAnswer } from './objects.js'
import { resolveTarget } from './plugin.js'
import { verifySignature, verifySignatureNow, type SignedRequest } from './sigv4.js'

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

/** Who signed or sent the request: a principal, null for an unsigned request outside development mode; undefined when the route must answer it (a session token without its signature). */
type Sender = Principal | null | undefined

/** The sender of an unsigned request. */
function unsignedSender (request: IncomingMessage, policy: S3AccessPolicy): Sender {
  if (request.headers['x-amz-security-token'] !== undefined) return undefined // a session token without its signature: the route refuses it
  return policy.anonymousWrites ? ADMIN : null
}

/** Whether `sender` may read the object; the headers the route refuses are refused here too (a throw: the route's). */
function mayRead (options: S3FastReadOptions, request: IncomingMessage, read: PlainRead, sender: Principal | null, info: BucketInfo): boolean {
  refuseUnsupportedHeaders(request.headers)
  checkKey(read.key)
  const operation = request.method === 'GET' ? 'GetObject' : 'HeadObject'
  // Unsigned, outside development mode: only a public bucket's objects.
  if (sender === null) return options.policy.publicBuckets.has(read.bucket) || info.settings.public === true
  return authorize(sender, 'object:read', read.bucket, read.key, operation)
}

/** Sends the engine's answer with the request id; false (nothing written) when it is the route's to send. */
function send (response: ServerResponse, result: ReadAnswer, requestId: () => string, answered: Answered): boolean | Promise<boolean> {
  const body = result.body
  if (!isSendable(body)) {
    body.destroy()
    return false
  }
  // The answer's own headers (readAnswer makes them for each read).
  const headers = result.headers
  headers['x-amz-request-id'] = headers['x-amz-id-2'] = requestId()
  const sending = sendAnswer(response, result.status, headers, body, answered)
  return sending === undefined ? true : sending.then(() => true)
}

function signedRequest (request: IncomingMessage, read: PlainRead): SignedRequest {
  return { method: request.method as 'GET' | 'HEAD', rawPath: read.path, rawQuery: '', headers: request.headers, rawHeaders: request.rawHeaders }
}

async function answer (options: S3FastReadOptions, secretOf: ReturnType<typeof keyLookup>, request: IncomingMessage, response: ServerResponse, read: PlainRead, requestId: () => string, answered: Answered): Promise<boolean> {
  const { registry } = options
  // A public site's name (a custom domain) is refused by the guard: the route's to answer.
  if (options.guard !== null && mayBeCustomDomain(read.host) && await registry.bucketForDomain(read.host) !== null) return false
  let sender: Sender
  if (request.headers.authorization !== undefined) {
    let signer: Principal | null = null
    await verifySignature(signedRequest(request, read), {}, async (id, sessionToken) => {
      const known = await secretOf(id, sessionToken)
      signer = known?.principal ?? null
      return known?.secretAccessKey
    })
    sender = signer
  } else {
    sender = unsignedSender(request, options.policy)
  }
  if (sender === undefined) return false
  const info = await registry.info(read.bucket)
  if (info === null || !mayRead(options, request, read, sender, info)) return false
  const bucket = await registry.open(read.bucket, info)
  if (bucket === null) return false
  return await send(response, await readAnswer(request.headers, {}, bucket, info, read.key, request.method as 'GET' | 'HEAD'), requestId, answered)
}

/**
 * `answer` at once, in the turn the request came, when nothing it needs
 * must be waited for: a configured key pair (or none), the bucket open with
 * its settings unchanged, the object's row and small body held by its
 * store. Undefined when one must be: then `answer` does it all.
 */
function answerNow (options: S3FastReadOptions, keyNow: ReturnType<typeof configuredKeys>, request: IncomingMessage, response: ServerResponse, read: PlainRead, requestId: () => string, answered: Answered): boolean | Promise<boolean> | undefined {
  if (options.guard !== null && mayBeCustomDomain(read.host)) return undefined
  let sender: Sender
  if (request.headers.authorization !== undefined) {
    let signer: Principal | undefined
    const verified = verifySignatureNow(signedRequest(request, read), {}, (id, sessionToken) => {
      const known = keyNow(id, sessionToken)
      signer = known?.principal
      return known?.secretAccessKey
    })
    if (verified === undefined || signer === undefined) return undefined
    sender = signer
  } else {
    sender = unsignedSender(request, options.policy)
    if (sender === undefined) return false
  }
  const open = options.registry.openNow(read.bucket)
  if (open === undefined) return undefined
  if (!mayRead(options, request, read, sender, open.info)) return false
  const result = readAnswerNow(request.headers, open.bucket, open.info, read.key, request.method as 'GET' | 'HEAD')
  return result === undefined ? undefined : send(response, result, requestId, answered)
}

/** What the S3 port's reads beside Fastify take and how they answer (doors/reads-beside.ts does the rest). */
export function s3Reads (options: S3FastReadOptions): Pick<ReadsBesideOptions<PlainRead>, 'take' | 'answer' | 'fields'> {
  const secretOf = keyLookup(options.policy, options.registry.tokens)
  const keyNow = configuredKeys(options.policy)
  return {
    take: request => plainRead(request, options),
    answer: (request, response, read, requestId, answered) =>
      answerNow(options, keyNow, request, response, read, requestId, answered) ?? answer(options, secretOf, request, response, read, requestId, answered),
    fields: read => ({ bucket: read.bucket, key: read.key })
  }
}
