/**
 * Rules of multipart uploads that need no engine state: the part sizes a
 * completion accepts, and the listings of uploads in progress and of their
 * parts. The listings go beyond the binding (S3's ListMultipartUploads and
 * ListParts need them): uploads come in the UTF-8 byte order of their keys,
 * then by upload id; parts by number; pages of 1 to 1,000.
 *
 * The completed object's record: its `md5-of-md5s-N` ETag, its part layout
 * (for reads of one part), and, when every chosen part was uploaded with a
 * checksum of one algorithm, the object's checksum made from theirs as S3
 * makes it: COMPOSITE (`<algorithm over the part checksums>-N`, S3's default
 * for SHA-1, SHA-256, CRC32 and CRC32C) or FULL_OBJECT (the CRC of the whole
 * object, combined from the parts' CRCs; the only form for CRC64NVME).
 *
 * An upload created with a checksum algorithm (and type) keeps them, and
 * its parts and completion are held to them as S3 holds them; a COMPOSITE
 * object keeps its parts' checksums in its layout, for reads of one part.
 */
import { createHash } from 'node:crypto'
import { combineCrcs, compositeOf, digestBytes, hashAlgorithms, isCrc, type HashAlgorithm } from './checksums.js'
import { ArgumentRangeError as RangeError, ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError, UploadChecksumError } from './errors.js'
import { listText } from './keys.js'
import { MAX_UPLOAD_PAGE } from './limits.js'
import { judgeSsecKey, parseSsecKey, type SsecKey } from './ssec.js'
import { ObjectMetadata } from './object.js'
import { checksumsHex } from './metadata.js'
import type { MultipartLayout, StoredChecksums, StoredObject, StoredPart, StoredUpload, UploadChecksum } from './records.js'
import type { BucketStore } from './port.js'
import type { BucketCompleteOptions, BucketMultipartOptions, BucketPartListOptions, BucketParts, BucketUploadListOptions, BucketUploads } from './types.js'

/**
 * Most bytes of part checksums a COMPOSITE object keeps in its record (4 KiB
 * as base64: 768 CRC32 or CRC32C parts, 153 SHA-1, 96 SHA-256): records are
 * read whole by lists and kept by read caches, so a 10,000-part object must
 * not make them hundreds of kilobytes. Beyond it, reads of one part answer
 * no checksum.
 */
export const MAX_KEPT_PART_CHECKSUM_BYTES = 3072

/** Whether `record` is a completed multipart object: its etag is `<md5 of md5s>-<parts>`, whether or not its part layout was kept. */
export function isMultipartRecord (record: StoredObject): boolean {
  return record.checksums.multipart !== undefined || /-\d+$/.test(record.etag)
}

/** Every part but the last at least `minPartSize`, all but the last equal, the last no larger. */
export function checkPartSizes (parts: StoredPart[], minPartSize: number): void {
  if (parts.length < 2) return
  const uniform = parts[0].size
  for (const part of parts.slice(0, -1)) {
    if (part.size < minPartSize) {
      throw new BucketError('EntityTooSmall', 'completeMultipartUpload', `Part ${part.partNumber} has ${part.size} bytes; the minimum is ${minPartSize}.`)
    }
    if (part.size !== uniform) {
      throw new BucketError('InvalidPartOrder', 'completeMultipartUpload', 'All non-trailing parts must have the same length.')
    }
  }
  if (parts[parts.length - 1].size > uniform) {
    throw new BucketError('InvalidPartOrder', 'completeMultipartUpload', 'The last part must not be larger than the others.')
  }
}

const uploadAlgorithms: ReadonlyArray<UploadChecksum['algorithm']> = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256']

