/**
 * Bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket,
 * GetBucketLocation, Get/Put/DeleteBucketCors,
 * Get/Put/DeleteBucketLifecycleConfiguration, GetBucketEncryption and
 * GetBucketVersioning, over the registry: the same buckets and the same
 * settings the management API reads and writes.
 *
 * CORS rules map one to one onto the registry's `CorsRule`. Lifecycle rules
 * are stored in the management API's shape (the sweeper reads
 * `abortMultipartUploadsTransition` from it): S3's ID, Status, Filter/Prefix,
 * Expiration (Days or Date), Transition to STANDARD_IA and
 * AbortIncompleteMultipartUpload become `id`, `enabled`, `conditions.prefix`,
 * `deleteObjectsTransition`, `storageClassTransitions` and
 * `abortMultipartUploadsTransition`, and back.
 *
 * Encryption: objects are not encrypted by this server; GetBucketEncryption
 * answers the hosted service's default (SSE-S3, AES256) so that clients that
 * ask find what they expect. Versioning is never enabled.
 */
import {
  authorize, corsConfigurationBytes, isCorsAllowedHeader, isCorsOrigin, isHeaderText, isRuleId, isRulePrefix, lifecycleConfigurationBytes,
  MAX_CORS_CONFIGURATION_BYTES, MAX_CORS_MAX_AGE_SECONDS, MAX_CORS_RULES, MAX_LIFECYCLE_CONFIGURATION_BYTES, MAX_LIFECYCLE_RULES, MAX_RULE_AGE_SECONDS,
  RULE_ID_REQUIREMENT, RULE_PREFIX_REQUIREMENT, shownDays, type CorsRule, type LifecycleRuleDocument
} from '../bucket/index.js'
import { decodedBody } from './body.js'
import { OWNER, openNamedBucket, param, sendXml, signedRegion, type S3Context } from './context.js'
import { S3Error } from './errors.js'
import { single } from './headers.js'
import { elementsOf, list, readXmlBody, text } from './xml.js'

const DAY_SECONDS = 86_400

/** S3's range of `max-buckets`, and the page it applies when a paged parameter comes without one. */
const MAX_BUCKETS = 10_000

/** ListBuckets' continuation token: the last name of the page before, opaque to the client. */
function bucketsTokenOf (name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url')
}

function bucketsTokenName (token: string): string {
  const name = Buffer.from(token, 'base64url').toString('utf8')
  if (bucketsTokenOf(name) !== token) throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect')
  return name
}

/** The hosted service's page of ListBuckets: its default and its largest. */
const MAX_KEYS = 1000

/**
 * The hosted service's ListBuckets paging (extensions.ts): its `cf-prefix`,
 * `cf-start-after`, `cf-continuation-token` and `cf-max-keys` headers, which
 * win over the query's `prefix`, `start-after`, `continuation-token` and
 * `max-keys`; undefined when the request has none of those (S3's paging
 * then). `max-keys` above 1,000 means 1,000, as in ListObjectsV2.
 */
function hostedPaging (ctx: S3Context): { prefix?: string, startAfter?: string, token?: string, maxKeys: number } | undefined {
  const value = (name: string): string | undefined => single(ctx.request.headers, `cf-${name}`) ?? param(ctx, name)
  const hosted = ['prefix', 'start-after', 'continuation-token', 'max-keys'].some(name => ctx.request.headers[`cf-${name}`] !== undefined) ||
    param(ctx, 'start-after') !== undefined || param(ctx, 'max-keys') !== undefined
  if (!hosted) return undefined
  const maxText = value('max-keys')
  if (maxText !== undefined && !/^\d{1,10}$/.test(maxText.trim())) throw new S3Error('InvalidArgument', 'max-keys must be a non-negative integer.')
  return {
    prefix: value('prefix'),
    startAfter: value('start-after'),
    token: value('continuation-token'),
    maxKeys: maxText === undefined ? MAX_KEYS : Math.min(Number(maxText.trim()), MAX_KEYS)
  }
}

/**
 * ListBuckets with S3's `prefix`, `max-buckets` (1 to 10,000) and
 * `continuation-token`, by name; or with the hosted service's paging
 * (`hostedPaging`), answered with its IsTruncated, NextContinuationToken,
 * KeyCount, MaxKeys (and the StartAfter and ContinuationToken asked) and its
 * `cf-is-truncated` and `cf-next-continuation-token` headers. Every bucket
 * answers any region (the signature's), so `bucket-region` leaves none out.
 */
