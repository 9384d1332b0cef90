/**
 * The S3-compatible API as one Fastify plugin over the bucket registry.
 *
 * One catch-all route: the Host header and the path say which bucket and
 * key a request names (path style `/<bucket>/<key>`, or virtual-host style
 * `<bucket>.localhost` and `<bucket>.<domain>` for each configured S3
 * domain); the method and the query's sub-resources (`?uploads`,
 * `?uploadId`, `?cors`, `?delete`, `list-type=2`, ...) say which operation.
 * CORS preflights are answered from the bucket's rules without a signature
 * (cors.ts); the signature of every other request is verified before
 * anything else (sigv4.ts); a write's headers are decoded once into one
 * value (put-request.ts), from which its body's pipeline is built to
 * stream into the binding (body.ts); every error leaves through one handler
 * as S3's XML error document, and every answer carries `x-amz-request-id`.
 *
 * Content-type parsers are replaced by one that hands the raw request to the
 * handler, so bodies are never buffered by the framework. The 100 of
 * `Expect: 100-continue` is sent when a handler reads the body (body.ts),
 * after the signature and the checks: a refused request never gets one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ADMIN, hostName, isStorageFailure, isTransient, matchingCorsRule, requireAccess, type Action, type BucketRegistry, type Principal } from '../bucket/index.js'
import { keyLookup, type S3AccessPolicy } from './auth.js'
import { s3Domains } from './domains.js'
import * as buckets from './buckets.js'
import type { S3Context } from './context.js'
import { actualCorsHeaders, preflightAnswerHeaders } from './cors.js'
import { S3Error, s3ErrorReply } from './errors.js'
import { refuseUnsupportedHeaders } from './headers.js'
import { listObjectsV1, listObjectsV2 } from './listing.js'
import * as multipart from './multipart.js'
import * as objects from './objects.js'
import { hoistQueryHeaders, namesCopySource } from './presigned.js'
import { authenticationKind, isSignedQuery, verifySignature, type VerifiedSignature } from './sigv4.js'
import { parseRawQuery } from './uri-encoding.js'
import { errorDocument } from './xml.js'
import { acceptAnyContentType } from '../doors/any-content-type.js'
import { answeredOnce, clientGone, leavesBodyUnread } from '../doors/cut-off.js'
import { healthAnswer, probeOf, sendHealth, serverClosing, type OperatorEndpoints } from '../doors/health.js'
import { requestedHeaderNames } from '../doors/request-metadata.js'
import { noteAnswerCode } from '../doors/request-log.js'

export interface S3ApiOptions {
  registry: BucketRegistry
  policy: S3AccessPolicy
  /** Domains whose sub-domains name buckets (virtual-host style); `localhost` is always one. */
  domains: string[]
  /** What `/_health/live` and `/_health/ready` answer from; absent: they are not served (paths like any other). */
  operator?: OperatorEndpoints
}

declare module 'fastify' {
  interface FastifyRequest {
    s3RequestId: string
  }
}

/** Sub-resources S3 has and this server does not (answered NotImplemented). */
const unsupportedBucketResources = [
  'acl', 'policy', 'policyStatus', 'tagging', 'website', 'logging', 'notification', 'replication', 'requestPayment',
  'ownershipControls', 'publicAccessBlock', 'object-lock', 'accelerate', 'analytics', 'inventory', 'metrics',
  'intelligent-tiering', 'versions', 'encryption'
]
const unsupportedObjectResources = ['acl', 'tagging', 'retention', 'legal-hold', 'torrent', 'restore', 'select', 'attributes', 'renameObject']
/**
 * A bucket's sub-resources, which name no operation on an object: on an
 * object's path they are refused, never read as the object's PutObject or
 * DeleteObject (`DELETE /b/k?cors` deleted the object).
 */
const bucketOnlyResources = [
  ...unsupportedBucketResources.filter(name => !unsupportedObjectResources.includes(name)),
  'cors', 'lifecycle', 'location', 'versioning', 'delete'
]

interface Target {
  bucket: string
  key: string
}

/** The bucket and key a request names; bucket '' is the service (ListBuckets). */
export function resolveTarget (host: string, rawPath: string, domains: string[]): Target {
  const name = hostName(host)
  let decoded: string
  try {
    decoded = decodeURIComponent(rawPath)
  } catch {
    throw new S3Error('InvalidArgument', 'The path has malformed percent-encoding.')
  }
  for (const domain of domains) {
    if (name.endsWith(`.${domain}`) && name.length > domain.length + 1) {
      return { bucket: name.slice(0, -domain.length - 1), key: decoded.slice(1) }
    }
  }
  const path = decoded.slice(1)
  const slash = path.indexOf('/')
  if (slash === -1) return { bucket: path, key: '' }
  return { bucket: path.slice(0, slash), key: path.slice(slash + 1) }
}

