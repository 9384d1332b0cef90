/**
 * The HTTP routes of one object (`/<bucket>/<key>`): read (GET, HEAD, and
 * the same read on a public route), put, delete, and the multipart
 * upload's steps, chosen by method and `?action=`. An object PUT or a part
 * streams from the socket into `put`/`uploadPart`, announced sizes judged
 * before the 100-continue is sent.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BucketError, isRecyclingStream, MAX_PART_BYTES, MAX_PART_NUMBER, MAX_PUT_BYTES } from '../bucket/index.js'
import type { Bucket, BucketCompleteOptions, BucketInfo, BucketMultipartOptions } from '../bucket/index.js'
import { continueBody, continueOnRead } from '../doors/expect-continue.js'
import { sendRecycling } from '../doors/recycling-body.js'
import { contentLengthOver, namesAwsChunked, sandboxObjectHeaders } from '../doors/request-metadata.js'
import { holdsCredentials } from './auth.js'
import { DoorError, success } from './errors.js'
import { addSsecKey, conditionalFrom, customMetadataFrom, httpMetadataFrom, partOptionsFrom, putOptionsFrom, storageClassFrom } from './object-headers.js'
import { readObject, type ReadResult } from './read.js'
import { enter, objectMethods, preflight, queryValue, readJsonBody, refuseMethod, type RouteScope } from './route-scope.js'
import type { SiteOptions } from './target.js'
import { readSite } from './website.js'
import { noteAnswerCode } from '../doors/request-log.js'

/** Refuses `response-*` overrides to a reader without credentials (S3 does too): they would let any link serve any object as HTML on its origin. */
export function refuseResponseOverrides (query: unknown, who: string): void {
  const overrides = Object.keys(query as Record<string, unknown>).filter(name => name.startsWith('response-'))
  if (overrides.length > 0) throw new DoorError('InvalidQuery', `${who} takes no response-* overrides (${overrides.join(', ')}).`)
}

/** EntityTooLarge (100100) for a body announced over `limit` bytes, before it is asked for. */
function refuseOversized (request: FastifyRequest, limit: number, method: string): void {
  if (contentLengthOver(request.headers, limit)) throw new BucketError('EntityTooLarge', method)
}

/** S3 SDKs frame streamed bodies with `Content-Encoding: aws-chunked`; stored as sent, the framing would corrupt the object. */
function refuseAwsChunked (request: FastifyRequest): void {
  const sha = request.headers['x-amz-content-sha256']
  if (namesAwsChunked(request.headers) || (typeof sha === 'string' && sha.startsWith('STREAMING-'))) {
    throw new DoorError('UnsupportedEncoding')
  }
}

