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
 * The signature is checked once, at once for a configured key pair
 * (`verifySignatureNow`), else after its key is looked up; the read is then
 * answered in the same turn when the bucket is open and the object's small
 * body held (`openNow`, `readAnswerNow`), else awaited.
 *
 * In development mode the site guard (server/s3-guard.ts) applies to the
 * port: then only reads whose Host it would let through are taken (a
 * loopback name or one of the port's own domains, not a public site's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ADMIN, authorize, hostName, mayBeCustomDomain, type BucketInfo, type BucketRegistry, type Principal } from '../bucket/index.js'
import { plainReadPath, sendIfSendable, type Answered, type ReadsBesideOptions } from '../doors/reads-beside.js'
import { configuredKeys, keyLookup, type S3AccessPolicy } from './auth.js'
import { refuseUnsupportedHeaders } from './headers.js'
import { checkKey, readAnswer, readAnswerNow, type ReadAnswer } from './objects.js'
import { resolveTarget } from './plugin.js'
import { S3Error } from './errors.js'
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

/** Sends the engine's answer with the request id; false (nothing written) when it is the route's to send (doors/reads-beside.ts). */
function send (response: ServerResponse, result: ReadAnswer, requestId: () => string, answered: Answered): boolean | Promise<boolean> {
  // The answer's own headers (readAnswer makes them for each read).
  const headers = result.headers
  headers['x-amz-request-id'] = headers['x-amz-id-2'] = requestId()
  return sendIfSendable(response, result.status, headers, result.body, answered)
}

function signedRequest (request: IncomingMessage, read: PlainRead): SignedRequest {
  return { method: request.method as 'GET' | 'HEAD', rawPath: read.path, rawQuery: '', headers: request.headers, rawHeaders: request.rawHeaders }
}

/** Who signed the request, verified at once when `keyNow` knows its key (a configured pair); null when the key must be looked up (`signerOf`). */
function signerNow (request: IncomingMessage, read: PlainRead, keyNow: ReturnType<typeof configuredKeys>): Principal | null {
  let signer: Principal | null = null
  const verified = verifySignatureNow(signedRequest(request, read), {}, (id, sessionToken) => {
    const known = keyNow(id, sessionToken)
    signer = known?.principal ?? null
    return known?.secretAccessKey
  })
  return verified === undefined ? null : signer
}

/** Who signed the request, its key looked up (a scoped token's pair, temporary credentials). */
async function signerOf (request: IncomingMessage, read: PlainRead, secretOf: ReturnType<typeof keyLookup>): Promise<Principal> {
  const found: { signer?: Principal } = {}
  await verifySignature(signedRequest(request, read), {}, async (id, sessionToken) => {
    const known = await secretOf(id, sessionToken)
    found.signer = known?.principal
    return known?.secretAccessKey
  })
  // A signature verified has a known key (verifySignature refuses any other).
  if (found.signer === undefined) throw new S3Error('InvalidAccessKeyId')
  return found.signer
}

/**
 * The read answered for `sender` at once, in the turn the request came,
 * when nothing it needs must be waited for (the bucket open with its
 * settings unchanged, the object's row and small body held by its store);
 * undefined when something must be, and then `answerLater` does it all.
 */
function answerNow (options: S3FastReadOptions, sender: Principal | null, request: IncomingMessage, response: ServerResponse, read: PlainRead, requestId: () => string, answered: Answered): boolean | Promise<boolean> | undefined {
  if (options.guard !== null && mayBeCustomDomain(read.host)) {
    // A public site's name (a custom domain) is refused by the guard: the route's to answer.
    const domain = options.registry.bucketForDomainNow(read.host)
    if (domain !== null) return domain === undefined ? undefined : false
  }
  const open = options.registry.openNow(read.bucket)
  if (open === undefined) return undefined
  if (!mayRead(options, request, read, sender, open.info)) return false
  const result = readAnswerNow(request.headers, open.bucket, open.info, read.key, request.method as 'GET' | 'HEAD')
  return result === undefined ? undefined : send(response, result, requestId, answered)
}

async function answerLater (options: S3FastReadOptions, sender: Principal | null, request: IncomingMessage, response: ServerResponse, read: PlainRead, requestId: () => string, answered: Answered): Promise<boolean> {
  const { registry } = options
  // A public site's name (a custom domain) is refused by the guard: the route's to answer.
  if (options.guard !== null && mayBeCustomDomain(read.host) && await registry.bucketForDomain(read.host) !== null) return false
  const info = await registry.info(read.bucket)
  if (info === null || !mayRead(options, request, read, sender, info)) return false
  const bucket = await registry.open(read.bucket, info)
  if (bucket === null) return false
  return await send(response, await readAnswer(request.headers, {}, bucket, info, read.key, request.method as 'GET' | 'HEAD'), requestId, answered)
}

/** Answers the read (false: the route's): its sender known (a signature checked once), then the read at once or awaited. */
function answer (options: S3FastReadOptions, keys: { now: ReturnType<typeof configuredKeys>, lookup: ReturnType<typeof keyLookup> }, request: IncomingMessage, response: ServerResponse, read: PlainRead, requestId: () => string, answered: Answered): boolean | Promise<boolean> {
  const signed = request.headers.authorization !== undefined
  const sender = signed ? signerNow(request, read, keys.now) : unsignedSender(request, options.policy)
  if (sender === undefined) return false
  if (signed && sender === null) {
    return signerOf(request, read, keys.lookup).then(async signer => await answerLater(options, signer, request, response, read, requestId, answered))
  }
  return answerNow(options, sender, request, response, read, requestId, answered) ?? answerLater(options, sender, request, response, read, requestId, answered)
}

/** What the S3 port's reads beside Fastify take and how they answer (doors/reads-beside.ts does the rest). */
export function s3Reads (options: S3FastReadOptions): Pick<ReadsBesideOptions<PlainRead>, 'take' | 'answer' | 'fields'> {
  const keys = { now: configuredKeys(options.policy), lookup: keyLookup(options.policy, options.registry.tokens) }
  return {
    take: request => plainRead(request, options),
    answer: (request, response, read, requestId, answered) => answer(options, keys, request, response, read, requestId, answered),
    fields: read => ({ bucket: read.bucket, key: read.key })
  }
}
