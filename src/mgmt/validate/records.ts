/**
 * DNS record requests → the record as stored, or a ManagementError.
 *
 * A, AAAA, CNAME and SRV are checked by the seed's rules; the other types of
 * the seed's table are accepted with `content` stored as given (a non-empty
 * string), within the hosted API's bounds on content:
 *
 *   - TXT content is printable ASCII (9051): no CR, LF, TAB or other control
 *     character, so a record never carries a line break or an escape
 *     sequence into a zone file, a log or a terminal. Other types' content
 *     holds no C0, DEL or C1 control character either (9007, naming the type);
 *   - one record's content is at most 4096 bytes in wire format (9015): for
 *     TXT, its character-strings each with their length byte (an unquoted
 *     text is split into strings of 255 bytes, as the service splits it, so
 *     4080 characters is the most); for the types fsbucket does not parse,
 *     the content's UTF-8 bytes stand for its wire form;
 *   - the records of one name and type hold at most 8192 characters of
 *     content together (83011, `findRecordConflict`).
 *
 * TTL is 1 (automatic, 300 s) or 60..86400; a proxied record is
 * always automatic, whatever TTL the request carries. Only A, AAAA and
 * CNAME records can be proxied, and not towards addresses or names that
 * cannot be reached from the internet.
 *
 * `findRecordConflict` holds the rules between records of one zone: a CNAME
 * shares its name with no A, AAAA or CNAME record, two records with the
 * same type, name and content are one record too many, and the records of
 * one name and type stay within 8192 characters of content together.
 */
import { ManagementError } from '../errors.js'
import { isProxiableAddress, parseIPv4, parseIPv6 } from './ip.js'
import { parseHostname, recordFqdn } from './names.js'

export const recordTypes = [
  'A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS', 'PTR', 'SOA', 'DS', 'DNSKEY', 'SVCB', 'HTTPS',
  'DKIM', 'SPF', 'DMARC', 'CERT', 'LOC', 'NAPTR', 'OPENPGPKEY', 'SMIMEA', 'SSHFP', 'TLSA', 'URI'
] as const
export type RecordType = typeof recordTypes[number]

const proxiableTypes = new Set<string>(['A', 'AAAA', 'CNAME'])

/** The hosted API's bound on one record: its data in DNS wire format (RFC 1035 §3.2.1 RDATA), in bytes. */
export const maxRecordWireBytes = 4096
/** The hosted API's bound on the records of one name and type: their content together, in characters. */
export const maxCombinedContentLength = 8192

/** C0 controls (CR, LF and TAB included), DEL and C1 controls. */
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/
const printableAscii = /^[\u0020-\u007e]*$/
/** Content written as RFC 1035 quoted character-strings, `"a" "b"`, with `\"`, `\\` and `\DDD` escapes. */
const quotedStrings = /^\s*(?:"(?:[^"\\]|\\[\s\S])*"\s*)+$/
const quotedString = /"((?:[^"\\]|\\[\s\S])*)"/g

/**
 * Bytes of TXT content in wire format: each character-string (RFC 1035
 * §3.3.14) is a length byte and up to 255 bytes, and a longer string is split
 * into several. Quoted content counts its strings as written (an escape is
 * one byte); any other content is one text.
 */
export function txtWireLength (content: string): number {
  const texts = quotedStrings.test(content)
    ? [...content.matchAll(quotedString)].map(m => m[1].replace(/\\(?:[0-9]{3}|[\s\S])/g, '_'))
    : [content]
  return texts.reduce((sum, text) => {
    const bytes = Buffer.byteLength(text)
    return sum + bytes + Math.max(1, Math.ceil(bytes / 255))
  }, 0)
}

/** Content of the types stored as given: refused with the hosted API's code, or returned. */
export function checkFreeFormContent (type: RecordType, content: string): string {
  if (type === 'TXT' ? !printableAscii.test(content) : controlCharacter.test(content)) {
    throw type === 'TXT' ? new ManagementError('InvalidTxtContent') : new ManagementError('InvalidContent', `Content for ${type} record is invalid.`)
  }
  if ((type === 'TXT' ? txtWireLength(content) : Buffer.byteLength(content)) > maxRecordWireBytes) throw new ManagementError('RecordContentTooLong')
  return content
}

export interface SrvData {
  priority: number
  weight: number
  port: number
  target: string
}

/** The fields of a record a request decides. */
export interface RecordFields {
  type: RecordType
  name: string
  content: string
  ttl: number
  proxied: boolean
  proxiable: boolean
  comment: string | null
  tags: string[]
  settings: Record<string, unknown>
  priority?: number
  data?: Record<string, unknown>
}

/** TTL 1 means automatic (300 s); the explicit range is the service's 60 s .. 1 day. */
export function parseTtl (value: unknown): number {
  if (value === undefined || value === null) return 1
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new ManagementError('InvalidTtl')
  if (value === 1 || (value >= 60 && value <= 86400)) return value
  throw new ManagementError('InvalidTtl')
}

function isPort16 (value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 65535
}

/** SRV `data`: priority, weight and port are 16-bit unsigned integers; target a hostname (`.` = no service). */
export function parseSrvData (data: unknown): SrvData {
  const d = data as Partial<SrvData> | null | undefined
  if (typeof d !== 'object' || d === null) throw new ManagementError('InvalidSrvData')
  if (!isPort16(d.priority) || !isPort16(d.weight) || !isPort16(d.port)) throw new ManagementError('InvalidSrvData')
  const target = d.target === '.' ? '.' : parseHostname(String(d.target ?? ''))
  if (target === null) throw new ManagementError('InvalidSrvData')
  return { priority: d.priority, weight: d.weight, port: d.port, target }
}

