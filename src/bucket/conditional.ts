/**
 * Conditional operations (`onlyIf`), as a `BucketConditional` or as a
 * `Headers` object carrying If-Match, If-None-Match, If-Modified-Since and
 * If-Unmodified-Since (If-Range is ignored, as the binding documents).
 *
 * Evaluation follows RFC 9110 section 13.2.2 with the hosted service's
 * strictness:
 *   - If-Match compares strongly, If-None-Match weakly; `*` matches any
 *     existing object.
 *   - A passing If-Match makes If-Unmodified-Since irrelevant; a passing
 *     If-None-Match makes If-Modified-Since irrelevant.
 *   - On a missing object, If-Match and If-Modified-Since fail and the others
 *     pass, so `etagDoesNotMatch: "*"` means "create only".
 *   - Dates compare strictly: `uploadedBefore` passes only when the object
 *     was uploaded strictly before it, `uploadedAfter` only strictly after.
 *     Dates from headers have whole seconds, so the upload time is truncated
 *     to the second before comparing (to the Last-Modified a read answers).
 *     Divergence from RFC 9110: in a plain `Headers`, an If-Unmodified-Since
 *     equal to the object's own Last-Modified fails (RFC 9110 section 13.1.4
 *     passes it: the object was not modified after that date), because the
 *     service compares strictly (Cloudflare's simulator of the binding,
 *     adapted from the service's own tests, fails it).
 *   - `httpRequestConditions()` (the Headers a door hands on from a request
 *     it answers: the HTTP routes, the S3 port, the management API) is
 *     judged as RFC 9110 asks instead, as S3 judges it: an
 *     If-Unmodified-Since equal to the Last-Modified holds. An
 *     If-Modified-Since equal to it is "not modified" either way.
 *
 * Argument checks, as the hosted binding makes them:
 *   - in a `BucketConditional`, an etag is compared literally: one wrapped in
 *     double quotes is a TypeError, and `W/"E"` is just a string that no etag
 *     equals; the dates are `Date` objects or numbers of milliseconds since
 *     the epoch (a string, ISO or not, is a TypeError), and an invalid Date
 *     (or NaN) makes its condition fail rather than throw;
 *   - in a `Headers`, an If-Match / If-None-Match holding no quoted etag and
 *     no `*` is an Error ("Invalid ETag in if-match header"); unquoted
 *     elements of a list that has a quoted one are ignored.
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { parseHttpDate } from './http-date.js'

export interface EtagCondition {
  etag: string
  weak: boolean
}

export type EtagList = '*' | EtagCondition[]

export interface ParsedConditional {
  etagMatches?: EtagList // If-Match
  etagDoesNotMatch?: EtagList // If-None-Match
  uploadedBefore?: Date // If-Unmodified-Since
  uploadedAfter?: Date // If-Modified-Since
  /** Times compared in whole seconds (both truncated): dates from headers, or the binding's `onlyIf.secondsGranularity`. */
  secondsGranularity: boolean
  /** An If-Unmodified-Since equal to the (truncated) upload time holds, as RFC 9110 judges it (`httpRequestConditions`). */
  unmodifiedAtSameTime: boolean
}

export type ConditionalOutcome = 'pass' | 'precondition-failed' | 'not-modified'

/** The Headers made by `httpRequestConditions`. */
const judgedAsHttp = new WeakSet<Headers>()

/**
 * Headers (empty unless `init` is given) for the conditional headers of an
 * HTTP request this server answers itself, handed on by a door as `onlyIf`:
 * judged as RFC 9110 asks (an If-Unmodified-Since equal to the object's
 * Last-Modified holds), where other `Headers` are judged as the hosted
 * binding judges them (it fails). Marked rather than made by a subclass: a
 * class extending `Headers` reads that global as this module loads, and the
 * global loads Node's fetch implementation (undici: 2 to 4 MiB of every idle
 * worker) before any request needs it.
 */
export function httpRequestConditions (init?: Record<string, string>): Headers {
  const headers = new Headers(init)
  judgedAsHttp.add(headers)
  return headers
}

/**
 * An If-Match / If-None-Match header of an `onlyIf` Headers that holds no
 * etag: a plain Error in the hosted runtime (no catalogue code), a class of
 * its own here so that a door can tell the client's mistake from a fault.
 */
export class InvalidConditionalHeader extends Error {
  constructor (header: 'if-match' | 'if-none-match') {
    super(`Invalid ETag in ${header} header`)
    this.name = 'Error'
  }
}

/** The header form of `onlyIf`: a list without a single usable etag is refused. */
function strictEtagHeader (value: string | null, header: 'if-match' | 'if-none-match'): EtagList | undefined {
  if (value === null) return undefined
  const list: EtagCondition[] = []
  for (const match of value.matchAll(/(W\/)?"([^"]*)"|[^,\s]+/g)) {
    if (match[2] !== undefined) list.push({ etag: match[2], weak: match[1] !== undefined })
    else if (match[0].includes('*')) return '*' // a wildcard outside quotes overrides the list
  }
  if (list.length === 0) throw new InvalidConditionalHeader(header)
  return list
}

/** A conditional header's date; one that is not an HTTP-date is ignored, as RFC 9110 asks of recipients. */
function headerDate (value: string | null): Date | undefined {
  return value === null ? undefined : parseHttpDate(value)
}

