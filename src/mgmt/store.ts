/**
 * Persistent state of the management API under `<dataDir>/.mgmt/`:
 *
 *     zones.json           {"zones": [Zone, ...]}
 *     zones/<id>.json      {"records": [DnsRecord, ...], "certificatePacks": [...]}
 *     invites.json         {"invites": [Invite, ...]}
 *     domains.json         {"domains": [DomainAttachment, ...]}   custom domains of buckets
 *
 * Objects are kept in the shapes the API answers with, so routes read them
 * back without translation.
 *
 * Several worker processes may share one data directory. Reads re-read the
 * files on every request (they are small, and each is replaced atomically
 * with `writeJsonAtomic`, so a reader sees a whole old or a whole new file).
 * Every change is a read-modify-write inside `update`, under one
 * proper-lockfile lock for the whole directory: changes spanning files (a
 * custom domain touches a zone's records and the domain list) stay
 * consistent, and a stale lock left by a crashed process expires.
 * Only files whose content changed are written.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { readJson, writeJsonAtomic } from '../persist/atomic.js'

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
  readonly dir: string
  readonly #fsync: boolean

  constructor (dataDir: string, options: { fsync?: boolean } = {}) {
    this.dir = path.join(dataDir, '.mgmt')
    this.#fsync = options.fsync ?? true
  }

  file (name: string): string {
    return path.join(this.dir, name)
  }

  zoneFileName (zoneId: string): string {
    return path.join(this.dir, 'zones', `${zoneId}.json`)
  }

  async zones (): Promise<Zone[]> {
    return (await readJson<Documents['zones']>(this.file('zones.json'), { zones: [] })).zones
  }

  async zone (id: string): Promise<Zone | undefined> {
    return (await this.zones()).find(z => z.id === id)
  }

  async zoneFile (zoneId: string): Promise<ZoneFile> {
    return { ...emptyZoneFile(), ...await readJson<Partial<ZoneFile>>(this.zoneFileName(zoneId), {}) }
  }

  async invites (): Promise<Invite[]> {
    return (await readJson<Documents['invites']>(this.file('invites.json'), { invites: [] })).invites
  }

  async domains (): Promise<DomainAttachment[]> {
    return (await readJson<Documents['domains']>(this.file('domains.json'), { domains: [] })).domains
  }

  /** Runs `change` under the directory lock and writes back what it changed. */
  async update<T> (change: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    await fsp.mkdir(path.join(this.dir, 'zones'), { recursive: true })
    const release = await lockfile.lock(this.file('state'), {
      realpath: false,
      stale: 10_000,
      retries: { retries: 100, minTimeout: 5, maxTimeout: 100 }
    })
    try {
      const tx = new StoreTransaction(this)
      const result = await change(tx)
      await tx.commit(this.#fsync)
      return result
    } finally {
      await release()
    }
  }
}

/** The documents one change has read; `commit` writes those that changed. */
export class StoreTransaction {
  readonly #store: ManagementStore
  readonly #loaded = new Map<string, { before: string, value: unknown }>()
  readonly #removed = new Set<string>()

  constructor (store: ManagementStore) {
    this.#store = store
  }

  async #load<T> (file: string, fallback: T): Promise<T> {
    const loaded = this.#loaded.get(file)
    if (loaded !== undefined) return loaded.value as T
    const value = await readJson<T>(file, fallback)
    this.#loaded.set(file, { before: JSON.stringify(value), value })
    this.#removed.delete(file)
    return value
  }

  async zones (): Promise<Zone[]> {
    return (await this.#load<Documents['zones']>(this.#store.file('zones.json'), { zones: [] })).zones
  }

  async zoneFile (zoneId: string): Promise<ZoneFile> {
    const file = await this.#load<ZoneFile>(this.#store.zoneFileName(zoneId), emptyZoneFile())
    file.records ??= []
    file.certificatePacks ??= []
    return file
  }

  removeZoneFile (zoneId: string): void {
    const file = this.#store.zoneFileName(zoneId)
    this.#loaded.delete(file)
    this.#removed.add(file)
  }

  async invites (): Promise<Invite[]> {
    return (await this.#load<Documents['invites']>(this.#store.file('invites.json'), { invites: [] })).invites
  }

  async domains (): Promise<DomainAttachment[]> {
    return (await this.#load<Documents['domains']>(this.#store.file('domains.json'), { domains: [] })).domains
  }

  async commit (fsync: boolean): Promise<void> {
    for (const [file, { before, value }] of this.#loaded) {
      if (JSON.stringify(value) !== before) await writeJsonAtomic(file, value, { fsync })
    }
    for (const file of this.#removed) await fsp.rm(file, { force: true })
  }
}