function parseType (value: unknown): RecordType {
  const type = typeof value === 'string' ? value.toUpperCase() : ''
  if (!(recordTypes as readonly string[]).includes(type)) throw new ManagementError('InvalidRecordType')
  return type as RecordType
}

function parseContent (type: RecordType, body: Record<string, unknown>, name: string): { content: string, data?: Record<string, unknown>, priority?: number } {
  const content = body.content
  switch (type) {
    case 'A': {
      const address = typeof content === 'string' ? parseIPv4(content) : null
      if (address === null) throw new ManagementError('InvalidIPv4')
      return { content: address }
    }
    case 'AAAA': {
      const address = typeof content === 'string' ? parseIPv6(content) : null
      if (address === null) throw new ManagementError('InvalidIPv6')
      return { content: address }
    }
    case 'CNAME': {
      const target = typeof content === 'string' ? parseHostname(content) : null
      if (target === null || target === name) throw new ManagementError('InvalidContent', 'Content for CNAME record is invalid.')
      return { content: target }
    }
    case 'SRV': {
      const data = parseSrvData(body.data)
      return { content: `${data.weight} ${data.port} ${data.target}`, data: { ...data }, priority: data.priority }
    }
    default: {
      if (typeof content !== 'string' || content.trim() === '') throw new ManagementError('InvalidRecordContent')
      const out: { content: string, data?: Record<string, unknown>, priority?: number } = { content: checkFreeFormContent(type, content) }
      if (body.priority !== undefined) {
        if (!isPort16(body.priority)) throw new ManagementError('InvalidRequestBody', 'priority must be an integer from 0 to 65535')
        out.priority = body.priority
      }
      if (typeof body.data === 'object' && body.data !== null) out.data = body.data as Record<string, unknown>
      return out
    }
  }
}

function parseTags (value: unknown): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || !value.every(t => typeof t === 'string')) {
    throw new ManagementError('InvalidRequestBody', 'tags must be an array of strings')
  }
  return value
}

/** A whole record request (POST, PUT, or a PATCH merged onto the stored record). */
export function validateRecord (input: unknown, zoneName: string): RecordFields {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ManagementError('InvalidRequestBody')
  const body = input as Record<string, unknown>
  const type = parseType(body.type)
  const name = recordFqdn(typeof body.name === 'string' ? body.name : '\u0000', zoneName)
  if (name === null) throw new ManagementError('InvalidRecordName')
  const { content, data, priority } = parseContent(type, body, name)

  if (body.proxied !== undefined && body.proxied !== null && typeof body.proxied !== 'boolean') {
    throw new ManagementError('InvalidRequestBody', 'proxied must be a boolean')
  }
  const proxied = body.proxied === true
  const ttl = parseTtl(body.ttl)
  const reachable = type === 'A' || type === 'AAAA'
    ? isProxiableAddress(content)
    : type === 'CNAME' ? !(content === 'localhost' || content.endsWith('.localhost')) : false
  const proxiable = proxiableTypes.has(type) && reachable
  if (proxied && !proxiableTypes.has(type)) throw new ManagementError('RecordTypeNotProxiable')
  if (proxied && !proxiable) throw new ManagementError('ProxiedTargetNotAllowed', `Target ${content} is not allowed for a proxied record.`)

  if (body.comment !== undefined && body.comment !== null && typeof body.comment !== 'string') {
    throw new ManagementError('InvalidRequestBody', 'comment must be a string')
  }
  const settings = body.settings ?? {}
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new ManagementError('InvalidRequestBody', 'settings must be an object')
  }
  const fields: RecordFields = {
    type,
    name,
    content,
    ttl: proxied ? 1 : ttl,
    proxied,
    proxiable,
    comment: typeof body.comment === 'string' && body.comment !== '' ? body.comment : null,
    tags: parseTags(body.tags),
    settings: settings as Record<string, unknown>
  }
  if (priority !== undefined) fields.priority = priority
  if (data !== undefined) fields.data = data
  return fields
}

const addressTypes = new Set(['A', 'AAAA', 'CNAME'])

/** What tells records apart for the rules between them. */
export interface RecordIdentity {
  type: string
  name: string
  content: string
  priority?: number
}

/** The rule a candidate record breaks among the zone's other records, or null. */
export function findRecordConflict (candidate: RecordIdentity, others: RecordIdentity[]): 'RecordHostConflict' | 'IdenticalRecord' | 'CombinedContentTooLong' | null {
  let combined = candidate.content.length
  for (const other of others) {
    if (other.name === candidate.name && other.type === candidate.type) combined += other.content.length
  }
  for (const other of others) {
    if (other.name !== candidate.name) continue
    if (other.type === candidate.type && other.content === candidate.content && other.priority === candidate.priority) {
      return 'IdenticalRecord'
    }
    const cnameInvolved = candidate.type === 'CNAME' || other.type === 'CNAME'
    if (cnameInvolved && addressTypes.has(candidate.type) && addressTypes.has(other.type)) return 'RecordHostConflict'
  }
  return combined > maxCombinedContentLength ? 'CombinedContentTooLong' : null
}