export async function listBuckets (ctx: S3Context): Promise<void> {
  const hosted = hostedPaging(ctx)
  const prefix = hosted === undefined ? param(ctx, 'prefix') : hosted.prefix
  const token = hosted === undefined ? param(ctx, 'continuation-token') : hosted.token
  const maxText = hosted === undefined ? param(ctx, 'max-buckets') : undefined
  if (maxText !== undefined && (!/^\d{1,5}$/.test(maxText) || Number(maxText) < 1 || Number(maxText) > MAX_BUCKETS)) {
    throw new S3Error('InvalidArgument', `max-buckets must be an integer from 1 to ${MAX_BUCKETS}.`)
  }
  // S3 takes an empty token (its length may be 0) as none; a token wins over start-after, as in ListObjectsV2.
  const after = token === undefined || token === '' ? hosted?.startAfter : bucketsTokenName(token)
  // A token limited to some buckets is shown those (the anonymous caller gets no list: the signature check refused it).
  const buckets = (await ctx.registry.list())
    .filter(b => ctx.principal === null || authorize(ctx.principal, 'buckets:list', b.name, undefined, 'ListBuckets'))
    .filter(b => (prefix === undefined || b.name.startsWith(prefix)) && (after === undefined || b.name > after))
  const limit = hosted !== undefined ? hosted.maxKeys : maxText === undefined ? MAX_BUCKETS : Number(maxText)
  const page = buckets.slice(0, limit)
  const last = page.at(-1)
  const next = buckets.length > limit && last !== undefined ? bucketsTokenOf(last.name) : undefined
  const listed = page.length === 0 ? '' : { Bucket: page.map(b => ({ Name: b.name, CreationDate: b.creationDate.toISOString() })) }
  if (hosted === undefined) {
    await sendXml(ctx, 200, 'ListAllMyBucketsResult', {
      Owner: OWNER,
      Buckets: listed,
      ...(next === undefined ? {} : { ContinuationToken: next }),
      ...(prefix === undefined ? {} : { Prefix: prefix })
    })
    return
  }
  const truncated = buckets.length > limit
  ctx.reply.header('cf-is-truncated', String(truncated))
  if (next !== undefined) ctx.reply.header('cf-next-continuation-token', next)
  await sendXml(ctx, 200, 'ListAllMyBucketsResult', {
    Owner: OWNER,
    Buckets: listed,
    IsTruncated: truncated,
    ...(next === undefined ? {} : { NextContinuationToken: next }),
    ...(token === undefined ? {} : { ContinuationToken: token }),
    ...(hosted.startAfter === undefined ? {} : { StartAfter: hosted.startAfter }),
    ...(prefix === undefined ? {} : { Prefix: prefix }),
    KeyCount: page.length,
    MaxKeys: limit
  })
}

/** Names S3 keeps for its own uses (InvalidBucketName there), refused here too so that a bucket made here can be made there. */
const reservedPrefixes = ['xn--', 'sthree-', 'amzn-s3-demo-']
const reservedSuffixes = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3']

/** InvalidBucketName for a name S3 reserves; the registry judges the rest of the name. */
export function refuseReservedName (name: string): void {
  if (reservedPrefixes.some(p => name.startsWith(p)) || reservedSuffixes.some(s => name.endsWith(s))) {
    throw new S3Error('InvalidBucketName', `The bucket name ${name} has a prefix or suffix S3 reserves.`)
  }
}

export async function createBucket (ctx: S3Context): Promise<void> {
  refuseReservedName(ctx.bucketName)
  // The body, when there is one, is a CreateBucketConfiguration whose location is any region.
  const length = Number(ctx.request.headers['content-length'] ?? 0)
  if (length > 0 || ctx.request.headers['transfer-encoding'] !== undefined) {
    await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'document').stream, 'CreateBucketConfiguration')
  }
  await ctx.registry.create(ctx.bucketName)
  await ctx.reply.code(200).header('location', `/${ctx.bucketName}`).send()
}

export async function deleteBucket (ctx: S3Context): Promise<void> {
  await ctx.registry.delete(ctx.bucketName)
  await ctx.reply.code(204).send()
}

export async function headBucket (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await ctx.reply.code(200).header('x-amz-bucket-region', signedRegion(ctx)).send()
}

export async function getBucketLocation (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  const region = signedRegion(ctx)
  // S3 answers an empty LocationConstraint for us-east-1.
  await sendXml(ctx, 200, 'LocationConstraint', region === 'us-east-1' ? {} : { '#text': region })
}

