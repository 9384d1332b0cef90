/**
 * GET and HEAD of an object: (bucket, key, request) → {status, headers, body}.
 * The route only hands the result to the reply.
 *
 * The decision is the engine's (`bucket.read`, src/bucket/read.ts): it
 * judges the conditions in RFC 9110 order (412, then 304) and only then the
 * range, and answers one outcome, which this module translates into a
 * status, headers and a body. Nothing here judges a condition or a range.
 *
 * Ranges: one `bytes=` range of the forms `a-b`, `a-`, `-n`; a range running
 * past the end is clamped, as is a suffix longer than the object. A header
 * that is not a valid single byte range (several ranges, another unit) is
 * ignored and the whole object is answered with 200, as RFC 9110 allows.
 * Any range on an empty object is 416. An `If-Range` other than the
 * object's ETag (which a browser resuming a download sends) sets the range
 * aside, and the whole object is answered with 200, never the rest of
 * another version (the engine says why a date never holds).
 *
 * An object encrypted with a customer-provided key (SSE-C) is served only
 * to a request carrying S3's three key headers
 * (`x-amz-server-side-encryption-customer-algorithm`, `-key`, `-key-MD5`):
 * without them 400 (10910), with another key 403 (10911).
 */
import type { Readable } from 'node:stream'
import type { IncomingHttpHeaders } from 'node:http'
import { BucketErrors } from '../bucket/index.js'
import { responseOverridesFrom, unsendableOverride } from '../doors/request-metadata.js'
import type { Bucket, BucketObject, BucketReadOptions, BucketReadOutcome } from '../bucket/index.js'
import { VersionHeaders } from '../doors/version-headers.js'
import { DoorError, DoorErrors, failure, type GatewayEnvelope } from './errors.js'
import { conditionalFrom, contentMd5, encodeHeaderValue, objectHeaders, ssecKeyFrom } from './object-headers.js'

export interface ReadResult {
  status: number
  headers: Record<string, string>
  /** The bytes (GET 200/206: whole for small objects, else a stream), an error envelope (412/416), or nothing (HEAD, 304). */
  body?: Buffer | Readable | GatewayEnvelope<null>
}

/** Headers a 304 keeps (RFC 9110 section 15.4.5): those of `objectHeaders` it names, made alone. */
function notModifiedHeaders (object: BucketObject): Record<string, string> {
  const kept: Record<string, string> = { etag: object.httpEtag, 'last-modified': object.uploaded.toUTCString() }
  const { cacheControl, cacheExpiry } = object.httpMetadata
  const control = cacheControl === undefined ? null : encodeHeaderValue(cacheControl)
  if (control !== null) kept['cache-control'] = control
  if (cacheExpiry !== undefined) kept.expires = cacheExpiry.toUTCString()
  return kept
}

function preconditionFailed (object: BucketObject): ReadResult {
  const { code, status, message } = DoorErrors.PreconditionFailed
  return { status, headers: { etag: object.httpEtag }, body: failure(code, message) }
}

function unsatisfiable (size: number): ReadResult {
  const { code, message } = BucketErrors.InvalidRange
  return { status: 416, headers: { 'content-range': `bytes */${size}` }, body: failure(code, `get: ${message} (${code})`) }
}

/** The 200 headers of whole reads without overrides (the route adds its own to a copy). */
const wholeHeaders = new VersionHeaders()

/** The 200/206 headers of `object` when `served` (offset, length) of it is sent. */
export function servedHeaders (
  object: BucketObject,
  served: { offset: number, length: number } | null,
  overrides: Record<string, string>
): { status: number, headers: Record<string, string> } {
  const cacheable = served === null && isEmpty(overrides)
  const known = cacheable ? wholeHeaders.copy(object) : undefined
  if (known !== undefined) return { status: 200, headers: known }
  const headers = objectHeaders(object, overrides)
  if (served === null) {
    const md5 = contentMd5(object)
    if (md5 !== undefined) headers['content-md5'] = md5
    headers['content-length'] = String(object.size)
    if (cacheable) wholeHeaders.keep(object, headers)
    return { status: 200, headers }
  }
  headers['content-length'] = String(served.length)
  headers['content-range'] = `bytes ${served.offset}-${served.offset + served.length - 1}/${object.size}`
  return { status: 206, headers }
}

function isEmpty (record: Record<string, string>): boolean {
  for (const _ in record) return false
  return true
}

/** The `response-*` overrides; one given twice is a query mistake (40004), not silently dropped. */
function overridesOf (query: Record<string, unknown>): Record<string, string> {
  for (const name in query) {
    if (name.startsWith('response-') && Array.isArray(query[name])) throw new DoorError('InvalidQuery', `"${name}" given more than once.`)
  }
  const unsendable = unsendableOverride(query)
  if (unsendable !== undefined) throw new DoorError('InvalidQuery', `"${unsendable}" holds a control character, which no header can carry.`)
  return responseOverridesFrom(query)
}

/** The engine's read options of a GET or HEAD with these headers. */
function readOptions (method: 'GET' | 'HEAD', headers: IncomingHttpHeaders): BucketReadOptions {
  // An object encrypted with a customer key (SSE-C) is read only with S3's key headers; the engine refuses it otherwise.
  const ssecKey = ssecKeyFrom(headers)
  const ifRange = headers['if-range']
  return {
    onlyIf: conditionalFrom(headers, 'read'),
    range: headers.range,
    body: method === 'GET',
    ...(typeof ifRange === 'string' ? { ifRange } : {}),
    ...(ssecKey === undefined ? {} : { ssecKey })
  }
}

/** The answer to the engine's outcome. */
function resultOf (outcome: BucketReadOutcome, query: Record<string, unknown>): ReadResult {
  switch (outcome.status) {
    case 'not-found':
      throw new DoorError('NoSuchKey')
    case 'precondition-failed':
      return preconditionFailed(outcome.object)
    case 'not-modified':
      return { status: 304, headers: notModifiedHeaders(outcome.object) }
    case 'range-not-satisfiable':
      return unsatisfiable(outcome.object.size)
    default: {
      const answer = servedHeaders(outcome.object, outcome.range, overridesOf(query))
      return outcome.body === null ? answer : { status: answer.status, headers: answer.headers, body: outcome.body }
    }
  }
}

export async function readObject (
  bucket: Bucket,
  key: string,
  method: 'GET' | 'HEAD',
  headers: IncomingHttpHeaders,
  query: Record<string, unknown>
): Promise<ReadResult> {
  return resultOf(await bucket.read(key, readOptions(method, headers)), query)
}

/** `readObject` without a query, answered at once when the engine decides it so (`readNow`); undefined otherwise. */
export function readObjectNow (bucket: Bucket, key: string, method: 'GET' | 'HEAD', headers: IncomingHttpHeaders): ReadResult | undefined {
  const outcome = bucket.readNow(key, readOptions(method, headers))
  return outcome === undefined ? undefined : resultOf(outcome, {})
}
