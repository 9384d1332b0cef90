/**
 * The read decision, once for every door: (stored object, conditions,
 * range) → one outcome. Conditions are judged first (a failed If-Match or
 * If-Unmodified-Since is `precondition-failed`, then a matching
 * If-None-Match or a not-newer If-Modified-Since is `not-modified`), and only
 * then the range (RFC 9110 sections 13.2.2 and 14.2), which an `If-Range`
 * naming another version of the object sets aside. The HTTP door turns
 * the outcome into 404/412/304/416/200/206, an S3 door into its XML, a
 * console into a page; none of them judges a condition or a range again.
 *
 * `partNumber` (S3's) is a range the engine derives from the object's part
 * layout: part N of a multipart object is `partSize` bytes from
 * `(N - 1) * partSize` (the last part, the rest); an object put whole has
 * one part, all of it, served as a range over the whole object (as S3
 * answers it: 206 with Content-Range), or as a whole read when it is
 * empty. A part past the last is
 * `range-not-satisfiable`. For objects completed before part layouts were
 * kept, the store derives the layout from the part bodies it keeps
 * (`derivePartLayout`, fs and PostgreSQL); where it cannot, they cannot be
 * read by part (an argument error says so). A part read carries
 * the part's checksum where S3 answers one (`partChecksum`).
 */
import { evaluateConditional, parseConditional, type ParsedConditional } from './conditional.js'
import { ArgumentRangeError as RangeError, ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { isBucketError } from './errors.js'
import { isMultipartRecord } from './multipart.js'
import { MAX_PART_NUMBER } from './limits.js'
import { ObjectMetadata } from './object.js'
import type { BucketStore, ObjectReader, StoredObject } from './port.js'
import { parseRangeHeader, resolveRange, validateRange, type ResolvedRange } from './range.js'
import { withFields } from './records.js'
import type { BucketRange, BucketReadOptions, BucketReadOutcome, BucketReadServed } from './types.js'
import { crcAlgorithms, digestBytes } from './checksums.js'
import { judgeSsecKey, parseSsecKey, readerWithKey } from './ssec.js'

/** The range a read asks for: a header value (lenient), an object (strict), or none. */
function requestedRange (range: unknown): BucketRange | null {
  if (range === undefined || range === null) return null
  if (typeof range === 'string') return parseRangeHeader(range)
  return validateRange('read', range)
}

/**
 * Whether an `If-Range` value names `record` as stored: only its ETag,
 * compared strongly, does. A date never does, though it may equal the
 * Last-Modified: two versions written within one second share that date
 * (RFC 9110 section 8.8.2.2 makes such a date a weak validator), and the
 * range of the one would be spliced onto the client's copy of the other,
 * where answering the whole object costs only bytes. Every answer carries
 * the ETag, which is what browsers send back.
 */
function ifRangeHolds (value: string, record: StoredObject): boolean {
  return value.trim() === `"${record.etag}"`
}

function conditionVerdict (conditional: ParsedConditional, record: StoredObject): 'pass' | 'precondition-failed' | 'not-modified' {
  return evaluateConditional(conditional, { etag: record.etag, uploaded: new Date(record.uploaded) })
}

/** The part number a read asks for, or undefined. */
function requestedPart (options: BucketReadOptions): number | undefined {
  const n = options.partNumber
  if (n === undefined) return undefined
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_PART_NUMBER) {
    throw new RangeError(`read: partNumber must be an integer from 1 to ${MAX_PART_NUMBER} (got ${String(n)}).`)
  }
  if (options.range !== undefined && options.range !== null) throw new TypeError('read: give a range or a partNumber, not both.')
  return n
}

/**
 * The checksum S3 answers for part `n` of a multipart object: the part's own
 * for a COMPOSITE object (kept in its layout), the object's for the only
 * part of a FULL_OBJECT one; none otherwise (a FULL_OBJECT object of several
 * parts, or one completed before part checksums were kept).
 */
function partChecksum (record: StoredObject, n: number): BucketReadServed['partChecksum'] {
  const layout = record.checksums.multipart
  if (layout === undefined) return undefined
  const composite = layout.composite
  if (composite !== undefined) {
    if (layout.partChecksums === undefined) return undefined
    const width = digestBytes[composite.algorithm]
    const value = Buffer.from(layout.partChecksums, 'base64').subarray((n - 1) * width, n * width)
    return value.length === width ? { algorithm: composite.algorithm, value, type: 'COMPOSITE' } : undefined
  }
  if (layout.parts !== 1) return undefined
  const algorithm = crcAlgorithms.find(a => record.checksums[a] !== undefined)
  return algorithm === undefined ? undefined : { algorithm, value: Buffer.from(record.checksums[algorithm] as string, 'hex'), type: 'FULL_OBJECT' }
}

/** Part `n` of `record` as a range (null: the whole object), or 'past-end'; and a multipart object's part count. */
function partRange (record: StoredObject, n: number): { range: ResolvedRange | null | 'past-end', parts?: number } {
  const layout = record.checksums.multipart
  if (layout === undefined) {
    if (isMultipartRecord(record)) throw new RangeError('read: this multipart object was completed without its part layout; it cannot be read by part.')
    // S3 answers part 1 of an object put whole as a range over all of it (206, Content-Range); an empty one has no range.
    if (n !== 1) return { range: 'past-end' }
    return { range: record.size === 0 ? null : { offset: 0, length: record.size } }
  }
  if (n > layout.parts) return { range: 'past-end', parts: layout.parts }
  const offset = (n - 1) * layout.partSize
  const length = n < layout.parts ? layout.partSize : record.size - offset
  // As for an object put whole: an empty object (its one part empty) has no range, and is read whole.
  return { range: record.size === 0 ? null : { offset, length }, parts: layout.parts }
}