function conditionalEtag (method: string, name: string, value: unknown): EtagList | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new TypeError(`${method}: onlyIf.${name} must be a string.`)
  const trimmed = value.trim()
  if (trimmed === '*') return '*'
  if (trimmed.startsWith('"')) {
    throw new TypeError(`${method}: Conditional ETag should not be wrapped in quotes (${value}).`)
  }
  return [{ etag: trimmed, weak: false }]
}

function conditionalDate (method: string, name: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined
  // A number is milliseconds since the epoch, as the hosted runtime converts it to its date type.
  if (typeof value === 'number') return new Date(value)
  if (!(value instanceof Date)) throw new TypeError(`${method}: onlyIf.${name} must be a Date.`)
  // An invalid Date compares false with every instant, so its condition fails.
  return value
}

function conditionalFlag (method: string, name: string, value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw new TypeError(`${method}: onlyIf.${name} must be a boolean.`)
  return value
}

/** Parses `onlyIf` (a BucketConditional or a Headers object). */
export function parseConditional (onlyIf: unknown, method = 'get'): ParsedConditional {
  if (onlyIf === undefined || onlyIf === null) return { secondsGranularity: false, unmodifiedAtSameTime: false }
  if (onlyIf instanceof Headers) {
    const ifMatch = onlyIf.get('if-match')
    const ifNoneMatch = onlyIf.get('if-none-match')
    return {
      etagMatches: strictEtagHeader(ifMatch, 'if-match'),
      etagDoesNotMatch: strictEtagHeader(ifNoneMatch, 'if-none-match'),
      uploadedBefore: headerDate(onlyIf.get('if-unmodified-since')),
      uploadedAfter: headerDate(onlyIf.get('if-modified-since')),
      secondsGranularity: true,
      unmodifiedAtSameTime: judgedAsHttp.has(onlyIf)
    }
  }
  if (typeof onlyIf !== 'object') throw new TypeError(`${method}: onlyIf must be an object or a Headers.`)
  const c = onlyIf as Record<string, unknown>
  return {
    etagMatches: conditionalEtag(method, 'etagMatches', c.etagMatches),
    etagDoesNotMatch: conditionalEtag(method, 'etagDoesNotMatch', c.etagDoesNotMatch),
    uploadedBefore: conditionalDate(method, 'uploadedBefore', c.uploadedBefore),
    uploadedAfter: conditionalDate(method, 'uploadedAfter', c.uploadedAfter),
    secondsGranularity: conditionalFlag(method, 'secondsGranularity', c.secondsGranularity),
    unmodifiedAtSameTime: false
  }
}

/** True when the conditional has nothing to check. */
export function isUnconditional (c: ParsedConditional): boolean {
  return c.etagMatches === undefined && c.etagDoesNotMatch === undefined &&
    c.uploadedBefore === undefined && c.uploadedAfter === undefined
}

function etagListMatches (list: EtagList, etag: string, strong: boolean): boolean {
  if (list === '*') return true
  return list.some(c => c.etag === etag && !(strong && c.weak))
}

/** A time in milliseconds as the conditional compares it: whole seconds when it says so. An invalid Date stays NaN, and fails its condition. */
function compared (c: ParsedConditional, ms: number): number {
  return c.secondsGranularity ? Math.floor(ms / 1000) * 1000 : ms
}

/** Whether an object uploaded at `uploadedMs` passes `uploadedBefore`: strictly before it, or (RFC 9110) not after it. */
function unmodifiedSince (c: ParsedConditional, uploadedMs: number, before: Date): boolean {
  const limit = compared(c, before.getTime())
  return c.unmodifiedAtSameTime ? uploadedMs <= limit : uploadedMs < limit
}

/**
 * Judges a conditional against the current object (null when missing), in
 * RFC 9110 order: If-Match, If-Unmodified-Since (412), then If-None-Match,
 * If-Modified-Since (304 for reads; the caller treats it as 412 for writes).
 */
export function evaluateConditional (c: ParsedConditional, object: { etag: string, uploaded: Date } | null): ConditionalOutcome {
  if (object === null) {
    if (c.etagMatches !== undefined) return 'precondition-failed'
    if (c.uploadedAfter !== undefined) return 'not-modified'
    return 'pass'
  }
  const uploadedMs = compared(c, object.uploaded.getTime())

  if (c.etagMatches !== undefined) {
    if (!etagListMatches(c.etagMatches, object.etag, true)) return 'precondition-failed'
  } else if (c.uploadedBefore !== undefined && !unmodifiedSince(c, uploadedMs, c.uploadedBefore)) {
    return 'precondition-failed'
  }
  if (c.etagDoesNotMatch !== undefined) {
    if (etagListMatches(c.etagDoesNotMatch, object.etag, false)) return 'not-modified'
  } else if (c.uploadedAfter !== undefined && !(uploadedMs > compared(c, c.uploadedAfter.getTime()))) {
    return 'not-modified'
  }
  return 'pass'
}

/** `evaluateConditional` against a stored record (its upload time in milliseconds), or null for none. */
export function judgeRecord (c: ParsedConditional, record: { etag: string, uploaded: number } | null): ConditionalOutcome {
  return evaluateConditional(c, record === null ? null : { etag: record.etag, uploaded: new Date(record.uploaded) })
}
