/**
 * Ranges: what the binding accepts (`{offset, length}`, `{offset}`,
 * `{length}`, `{suffix}` or a `Range` header) and how a range is resolved
 * against an object's size.
 *
 * As the hosted service does: an offset at or past the end, a length of 0 and
 * a suffix of 0 are unsatisfiable (10039); a length or suffix reaching past
 * the end is clamped. A `Range` header that is invalid, asks for several
 * ranges or cannot be satisfied is ignored and the whole object is served:
 * the header form is best effort, the object form is strict.
 *
 * The object form's numbers must be whole: a fractional offset, length or
 * suffix is a RangeError, as in the hosted runtime. An empty object
 * (`range: {}`) asks for nothing in particular and gets the whole object.
 */
import { ArgumentRangeError as RangeError, ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'
import type { BucketRange } from './types.js'

export interface ResolvedRange {
  offset: number
  length: number
}

/**
 * Parses a `Range` header value of a single byte range. Returns null for
 * anything else (invalid syntax, other units, several ranges).
 */
export function parseRangeHeader (value: string | null | undefined): BucketRange | null {
  if (value == null) return null
  // No two runs of white space meet without a digit or `-` between them, so a value that does not
  // match fails in one pass: `=\s*(\d*)\s*-` split 16 KiB of spaces every way there is (1.5 s).
  const match = /^bytes\s*=\s*(?:(\d+)\s*)?-\s*(\d*)$/i.exec(value.trim())
  if (match === null) return null
  const first = match[1] ?? ''
  const last = match[2]
  if (first === '' && last === '') return null
  if (first === '') return { suffix: headerNumber(last) }
  const offset = headerNumber(first)
  if (last === '') return { offset }
  if (BigInt(last) < BigInt(first)) return null
  return { offset, length: headerNumber(last) - offset + 1 }
}

/**
 * A header's digits as a number no object size can reach: any count of
 * digits is allowed, and a value past Number.MAX_SAFE_INTEGER (which is past
 * every object's end) is held there rather than becoming Infinity, so that
 * an offset that large is unsatisfiable and an end that large is clamped.
 */
function headerNumber (digits: string): number {
  const n = Number(digits)
  return n > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : n
}

function rangeNumber (method: string, name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined
  const n = typeof value === 'number' ? value : Number(value)
  if (typeof value === 'object' || typeof value === 'boolean' || Number.isNaN(n)) {
    throw new TypeError(`${method}: range ${name} must be a number.`)
  }
  if (n < 0) throw new RangeError(`${method}: range ${name} must not be negative.`)
  if (!Number.isFinite(n)) throw new RangeError(`${method}: range ${name} must be finite.`)
  if (!Number.isInteger(n)) throw new RangeError(`${method}: range ${name} must be a whole number (got ${n}).`)
  return n
}

/** Checks the shape of a `BucketRange` given as an object; null for `{}` (the whole object). */
export function validateRange (method: string, range: unknown): BucketRange | null {
  if (range === null || typeof range !== 'object') {
    throw new TypeError(`${method}: range must be an object with offset, length or suffix.`)
  }
  const r = range as Record<string, unknown>
  const offset = rangeNumber(method, 'offset', r.offset)
  const length = rangeNumber(method, 'length', r.length)
  const suffix = rangeNumber(method, 'suffix', r.suffix)
  if (suffix !== undefined) {
    if (offset !== undefined || length !== undefined) {
      throw new TypeError(`${method}: range suffix cannot be combined with offset or length.`)
    }
    return { suffix }
  }
  if (offset === undefined && length === undefined) return null
  if (offset === undefined) return { length: length as number }
  return length === undefined ? { offset } : { offset, length }
}

/** Resolves a validated range against an object's size; throws 10039 when unsatisfiable. */
export function resolveRange (range: BucketRange, size: number, method = 'get'): ResolvedRange {
  if ('suffix' in range) {
    if (range.suffix === 0 || size === 0) throw new BucketError('InvalidRange', method)
    const length = Math.min(range.suffix, size)
    return { offset: size - length, length }
  }
  const offset = range.offset ?? 0
  if (offset >= size || range.length === 0) throw new BucketError('InvalidRange', method)
  const length = range.length === undefined ? size - offset : Math.min(range.length, size - offset)
  return { offset, length }
}