function partNumberOfQuery (query: Record<string, unknown>): number {
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

/**
 * A read's headers. Objects read on the host that also serves the web
 * console and the management API (path style, and routes bound to no host:
 * not `ownHost`) share their origin: on a credential-free loopback server
 * an HTML object there would run with every right, so those answers are
 * sandboxed (`sandboxObjectHeaders`; a HEAD's as its GET's, a 304 has no
 * body to run and keeps the cached answer's), and the site guard and CORS treat the
 * sandbox's opaque origin (`Origin: null`) as another site. A host route or
 * a custom domain is an origin of its own and serves its site untouched.
 */
export function readHeaders (result: ReadResult, ownHost: boolean): Record<string, string> {
  return ownHost || result.status === 304 ? result.headers : sandboxObjectHeaders(result.headers)
}

export async function sendRead (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, key: string, ownHost: boolean, site?: SiteOptions): Promise<void> {
  const method = request.method as 'GET' | 'HEAD'
  const query = request.query as Record<string, unknown>
  const result = site === undefined
    ? await readObject(bucket, key, method, request.headers, query)
    : await readSite(bucket, key, site, method, request.headers, query, request.raw.url ?? '/')
  reply.code(result.status).headers(readHeaders(result, ownHost))
  if (result.body === undefined) return await reply.send()
  if (!Buffer.isBuffer(result.body) && 'success' in result.body) {
    // A 412 or 416 the engine decided: an error answer, with its code in the log line.
    noteAnswerCode(request.raw, result.body.errors[0].code)
    return await reply.type('application/json').send(result.body)
  }
  if (isRecyclingStream(result.body)) return await sendRecycling(reply, result.body)
  return await reply.send(result.body)
}

async function putObject (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, info: BucketInfo, key: string): Promise<void> {
  refuseAwsChunked(request)
  const options = putOptionsFrom(request.headers, info.settings.storageClass)
  refuseOversized(request, MAX_PUT_BYTES, 'put')
  continueBody(request.raw)
  const object = await bucket.put(key, request.raw, options)
  if (object === null) throw new DoorError('PreconditionFailed')
  request.logFields = { bucket: request.logFields?.bucket, key: request.logFields?.key, bytes: object.size }
  return await reply.header('etag', object.httpEtag).send(success(object))
}

async function deleteObject (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, key: string): Promise<void> {
  // The binding's delete takes no conditions; ignoring them would delete what the client meant to keep.
  if (conditionalFrom(request.headers, 'write') !== undefined) throw new DoorError('ConditionalDelete')
  await bucket.delete(key)
  return await reply.code(204).send()
}

async function createUpload (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, info: BucketInfo, key: string): Promise<void> {
  const options: BucketMultipartOptions = {
    httpMetadata: httpMetadataFrom(request.headers),
    customMetadata: customMetadataFrom(request.headers),
    storageClass: storageClassFrom(request.headers) ?? info.settings.storageClass
  }
  addSsecKey(options, request.headers)
  const upload = await bucket.createMultipartUpload(key, options)
  return await reply.send(success({ key: upload.key, uploadId: upload.uploadId }))
}

async function uploadPart (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, key: string): Promise<void> {
  const query = request.query as Record<string, unknown>
  refuseAwsChunked(request)
  const partNumber = partNumberOfQuery(query)
  const upload = bucket.resumeMultipartUpload(key, uploadIdFrom(query))
  const options = partOptionsFrom(request.headers)
  refuseOversized(request, MAX_PART_BYTES, 'uploadPart')
  // The 100 waits for the engine's checks: a part of an upload that does not exist is refused before its body is sent.
  continueOnRead(request.raw)
  const part = await upload.uploadPart(partNumber, request.raw, options)
  // A part stored is its whole body: as long as the Content-Length the parser held it to.
  const length = Number(request.headers['content-length'])
  if (Number.isSafeInteger(length)) request.logFields = { bucket: request.logFields?.bucket, key: request.logFields?.key, bytes: length }
  return await reply.header('etag', `"${part.etag}"`).send(success(part))
}

/**
 * A completion judges the request's conditional headers against the key's
 * current object (the engine decides, in its commit: a failed one is 412
 * and leaves the upload to complete again), and an SSE-C key, when sent,
 * against the upload's (the engine refuses one the upload was not created
 * with); the object's encryption is the upload's.
 */
async function completeUpload (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, key: string): Promise<void> {
  const options: BucketCompleteOptions = {}
  const onlyIf = conditionalFrom(request.headers, 'write')
  if (onlyIf !== undefined) options.onlyIf = onlyIf
  addSsecKey(options, request.headers)
  const upload = bucket.resumeMultipartUpload(key, uploadIdFrom(request.query as Record<string, unknown>))
  const object = await upload.complete(partsFrom(await readJsonBody(request.raw)), options)
  if (object === null) throw new DoorError('PreconditionFailed')
  return await reply.header('etag', object.httpEtag).send(success(object))
}

async function abortUpload (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, key: string): Promise<void> {
  await bucket.resumeMultipartUpload(key, uploadIdFrom(request.query as Record<string, unknown>)).abort()
  return await reply.code(204).send()
}

export async function handleObject (scope: RouteScope, request: FastifyRequest, reply: FastifyReply, name: string, key: string): Promise<void> {
  const query = request.query as Record<string, unknown>
  const method = request.method
  if (method === 'OPTIONS') return await preflight(scope, request, reply, name, false)
  if (method === 'GET' || method === 'HEAD') {
    const { bucket, publicRead } = await enter(scope, request, reply, name, 'read', 'object:read', key)
    if (publicRead && !await holdsCredentials(scope.policy, request.headers.authorization)) refuseResponseOverrides(query, 'An anonymous read of a public bucket')
    return await sendRead(request, reply, bucket, key, false)
  }
  if (!['PUT', 'POST', 'DELETE'].includes(method)) return await refuseMethod(scope, request, reply, name, objectMethods, key)

  const action = queryValue(query, 'action')
  const { bucket, info } = await enter(scope, request, reply, name, 'write', 'object:write', key)
  switch (`${method} ${action ?? ''}`) {
    case 'PUT ': return await putObject(request, reply, bucket, info, key)
    case 'DELETE ': return await deleteObject(request, reply, bucket, key)
    case 'POST mpu-create': return await createUpload(request, reply, bucket, info, key)
    case 'PUT mpu-uploadpart': return await uploadPart(request, reply, bucket, key)
    case 'POST mpu-complete': return await completeUpload(request, reply, bucket, key)
    case 'DELETE mpu-abort': return await abortUpload(request, reply, bucket, key)
    default:
      throw new DoorError('InvalidAction', `"${method}" with action "${action ?? ''}" is not a route. Actions: PUT (none), PUT mpu-uploadpart, POST mpu-create, POST mpu-complete, DELETE (none), DELETE mpu-abort.`)
  }
}
