/**
 * Metadata given with a write: HTTP metadata (an object or a Headers),
 * custom metadata, storage class and checksums. Pure validation, shared by
 * `put` and `createMultipartUpload`.
 *
 * As the hosted binding does: `httpMetadata.cacheExpiry` must be a Date (a
 * string is a TypeError); an `Expires` header that is not a date is stored
 * as the epoch (1970-01-01) rather than refused; `customMetadata: null` is a
 * TypeError (leave it out to store none).
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'
import { MAX_CUSTOM_METADATA_BYTES } from './limits.js'
import type { BucketHTTPMetadata, StorageClass } from './types.js'
import { digestBytes, hashAlgorithms, type HashAlgorithm } from './checksums.js'
import { parseHttpDate } from './http-date.js'

/** HTTP metadata as stored: the expiry as milliseconds since the epoch. */
export interface StoredHttpMetadata {
  contentType?: string
  contentLanguage?: string
  contentDisposition?: string
  contentEncoding?: string
  cacheControl?: string
  cacheExpiry?: number
}

/** The HTTP metadata fields held as text, and their header names. */
export const headerFields = [
  ['contentType', 'content-type'],
  ['contentLanguage', 'content-language'],
  ['contentDisposition', 'content-disposition'],
  ['contentEncoding', 'content-encoding'],
  ['cacheControl', 'cache-control']
] as const

export function parseHttpMetadata (method: string, input: unknown): StoredHttpMetadata {
  if (input === undefined || input === null) return {}
  const out: StoredHttpMetadata = {}
  if (input instanceof Headers) {
    for (const [field, header] of headerFields) {
      const value = input.get(header)
      if (value !== null) out[field] = value
    }
    const expires = input.get('expires')
    // An HTTP-date, or an ISO 8601 date (`wrangler r2 object put --expires 2030-01-01`), which the hosted binding's Date reads
    // too; anything else is the epoch (Date would make `0` the year 2000 in the server's own time zone).
    if (expires !== null) out.cacheExpiry = parseHttpDate(expires)?.getTime() ?? isoDate(expires) ?? 0
    return out
  }
  if (typeof input !== 'object') throw new TypeError(`${method}: httpMetadata must be an object or a Headers.`)
  const m = input as Record<string, unknown>
  for (const [field] of headerFields) {
    if (m[field] !== undefined) out[field] = String(m[field])
  }
  if (m.cacheExpiry !== undefined) {
    const date = m.cacheExpiry
    if (!(date instanceof Date)) throw new TypeError(`${method}: httpMetadata.cacheExpiry must be a Date.`)
    if (Number.isNaN(date.getTime())) throw new TypeError(`${method}: httpMetadata.cacheExpiry must be a valid Date.`)
    out.cacheExpiry = date.getTime()
  }
  return out
}

/** An ISO 8601 date or date-time's instant (one without a zone is UTC, whatever the server's), else undefined. */
function isoDate (text: string): number | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:\d{2})?)?$/.exec(text)
  if (match === null) return undefined
  const time = Date.parse(match[2] === undefined ? match[1] : `${match[1]}T${match[2]}${match[3] ?? 'Z'}`)
  return Number.isNaN(time) ? undefined : time
}

export function httpMetadataView (stored: StoredHttpMetadata): BucketHTTPMetadata {
  const { cacheExpiry, ...rest } = stored
  return cacheExpiry === undefined ? { ...rest } : Object.assign(rest, { cacheExpiry: new Date(cacheExpiry) })
}

/** Writes stored HTTP metadata as response headers. */
export function writeHttpHeaders (stored: StoredHttpMetadata, headers: Headers): void {
  for (const [field, header] of headerFields) {
    const value = stored[field]
    if (value !== undefined) headers.set(header, value)
  }
  if (stored.cacheExpiry !== undefined) headers.set('expires', new Date(stored.cacheExpiry).toUTCString())
}

/** Validates custom metadata; values are stringified as the runtime does. */
export function parseCustomMetadata (method: string, input: unknown): Record<string, string> {
  if (input === undefined) return {}
  if (input === null || typeof input !== 'object') throw new TypeError(`${method}: customMetadata must be an object.`)
  const entries = Object.entries(input as Record<string, unknown>).map(([k, v]) => [k, String(v)] as const)
  let bytes = 0
  for (const [k, value] of entries) bytes += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(value, 'utf8')
  if (bytes > MAX_CUSTOM_METADATA_BYTES) throw new BucketError('MetadataTooLarge', method)
  // Made as own properties: a name such as `__proto__` is an entry like any other, not the object's prototype.
  return Object.fromEntries(entries)
}

