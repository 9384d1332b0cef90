/**
 * The read decision, once for every door: (stored object, conditions,
 * range) → one outcome. Conditions are judged first (a failed If-Match or
 * If-Unmodified-Since is `precondition-failed`, then a matching
 * If-None-Match or a not-newer If-Modified-Since is `not-modified`), and only
 * then the range (RFC 9110 sections 13.2.2 and 14.2). The HTTP door turns
 * the outcome into 404/412/304/416/200/206, an S3 door into its XML, a
 * console into a page; none of them judges a condition or a range again.
 */
import { evaluateConditional, parseConditional } from './conditional.js'
import { isBucketError } from './errors.js'
import { ObjectMetadata } from './object.js'
import type { BucketStore, StoredObject } from './port.js'
import { parseRangeHeader, resolveRange, validateRange, type ResolvedRange } from './range.js'
import type { BucketRange, BucketReadOptions, BucketReadOutcome } from './types.js'

/** The range a read asks for: a header value (lenient), an object (strict), or none. */
function requestedRange (range: unknown): BucketRange | null {
  if (range === undefined || range === null) return null
  if (typeof range === 'string') return parseRangeHeader(range)
  return validateRange('read', range)
}

function conditionVerdict (onlyIf: unknown, record: StoredObject): 'pass' | 'precondition-failed' | 'not-modified' {
  const conditional = parseConditional(onlyIf as BucketReadOptions['onlyIf'], 'read')
  return evaluateConditional(conditional, { etag: record.etag, uploaded: new Date(record.uploaded) })
}

/** Decides the read of `id` in `store` (the engine has validated the key). */
export async function decideRead (store: BucketStore, id: string, options: BucketReadOptions): Promise<BucketReadOutcome> {
  const range = requestedRange(options.range)
  const withBody = options.body !== false
  // Conditions are parsed before the store is asked, so a malformed one costs no read.
  parseConditional(options.onlyIf, 'read')
  const reader = withBody ? await store.open(id) : null
  const record = withBody ? reader?.object ?? null : await store.head(id)
  if (record === null) return { status: 'not-found' }
  const verdict = conditionVerdict(options.onlyIf, record)
  if (verdict !== 'pass') {
    await reader?.close()
    return { status: verdict, object: new ObjectMetadata(record) }
  }
  let served: ResolvedRange | null = null
  if (range !== null) {
    try {
      served = resolveRange(range, record.size, 'read')
    } catch (err) {
      if (!isBucketError(err) || err.errorName !== 'InvalidRange') throw err
      await reader?.close()
      return { status: 'range-not-satisfiable', object: new ObjectMetadata(record) }
    }
  }
  const status = served === null ? 'found' : 'partial'
  const object = new ObjectMetadata(record, served ?? undefined)
  if (reader === null) return { status, object, range: served, body: null }
  const { offset, length } = served ?? { offset: 0, length: record.size }
  // Small bodies come back already read (a copy: the store may share its bytes with a cache): one write, no stream.
  const bytes = reader.bytes?.subarray(offset, offset + length)
  return { status, object, range: served, body: bytes !== undefined ? Buffer.from(bytes) : reader.stream(offset, length) }
}