export async function getBucketEncryption (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await sendXml(ctx, 200, 'ServerSideEncryptionConfiguration', {
    Rule: { ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' }, BucketKeyEnabled: false }
  })
}

export async function getBucketVersioning (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await sendXml(ctx, 200, 'VersioningConfiguration', {})
}

function strings (element: unknown, name: string): string[] {
  return list(element, name).map(v => text({ v }, 'v') ?? '').map(s => s.trim())
}

export async function getBucketCors (ctx: S3Context): Promise<void> {
  const { info } = await openNamedBucket(ctx)
  const rules = info.settings.cors
  if (rules === null || rules.length === 0) throw new S3Error('NoSuchCORSConfiguration')
  await sendXml(ctx, 200, 'CORSConfiguration', {
    CORSRule: rules.map(rule => {
      // In the schema's order: ID first, when the rule has one.
      const element: Record<string, unknown> = {}
      if (rule.id !== undefined) element.ID = rule.id
      element.AllowedOrigin = rule.allowedOrigins
      element.AllowedMethod = rule.allowedMethods
      if (rule.allowedHeaders !== undefined) element.AllowedHeader = rule.allowedHeaders
      if (rule.exposeHeaders !== undefined) element.ExposeHeader = rule.exposeHeaders
      if (rule.maxAgeSeconds !== undefined) element.MaxAgeSeconds = rule.maxAgeSeconds
      return element
    })
  })
}

const corsMethods = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD']

/**
 * An AllowedOrigin's or AllowedHeader's values, refused as S3 refuses them
 * (InvalidRequest): one `*` at most; and, here, printable ASCII only, since
 * they go out in response headers (a CR or LF never could).
 */
function wildcardTexts (values: string[], element: 'AllowedOrigin' | 'AllowedHeader'): string[] {
  for (const value of values) {
    if (!isHeaderText(value)) throw new S3Error('InvalidRequest', `${element} ${JSON.stringify(value)} contains invalid character.`)
    if (!(element === 'AllowedOrigin' ? isCorsOrigin(value) : isCorsAllowedHeader(value))) {
      throw new S3Error('InvalidRequest', `${element} ${JSON.stringify(value)} can not have more than one wildcard.`)
    }
  }
  return values
}

/** A CORSRule element → the stored rule, every value checked here, so that the engine's own check never refuses what this door let through. */
function corsRuleFrom (element: unknown): CorsRule {
  const rule = elementsOf(element, ['ID', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader', 'MaxAgeSeconds'], 'CORSRule')
  const stored: CorsRule = { allowedOrigins: strings(rule, 'AllowedOrigin'), allowedMethods: strings(rule, 'AllowedMethod') }
  if (stored.allowedOrigins.length === 0 || stored.allowedMethods.length === 0) {
    throw new S3Error('MalformedXML', 'Every CORSRule has at least one AllowedOrigin and one AllowedMethod.')
  }
  const unknown = stored.allowedMethods.find(m => !corsMethods.includes(m))
  if (unknown !== undefined) throw new S3Error('InvalidRequest', `Found unsupported HTTP method in CORS config. Unsupported method is ${unknown}`)
  wildcardTexts(stored.allowedOrigins, 'AllowedOrigin')
  const id = text(rule, 'ID')
  if (id !== undefined) {
    if (!isRuleId(id)) throw new S3Error('InvalidRequest', `The ID of a CORSRule is ${RULE_ID_REQUIREMENT}.`)
    stored.id = id
  }
  const headers = wildcardTexts(strings(rule, 'AllowedHeader'), 'AllowedHeader')
  if (headers.length > 0) stored.allowedHeaders = headers
  const maxAge = text(rule, 'MaxAgeSeconds')?.trim()
  if (maxAge !== undefined) {
    // The schema's xsd:int: a value past it does not validate, as a value that is no number does not.
    if (!/^\d+$/.test(maxAge) || Number(maxAge) > MAX_CORS_MAX_AGE_SECONDS) throw new S3Error('MalformedXML', `MaxAgeSeconds "${maxAge.slice(0, 40)}" is not a valid value: a whole number from 0 to ${MAX_CORS_MAX_AGE_SECONDS}.`)
    stored.maxAgeSeconds = Number(maxAge)
  }
  const expose = strings(rule, 'ExposeHeader')
  const badExpose = expose.find(value => !isHeaderText(value))
  if (badExpose !== undefined) throw new S3Error('InvalidRequest', `ExposeHeader ${JSON.stringify(badExpose)} contains invalid character.`)
  if (expose.length > 0) stored.exposeHeaders = expose
  return stored
}

/**
 * PutBucketCors. The body is capped at MAX_CORS_CONFIGURATION_BYTES (xml.ts);
 * the rules are then held to the same number measured as GetBucketCors
 * writes them (`corsConfigurationBytes`), the measure of every door, so
 * that what GetBucketCors gives back (never over the cap) is always taken
 * back here.
 */
export async function putBucketCors (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  const document = elementsOf(await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'document').stream, 'CORSConfiguration'), ['CORSRule'], 'CORSConfiguration')
  const documentRules = list(document, 'CORSRule')
  if (documentRules.length > MAX_CORS_RULES) throw new S3Error('InvalidRequest', `A CORS configuration has at most ${MAX_CORS_RULES} rules.`)
  const rules = documentRules.map(corsRuleFrom)
  if (rules.length === 0) throw new S3Error('MalformedXML', 'A CORSConfiguration has at least one CORSRule.')
  const bytes = corsConfigurationBytes(rules)
  if (bytes > MAX_CORS_CONFIGURATION_BYTES) {
    throw new S3Error('MaxMessageLengthExceeded', `A CORS configuration is at most ${MAX_CORS_CONFIGURATION_BYTES} bytes as GetBucketCors writes it (got ${bytes}).`)
  }
  await ctx.registry.updateSettings(ctx.bucketName, { cors: rules })
  await ctx.reply.code(200).send()
}

export async function deleteBucketCors (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await ctx.registry.updateSettings(ctx.bucketName, { cors: null })
  await ctx.reply.code(204).send()
}

type Condition = { type: 'Age', maxAge: number } | { type: 'Date', date: string }

/** A whole number of days: MalformedXML when not a number, InvalidArgument when not positive. */
function daysFrom (value: string, what: string): number {
  // S3's schema makes it a 32-bit integer: leading zeros are fine, a number past that range is no integer of it.
  const days = /^-?\d+$/.test(value) ? Number(value) : NaN
  if (!(Math.abs(days) <= 2 ** 31 - 1)) throw new S3Error('MalformedXML', `${what} must be a whole number of days.`)
  if (days < 1) throw new S3Error('InvalidArgument', `${what} must be a positive integer.`)
  if (days * DAY_SECONDS > MAX_RULE_AGE_SECONDS) throw new S3Error('InvalidArgument', `${what} must be at most ${MAX_RULE_AGE_SECONDS / DAY_SECONDS} days.`)
  return days
}

/** Whether `days` or `date` is what GetBucketLifecycleConfiguration shows of `kept`. */
function shownAs (kept: Condition, days: string | undefined, date: string | undefined): boolean {
  if (kept.type === 'Age') return days !== undefined && /^\d+$/.test(days) && Number(days) === shownDays(kept.maxAge)
  return date !== undefined && Date.parse(date) === Date.parse(kept.date)
}

/**
 * `<Days>` or `<Date>` (ISO 8601, at midnight UTC, as S3 asks) of an
 * Expiration or Transition → the management API's condition. `kept`: the
 * same rule's condition as stored, which stands when the element is what
 * GetBucketLifecycleConfiguration showed of it: a rule read and put back
 * unchanged keeps what S3 cannot say (an age of 3,600 seconds shown as one
 * day, a date with a time of day set through the management API).
 */
function conditionFrom (element: unknown, where: string, kept?: Condition): Condition {
  const days = text(element, 'Days')?.trim()
  const date = text(element, 'Date')?.trim()
  if ((days === undefined) === (date === undefined)) throw new S3Error('MalformedXML', `${where} needs Days or a Date, one of them.`)
  if (kept !== undefined && shownAs(kept, days, date)) return kept
  if (days !== undefined) return { type: 'Age', maxAge: daysFrom(days, `'Days' for ${where}`) * DAY_SECONDS }
  const midnight = /^(\d{4}-\d{2}-\d{2})(?:T00:00:00(?:\.0+)?(?:Z|[+-]00:?00))?$/.exec(date ?? '')
  const parsed = midnight === null ? NaN : Date.parse(`${midnight[1]}T00:00:00Z`)
  if (Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== midnight?.[1]) {
    throw new S3Error('InvalidArgument', `'Date' of ${where} must be an ISO 8601 date at midnight GMT.`)
  }
  return { type: 'Date', date: new Date(parsed).toISOString() }
}

/**
 * What S3's schema puts in each element of a lifecycle configuration. Any
 * other element is MalformedXML, never skipped: a filter read without the
 * element that narrows it would name the whole bucket.
 */
const LIFECYCLE_ELEMENTS = {
  LifecycleConfiguration: ['Rule'],
  Rule: ['ID', 'Filter', 'Prefix', 'Status', 'Expiration', 'Transition', 'NoncurrentVersionExpiration', 'NoncurrentVersionTransition', 'AbortIncompleteMultipartUpload'],
  Filter: ['Prefix', 'Tag', 'And', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan'],
  Expiration: ['Days', 'Date', 'ExpiredObjectDeleteMarker'],
  Transition: ['Days', 'Date', 'StorageClass'],
  AbortIncompleteMultipartUpload: ['DaysAfterInitiation']
} as const

/** The rule's Prefix (in a Filter or, the older form, beside it); filters this server cannot apply are NotImplemented, never widened to the whole bucket. */
function rulePrefix (rule: Record<string, unknown>): string {
  if (rule.Filter !== undefined && rule.Prefix !== undefined) throw new S3Error('MalformedXML', 'A Rule has a Filter or a Prefix, not both.')
  const filter = elementsOf(rule.Filter, LIFECYCLE_ELEMENTS.Filter, 'Filter')
  const unsupported = ['Tag', 'And', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan'].find(name => filter?.[name] !== undefined)
  if (unsupported !== undefined) throw new S3Error('NotImplemented', `Lifecycle filters by ${unsupported} are not supported by this server; filter by Prefix.`)
  const prefix = text(filter, 'Prefix') ?? text(rule, 'Prefix') ?? ''
  if (!isRulePrefix(prefix)) throw new S3Error('InvalidArgument', `A rule's Prefix is ${RULE_PREFIX_REQUIREMENT}.`)
  return prefix
}

function conditionXml (condition: Condition): Record<string, unknown> {
  return condition.type === 'Age' ? { Days: shownDays(condition.maxAge) } : { Date: condition.date }
}

/** A stored rule as the management API keeps it (what is read of it here). */
interface StoredRule {
  id?: string
  enabled?: boolean
  conditions?: { prefix?: string }
  deleteObjectsTransition?: { condition: Condition }
  storageClassTransitions?: Array<{ condition: Condition }>
  abortMultipartUploadsTransition?: { condition: Condition }
}

/** The bucket's stored lifecycle rules (none when it has no document, or a damaged one). */
function storedRules (lifecycle: unknown): StoredRule[] {
  const rules = (lifecycle as { rules?: unknown } | null)?.rules
  return Array.isArray(rules) ? rules as StoredRule[] : []
}

export async function putBucketLifecycle (ctx: S3Context): Promise<void> {
  const { info } = await openNamedBucket(ctx)
  const current = new Map(storedRules(info.settings.lifecycle).map(rule => [rule.id, rule]))
  const document = elementsOf(await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'document').stream, 'LifecycleConfiguration'), LIFECYCLE_ELEMENTS.LifecycleConfiguration, 'LifecycleConfiguration')
  const ids = new Set<string>()
  const documentRules = list(document, 'Rule')
  if (documentRules.length > MAX_LIFECYCLE_RULES) throw new S3Error('InvalidRequest', `A lifecycle configuration has at most ${MAX_LIFECYCLE_RULES} rules.`)
  const rules = documentRules.map((element, i) => {
    const rule = elementsOf(element, LIFECYCLE_ELEMENTS.Rule, 'Rule')
    const id = text(rule, 'ID')?.trim() || `rule-${i + 1}`
    if (!isRuleId(id)) throw new S3Error('InvalidArgument', `A rule ID is ${RULE_ID_REQUIREMENT}.`)
    if (ids.has(id)) throw new S3Error('InvalidArgument', `Rule ID ${id} is used twice.`)
    ids.add(id)
    const status = text(rule, 'Status')?.trim()
    if (status !== 'Enabled' && status !== 'Disabled') throw new S3Error('MalformedXML', 'Every Rule has a Status of Enabled or Disabled.')
    // Versions are never kept here: actions on noncurrent versions or delete markers could not do what they say.
    const versioned = ['NoncurrentVersionExpiration', 'NoncurrentVersionTransition'].find(name => rule[name] !== undefined) ??
      (text(rule.Expiration, 'ExpiredObjectDeleteMarker') === undefined ? undefined : 'ExpiredObjectDeleteMarker')
    if (versioned !== undefined) throw new S3Error('NotImplemented', `${versioned}: versioning is not supported by this server.`)
    const stored: LifecycleRuleDocument = { id, enabled: status === 'Enabled', conditions: { prefix: rulePrefix(rule) } }
    const was = current.get(id)
    const expiration = rule.Expiration === undefined ? undefined : elementsOf(rule.Expiration, LIFECYCLE_ELEMENTS.Expiration, 'Expiration')
    if (expiration !== undefined) stored.deleteObjectsTransition = { condition: conditionFrom(expiration, 'Expiration', was?.deleteObjectsTransition?.condition) }
    const abort = rule.AbortIncompleteMultipartUpload === undefined ? undefined : elementsOf(rule.AbortIncompleteMultipartUpload, LIFECYCLE_ELEMENTS.AbortIncompleteMultipartUpload, 'AbortIncompleteMultipartUpload')
    if (abort !== undefined) {
      const given = text(abort, 'DaysAfterInitiation')?.trim() ?? ''
      const keptAbort = was?.abortMultipartUploadsTransition?.condition
      stored.abortMultipartUploadsTransition = { condition: keptAbort !== undefined && shownAs(keptAbort, given, undefined) ? keptAbort : { type: 'Age', maxAge: daysFrom(given, 'DaysAfterInitiation') * DAY_SECONDS } }
    }
    const transitions = list(rule, 'Transition')
    if (transitions.length > 1) throw new S3Error('InvalidArgument', "'StorageClass' must be different for 'Transition' actions in the same 'Rule': STANDARD_IA is the one class to go to.")
    if (transitions.length > 0) {
      stored.storageClassTransitions = transitions.map((element, at) => {
        const t = elementsOf(element, LIFECYCLE_ELEMENTS.Transition, 'Transition')
        if (text(t, 'StorageClass')?.trim() !== 'STANDARD_IA') throw new S3Error('InvalidStorageClass', 'Transitions may only go to STANDARD_IA.')
        return { storageClass: 'InfrequentAccess' as const, condition: conditionFrom(t, 'Transition', was?.storageClassTransitions?.[at]?.condition) }
      })
    }
    if (expiration === undefined && abort === undefined && transitions.length === 0) {
      throw new S3Error('InvalidRequest', 'At least one action needs to be specified in a rule.')
    }
    return stored
  })
  if (rules.length === 0) throw new S3Error('MalformedXML', 'A LifecycleConfiguration has at least one Rule.')
  // Measured as GetBucketLifecycleConfiguration writes the rules, as every door measures them (this body's own spelling may be terser).
  const bytes = lifecycleConfigurationBytes(rules)
  if (bytes > MAX_LIFECYCLE_CONFIGURATION_BYTES) {
    throw new S3Error('MaxMessageLengthExceeded', `A lifecycle configuration is at most ${MAX_LIFECYCLE_CONFIGURATION_BYTES} bytes as GetBucketLifecycleConfiguration writes it (got ${bytes}).`)
  }
  // The engine checks the rules again and keeps what it reads, as from the management API.
  await ctx.registry.updateSettings(ctx.bucketName, { lifecycle: { rules } })
  await ctx.reply.code(200).send()
}

export async function getBucketLifecycle (ctx: S3Context): Promise<void> {
  const { info } = await openNamedBucket(ctx)
  const rules = storedRules(info.settings.lifecycle)
  if (rules.length === 0) throw new S3Error('NoSuchLifecycleConfiguration')
  await sendXml(ctx, 200, 'LifecycleConfiguration', {
    Rule: rules.map(rule => ({
      ID: rule.id,
      Filter: { Prefix: rule.conditions?.prefix ?? '' },
      Status: rule.enabled === false ? 'Disabled' : 'Enabled',
      ...(rule.deleteObjectsTransition === undefined ? {} : { Expiration: conditionXml(rule.deleteObjectsTransition.condition) }),
      ...(Array.isArray(rule.storageClassTransitions) && rule.storageClassTransitions.length > 0
        ? { Transition: rule.storageClassTransitions.map(t => Object.assign(conditionXml(t.condition), { StorageClass: 'STANDARD_IA' })) }
        : {}),
      ...(rule.abortMultipartUploadsTransition === undefined
        ? {}
        : { AbortIncompleteMultipartUpload: { DaysAfterInitiation: shownDays((rule.abortMultipartUploadsTransition.condition as { maxAge: number }).maxAge) } })
    }))
  })
}

export async function deleteBucketLifecycle (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await ctx.registry.updateSettings(ctx.bucketName, { lifecycle: null })
  await ctx.reply.code(204).send()
}