/** A part's `defaultChecksum`: one of the algorithms an upload can have, else a TypeError. */
export function defaultPartChecksum (value: unknown): UploadChecksum['algorithm'] | undefined {
  if (value === undefined) return undefined
  if (!(uploadAlgorithms as readonly unknown[]).includes(value)) throw new TypeError(`uploadPart: defaultChecksum must be one of ${uploadAlgorithms.join(', ')}.`)
  return value as UploadChecksum['algorithm']
}

/** The checksum algorithm and type `createMultipartUpload` keeps with the upload (S3's rules of combination). */
export function uploadChecksumOption (opts: Partial<BucketMultipartOptions>): { checksum?: UploadChecksum } {
  const method = 'createMultipartUpload'
  const { checksumAlgorithm: algorithm, checksumType: type } = opts
  if (algorithm === undefined) {
    if (type !== undefined) throw new TypeError(`${method}: a checksumType needs a checksumAlgorithm.`)
    return {}
  }
  if (!uploadAlgorithms.includes(algorithm)) throw new TypeError(`${method}: checksumAlgorithm must be one of ${uploadAlgorithms.join(', ')}.`)
  if (type !== undefined && type !== 'COMPOSITE' && type !== 'FULL_OBJECT') throw new TypeError(`${method}: checksumType must be "COMPOSITE" or "FULL_OBJECT".`)
  const chosen = type ?? (algorithm === 'crc64nvme' ? 'FULL_OBJECT' : 'COMPOSITE')
  if ((chosen === 'COMPOSITE' && algorithm === 'crc64nvme') || (chosen === 'FULL_OBJECT' && !isCrc(algorithm))) {
    throw new TypeError(`${method}: the ${chosen} checksum type cannot be used with the ${algorithm} checksum algorithm.`)
  }
  return { checksum: { algorithm, type: chosen } }
}

/**
 * The checksum a part of `upload` must carry, as S3 has it: none asked of an
 * upload created without an algorithm; else a checksum sent with the part
 * must be of the upload's algorithm, and a part sent without one gets it
 * computed when the upload is FULL_OBJECT or the part is copied from stored
 * bytes (a COMPOSITE upload's part must bring its own). A part of an
 * upload without an algorithm that brings none gets `fallback`, if given.
 * Returns the algorithm to compute beside the one given, if any.
 */
export function partChecksumAlgorithm (upload: StoredUpload, given: HashAlgorithm | undefined, copied: boolean, fallback?: HashAlgorithm): HashAlgorithm | undefined {
  const kept = upload.checksum
  const sent = given === 'md5' ? undefined : given // Content-MD5 is the ETag's check, not a checksum of the part's kind
  if (kept === undefined) return sent === undefined ? fallback : undefined
  if (sent !== undefined) {
    if (sent !== kept.algorithm) throw new UploadChecksumError(`uploadPart: Checksum Type mismatch occurred, expected checksum Type: ${kept.algorithm}, actual checksum Type: ${sent}`)
    return undefined
  }
  if (kept.type === 'COMPOSITE' && !copied) {
    throw new UploadChecksumError(`uploadPart: Checksum Type mismatch occurred, expected checksum Type: ${kept.algorithm}, actual checksum Type: null`)
  }
  return kept.algorithm
}

/** A part a completion names: number, etag without quotes, and the hex checksums it must have. */
export interface NamedPart {
  partNumber: number
  etag: string
  checksums: Partial<Record<HashAlgorithm, string>>
}

export interface CompletionRequest {
  key: string
  version: string
  uploaded: number
  minPartSize: number
  checksumType?: 'COMPOSITE' | 'FULL_OBJECT'
  /** Hex checksums of the whole object the completion must produce. */
  expected: Partial<Record<HashAlgorithm, string>>
  /** The COMPOSITE checksum (hex) of `parts` parts it must produce. */
  composite?: { algorithm: HashAlgorithm, hex: string, parts: number }
  /** Sent without a customer key: a refusal then names no digest of an encrypted upload's data. */
  keyless: boolean
}

