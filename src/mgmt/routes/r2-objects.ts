/**
 * Objects of a bucket through the account's API:
 * `/accounts/{account_id}/r2/buckets/{bucket}/objects/{key}` (GET, PUT,
 * DELETE), what `wrangler r2 object get|put|delete --remote` calls, and
 * `.../objects` (GET), the listing the official SDK pages through with
 * `result_info.cursor`.
 *
 * Every object goes through the bucket binding (`registry.open`), never
 * through files. GET answers the bytes themselves with the object's HTTP
 * metadata as headers (those a header can carry), nosniff and, unless its
 * type is one passive type, sandboxed as the gateway's object reads are:
 * this origin serves the console; PUT streams the request body into `put` (bounded
 * memory, whatever the size) and, like DELETE, answers the JSON envelope:
 * wrangler treats a bodiless answer (a 204) as a failure. The answers'
 * shapes are the SDK's: PUT `{key, version, size (a string), etag,
 * uploaded, storage_class}`, DELETE `{key}`. PUT takes the
 * object's HTTP metadata from Content-Type, Content-Language,
 * Content-Disposition, Content-Encoding, Cache-Control and Expires (the
 * binding's Headers form, so an Expires that is not a date is stored as the
 * epoch), and its storage class from `cf-r2-storage-class`; it verifies a
 * Content-MD5 (10037), writes only if `If-Match` / `If-None-Match` hold
 * (10031, 412), and refuses an `aws-chunked` body, whose framing would be
 * stored as the object's bytes (10040).
 *
 * These routes live in a scope of their own, whose only body parser hands
 * the raw request stream over: an object's bytes are not JSON, whatever
 * their Content-Type says.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { InvalidConditionalHeader, isArgumentError, MAX_LIST_LIMIT, MAX_PUT_BYTES, type Bucket, type BucketListedObject, type BucketObject, type StorageClass } from '../../bucket/index.js'
import { conditionalHeadersOf, contentLengthOver, contentMd5Bytes, headerWireValue, namesAwsChunked, privateReadCacheControl, sandboxObjectHeaders } from '../../doors/request-metadata.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'
import { pageNumber, perPage, single, type Query } from '../query.js'
import { acceptAnyContentType, isWellFormedMediaType } from '../../doors/any-content-type.js'
import { answeredOnce } from '../../doors/cut-off.js'
import { continueBody } from '../../doors/expect-continue.js'

interface ObjectParams { accountId: string, bucketName: string, '*': string }

/** Request headers that become the object's HTTP metadata. */
const metadataHeaders = ['content-type', 'content-language', 'content-disposition', 'content-encoding', 'cache-control', 'expires'] as const

async function openBucket (ctx: ManagementContext, name: string): Promise<Bucket> {
  const bucket = await ctx.registry.open(name)
  if (bucket === null) throw new ManagementError('NoSuchBucket')
  return bucket
}

/** Content-MD5 (base64 of 16 bytes) as the binding's `md5` option. */
function md5From (value: string | string[] | undefined): ArrayBuffer | undefined {
  if (value === undefined) return undefined
  const bytes = contentMd5Bytes(Array.isArray(value) ? value.join(',') : value)
  if (bytes === null) throw new ManagementError('InvalidArgument', 'Content-MD5 must be the base64 of a 16-byte MD5 digest')
  return bytes
}

function storageClassFrom (value: string | string[] | undefined): StorageClass | undefined {
  if (value === undefined) return undefined
  if (value !== 'Standard' && value !== 'InfrequentAccess') throw new ManagementError('InvalidArgument', 'cf-r2-storage-class must be Standard or InfrequentAccess')
  return value
}

/** The binding's argument errors are the client's: 10040 rather than a 500. */
async function asClientError<T> (call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (isArgumentError(err) || err instanceof InvalidConditionalHeader) {
      throw new ManagementError('InvalidArgument', err.message)
    }
    throw err
  }
}

