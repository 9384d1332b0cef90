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
import type { CorsRule } from '../bucket/index.js'
import { decodedBody } from './body.js'
import { OWNER, openNamedBucket, sendXml, signedRegion, type S3Context } from './context.js'
import { S3Error } from './errors.js'
import { list, readXmlBody, text } from './xml.js'

const DAY_SECONDS = 86_400

export async function listBuckets (ctx: S3Context): Promise<void> {
  const buckets = await ctx.registry.list()
  await sendXml(ctx, 200, 'ListAllMyBucketsResult', {
    Owner: OWNER,
    Buckets: buckets.length === 0 ? '' : { Bucket: buckets.map(b => ({ Name: b.name, CreationDate: b.creationDate.toISOString() })) }
  })
}

export async function createBucket (ctx: S3Context): Promise<void> {
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
    CORSRule: rules.map(rule => ({
      ...((rule as CorsRule & { id?: string }).id === undefined ? {} : { ID: (rule as CorsRule & { id?: string }).id }),
      AllowedOrigin: rule.allowedOrigins,
      AllowedMethod: rule.allowedMethods,
      ...(rule.allowedHeaders === undefined ? {} : { AllowedHeader: rule.allowedHeaders }),
      ...(rule.exposeHeaders === undefined ? {} : { ExposeHeader: rule.exposeHeaders }),
      ...(rule.maxAgeSeconds === undefined ? {} : { MaxAgeSeconds: rule.maxAgeSeconds })
    }))
  })
}

const corsMethods = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD']

export async function putBucketCors (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  const document = await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'document').stream, 'CORSConfiguration')
  const rules = list(document, 'CORSRule').map(rule => {
    const stored: CorsRule & { id?: string } = { allowedOrigins: strings(rule, 'AllowedOrigin'), allowedMethods: strings(rule, 'AllowedMethod') }
    if (stored.allowedOrigins.length === 0 || stored.allowedMethods.length === 0) {
      throw new S3Error('MalformedXML', 'Every CORSRule has at least one AllowedOrigin and one AllowedMethod.')
    }
    const unknown = stored.allowedMethods.find(m => !corsMethods.includes(m))
    if (unknown !== undefined) throw new S3Error('InvalidRequest', `Found unsupported HTTP method in CORS config. Unsupported method is ${unknown}`)
    const headers = strings(rule, 'AllowedHeader')
    if (headers.length > 0) stored.allowedHeaders = headers
    const expose = strings(rule, 'ExposeHeader')
    if (expose.length > 0) stored.exposeHeaders = expose
    const maxAge = text(rule, 'MaxAgeSeconds')?.trim()
    if (maxAge !== undefined) {
      if (!/^\d+$/.test(maxAge)) throw new S3Error('MalformedXML', 'MaxAgeSeconds must be a non-negative integer.')
      stored.maxAgeSeconds = Number(maxAge)
    }
    const id = text(rule, 'ID')
    if (id !== undefined) stored.id = id
    return stored
  })
  if (rules.length === 0) throw new S3Error('MalformedXML', 'A CORSConfiguration has at least one CORSRule.')
  await ctx.registry.updateSettings(ctx.bucketName, { cors: rules })
  await ctx.reply.code(200).send()
}

export async function deleteBucketCors (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await ctx.registry.updateSettings(ctx.bucketName, { cors: null })
  await ctx.reply.code(204).send()
}

type Condition = { type: 'Age', maxAge: number } | { type: 'Date', date: string }

/** `<Days>` or `<Date>` of an Expiration or Transition → the management API's condition. */
function conditionFrom (element: unknown, where: string): Condition {
  const days = text(element, 'Days')?.trim()
  const date = text(element, 'Date')?.trim()
  if (days !== undefined && /^\d+$/.test(days) && Number(days) > 0) return { type: 'Age', maxAge: Number(days) * DAY_SECONDS }
  if (date !== undefined && !Number.isNaN(Date.parse(date))) return { type: 'Date', date: new Date(date).toISOString() }
  throw new S3Error('MalformedXML', `${where} needs a positive Days or a Date.`)
}