/** A completion's `compositeChecksum` option, checked, in hex. */
export function expectedComposite (option: BucketCompleteOptions['compositeChecksum']): CompletionRequest['composite'] {
  if (option === undefined) return undefined
  const hex = checksumsHex(method, { [option.algorithm]: option.value })[option.algorithm] as string
  if (!Number.isInteger(option.parts) || option.parts < 1) throw new TypeError(`${method}: a composite checksum counts its parts from 1 (got ${String(option.parts)}).`)
  return { algorithm: option.algorithm, hex, parts: option.parts }
}

const method = 'completeMultipartUpload'

/**
 * The version of an object completed from `uploadId`: a tag of the upload
 * (16 hex digits of its id's SHA-256) and 16 random ones, so a completion
 * asked again can tell the object it made (`completedBefore`) while two
 * racing completions still link their parts under names of their own.
 */
export function completionVersion (uploadId: string, random: string): string {
  return `${uploadTag(uploadId)}${random}`
}

function uploadTag (uploadId: string): string {
  return createHash('sha256').update(uploadId).digest('hex').slice(0, 16)
}

/** The ETag of a multipart object: the MD5 of its parts' MD5s, then `-` and their number. */
function multipartEtag (etags: string[]): string {
  return `${createHash('md5').update(Buffer.concat(etags.map(etag => Buffer.from(etag, 'hex')))).digest('hex')}-${etags.length}`
}

/**
 * Whether `current`, the key's object, is what completing `uploadId` with
 * `named` made: a completion asked again after it succeeded (its answer
 * lost) finds the upload gone and its object in place.
 */
export function completedBefore (current: StoredObject, uploadId: string, named: NamedPart[]): boolean {
  return current.version.startsWith(uploadTag(uploadId)) && current.etag === multipartEtag(named.map(p => p.etag))
}

/**
 * Judges the checksums a completion names (`request.expected`, whole-object;
 * `request.composite`, COMPOSITE `<hex>-N`) against `checksums`, the
 * object's: the one the completion makes, or, asked again, the one it made.
 * A checksum must be of the object's algorithm (`algorithm`: the upload's,
 * else its parts'), as S3 holds a part to its upload's algorithm
 * (InvalidRequest); a value, or a part count, that is not the object's is
 * BadDigest, naming the object's checksum unless `hidden` (data under a
 * customer key, asked without that key).
 */
function judgeNamedChecksums (checksums: StoredChecksums, algorithm: HashAlgorithm | undefined, request: Pick<CompletionRequest, 'expected' | 'composite'>, hidden: boolean): void {
  const composite = request.composite
  const named = [...Object.keys(request.expected) as HashAlgorithm[], ...(composite === undefined ? [] : [composite.algorithm])]
  const other = named.find(a => a !== algorithm)
  if (other !== undefined) {
    throw new UploadChecksumError(`${method}: Checksum Type mismatch occurred, expected checksum Type: ${algorithm ?? 'null'}, actual checksum Type: ${other}`)
  }
  const layout = checksums.multipart
  const compositeOfObject = layout?.composite === undefined ? undefined : `${layout.composite.hex}-${layout.parts} (COMPOSITE)`
  /** The object's checksum of `algorithm`, as a refusal names it: never one of data under a customer key to a caller without it. */
  const shown = (algorithm: HashAlgorithm): string => hidden
    ? 'not shown without the upload\'s customer key'
    : checksums[algorithm] ?? (layout?.composite?.algorithm === algorithm ? compositeOfObject : undefined) ?? 'not known (its parts carry no such checksum)'
  for (const [name, hex] of Object.entries(request.expected)) {
    if (checksums[name as HashAlgorithm] !== hex) throw new BucketError('BadDigest', method, `The ${name} you provided was ${hex}; the object's is ${shown(name as HashAlgorithm)}.`)
  }
  if (composite !== undefined && (layout?.composite?.algorithm !== composite.algorithm || layout.composite.hex !== composite.hex || layout.parts !== composite.parts)) {
    throw new BucketError('BadDigest', method, `The ${composite.algorithm} you provided was ${composite.hex}-${composite.parts} (COMPOSITE); the object's is ${shown(composite.algorithm)}.`)
  }
}

