/**
 * Persistent state of the management API (on the filesystem, under `<dataDir>/.mgmt/`):
 *
 *     zones.json           {"zones": [Zone, ...]}
 *     zones/<id>.json      {"records": [DnsRecord, ...], "certificatePacks": [...]}
 *     invites.json         {"invites": [Invite, ...]}
 *     domains.json         {"domains": [DomainAttachment, ...]}   custom domains of buckets
 *
 * Objects are kept in the shapes the API answers with, so routes read them
 * back without translation.
 *
 * The documents are kept by the registry's storage (the state port,
 * `StateDocuments` in src/bucket/port.ts; on the filesystem,
 * src/stores/fs/json-directory.ts). Several worker processes may share
 * them. Reads re-read the documents on every request (they are small), and
 * every change is one transaction: changes spanning documents (a custom
 * domain touches a zone's records and the domain list) are applied whole.
 */
import type { DocumentTransaction, StateDocuments } from '../bucket/index.js'

export interface Zone {
  id: string
  name: string
  status: 'initializing' | 'pending' | 'active' | 'moved'
  paused: boolean
  type: 'full' | 'partial' | 'secondary' | 'internal'
  development_mode: number
  name_servers: string[]
  original_name_servers: string[] | null
  original_registrar: string | null
  original_dnshost: string | null
  created_on: string
  modified_on: string
  activated_on: string | null
  account: { id: string, name: string }
  owner: { id: string | null, type: string, email: string | null }
  plan: Record<string, unknown>
  meta: Record<string, unknown>
  permissions: string[]
}

export interface DnsRecord {
  id: string
  zone_id: string
  zone_name: string
  name: string
  type: string
  content: string
  proxiable: boolean
  proxied: boolean
  ttl: number
  locked: boolean
  settings: Record<string, unknown>
  meta: Record<string, unknown>
  comment: string | null
  tags: string[]
  created_on: string
  modified_on: string
  priority?: number
  data?: Record<string, unknown>
}

export interface Certificate {
  id: string
  hosts: string[]
  issuer: string
  signature: string
  status: string
  bundle_method: string
  zone_id: string
  uploaded_on: string
  modified_on: string
  expires_on: string
  priority: number | null
}

export interface CertificatePack {
  id: string
  type: string
  hosts: string[]
  primary_certificate: string
  status: string
  certificates: Certificate[]
  created_on: string
  validity_days: number
  validation_method: string
  certificate_authority: string
}

export interface Invite {
  id: string
  invited_member_id: string | null
  invited_member_email: string
  organization_id: string
  organization_name: string
  organization_is_enforcing_twofactor: boolean
  invited_by: string
  invited_on: string
  expires_on: string
  roles: string[]
  status: 'pending' | 'accepted' | 'rejected' | 'expired'
}

export interface DomainAttachment {
  domain: string
  bucket: string
  zoneId: string
  zoneName: string
  recordId: string
  enabled: boolean
  minTLS: '1.0' | '1.1' | '1.2' | '1.3'
  ciphers?: string[]
}

export interface ZoneFile {
  records: DnsRecord[]
  certificatePacks: CertificatePack[]
}

interface Documents {
  zones: { zones: Zone[] }
  invites: { invites: Invite[] }
  domains: { domains: DomainAttachment[] }
}

const emptyZoneFile = (): ZoneFile => ({ records: [], certificatePacks: [] })

export class ManagementStore {
  readonly #documents: StateDocuments

  constructor (documents: StateDocuments) {
    this.#documents = documents
  }

  async zones (): Promise<Zone[]> {
    return (await this.#documents.read<Documents['zones']>('zones.json', { zones: [] })).zones
  }

  async zone (id: string): Promise<Zone | undefined> {
    return (await this.zones()).find(z => z.id === id)
  }

  async zoneFile (zoneId: string): Promise<ZoneFile> {
    return { ...emptyZoneFile(), ...await this.#documents.read<Partial<ZoneFile>>(zoneFileName(zoneId), {}) }
  }

  async invites (): Promise<Invite[]> {
    return (await this.#documents.read<Documents['invites']>('invites.json', { invites: [] })).invites
  }

  async domains (): Promise<DomainAttachment[]> {
    return (await this.#documents.read<Documents['domains']>('domains.json', { domains: [] })).domains
  }

  /** Runs `change` under the state's lock and writes back what it changed. */
  async update<T> (change: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return await this.#documents.transaction(async tx => await change(new StoreTransaction(tx)))
  }
}

function zoneFileName (zoneId: string): string {
  return `zones/${zoneId}.json`
}

/** The typed documents of one change. */
export class StoreTransaction {
  readonly #tx: DocumentTransaction

  constructor (tx: DocumentTransaction) {
    this.#tx = tx
  }

  async zones (): Promise<Zone[]> {
    return (await this.#tx.load<Documents['zones']>('zones.json', { zones: [] })).zones
  }

  async zoneFile (zoneId: string): Promise<ZoneFile> {
    const file = await this.#tx.load<ZoneFile>(zoneFileName(zoneId), emptyZoneFile())
    file.records ??= []
    file.certificatePacks ??= []
    return file
  }

  removeZoneFile (zoneId: string): void {
    this.#tx.remove(zoneFileName(zoneId))
  }

  async invites (): Promise<Invite[]> {
    return (await this.#tx.load<Documents['invites']>('invites.json', { invites: [] })).invites
  }

  async domains (): Promise<DomainAttachment[]> {
    return (await this.#tx.load<Documents['domains']>('domains.json', { domains: [] })).domains
  }
}