/** Custom metadata `over` laid over `base` (a MERGE), every name an own entry: `__proto__` too, which an assignment would drop. */
export function mergeCustomMetadata (base: Record<string, string>, over: Record<string, string>): Record<string, string> {
  return Object.fromEntries([...Object.entries(base), ...Object.entries(over)])
}

/** What a bucket's `defaultStorageClass` gave, refused as its own (a caller that named no class did nothing wrong). */
export function checkedDefaultStorageClass (method: string, value: unknown): StorageClass {
  if (value === 'Standard' || value === 'InfrequentAccess') return value
  throw new TypeError(`${method}: defaultStorageClass must give "Standard" or "InfrequentAccess" (gave ${String(value)}).`)
}

export function parseStorageClass (method: string, input: unknown): StorageClass {
  if (input === undefined || input === null) return 'Standard'
  if (input === 'Standard' || input === 'InfrequentAccess') return input
  throw new TypeError(`${method}: storageClass must be "Standard" or "InfrequentAccess" (got ${String(input)}).`)
}

export type { HashAlgorithm } from './checksums.js'

/** A checksum given with a write: its value now, or a function giving it once the body has been read. */
export type ChecksumOption = { algorithm: HashAlgorithm, hex: string } | { algorithm: HashAlgorithm, later: () => unknown }

/** A checksum value (hex string or bytes) as lowercase hex of the algorithm's length; TypeError otherwise. */
export function checksumHex (method: string, algorithm: HashAlgorithm, value: unknown): string {
  let hex: string
  if (typeof value === 'string') {
    hex = value.toLowerCase()
    if (!/^[0-9a-f]*$/.test(hex)) throw new TypeError(`${method}: ${algorithm} must be a hex string or an ArrayBuffer.`)
  } else if (value instanceof ArrayBuffer) {
    hex = Buffer.from(value).toString('hex')
  } else if (ArrayBuffer.isView(value)) {
    hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')
  } else {
    throw new TypeError(`${method}: ${algorithm} must be a hex string or an ArrayBuffer.`)
  }
  if (hex.length !== digestBytes[algorithm] * 2) {
    throw new TypeError(`${method}: ${algorithm} should be ${digestBytes[algorithm]} bytes long (got ${hex.length / 2}).`)
  }
  return hex
}

/**
 * The checksum a write asks to verify: at most one algorithm. Beyond the
 * binding: the CRCs (crc32, crc32c, crc64nvme), and a function as the value,
 * called once the body has been read (for checksums that travel after the
 * body, as S3's trailers do); what it throws fails the write.
 */
export function parseChecksumOption (method: string, options: Record<string, unknown>): ChecksumOption | null {
  const given = hashAlgorithms.filter(a => options[a] !== undefined)
  if (given.length === 0) return null
  if (given.length > 1) throw new TypeError(`${method}: you cannot specify multiple hashing algorithms.`)
  const algorithm = given[0]
  const value = options[algorithm]
  if (typeof value === 'function') return { algorithm, later: value as () => unknown }
  return { algorithm, hex: checksumHex(method, algorithm, value) }
}

/** The hex value a checksum option expects, calling a deferred one (after the body was read). */
export function expectedChecksumHex (method: string, option: ChecksumOption): string {
  return 'hex' in option ? option.hex : checksumHex(method, option.algorithm, option.later())
}

/** Checksums given as `{algorithm: hex or bytes}` (a completion's), as hex; TypeError for an unknown algorithm. */
export function checksumsHex (method: string, input: unknown): Partial<Record<HashAlgorithm, string>> {
  if (input === undefined || input === null) return {}
  if (typeof input !== 'object') throw new TypeError(`${method}: checksums must be an object.`)
  const out: Partial<Record<HashAlgorithm, string>> = {}
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if (!(hashAlgorithms as readonly string[]).includes(name)) throw new TypeError(`${method}: ${name} is not a checksum algorithm.`)
    out[name as HashAlgorithm] = checksumHex(method, name as HashAlgorithm, value)
  }
  return out
}