/** The algorithm every chosen part has a checksum of, if any. */
function commonAlgorithm (parts: StoredPart[]): HashAlgorithm | undefined {
  const first = Object.keys(parts[0]?.checksums ?? {}) as HashAlgorithm[]
  return first.find(a => parts.every(p => p.checksums?.[a] !== undefined))
}

/** The object a completion commits, from the upload and its stored parts; throws to refuse. */
export function completedObject (upload: StoredUpload, stored: Map<number, StoredPart>, named: NamedPart[], request: CompletionRequest): StoredObject {
  const kept = upload.checksum
  // Without a type named (here or at creation), a whole-object checksum to match says FULL_OBJECT.
  const checksumType = request.checksumType ?? (kept === undefined && Object.keys(request.expected).length > 0 ? 'FULL_OBJECT' : undefined)
  if (kept !== undefined) {
    if (checksumType !== undefined && checksumType !== kept.type) {
      // S3 documents BadDigest for a completion whose checksum type is not the upload's.
      throw new BucketError('BadDigest', method, `The upload was created with the ${kept.type} checksum type; the completion names ${checksumType}.`)
    }
    if (kept.type === 'COMPOSITE') {
      const missing = named.find(g => g.checksums[kept.algorithm] === undefined)
      if (missing !== undefined) {
        throw new UploadChecksumError(`${method}: The upload was created using a ${kept.algorithm} checksum. The complete request must include the checksum for each part. It was missing for part ${missing.partNumber} in the request.`)
      }
    }
  }
  const parts: StoredPart[] = named.map(g => {
    const part = stored.get(g.partNumber)
    if (part === undefined || part.etag !== g.etag) throw new BucketError('InvalidPart', method)
    for (const [algorithm, hex] of Object.entries(g.checksums)) {
      if (part.checksums?.[algorithm as HashAlgorithm] !== hex) {
        throw new BucketError('InvalidPart', method, `Part ${part.partNumber} was not uploaded with that ${algorithm} checksum.`)
      }
    }
    return part
  })
  checkPartSizes(parts, request.minPartSize)
  const layout: MultipartLayout = { parts: parts.length, partSize: parts[0]?.size ?? 0 }
  const checksums: StoredChecksums = { multipart: layout }
  const algorithm = kept !== undefined && parts.every(p => p.checksums?.[kept.algorithm] !== undefined) ? kept.algorithm : commonAlgorithm(parts)
  if (algorithm !== undefined) {
    const type = checksumType ?? kept?.type ?? (algorithm === 'crc64nvme' ? 'FULL_OBJECT' : 'COMPOSITE')
    const values = parts.map(p => Buffer.from(p.checksums?.[algorithm] as string, 'hex'))
    if (type === 'FULL_OBJECT') {
      if (!isCrc(algorithm)) throw new TypeError(`${method}: the FULL_OBJECT checksum type needs a CRC; the parts have ${algorithm}.`)
      checksums[algorithm] = combineCrcs(algorithm, values.map((crc, i) => ({ crc, size: parts[i].size }))).toString('hex')
    } else {
      if (algorithm === 'crc64nvme') throw new TypeError(`${method}: crc64nvme has no COMPOSITE checksum type; use FULL_OBJECT.`)
      layout.composite = { algorithm, hex: compositeOf(algorithm, values).toString('hex') }
      // Kept for reads of one part, which S3 answers with that part's checksum, when small enough to ride in every copy of the record.
      if (values.length * digestBytes[algorithm] <= MAX_KEPT_PART_CHECKSUM_BYTES) layout.partChecksums = Buffer.concat(values).toString('base64')
    }
  } else if (checksumType !== undefined) {
    throw new TypeError(`${method}: a checksum type needs every part uploaded with a checksum of one algorithm.`)
  }
  if (upload.ssec !== undefined) {
    // The salts of the parts' body keys, in the object's order, so reads can decipher across parts (ssec.ts).
    if (parts.some(p => p.ssec === undefined)) throw new BucketError('InvalidPart', method, 'A part of this encrypted upload was stored without its encryption.')
    checksums.ssec = { keyMd5: upload.ssec.keyMd5, salt: upload.ssec.salt, check: upload.ssec.check, partSalts: Buffer.concat(parts.map(p => Buffer.from(p.ssec?.salt ?? '', 'base64'))).toString('base64') }
  }
  judgeNamedChecksums(checksums, kept?.algorithm ?? algorithm, request, upload.ssec !== undefined && request.keyless)
  return {
    key: request.key,
    version: request.version,
    size: parts.reduce((sum, p) => sum + p.size, 0),
    etag: multipartEtag(parts.map(p => p.etag)),
    uploaded: request.uploaded,
    storageClass: upload.storageClass,
    httpMetadata: upload.httpMetadata,
    customMetadata: upload.customMetadata,
    checksums
  }
}