/** An uploaded object, as the upload answers it (the size is a string there). */
function uploadedShape (object: BucketObject): Record<string, unknown> {
  return {
    key: object.key,
    version: object.version,
    size: String(object.size),
    etag: object.etag,
    uploaded: object.uploaded.toISOString(),
    storage_class: object.storageClass
  }
}

/** A listed object (listed with both metadata; `{}` stands in for one the binding left out). */
function listedShape (object: BucketListedObject): Record<string, unknown> {
  const http = object.httpMetadata ?? {}
  return {
    key: object.key,
    etag: object.etag,
    size: object.size,
    last_modified: object.uploaded.toISOString(),
    storage_class: object.storageClass,
    http_metadata: {
      ...http,
      ...(http.cacheExpiry === undefined ? {} : { cacheExpiry: http.cacheExpiry.toISOString() })
    },
    custom_metadata: object.customMetadata ?? {}
  }
}

/** The object list's `per_page`: 1–1000, default 1000. */
const objectPageSize = { defaultPerPage: MAX_LIST_LIMIT, minPerPage: 1, maxPerPage: MAX_LIST_LIMIT }

/** The conditions an object GET takes (the hosted API documents If-None-Match and If-Modified-Since); the engine judges them. */
const readConditions = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since']

async function sendObject (reply: FastifyReply, bucket: Bucket, key: string, request: FastifyRequest): Promise<FastifyReply> {
  const outcome = await asClientError(async () => await bucket.read(key, { onlyIf: conditionalHeadersOf(request.headers, readConditions, 'read') }))
  if (outcome.status === 'not-found') throw new ManagementError('NoSuchKey')
  if (outcome.status === 'precondition-failed') throw new ManagementError('PreconditionFailed')
  const object = outcome.object
  const headers = storedHeaders(object)
  reply.header('etag', object.httpEtag)
  reply.header('last-modified', object.uploaded.toUTCString())
  if (outcome.status === 'not-modified') {
    // What a cache refreshes its copy with: the headers of caching the 200 would have sent (RFC 9110, 15.4.5).
    for (const name of ['cache-control', 'expires']) if (headers[name] !== undefined) reply.header(name, headers[name])
    return await reply.code(304).send()
  }
  // No range is asked for: the whole object.
  if (outcome.status === 'range-not-satisfiable') throw new ManagementError('InternalError')
  reply.headers(headers)
  reply.header('content-length', object.size)
  reply.header('cf-r2-storage-class', object.storageClass)
  const body = outcome.body ?? Buffer.alloc(0)
  // Fastify puts its own type in place of one it cannot parse (empty, `;;;`, a list) when the payload is a buffer, never a stream's.
  return await reply.send(Buffer.isBuffer(body) && !isWellFormedMediaType(headers['content-type']) ? Readable.from([body]) : body)
}

/**
 * The object's HTTP metadata as response headers, the binding's way (an
 * Expires stored as the epoch goes out as it), and what keeps the object
 * from acting as this origin, which serves the console: nosniff, and the
 * sandbox unless its type is one passive type. A stored value no header can
 * carry (a form part's Content-Type may hold a control character) is left
 * out rather than failing the read.
 */
function storedHeaders (object: BucketObject): Record<string, string> {
  const http = object.httpMetadata
  const stored: Record<string, string | undefined> = {
    'content-type': http.contentType,
    'content-language': http.contentLanguage,
    'content-disposition': http.contentDisposition,
    'content-encoding': http.contentEncoding,
    'cache-control': http.cacheControl,
    expires: http.cacheExpiry?.toUTCString()
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(stored)) {
    const wire = value === undefined ? null : headerWireValue(value)
    if (wire !== null) headers[name] = wire
  }
  headers['content-type'] ??= 'application/octet-stream'
  // Every read here is made with credentials.
  headers['cache-control'] ??= privateReadCacheControl
  return sandboxObjectHeaders(headers)
}

