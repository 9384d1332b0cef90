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
 * answers the error with those files in `result.stored` (they stay stored).
 *
 * One catch-all route decides what a URL names (see target.ts), because
 * public routes and custom domains make the same path mean different things
 * on different hosts. Errors of every kind leave through one handler and one
 * table (errors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import type { IncomingMessage } from 'node:http'
import { BucketError, authorize, hostName, requireAccess, isBucketError, isStorageFailure, isRecyclingStream, MAX_PART_BYTES, MAX_PART_NUMBER, MAX_PUT_BYTES } from '../bucket/index.js'
import { continueBody } from '../doors/expect-continue.js'
import { declaresBodyOver, namesAwsChunked, privateReadCacheControl, sandboxObjectHeaders } from '../doors/request-metadata.js'
import type { Action, Bucket, BucketInfo, BucketRegistry } from '../bucket/index.js'
import { holdsCredentials, principalOf, type AccessPolicy } from './auth.js'
import { corsHeaders, effectiveCorsRules, preflightHeaders } from './cors.js'
import { DoorError, DoorErrors, errorReply, failure, success } from './errors.js'
import { conditionalFrom, customMetadataFrom, httpMetadataFrom, partOptionsFrom, putOptionsFrom, storageClassFrom } from './object-headers.js'
import { readObject } from './read.js'
import { sendRecycling } from './send-body.js'
import { defaultSite, matchPublicRoute, mayBeCustomDomain, pathStyleTarget, rawPath, routeHostsOf, type PublicRoute, type RequestTarget, type SiteOptions } from './target.js'
import { readSite } from './website.js'
import { answerProbe, nameOperation, probeLookup, type OperatorEndpoints } from './probes.js'
import { acceptAnyContentType } from '../doors/any-content-type.js'
import { parseJsonBody } from '../doors/json-body.js'

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

/** Limit of the JSON bodies this door reads whole (bulk delete of 1,000 keys of 1 KiB fits). */
const maxJsonBytes = 2 * 1024 * 1024

const objectMethods = 'GET, HEAD, PUT, POST, DELETE, OPTIONS'
const bucketMethods = 'GET, HEAD, POST, OPTIONS'
const readOnlyMethods = 'GET, HEAD, OPTIONS'

function methodNotAllowed (allow: string): DoorError {
  return new DoorError('MethodNotAllowed', `Allowed: ${allow}.`, { allow })
}

function queryValue (query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name]
  if (value === undefined || typeof value === 'string') return value
  throw new DoorError('InvalidQuery', `"${name}" given more than once.`)
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

/**
 * A JSON body must say so: a cross-site page can send `text/plain` or a form
 * without a preflight, never `application/json`.
 */
async function readJsonBody (source: IncomingMessage): Promise<unknown> {
  const type = (source.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json') {
    throw new DoorError('UnsupportedMediaType', 'This body must be sent with Content-Type: application/json.')
  }
  continueBody(source)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of source) {
    size += (chunk as Buffer).length
    if (size > maxJsonBytes) throw new DoorError('BodyTooLarge', `JSON bodies are limited to ${maxJsonBytes} bytes.`)
    chunks.push(chunk as Buffer)
  }
  try {
    return parseJsonBody(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new DoorError('InvalidJson')
  }
}

/** EntityTooLarge (100100) for a body announced over `limit` bytes, before it is asked for. */
/** Refuses `response-*` overrides to a reader without credentials (S3 does too): they would let any link serve any object as HTML on its origin. */
function refuseResponseOverrides (query: unknown, who: string): void {
  const overrides = Object.keys(query as Record<string, unknown>).filter(name => name.startsWith('response-'))
  if (overrides.length > 0) throw new DoorError('InvalidQuery', `${who} takes no response-* overrides (${overrides.join(', ')}).`)
}

function refuseOversized (request: FastifyRequest, limit: number, method: string): void {
  if (declaresBodyOver(request.headers, limit)) throw new BucketError('EntityTooLarge', method)
}

/** S3 SDKs frame streamed bodies with `Content-Encoding: aws-chunked`; stored as sent, the framing would corrupt the object. */
function refuseAwsChunked (request: FastifyRequest): void {
  const sha = request.headers['x-amz-content-sha256']
  if (namesAwsChunked(request.headers) || (typeof sha === 'string' && sha.startsWith('STREAMING-'))) {
    throw new DoorError('UnsupportedEncoding')
  }
}

function partNumberFrom (query: Record<string, unknown>): number {
  const raw = queryValue(query, 'partNumber')
  if (raw === undefined || !/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PART_NUMBER) {
    throw new DoorError('InvalidQuery', `partNumber must be an integer from 1 to ${MAX_PART_NUMBER}.`)
  }
  return Number(raw)
}

function uploadIdFrom (query: Record<string, unknown>): string {
  const uploadId = queryValue(query, 'uploadId')
  if (uploadId === undefined || uploadId === '') throw new DoorError('InvalidQuery', 'uploadId is required.')
  return uploadId
}

function partsFrom (body: unknown): Array<{ partNumber: number, etag: string }> {
  const parts = (body as { parts?: unknown } | null)?.parts
  if (!Array.isArray(parts) || !parts.every(p =>
    typeof p === 'object' && p !== null && Number.isInteger(p.partNumber) && typeof p.etag === 'string')) {
    throw new DoorError('InvalidArgument', 'The body must be {"parts": [{"partNumber": 1, "etag": "..."}, ...]}.')
  }
  return parts.map(p => ({ partNumber: p.partNumber, etag: p.etag.replace(/^"(.*)"$/, '$1') }))
}

function keysFrom (body: unknown): string[] {
  const keys = (body as { keys?: unknown } | null)?.keys
  if (!Array.isArray(keys) || !keys.every(k => typeof k === 'string')) {
    throw new DoorError('InvalidArgument', 'The body must be {"keys": ["a", "b", ...]}.')
  }
  return keys
}

/**
 * A form upload that failed after it had stored some of its files (they
 * stay stored: each file is its own put). Answered as its `cause` would be,
 * the message followed by `detail`, with `result: {stored}`.
 */
class FormUploadError extends Error {
  constructor (cause: unknown, readonly stored: unknown[], readonly detail: string) {
    super(detail, { cause })
  }
}

/** Says which file part failed (1-based among the file parts, null between parts) and which keys were stored before it. */
function storedBeforeFailure (keys: string[], failedPart: number | null): string {
  const shown = keys.slice(0, 10).map(k => JSON.stringify(k)).join(', ')
  const more = keys.length > 10 ? `, and ${keys.length - 10} more` : ''
  const part = failedPart === null ? '' : `The form's file part ${failedPart} was not stored; `
  const files = `${keys.length} ${keys.length === 1 ? 'file' : 'files'} stored before it: ${shown}${more} (result.stored).`
  return part === '' ? files.charAt(0).toUpperCase() + files.slice(1) : part + files
}

export async function gatewayRoutes (app: FastifyInstance, options: GatewayRoutesOptions): Promise<void> {
  const { registry, policy, publicRoutes, publicBuckets } = options
  const routeHosts = routeHostsOf(publicRoutes)

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => { done(null, payload) })
  acceptAnyContentType(app)
  await app.register(multipart, {
    limits: { fileSize: MAX_PUT_BYTES, fieldSize: 64 * 1024, fields: 100, files: 1000, parts: 1100 }
  })

  app.setErrorHandler(async (thrown, request, reply) => {
    const partial = thrown instanceof FormUploadError ? thrown : null
    const err = partial === null ? thrown : partial.cause
    const answer = errorReply(err)
    // A client that went away mid-body is not a server fault; the binding already discarded its upload.
    if (request.raw.destroyed) request.log.debug({ err }, 'client went away')
    else if (answer.log === 'warn') request.log.warn({ err, path: answer.path }, isStorageFailure(err) ? 'storage failure' : 'try again later')
    else if (answer.log === 'error') request.log.error({ err }, 'request failed')
    reply.code(answer.status).headers(answer.headers).type('application/json')
    if (partial === null) return await reply.send(failure(answer.code, answer.message))
    return await reply.send({ ...failure(answer.code, `${answer.message.replace(/\.?$/, '.')} ${partial.detail}`), result: { stored: partial.stored } })
  })

  async function resolveTarget (request: FastifyRequest): Promise<RequestTarget> {
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

  /**
   * Checks access to a bucket, sets its CORS headers, and opens it. A
   * private read made with the token is marked for no cache to keep: a
   * browser's cache is keyed by URL alone and would hand the body to a
   * later request without the token (after the console forgets it). The engine's `authorize` judges `action`.
   */
  async function enter (request: FastifyRequest, reply: FastifyReply, name: string, access: 'read' | 'write' | 'public', action: Action, key?: string): Promise<{ bucket: Bucket, info: BucketInfo, publicRead: boolean }> {
    const info = await registry.info(name)
    const publicRead = access === 'public' ||
      (access === 'read' && (publicBuckets.has(name) || info?.settings.public === true))
    const rules = effectiveCorsRules(info?.settings.cors ?? null, publicRead)
    reply.headers(corsHeaders(rules, request.headers.origin, request.method))
    if (!publicRead) {
      const principal = await principalOf(policy, request.headers.authorization)
      requireAccess(principal, action, name, key, request.method.toLowerCase())
      // Read with the token: no browser keeps it (an object's own Cache-Control, set after this, still wins).
      if ((policy.token !== null || principal.kind !== 'admin') && access === 'read') reply.header('cache-control', privateReadCacheControl)
    }
    const bucket = info === null ? null : await registry.open(name, info)
    if (info === null || bucket === null) throw new BucketError('NoSuchBucket', request.method.toLowerCase())
    return { bucket, info, publicRead }
  }

  async function preflight (request: FastifyRequest, reply: FastifyReply, name: string, servedPublicly: boolean): Promise<void> {
    const origin = request.headers.origin
    const method = request.headers['access-control-request-method']
    if (origin === undefined || typeof method !== 'string') {
      await reply.code(204).header('allow', servedPublicly ? readOnlyMethods : objectMethods).send()
      return
    }
    const info = await registry.info(name)
    const isPublic = servedPublicly || publicBuckets.has(name) || info?.settings.public === true
    const rules = effectiveCorsRules(info?.settings.cors ?? null, isPublic)
    const requested = request.headers['access-control-request-headers']
    // A public route is read-only whatever the rules say.
    const allowed = servedPublicly && !['GET', 'HEAD'].includes(method.toUpperCase())
      ? null
      : preflightHeaders(rules, origin, method, Array.isArray(requested) ? requested.join(',') : requested)
    // The same answer whether the bucket is missing or private without rules: a preflight needs no credentials, so it must not tell which buckets exist.
    if (info === null || allowed === null) throw new DoorError('CorsRefused', `Origin ${origin}, method ${method}.`)
    await reply.code(204).headers(allowed).send()
  }

  /**
   * A read's answer. Objects read on the host that also serves the web
   * console and the management API (path style, and routes bound to no host:
   * not `ownHost`) share their origin: on a credential-free loopback server
   * an HTML object there would run with every right, so those answers with
   * a body are sandboxed (`sandboxObjectHeaders`), and the site guard and CORS treat the
   * sandbox's opaque origin (`Origin: null`) as another site. A host route or
   * a custom domain is an origin of its own and serves its site untouched.
   */
  async function sendRead (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, key: string, ownHost: boolean, site?: SiteOptions): Promise<void> {
    const method = request.method as 'GET' | 'HEAD'
    const query = request.query as Record<string, unknown>
    const result = site === undefined
      ? await readObject(bucket, key, method, request.headers, query)
      : await readSite(bucket, key, site, method, request.headers, query)
    reply.code(result.status).headers(ownHost || result.body === undefined ? result.headers : sandboxObjectHeaders(result.headers))
    if (result.body === undefined) return await reply.send()
    if (!Buffer.isBuffer(result.body) && 'success' in result.body) return await reply.type('application/json').send(result.body)
    if (isRecyclingStream(result.body)) return await sendRecycling(reply, result.body)
    return await reply.send(result.body)
  }

  async function listBucket (request: FastifyRequest, reply: FastifyReply, bucket: Bucket): Promise<void> {
    const query = request.query as Record<string, unknown>
    const limit = queryValue(query, 'limit')
    if (limit !== undefined && !/^\d+$/.test(limit)) throw new BucketError('InvalidMaxKeys', 'list')
    const include = queryValue(query, 'include')
    const listed = await bucket.list({
      prefix: queryValue(query, 'prefix'),
      delimiter: queryValue(query, 'delimiter'),
      cursor: queryValue(query, 'cursor'),
      limit: limit === undefined ? undefined : Number(limit),
      include: include === undefined ? undefined : include.split(',').filter(s => s !== '') as Array<'httpMetadata' | 'customMetadata'>
    })
    return await reply.send(success(listed.objects, {
      cursor: listed.cursor ?? null,
      truncated: listed.truncated,
      delimitedPrefixes: listed.delimitedPrefixes
    }))
  }

  async function uploadForm (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, info: BucketInfo): Promise<void> {
    const fields: Record<string, string> = {}
    const stored: unknown[] = []
    const keys: string[] = []
    let files = 0
    let storedBytes = 0
    let storing = false
    continueBody(request.raw)
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          fields[part.fieldname] = String(part.value)
          continue
        }
        files++
        storing = true
        const key = fields.key ?? `${fields.prefix ?? ''}${part.filename}`
        request.logFields = { bucket: request.logFields?.bucket, key }
        const object = await bucket.put(key, part.file, {
          httpMetadata: { contentType: part.mimetype },
          storageClass: info.settings.storageClass
        })
        storing = false
        stored.push(object)
        keys.push(key)
        storedBytes += object?.size ?? 0
      }
    } catch (err) {
      // Busboy reports a malformed form with plain errors that carry no code.
      const known = errorReply(err)
      const failed = known.status === 500 && !isBucketError(err) ? new DoorError('InvalidForm', (err as Error).message) : err
      // Each file was its own put: those stored before the failure stay, and the answer says which.
      if (stored.length === 0) throw failed
      throw new FormUploadError(failed, stored, storedBeforeFailure(keys, storing ? files : null))
    }
    if (stored.length === 0) throw new DoorError('InvalidForm', 'The form has no file part.')
    request.logFields = { bucket: request.logFields?.bucket, key: keys.length === 1 ? keys[0] : undefined, bytes: storedBytes }
    return await reply.send(success(stored))
  }

  async function handleBucket (request: FastifyRequest, reply: FastifyReply, name: string): Promise<void> {
    const query = request.query as Record<string, unknown>
    switch (request.method) {
      case 'OPTIONS':
        return await preflight(request, reply, name, false)
      case 'GET':
      case 'HEAD': {
        const { bucket } = await enter(request, reply, name, 'read', 'objects:list', queryValue(query, 'prefix'))
        return await listBucket(request, reply, bucket)
      }
      case 'POST': {
        const { bucket, info } = await enter(request, reply, name, 'write', 'object:write')
        if (queryValue(query, 'delete') !== undefined) {
          const keys = keysFrom(await readJsonBody(request.raw))
          await bucket.delete(keys)
          return await reply.send(success({ deleted: keys }))
        }
        if (request.isMultipart()) return await uploadForm(request, reply, bucket, info)
        throw new DoorError('InvalidAction', 'POST on a bucket takes ?delete with {"keys": [...]} or a multipart/form-data upload.')
      }
      default:
        throw methodNotAllowed(bucketMethods)
    }
  }

  async function handleObject (request: FastifyRequest, reply: FastifyReply, name: string, key: string): Promise<void> {
    const query = request.query as Record<string, unknown>
    const method = request.method
    if (method === 'OPTIONS') return await preflight(request, reply, name, false)
    if (method === 'GET' || method === 'HEAD') {
      const { bucket, publicRead } = await enter(request, reply, name, 'read', 'object:read', key)
      if (publicRead && !await holdsCredentials(policy, request.headers.authorization)) refuseResponseOverrides(query, 'An anonymous read of a public bucket')
      return await sendRead(request, reply, bucket, key, false)
    }
    if (!['PUT', 'POST', 'DELETE'].includes(method)) throw methodNotAllowed(objectMethods)

    const action = queryValue(query, 'action')
    const { bucket, info } = await enter(request, reply, name, 'write', 'object:write', key)
    switch (`${method} ${action ?? ''}`) {
      case 'PUT ': {
        refuseAwsChunked(request)
        const options = putOptionsFrom(request.headers, info.settings.storageClass)
        refuseOversized(request, MAX_PUT_BYTES, 'put')
        continueBody(request.raw)
        const object = await bucket.put(key, request.raw, options)
        if (object === null) {
          const { code, message } = DoorErrors.PreconditionFailed
          return await reply.code(412).send(failure(code, message))
        }
        request.logFields = { bucket: request.logFields?.bucket, key: request.logFields?.key, bytes: object.size }
        return await reply.header('etag', object.httpEtag).send(success(object))
      }
      case 'DELETE ':
        // The binding's delete takes no conditions; ignoring them would delete what the client meant to keep.
        if (conditionalFrom(request.headers) !== undefined) throw new DoorError('ConditionalDelete')
        await bucket.delete(key)
        return await reply.code(204).send()
      case 'POST mpu-create': {
        const upload = await bucket.createMultipartUpload(key, {
          httpMetadata: httpMetadataFrom(request.headers),
          customMetadata: customMetadataFrom(request.headers),
          storageClass: storageClassFrom(request.headers) ?? info.settings.storageClass
        })
        return await reply.send(success({ key: upload.key, uploadId: upload.uploadId }))
      }
      case 'PUT mpu-uploadpart': {
        refuseAwsChunked(request)
        const partNumber = partNumberFrom(query)
        const upload = bucket.resumeMultipartUpload(key, uploadIdFrom(query))
        const options = partOptionsFrom(request.headers)
        refuseOversized(request, MAX_PART_BYTES, 'uploadPart')
        continueBody(request.raw)
        const part = await upload.uploadPart(partNumber, request.raw, options)
        // A part stored is its whole body: as long as the Content-Length the parser held it to.
        const length = Number(request.headers['content-length'])
        if (Number.isSafeInteger(length)) request.logFields = { bucket: request.logFields?.bucket, key: request.logFields?.key, bytes: length }
        return await reply.header('etag', `"${part.etag}"`).send(success(part))
      }
      case 'POST mpu-complete': {
        const upload = bucket.resumeMultipartUpload(key, uploadIdFrom(query))
        const object = await upload.complete(partsFrom(await readJsonBody(request.raw)))
        return await reply.header('etag', object.httpEtag).send(success(object))
      }
      case 'DELETE mpu-abort':
        await bucket.resumeMultipartUpload(key, uploadIdFrom(query)).abort()
        return await reply.code(204).send()
      default:
        throw new DoorError('InvalidAction', `"${method}" with action "${action ?? ''}" is not a route. Actions: PUT (none), PUT mpu-uploadpart, POST mpu-create, POST mpu-complete, DELETE (none), DELETE mpu-abort.`)
    }
  }

  async function handlePublic (request: FastifyRequest, reply: FastifyReply, name: string, key: string, site: SiteOptions, ownHost: boolean): Promise<void> {
    if (request.method === 'OPTIONS') return await preflight(request, reply, name, true)
    if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(readOnlyMethods)
    refuseResponseOverrides(request.query, 'A public route')
    const { bucket } = await enter(request, reply, name, 'public', 'object:read', key)
    return await sendRead(request, reply, bucket, key, ownHost, site)
  }

  async function handleRoot (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed('GET, HEAD')
    // Not from a route host: the console is not served there.
    if (options.browserHome !== undefined && !routeHosts.has(hostName(request.headers.host ?? ''))) {
      reply.header('vary', 'Accept')
      if (wantsHtml(request.headers.accept)) return await reply.code(302).header('location', options.browserHome).send()
    }
    const principal = await principalOf(policy, request.headers.authorization)
    if (policy.token !== null || principal.kind !== 'admin') reply.header('cache-control', privateReadCacheControl)
    const buckets = (await registry.list()).filter(b => authorize(principal, 'buckets:list', b.name))
    return await reply.send(success(buckets.map(b => ({ name: b.name, creationDate: b.creationDate }))))
  }

  app.route({
    method: app.supportedMethods,
    url: '/*',
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      try {
        return await route(request, reply)
      } catch (err) {
        // Answered already (408 to an idle body, connection closed): what failed after that is the upload it cut.
        if (reply.sent) { request.log.debug({ err }, 'failed after its answer'); return }
        throw err
      }
    }
  })

  async function route (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const target = await resolveTarget(request)
    if (target.kind !== 'root') request.logFields = { bucket: target.bucket, key: target.kind === 'bucket' ? undefined : target.key }
    const probe = nameOperation(request, target)
    if (probe !== null) return await answerProbe(request, reply, probe, options.operator, policy)
    switch (target.kind) {
      case 'root': return await handleRoot(request, reply)
      case 'bucket': return await handleBucket(request, reply, target.bucket)
      case 'object': return await handleObject(request, reply, target.bucket, target.key)
      case 'public': return await handlePublic(request, reply, target.bucket, target.key, target.site ?? defaultSite, target.ownHost)
    }
  }
}
