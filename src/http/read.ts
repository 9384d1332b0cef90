/**
 * GET and HEAD of an object: (bucket, key, request) → {status, headers, body}.
 * The route only hands the result to the reply.
 *
 * RFC 9110 order: a failed If-Match / If-Unmodified-Since answers 412, then a
 * matching If-None-Match / not-newer If-Modified-Since answers 304, and only
 * then is Range looked at. GET is one binding call, `get(key, {onlyIf, range})`:
 * a failed condition comes back as metadata without a body, and the verdict
 * of `evaluateConditional` tells 412 from 304. Only an unsatisfiable range
 * costs a second call (`head`), to learn the size that the 416's
 * Content-Range must carry and to keep 412/304 ahead of 416.
 *
 * Ranges: one `bytes=` range of the forms `a-b`, `a-`, `-n`; a range running
 * past the end is clamped, as is a suffix longer than the object. A header
 * that is not a valid single byte range (several ranges, another unit) is
 * ignored and the whole object is answered with 200, as RFC 9110 allows.
 * Any range on an empty object is 416. `If-Range` is ignored: answering the
 * range for a changed object can only happen when the client also sends no
 * validator, which curl and browsers do not do.
 */
import type { Readable } from 'node:stream'
import type { IncomingHttpHeaders } from 'node:http'
import {
  bodyBuffer, bodyStream, evaluateConditional, parseConditional, parseRangeHeader, resolveRange, BucketErrors, isBucketError
} from '../bucket/index.js'
import type { Bucket, BucketObject, BucketObjectBody, BucketRange } from '../bucket/index.js'
import { DoorError, DoorErrors, failure, type Envelope } from './errors.js'
import { conditionalFrom, contentMd5, objectHeaders, responseOverridesFrom } from './object-headers.js'

export interface ReadResult {
  status: number
  headers: Record<string, string>
  /** The bytes (GET 200/206: whole for small objects, else a stream), an error envelope (412/416), or nothing (HEAD, 304). */
  body?: Buffer | Readable | Envelope<null>
}

/** Headers a 304 keeps (RFC 9110 section 15.4.5). */
function notModifiedHeaders (object: BucketObject): Record<string, string> {
  const all = objectHeaders(object)
  const kept: Record<string, string> = {}
  for (const name of ['etag', 'last-modified', 'cache-control', 'expires']) {
    if (all[name] !== undefined) kept[name] = all[name]
  }
  return kept
}

function conditionFailed (object: BucketObject, onlyIf: Headers): ReadResult {
  const verdict = evaluateConditional(parseConditional(onlyIf), object)
  if (verdict === 'not-modified') return { status: 304, headers: notModifiedHeaders(object) }
  const { code, status, message } = DoorErrors.PreconditionFailed
  return { status, headers: { etag: object.httpEtag }, body: failure(code, message) }
}

function unsatisfiable (size: number): ReadResult {
  const { code, message } = BucketErrors.InvalidRange
  return { status: 416, headers: { 'content-range': `bytes */${size}` }, body: failure(code, `get: ${message} (${code})`) }
}

/** The 200/206 headers of `object` when `served` (offset, length) of it is sent. */
export function servedHeaders (
  object: BucketObject,
  served: { offset: number, length: number } | null,
  overrides: Record<string, string>
): { status: number, headers: Record<string, string> } {
  const headers = objectHeaders(object, overrides)
  if (served === null) {
    const md5 = contentMd5(object)
    if (md5 !== undefined) headers['content-md5'] = md5
    headers['content-length'] = String(object.size)
    return { status: 200, headers }
  }
  headers['content-length'] = String(served.length)
  headers['content-range'] = `bytes ${served.offset}-${served.offset + served.length - 1}/${object.size}`
  return { status: 206, headers }
}

function requestedRange (headers: IncomingHttpHeaders): BucketRange | null {
  const value = headers.range
  return value === undefined ? null : parseRangeHeader(value)
}

export async function readObject (
  bucket: Bucket,
  key: string,
  method: 'GET' | 'HEAD',
  headers: IncomingHttpHeaders,
  query: Record<string, unknown>
): Promise<ReadResult> {
  const onlyIf = conditionalFrom(headers)
  const range = requestedRange(headers)
  const overrides = responseOverridesFrom(query)

  if (method === 'HEAD') {
    const object = await bucket.head(key)
    if (object === null) throw new DoorError('NoSuchKey')
    if (onlyIf !== undefined && evaluateConditional(parseConditional(onlyIf), object) !== 'pass') {
      return conditionFailed(object, onlyIf)
    }
    if (range === null) return servedHeaders(object, null, overrides)
    if (object.size === 0) return unsatisfiable(0)
    try {
      return servedHeaders(object, resolveRange(range, object.size), overrides)
    } catch (err) {
      if (isBucketError(err) && err.code === BucketErrors.InvalidRange.code) return unsatisfiable(object.size)
      throw err
    }
  }

  let object: BucketObject | BucketObjectBody | null
  try {
    object = await bucket.get(key, { onlyIf, range: range ?? undefined })
  } catch (err) {
    if (!(isBucketError(err) && err.code === BucketErrors.InvalidRange.code)) throw err
    const current = await bucket.head(key)
    if (current === null) throw new DoorError('NoSuchKey')
    if (onlyIf !== undefined && evaluateConditional(parseConditional(onlyIf), current) !== 'pass') {
      return conditionFailed(current, onlyIf)
    }
    return unsatisfiable(current.size)
  }
  if (object === null) throw new DoorError('NoSuchKey')
  if (!('body' in object)) return conditionFailed(object, onlyIf ?? new Headers())
  if (range !== null && object.size === 0) {
    bodyStream(object).destroy()
    return unsatisfiable(0)
  }
  // Small objects come back already read: one write, no stream machinery.
  const body = bodyBuffer(object) ?? bodyStream(object)
  if (range === null) return { ...servedHeaders(object, null, overrides), body }
  const served = object.range ?? resolveRange(range, object.size)
  return { ...servedHeaders(object, served, overrides), body }
}