export async function registerObjectRoutes (app: FastifyInstance, options: { ctx: ManagementContext }): Promise<void> {
  const { ctx } = options
  const path = '/accounts/:accountId/r2/buckets/:bucketName/objects/*'

  app.removeAllContentTypeParsers()
  // The handler streams the body: an Expect: 100-continue is answered as it is handed over (after the route's onRequest refusals).
  app.addContentTypeParser('*', (request, payload, done) => {
    continueBody(request.raw)
    done(null, payload)
  })
  acceptAnyContentType(app)

  app.get<{ Params: Omit<ObjectParams, '*'> }>('/accounts/:accountId/r2/buckets/:bucketName/objects', async (request) => {
    const query = request.query as Query
    // A cursor list: `page` means nothing here, but is read as every list reads it (a malformed one is 1198).
    pageNumber(query)
    const limit = perPage(query, objectPageSize)
    const list = { prefix: single(query, 'prefix'), delimiter: single(query, 'delimiter'), startAfter: single(query, 'start_after'), cursor: single(query, 'cursor') }
    const bucket = await openBucket(ctx, request.params.bucketName)
    const page = await asClientError(async () => await bucket.list({
      limit,
      ...list,
      include: ['httpMetadata', 'customMetadata']
    }))
    return success(page.objects.map(listedShape), {
      cursor: page.truncated ? page.cursor : '',
      is_truncated: page.truncated,
      per_page: limit,
      delimited: page.delimitedPrefixes
    })
  })

  app.get<{ Params: ObjectParams }>(path, async (request, reply) => {
    const bucket = await openBucket(ctx, request.params.bucketName)
    return await sendObject(reply, bucket, request.params['*'], request)
  })

  // A body announced over the largest put is refused before it is asked for (this hook runs before the parser above,
  // which sends the 100 Continue): the put would refuse it only once it had all arrived.
  // The connection closes with the refusal, or Node would read the whole body to find the next request.
  const refuseOversized = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!contentLengthOver(request.headers, MAX_PUT_BYTES)) return
    reply.header('connection', 'close')
    throw new ManagementError('EntityTooLarge')
  }
  app.put<{ Params: ObjectParams }>(path, { onRequest: refuseOversized }, async (request, reply) => await answeredOnce(request, reply, async () => {
    if (namesAwsChunked(request.headers)) {
      throw new ManagementError('InvalidArgument', 'Content-Encoding: aws-chunked is not accepted: send the object\'s bytes as they are')
    }
    // This API takes no customer key: an object sent with one is refused, never stored in the clear.
    if (Object.keys(request.headers).some(name => name.startsWith('x-amz-server-side-encryption-customer-'))) {
      throw new ManagementError('InvalidArgument', 'SSE-C headers are not taken here: put an object under a customer key through the S3 API or the HTTP routes')
    }
    const storageClass = storageClassFrom(request.headers['cf-r2-storage-class'])
    const md5 = md5From(request.headers['content-md5'])
    const onlyIf = conditionalHeadersOf(request.headers, ['if-match', 'if-none-match'], 'write')
    const httpMetadata = new Headers()
    for (const name of metadataHeaders) {
      const value = request.headers[name]
      if (typeof value === 'string') httpMetadata.set(name, value)
    }
    const bucket = await openBucket(ctx, request.params.bucketName)
    const body = request.body as IncomingMessage | undefined
    const put = await asClientError(async () => await bucket.put(request.params['*'], body ?? null, { httpMetadata, storageClass, md5, onlyIf }))
    if (put === null) throw new ManagementError('PreconditionFailed')
    return success(uploadedShape(put))
  }))

  app.delete<{ Params: ObjectParams }>(path, async (request) => {
    const bucket = await openBucket(ctx, request.params.bucketName)
    await asClientError(async () => { await bucket.delete(request.params['*']) })
    return success({ key: request.params['*'] })
  })
}