/** `record` with the part layout its store derives from its part bodies, when it can. */
async function withDerivedLayout (store: BucketStore, id: string, record: StoredObject): Promise<StoredObject> {
  const layout = await store.derivePartLayout?.(id, record.version) ?? null
  return layout === null ? record : withFields(record, { checksums: Object.assign({}, record.checksums, { multipart: layout }) })
}

/** The range of `record` a read asking `range` (not a part) is served: null for the whole object (none asked, or an `If-Range` naming another version), or 'unsatisfiable'. */
function rangeServed (range: BucketRange | null, ifRange: unknown, record: StoredObject): ResolvedRange | null | 'unsatisfiable' {
  if (range === null || (typeof ifRange === 'string' && !ifRangeHolds(ifRange, record))) return null
  try {
    return resolveRange(range, record.size, 'read')
  } catch (err) {
    if (!isBucketError(err) || err.errorName !== 'InvalidRange') throw err
    return 'unsatisfiable'
  }
}

/** A read of `record` whose conditions passed, serving `served` of it (null: all) with its bytes from `reader` (none for a HEAD). */
function servedOutcome (record: StoredObject, reader: ObjectReader | null, served: ResolvedRange | null): BucketReadServed {
  const object = new ObjectMetadata(record, served ?? undefined)
  let body: BucketReadServed['body'] = null
  if (reader !== null) {
    const { offset, length } = served ?? { offset: 0, length: record.size }
    // Small bodies come back already read (a copy: the store may share its bytes with a cache): one write, no stream.
    const bytes = reader.bytes?.subarray(offset, offset + length)
    body = bytes !== undefined ? Buffer.from(bytes) : reader.stream(offset, length)
  }
  return { status: served === null ? 'found' : 'partial', object, range: served, body }
}

/**
 * `decideRead` decided at once, in the turn the read was asked: when the
 * store holds the object's row and bytes (`openNow`) and the read asks for
 * its body, with no part and no SSE-C key. Undefined otherwise (an SSE-C
 * object too): then `decideRead` decides. A door answering plain reads
 * beside its framework (doors/reads-beside.ts) saves the turns of the
 * event loop an awaited read costs.
 */
export function decideReadNow (store: BucketStore, id: string, options: BucketReadOptions): BucketReadOutcome | undefined {
  if (store.openNow === undefined || options.body === false || options.partNumber !== undefined || options.ssecKey !== undefined) return undefined
  const range = requestedRange(options.range)
  const conditional = parseConditional(options.onlyIf, 'read')
  const reader = store.openNow(id)
  if (reader === undefined) return undefined
  if (reader === null) return { status: 'not-found' }
  const record = reader.object
  if (record.checksums.ssec !== undefined) return undefined
  const verdict = conditionVerdict(conditional, record)
  if (verdict !== 'pass') return { status: verdict, object: new ObjectMetadata(record) }
  const served = rangeServed(range, options.ifRange, record)
  if (served === 'unsatisfiable') return { status: 'range-not-satisfiable', object: new ObjectMetadata(record) }
  return servedOutcome(record, reader, served)
}

/** Decides the read of `id` in `store` (the engine has validated the key). */
export async function decideRead (store: BucketStore, id: string, options: BucketReadOptions): Promise<BucketReadOutcome> {
  const partNumber = requestedPart(options)
  const range = requestedRange(options.range)
  const withBody = options.body !== false
  // Conditions are parsed before the store is asked, so a malformed one costs no read.
  const conditional = parseConditional(options.onlyIf, 'read')
  const ssecKey = parseSsecKey('read', options.ssecKey)
  const opened = withBody ? await store.open(id) : null
  const found = withBody ? opened?.object ?? null : await store.head(id)
  if (found === null) return { status: 'not-found' }
  // The key is judged before the conditions, as S3 refuses a read of an SSE-C object without its key whatever it asks.
  const reader = opened === null ? null : await readerWithKey('read', opened, ssecKey)
  if (opened === null) judgeSsecKey('read', found.checksums.ssec, ssecKey)
  const verdict = conditionVerdict(conditional, found)
  if (verdict !== 'pass') {
    await reader?.close()
    return { status: verdict, object: new ObjectMetadata(found) }
  }
  // A multipart object completed before records kept part layouts: the store may derive it from its part bodies.
  const record = partNumber !== undefined && found.checksums.multipart === undefined && isMultipartRecord(found) && store.derivePartLayout !== undefined
    ? await withDerivedLayout(store, id, found).catch(async (err: unknown) => { await reader?.close(); throw err })
    : found
  let served: ResolvedRange | null
  let partsCount: number | undefined
  let checksumOfPart: BucketReadServed['partChecksum']
  if (partNumber !== undefined) {
    let part: ReturnType<typeof partRange>
    try {
      part = partRange(record, partNumber)
    } catch (err) {
      await reader?.close()
      throw err
    }
    partsCount = part.parts
    if (part.range === 'past-end') {
      await reader?.close()
      return { status: 'range-not-satisfiable', object: new ObjectMetadata(record) }
    }
    served = part.range
    checksumOfPart = partChecksum(record, partNumber)
  } else {
    const resolved = rangeServed(range, options.ifRange, record)
    if (resolved === 'unsatisfiable') {
      await reader?.close()
      return { status: 'range-not-satisfiable', object: new ObjectMetadata(record) }
    }
    served = resolved
  }
  const outcome = servedOutcome(record, reader, served)
  if (partsCount !== undefined) outcome.partsCount = partsCount
  if (checksumOfPart !== undefined) outcome.partChecksum = checksumOfPart
  return outcome
}
