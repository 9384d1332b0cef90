/**
 * DNS record requests → the record as stored, or a ManagementError.
 *
 * A, AAAA, CNAME and SRV are checked by the seed's rules; the other types of
 * the seed's table are accepted with `content` stored as given (a non-empty
 * string). TTL is 1 (automatic, 300 s) or 60..86400; a proxied record is
 * always automatic, whatever TTL the request carries. Only A, AAAA and
 * CNAME records can be proxied, and not towards addresses or names that
 * cannot be reached from the internet.
 *
 * `findRecordConflict` holds the rules between records of one zone: a CNAME
 * shares its name with no A, AAAA or CNAME record, and two records with the
 * same type, name and content are one record too many.
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
      if (target === null || target === name) throw new ManagementError('InvalidCnameContent')
      return { content: target }
    }
    case 'SRV': {
      const data = parseSrvData(body.data)
      return { content: `${data.weight} ${data.port} ${data.target}`, data: { ...data }, priority: data.priority }
    }
    default: {
      if (typeof content !== 'string' || content.trim() === '') throw new ManagementError('InvalidRecordContent')
      const out: { content: string, data?: Record<string, unknown>, priority?: number } = { content }
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
export function findRecordConflict (candidate: RecordIdentity, others: RecordIdentity[]): 'RecordHostConflict' | 'IdenticalRecord' | null {
  for (const other of others) {
    if (other.name !== candidate.name) continue
    if (other.type === candidate.type && other.content === candidate.content && other.priority === candidate.priority) {
      return 'IdenticalRecord'
    }
    const cnameInvolved = candidate.type === 'CNAME' || other.type === 'CNAME'
    if (cnameInvolved && addressTypes.has(candidate.type) && addressTypes.has(other.type)) return 'RecordHostConflict'
  }
  return null
}