function notImplemented (what: string): S3Error {
  return new S3Error('NotImplemented', `${what} is not supported by this server.`)
}

/** The operations of this API, as the metrics name them (a closed set). */
export type S3Operation =
  'ListBuckets' | 'GetBucketLocation' | 'GetBucketCors' | 'GetBucketLifecycle' | 'GetBucketEncryption' | 'GetBucketVersioning' |
  'ListMultipartUploads' | 'ListObjectsV2' | 'ListObjects' | 'HeadBucket' | 'PutBucketCors' | 'PutBucketLifecycle' | 'CreateBucket' |
  'DeleteBucketCors' | 'DeleteBucketLifecycle' | 'DeleteBucket' | 'DeleteObjects' | 'ListParts' | 'GetObject' | 'HeadObject' |
  'UploadPartCopy' | 'UploadPart' | 'CopyObject' | 'PutObject' | 'AbortMultipartUpload' | 'DeleteObject' | 'CreateMultipartUpload' |
  'CompleteMultipartUpload'

const handlers: Record<S3Operation, (ctx: S3Context) => Promise<void>> = {
  ListBuckets: buckets.listBuckets,
  GetBucketLocation: buckets.getBucketLocation,
  GetBucketCors: buckets.getBucketCors,
  GetBucketLifecycle: buckets.getBucketLifecycle,
  GetBucketEncryption: buckets.getBucketEncryption,
  GetBucketVersioning: buckets.getBucketVersioning,
  ListMultipartUploads: multipart.listMultipartUploads,
  ListObjectsV2: listObjectsV2,
  ListObjects: listObjectsV1,
  HeadBucket: buckets.headBucket,
  PutBucketCors: buckets.putBucketCors,
  PutBucketLifecycle: buckets.putBucketLifecycle,
  CreateBucket: buckets.createBucket,
  DeleteBucketCors: buckets.deleteBucketCors,
  DeleteBucketLifecycle: buckets.deleteBucketLifecycle,
  DeleteBucket: buckets.deleteBucket,
  DeleteObjects: objects.deleteObjects,
  ListParts: multipart.listParts,
  GetObject: async ctx => { await objects.getObject(ctx, 'GET') },
  HeadObject: async ctx => { await objects.getObject(ctx, 'HEAD') },
  UploadPartCopy: multipart.uploadPartCopy,
  UploadPart: multipart.uploadPart,
  CopyObject: objects.copyObject,
  PutObject: objects.putObject,
  AbortMultipartUpload: multipart.abortMultipartUpload,
  DeleteObject: objects.deleteObject,
  CreateMultipartUpload: multipart.createMultipartUpload,
  CompleteMultipartUpload: multipart.completeMultipartUpload
}

/**
 * What each operation does, for the engine's `authorize`. Bucket settings
 * are `bucket:*`; HeadBucket and GetBucketLocation only say that a bucket
 * exists, as ListBuckets showing it does (`buckets:list` of that bucket),
 * so any credential of the bucket (an object token, temporary credentials
 * limited to keys; not one whose operations leave them out) can use the
 * clients that ask them first; uploads in progress belong to writers.
 */
const operationActions: Record<S3Operation, Action> = {
  ListBuckets: 'buckets:list',
  GetBucketLocation: 'buckets:list',
  HeadBucket: 'buckets:list',
  ListObjectsV2: 'objects:list',
  ListObjects: 'objects:list',
  GetBucketCors: 'bucket:read',
  GetBucketLifecycle: 'bucket:read',
  GetBucketEncryption: 'bucket:read',
  GetBucketVersioning: 'bucket:read',
  PutBucketCors: 'bucket:write',
  PutBucketLifecycle: 'bucket:write',
  CreateBucket: 'bucket:write',
  DeleteBucketCors: 'bucket:write',
  DeleteBucketLifecycle: 'bucket:write',
  DeleteBucket: 'bucket:write',
  GetObject: 'object:read',
  HeadObject: 'object:read',
  ListMultipartUploads: 'object:write',
  ListParts: 'object:write',
  DeleteObjects: 'object:write',
  UploadPartCopy: 'object:write',
  UploadPart: 'object:write',
  CopyObject: 'object:write',
  PutObject: 'object:write',
  AbortMultipartUpload: 'object:write',
  DeleteObject: 'object:write',
  CreateMultipartUpload: 'object:write',
  CompleteMultipartUpload: 'object:write'
}

