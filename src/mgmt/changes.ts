/**
 * Changes of the management state that several route modules make: finding
 * a zone (or the service's 7003), adding a DNS record under the rules
 * between records, and detaching a custom domain (its record, its
 * attachment and the gateway's route). Route modules import these from
 * here and never each other.
 */
import { idFormat, newId, type ManagementContext } from './context.js'
import { timestamp } from './envelope.js'
import { ManagementError } from './errors.js'
import type { DnsRecord, DomainAttachment, StoreTransaction, Zone } from './store.js'
import { findRecordConflict, type RecordFields } from './validate/records.js'

export function zoneNotFound (id: string): ManagementError {
  return new ManagementError('ZoneNotFound', `Could not route to /zones/${id}, perhaps your object identifier is invalid?`)
}

/** The zone `id` names, or the 7003 the service answers for an unknown or malformed identifier. */
export async function requireZone (ctx: ManagementContext, id: string): Promise<Zone> {
  const zone = idFormat.test(id) ? await ctx.store.zone(id) : undefined
  if (zone === undefined) throw zoneNotFound(id)
  return zone
}

/** The stored form of validated fields; `previous` keeps identity and creation time on updates. */
export function toRecord (zone: Zone, fields: RecordFields, now: Date, previous?: DnsRecord, meta?: Record<string, unknown>): DnsRecord {
  const record: DnsRecord = {
    id: previous?.id ?? newId(),
    zone_id: zone.id,
    zone_name: zone.name,
    name: fields.name,
    type: fields.type,
    content: fields.content,
    proxiable: fields.proxiable,
    proxied: fields.proxied,
    ttl: fields.ttl,
    locked: false,
    settings: fields.settings,
    meta: meta ?? previous?.meta ?? { auto_added: false, managed_by_apps: false, managed_by_svc_tunnel: false, source: 'primary' },
    comment: fields.comment,
    tags: fields.tags,
    created_on: previous?.created_on ?? timestamp(now),
    modified_on: timestamp(now)
  }
  if (fields.priority !== undefined) record.priority = fields.priority
  if (fields.data !== undefined) record.data = fields.data
  return record
}

/** Adds a record to a zone inside a transaction, enforcing the rules between records. */
export async function addRecord (tx: StoreTransaction, zone: Zone, fields: RecordFields, now: Date, meta?: Record<string, unknown>): Promise<DnsRecord> {
  const file = await tx.zoneFile(zone.id)
  const conflict = findRecordConflict(fields, file.records)
  if (conflict !== null) throw new ManagementError(conflict)
  const record = toRecord(zone, fields, now, undefined, meta)
  file.records.push(record)
  return record
}

/** Adds or removes `domain` in the bucket's settings (what the gateway routes on). */
export async function routeDomain (ctx: ManagementContext, bucket: string, domain: string, served: boolean): Promise<void> {
  const info = await ctx.registry.info(bucket)
  // Gone meanwhile (deleted while the domain was attached): a detach has nothing to do, an attach is refused
  // (its transaction keeps no attachment that a later bucket of the name would inherit unserved).
  if (info === null) {
    if (served) throw new ManagementError('NoSuchBucket')
    return
  }
  const others = info.settings.domains.filter(d => d !== domain)
  const domains = served ? [...others, domain] : others
  if (domains.length !== info.settings.domains.length || served !== info.settings.domains.includes(domain)) {
    await ctx.registry.updateSettings(bucket, { domains })
  }
}

/** Removes a custom domain: its CNAME record, its attachment and the gateway's route. */
export async function detachDomain (ctx: ManagementContext, tx: StoreTransaction, attachment: DomainAttachment): Promise<void> {
  const file = await tx.zoneFile(attachment.zoneId)
  file.records = file.records.filter(r => r.id !== attachment.recordId)
  const domains = await tx.domains()
  domains.splice(domains.findIndex(d => d.domain === attachment.domain), 1)
  await routeDomain(ctx, attachment.bucket, attachment.domain, false)
}