function pageOptions<T extends { limit?: number }> (method: string, options: unknown): Partial<T> & { limit: number } {
  if (options !== undefined && options !== null && typeof options !== 'object') throw new TypeError(`${method}: options must be an object.`)
  const opts = (options ?? {}) as Partial<T>
  const limit = opts.limit === undefined ? MAX_UPLOAD_PAGE : Math.trunc(Number(opts.limit))
  if (!Number.isFinite(limit) || limit < 1 || limit > MAX_UPLOAD_PAGE) throw new BucketError('InvalidMaxKeys', method)
  return Object.assign({}, opts, { limit })
}

type ListedUpload = BucketUploads['uploads'][number]

function listed (u: StoredUpload): ListedUpload {
  return { key: u.key, uploadId: u.uploadId, initiated: new Date(u.created), storageClass: u.storageClass, ...(u.checksum === undefined ? {} : { checksum: { ...u.checksum } }) }
}

/**
 * One page of the uploads in progress (`listMultipartUploads`). With a
 * delimiter, keys holding it after the prefix are rolled up into their
 * delimited prefix (up to and including the first delimiter), each prefix
 * once, counted in `limit` as an upload is, as S3's CommonPrefixes; a key
 * marker that is such a prefix resumes after all of its keys.
 */
export async function listUploadsPage (store: BucketStore, options: unknown): Promise<BucketUploads> {
  const opts = pageOptions<BucketUploadListOptions>('listMultipartUploads', options)
  const prefix = opts.prefix === undefined ? '' : listText('listMultipartUploads', 'prefix', opts.prefix)
  const delimiter = opts.delimiter === undefined || opts.delimiter === '' ? undefined : listText('listMultipartUploads', 'delimiter', opts.delimiter)
  const keyMarker = opts.keyMarker === undefined || opts.keyMarker === '' ? undefined : listText('listMultipartUploads', 'keyMarker', opts.keyMarker)
  let after: { id: string, uploadId: string } | undefined
  if (keyMarker !== undefined) {
    // Upload ids are [A-Za-z0-9_-]: '~' sorts after all of them, so a key marker alone skips the key's every upload.
    const uploadId = opts.uploadIdMarker === undefined || opts.uploadIdMarker === '' ? '~' : String(opts.uploadIdMarker)
    after = { id: keyMarker, uploadId }
  }
  if (delimiter === undefined) {
    const found = await store.listUploads({ prefix, after, limit: opts.limit + 1 })
    return { uploads: found.slice(0, opts.limit).map(listed), truncated: found.length > opts.limit }
  }

  const rolledUp = (id: string): string | undefined => {
    if (!id.startsWith(prefix)) return undefined
    const at = id.indexOf(delimiter, prefix.length)
    return at === -1 ? undefined : id.slice(0, at + delimiter.length)
  }
  const uploads: ListedUpload[] = []
  const delimitedPrefixes: string[] = []
  // The last prefix rolled up: its keys are skipped (a marker that is a prefix counts as one).
  let skipping = keyMarker !== undefined && rolledUp(keyMarker) === keyMarker ? keyMarker : undefined
  for (;;) {
    const batch = await store.listUploads({ prefix, after, limit: opts.limit + 1 })
    for (const upload of batch) {
      const id = upload.key.normalize('NFC')
      after = { id, uploadId: upload.uploadId }
      if (skipping !== undefined && id.startsWith(skipping)) continue
      if (uploads.length + delimitedPrefixes.length === opts.limit) return { uploads, delimitedPrefixes, truncated: true }
      const common = rolledUp(id)
      if (common === undefined) {
        uploads.push(listed(upload))
      } else {
        delimitedPrefixes.push(common)
        skipping = common
      }
    }
    if (batch.length <= opts.limit) return { uploads, delimitedPrefixes, truncated: false }
  }
}