/**
 * Asks `authorize` about the operation: on the bucket (and key, or a
 * listing's prefix) the URL names; a copy also reads its source. ListBuckets
 * is filtered by its handler, and DeleteObjects checks each key it is given.
 */
function authorizeOperation (ctx: S3Context, principal: Principal, operation: S3Operation): void {
  const action = operationActions[operation]
  if (operation === 'ListBuckets') return requireAccess(principal, action, undefined, undefined, operation)
  const key = action === 'objects:list'
    ? (typeof ctx.query.prefix === 'string' ? ctx.query.prefix : operation.startsWith('List') ? '' : undefined)
    : ctx.key === '' ? undefined : ctx.key
  requireAccess(principal, action, ctx.bucketName, key, operation)
  // A writer's listing of uploads in progress names their keys: judged as a listing of its prefix too.
  if (operation === 'ListMultipartUploads') requireAccess(principal, 'objects:list', ctx.bucketName, typeof ctx.query.prefix === 'string' ? ctx.query.prefix : '', operation)
  if (operation === 'CopyObject' || operation === 'UploadPartCopy') {
    const source = objects.copySourceFrom(ctx)
    requireAccess(principal, 'object:read', source.bucket, source.key, operation)
  }
}

/** A request this API refuses whatever its credentials (an operation it does not have), thrown once they are checked. */
type Refusal = S3Error

function serviceOperation (method: string): S3Operation | Refusal {
  if (method === 'GET') return 'ListBuckets'
  return new S3Error('MethodNotAllowed')
}

function bucketOperation (method: string, query: Record<string, string | string[]>): S3Operation | Refusal {
  const has = (name: string): boolean => query[name] !== undefined
  const unsupported = unsupportedBucketResources.find(has)
  switch (method) {
    case 'GET':
      if (has('location')) return 'GetBucketLocation'
      if (has('cors')) return 'GetBucketCors'
      if (has('lifecycle')) return 'GetBucketLifecycle'
      if (has('encryption')) return 'GetBucketEncryption'
      if (has('versioning')) return 'GetBucketVersioning'
      if (has('uploads')) return 'ListMultipartUploads'
      if (unsupported !== undefined) return notImplemented(`GET ?${unsupported}`)
      // A parameter given twice is read by its first value, as every other is (a second list-type=2 made a V1 page).
      if ([query['list-type']].flat()[0] === '2') return 'ListObjectsV2'
      return 'ListObjects'
    case 'HEAD':
      return 'HeadBucket'
    case 'PUT':
      if (has('cors')) return 'PutBucketCors'
      if (has('lifecycle')) return 'PutBucketLifecycle'
      if (unsupported !== undefined || has('versioning')) return notImplemented(`PUT ?${unsupported ?? 'versioning'}`)
      return 'CreateBucket'
    case 'DELETE':
      if (has('cors')) return 'DeleteBucketCors'
      if (has('lifecycle')) return 'DeleteBucketLifecycle'
      if (unsupported !== undefined) return notImplemented(`DELETE ?${unsupported}`)
      return 'DeleteBucket'
    case 'POST':
      if (has('delete')) return 'DeleteObjects'
      return notImplemented('POST on a bucket (browser form uploads)')
  }
  return new S3Error('MethodNotAllowed')
}

function objectOperation (method: string, query: Record<string, string | string[]>, copy: boolean): S3Operation | Refusal {
  const has = (name: string): boolean => query[name] !== undefined
  const unsupported = unsupportedObjectResources.find(has) ?? bucketOnlyResources.find(has)
  if (unsupported !== undefined) return notImplemented(`?${unsupported} on an object`)
  // Versions are not kept: `null` names the one version an object has, any other id none.
  if (has('versionId') && query.versionId !== 'null') return new S3Error('InvalidArgument', 'Invalid version id specified')
  switch (method) {
    case 'GET':
      return has('uploadId') ? 'ListParts' : 'GetObject'
    case 'HEAD':
      return 'HeadObject'
    case 'PUT':
      if (has('uploadId') || has('partNumber')) return copy ? 'UploadPartCopy' : 'UploadPart'
      return copy ? 'CopyObject' : 'PutObject'
    case 'DELETE':
      return has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject'
    case 'POST':
      if (has('uploads')) return 'CreateMultipartUpload'
      if (has('uploadId')) return 'CompleteMultipartUpload'
      return notImplemented('This POST on an object')
  }
  return new S3Error('MethodNotAllowed')
}