function conditionXml (condition: Condition): Record<string, unknown> {
  return condition.type === 'Age' ? { Days: Math.max(1, Math.round(condition.maxAge / DAY_SECONDS)) } : { Date: condition.date }
}

export async function putBucketLifecycle (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  const document = await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'document').stream, 'LifecycleConfiguration')
  const ids = new Set<string>()
  const rules = list(document, 'Rule').map((rule, i) => {
    const id = text(rule, 'ID')?.trim() || `rule-${i + 1}`
    if (ids.has(id)) throw new S3Error('InvalidArgument', `Rule ID ${id} is used twice.`)
    ids.add(id)
    const status = text(rule, 'Status')?.trim()
    if (status !== 'Enabled' && status !== 'Disabled') throw new S3Error('MalformedXML', 'Every Rule has a Status of Enabled or Disabled.')
    const filter = (rule as Record<string, unknown>).Filter
    const prefix = text(filter, 'Prefix') ?? text(rule, 'Prefix') ?? ''
    const stored: Record<string, unknown> = { id, enabled: status === 'Enabled', conditions: { prefix } }
    const expiration = (rule as Record<string, unknown>).Expiration
    if (expiration !== undefined) stored.deleteObjectsTransition = { condition: conditionFrom(expiration, 'Expiration') }
    const abort = (rule as Record<string, unknown>).AbortIncompleteMultipartUpload
    if (abort !== undefined) {
      const days = text(abort, 'DaysAfterInitiation')?.trim()
      if (days === undefined || !/^\d+$/.test(days) || Number(days) < 1) throw new S3Error('MalformedXML', 'DaysAfterInitiation must be a positive integer.')
      stored.abortMultipartUploadsTransition = { condition: { type: 'Age', maxAge: Number(days) * DAY_SECONDS } }
    }
    const transitions = list(rule, 'Transition')
    if (transitions.length > 0) {
      stored.storageClassTransitions = transitions.map(t => {
        if (text(t, 'StorageClass')?.trim() !== 'STANDARD_IA') throw new S3Error('InvalidStorageClass', 'Transitions may only go to STANDARD_IA.')
        return { storageClass: 'InfrequentAccess', condition: conditionFrom(t, 'Transition') }
      })
    }
    return stored
  })
  if (rules.length === 0) throw new S3Error('MalformedXML', 'A LifecycleConfiguration has at least one Rule.')
  await ctx.registry.updateSettings(ctx.bucketName, { lifecycle: { rules } })
  await ctx.reply.code(200).send()
}

export async function getBucketLifecycle (ctx: S3Context): Promise<void> {
  const { info } = await openNamedBucket(ctx)
  const rules = (info.settings.lifecycle as { rules?: Array<Record<string, any>> } | null)?.rules
  if (!Array.isArray(rules) || rules.length === 0) throw new S3Error('NoSuchLifecycleConfiguration')
  await sendXml(ctx, 200, 'LifecycleConfiguration', {
    Rule: rules.map(rule => ({
      ID: rule.id,
      Filter: { Prefix: rule.conditions?.prefix ?? '' },
      Status: rule.enabled === false ? 'Disabled' : 'Enabled',
      ...(rule.deleteObjectsTransition === undefined ? {} : { Expiration: conditionXml(rule.deleteObjectsTransition.condition) }),
      ...(Array.isArray(rule.storageClassTransitions) && rule.storageClassTransitions.length > 0
        ? { Transition: rule.storageClassTransitions.map((t: { condition: Condition }) => Object.assign(conditionXml(t.condition), { StorageClass: 'STANDARD_IA' })) }
        : {}),
      ...(rule.abortMultipartUploadsTransition === undefined
        ? {}
        : { AbortIncompleteMultipartUpload: { DaysAfterInitiation: Math.max(1, Math.round(rule.abortMultipartUploadsTransition.condition.maxAge / DAY_SECONDS)) } })
    }))
  })
}

export async function deleteBucketLifecycle (ctx: S3Context): Promise<void> {
  await openNamedBucket(ctx)
  await ctx.registry.updateSettings(ctx.bucketName, { lifecycle: null })
  await ctx.reply.code(204).send()
}