/**
 * The object a completion asked again made, once what it carries is judged
 * as the first completion judged it: a key, then a checksum type (the
 * object's, if it has one) and the checksums it names. A repeat that the
 * first completion would have refused is refused alike, so a retry with a
 * wrong checksum never reads as a success.
 */
export function completedAgain (current: StoredObject, ssecKey: SsecKey | undefined, request: CompletionRequest): ObjectMetadata {
  if (ssecKey !== undefined) judgeSsecKey(method, current.checksums.ssec, ssecKey)
  const checksums = current.checksums
  const composite = checksums.multipart?.composite
  const whole = hashAlgorithms.find(a => a !== 'md5' && checksums[a] !== undefined)
  const type = composite !== undefined ? 'COMPOSITE' : whole !== undefined ? 'FULL_OBJECT' : undefined
  if (request.checksumType !== undefined && type !== undefined && request.checksumType !== type) {
    throw new BucketError('BadDigest', method, `The object was completed with the ${type} checksum type; the completion names ${request.checksumType}.`)
  }
  judgeNamedChecksums(checksums, composite?.algorithm ?? whole, request, checksums.ssec !== undefined && request.keyless)
  return new ObjectMetadata(current)
}

/**
 * One page of an upload's parts (`upload.listParts`); the caller checked the
 * upload belongs to its key. The parts of an upload made under a customer
 * key (SSE-C) are listed with their checksums only when that key is given
 * (they are digests of the data); a key given must be the upload's.
 */
export async function listPartsPage (store: BucketStore, upload: StoredUpload, options: unknown): Promise<BucketParts> {
  const uploadId = upload.uploadId
  const opts = pageOptions<BucketPartListOptions>('listParts', options)
  const ssecKey = parseSsecKey('listParts', opts.ssecKey)
  if (ssecKey !== undefined) judgeSsecKey('listParts', upload.ssec, ssecKey)
  const keyless = upload.ssec !== undefined && ssecKey === undefined
  const marker = opts.partNumberMarker === undefined ? 0 : Math.trunc(Number(opts.partNumberMarker))
  if (!Number.isFinite(marker) || marker < 0) throw new RangeError('listParts: partNumberMarker must be a non-negative number.')
  const found = await store.listParts(uploadId, marker, opts.limit + 1)
  if (found === null) throw new BucketError('NoSuchUpload', 'listParts')
  const parts = found.slice(0, opts.limit).map(p => ({ partNumber: p.partNumber, etag: p.etag, size: p.size, uploaded: new Date(p.uploaded ?? upload.created), checksums: keyless ? {} : { ...p.checksums } }))
  return { parts, truncated: found.length > opts.limit, ...(upload.checksum === undefined ? {} : { checksum: { ...upload.checksum } }) }
}