/**
 * The operation a request asks for, from its method, target and query
 * (the sub-resources), or the refusal of one this API does not have. Judged
 * before the signature, so a refused request is counted under the
 * operation it asked for; the refusal itself waits for the signature.
 */
export function s3Operation (method: string, target: Target, query: Record<string, string | string[]>, copy: boolean): S3Operation | Refusal {
  if (target.bucket === '') return serviceOperation(method)
  if (target.key === '') return bucketOperation(method, query)
  return objectOperation(method, query, copy)
}

/** Anonymous requests a public bucket answers: reads of objects and listings. */
function anonymousRead (method: string, target: Target, query: Record<string, string | string[]>): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false
  if (target.key !== '') return query.uploadId === undefined
  return Object.keys(query).every(name => ['list-type', 'prefix', 'delimiter', 'max-keys', 'continuation-token', 'start-after', 'encoding-type', 'fetch-owner', 'marker'].includes(name))
}

export async function s3Api (app: FastifyInstance, options: S3ApiOptions): Promise<void> {
  const { registry, policy } = options
  const domains = s3Domains(options.domains)
  const keyOf = keyLookup(policy, registry.tokens)

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => { done(null, payload) })
  acceptAnyContentType(app)
  app.decorateRequest('s3RequestId', '')
  app.decorateRequest('logFields', null)
  app.decorateRequest('operation', null)
  app.decorateRequest('door', null)

  app.addHook('onRequest', (request, reply, done) => {
    // The log line's reqId (app.ts makes it), answered to the client.
    request.s3RequestId = request.id
    reply.header('x-amz-request-id', request.s3RequestId)
    reply.header('x-amz-id-2', request.s3RequestId)
    done()
  })

  app.setErrorHandler(async (err, request, reply) => {
    const answer = s3ErrorReply(err)
    noteAnswerCode(request.raw, answer.code)
    if (clientGone(request.raw)) request.log.debug({ err }, 'client went away')
    // The disk's failures (full, read-only, I/O) are the operator's to see, with the path, as the HTTP door logs them; faults are errors.
    else if (isStorageFailure(err)) request.log.warn({ err, path: err.path }, 'storage failure')
    // Asked to try again later (a copy whose source kept changing): not a fault either.
    else if (isTransient(err)) request.log.warn({ err }, 'try again later')
    // The door's own answers (NotImplemented included) are decisions, not faults.
    else if (answer.status >= 500 && !(err instanceof S3Error)) request.log.error({ err }, 'request failed')
    reply.code(answer.status).headers(answer.headers)
    // A body left unread that Node could not read and drop (doors/cut-off.ts) would stall a kept-alive connection: close it.
    if (leavesBodyUnread(request.raw)) reply.header('connection', 'close')
    if (request.method === 'HEAD') return await reply.send()
    const resource = (request.raw.url ?? '/').split('?')[0]
    return await reply.type('application/xml')
      .send(errorDocument(answer.code, answer.message, { Resource: resource, RequestId: request.s3RequestId, ...answer.fields }))
  })

  // Methods S3 has no operation for (PATCH, TRACE, ...) answer its XML, with a request id, like the rest.
  app.setNotFoundHandler(async request => {
    request.operation = 'Unsupported'
    throw new S3Error('MethodNotAllowed', `${request.method} is not an S3 operation.`)
  })

  /**
   * The request's signature (null: unsigned) and who made it: the principal
   * of the key pair that signed it, the admin for an unsigned request in
   * development mode, null for an anonymous read of a public bucket.
   */
  async function authenticate (request: FastifyRequest, target: Target, query: Record<string, string | string[]>, rawPath: string, rawQuery: string): Promise<{ signature: VerifiedSignature | null, principal: Principal | null }> {
    const signed = { method: request.method, rawPath, rawQuery, headers: request.headers, rawHeaders: request.raw.rawHeaders }
    const kind = authenticationKind(signed, query)
    // Signed twice (an Authorization header and a presigned URL's query): S3 takes neither, and says so.
    if (kind === 'header' && isSignedQuery(query)) {
      throw new S3Error('InvalidArgument', 'Only one way of authenticating is allowed: the Authorization header or the X-Amz-* query parameters, not both.', {}, { ArgumentName: 'Authorization' })
    }
    if (kind !== 'anonymous') {
      let principal: Principal | null = null
      const signature = await verifySignature(signed, query, async (id, sessionToken) => {
        const known = await keyOf(id, sessionToken)
        principal = known?.principal ?? null
        return known?.secretAccessKey
      })
      if (kind === 'query') hoistQueryHeaders(request.headers, query)
      return { signature, principal }
    }
    // A session token proves something only with the signature of its key pair: sent unsigned, it is refused, not ignored.
    if (request.headers['x-amz-security-token'] !== undefined || query['X-Amz-Security-Token'] !== undefined) {
      throw new S3Error('InvalidToken', 'A session token is sent with a request signed by its temporary credentials.')
    }
    if (policy.anonymousWrites) return { signature: null, principal: ADMIN }
    if (target.bucket !== '' && anonymousRead(request.method, target, query)) {
      if (policy.publicBuckets.has(target.bucket) || (await registry.info(target.bucket))?.settings.public === true) {
        // An override would let any link serve a public object (an uploaded text or image) as HTML on this port's origin.
        if (Object.keys(query).some(name => name.startsWith('response-'))) {
          throw new S3Error('InvalidRequest', 'Request specific response headers cannot be used for anonymous GET requests.')
        }
        return { signature: null, principal: null }
      }
    }
    throw new S3Error('AccessDenied', policy.credentials.length === 0
      ? 'Access Denied: this server has no S3 key pair; start it with --s3-access-key-id and --s3-secret-access-key.'
      : undefined)
  }

  /** A CORS preflight: no signature, the bucket's rules decide. */
  async function preflight (request: FastifyRequest, reply: FastifyReply, target: Target): Promise<void> {
    const origin = request.headers.origin
    const method = request.headers['access-control-request-method']
    if (target.bucket === '' || origin === undefined || typeof method !== 'string') {
      throw new S3Error('InvalidRequest', 'A CORS preflight needs a bucket, Origin and Access-Control-Request-Method.')
    }
    const rules = (await registry.info(target.bucket))?.settings.cors ?? null
    const headers = requestedHeaderNames(request.headers['access-control-request-headers'])
    const rule = matchingCorsRule(rules, origin, method, headers)
    // One refusal for a missing bucket, a bucket without rules and rules that do not match: a preflight needs no
    // signature, so its answer must not tell which buckets exist (S3's NoSuchBucket and "CORS is not enabled" would).
    if (rules === null || rule === undefined) throw new S3Error('AccessForbidden')
    await reply.code(200).headers(preflightAnswerHeaders(rule, origin, headers)).send()
  }

  app.route({
    method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
    url: '/*',
    exposeHeadRoute: false,
    handler: async (request, reply) => await answeredOnce(request, reply, async () => {
      const url = request.raw.url ?? '/'
      const question = url.indexOf('?')
      const rawPath = question === -1 ? url : url.slice(0, question)
      const rawQuery = question === -1 ? '' : url.slice(question + 1)
      const query = parseRawQuery(rawQuery)
      if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
        reply.header('connection', 'close')
        throw new S3Error('InvalidRequest', 'An HTTP/1.1 request must have a Host header.')
      }
      const target = resolveTarget(request.headers.host ?? '', rawPath, domains)
      // A request naming no bucket (ListBuckets) is named by its URL.
      request.logFields = target.bucket === '' ? null : { bucket: target.bucket, key: target.key === '' ? undefined : target.key }
      // The health endpoints: no bucket can be named `_health`, and they need no signature.
      const probe = options.operator === undefined ? null : probeOf(target.bucket, target.key)
      if (probe === 'live' || probe === 'ready') {
        request.operation = 'Health'
        // A probe names no bucket: its log line gives its URL.
        request.logFields = null
        if (request.method !== 'GET' && request.method !== 'HEAD') throw new S3Error('MethodNotAllowed', 'The health endpoints take GET and HEAD.')
        return await sendHealth(reply, request.method, await healthAnswer(probe, options.operator as OperatorEndpoints, serverClosing(request)))
      }
      const origin = request.headers.origin
      if (request.method === 'OPTIONS') {
        request.operation = 'Preflight'
        return await preflight(request, reply, target)
      }
      const presigned = authenticationKind({ headers: request.headers }, query) === 'query'
      const operation = s3Operation(request.method, target, query, namesCopySource(request.headers, query, presigned))
      request.operation = typeof operation === 'string' ? operation : 'Unsupported'
      if (origin !== undefined && target.bucket !== '') {
        reply.headers(actualCorsHeaders((await registry.info(target.bucket))?.settings.cors ?? null, origin, request.method))
      }
      const { signature, principal } = await authenticate(request, target, query, rawPath, rawQuery)
      refuseUnsupportedHeaders(request.headers)
      if (typeof operation !== 'string') throw operation
      const ctx: S3Context = { request, reply, registry, query, signature, principal, bucketName: target.bucket, key: target.key }
      if (principal !== null) authorizeOperation(ctx, principal, operation)
      return await handlers[operation](ctx)
    })
  })
}
