/**
 * Object operations: PutObject, GetObject, HeadObject, DeleteObject,
 * DeleteObjects and CopyObject, each one or two binding calls.
 *
 * Reads are the engine's read decision (`bucket.read`), translated: it
 * judges the conditions, then the range or the part (RFC 9110 order: 412,
 * 304, then 416). A malformed or multi-range Range header is ignored (the
 * whole object is served), as S3 does. `partNumber` on GET/HEAD is a part
 * of a multipart object (206, Content-Range, x-amz-mp-parts-count); part 1
 * of an object put in one piece is the whole object, as S3 answers it.
 *
 * CopyObject within one bucket is the binding's `copy` (the store shares the
 * bytes, unless the source is multipart or lacks the checksum asked for:
 * then the binding reads them again, the copy being a single-part object
 * whose ETag is the MD5 of its bytes, as S3 makes it; `x-amz-copy-source-if-*`
 * are its `sourceOnlyIf`). Between buckets, and for UploadPartCopy
 * (multipart.ts), it is a `get` streamed into a `put`, the conditions being
 * the source read's `onlyIf`, the checksum (x-amz-checksum-algorithm, else
 * the source's) computed by the binding as the bytes stream; the result
 * answers it. The binding is handed the body the `get` answered, not its
 * bytes: it refuses a source larger than a copy may be before reading it,
 * as it does within a bucket (EntityTooLarge).
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { authorize, BucketErrors, copiedChecksums, isRecyclingStream, MAX_DELETE_KEYS, MAX_KEY_BYTES, MAX_PART_NUMBER, mergeCustomMetadata, objectExpirationHeader } from '../bucket/index.js'
import { responseOverridesFrom, sandboxObjectHeaders, unsendableOverride } from '../doors/request-metadata.js'
import { sendRecycling } from '../doors/recycling-body.js'
import { VersionHeaders } from '../doors/version-headers.js'
import type { Bucket, BucketChecksumAlgorithm, BucketInfo, BucketObject, BucketObjectBody, BucketPutOptions, BucketRange, BucketReadOptions, BucketReadOutcome, BucketReadServed, BucketUploadPartOptions, StorageClass } from '../bucket/index.js'
import { bodyPipeline, decodedBody, defaultChecksum, takesDefaultChecksum } from './body.js'
import { openBucketForUpload } from './extensions.js'
import { openNamedBucket, sendXml, type S3Context } from './context.js'
import { fromCatalogue, S3Error } from './errors.js'
import {
  checksumHeaders, conditionalFrom, copyDestinationConditionalFrom, customMetadataFrom, httpMetadataFrom, objectHeaders, preconditionFailed, single, storageClassFrom
} from './headers.js'
import { decodePutRequest, type PutRequest } from './put-request.js'
import { copySourceSsecKey, ssecAnswerHeaders, ssecOption } from './ssec.js'
import { elementsOf, list, readXmlBody, text } from './xml.js'

/**
 * `x-amz-expiration` of an object (PutObject, GetObject, HeadObject,
 * CompleteMultipartUpload) when an enabled lifecycle rule of its bucket
 * expires it: `expiry-date="<HTTP date>", rule-id="<id>"`, as S3 sends it.
 */
export function expirationHeaders (info: BucketInfo, object: BucketObject): Record<string, string> {
  const value = objectExpirationHeader(info.settings.lifecycle, object.key, object.uploaded)
  return value === undefined ? {} : { 'x-amz-expiration': value }
}

/** KeyTooLongError before any byte is read, as S3 answers it. */
export function checkKey (key: string): void {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new S3Error('KeyTooLongError')
}

/** A part number from the query: 1 to 10,000, else InvalidArgument. */
export function partNumberFrom (value: string | undefined): number {
  if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > MAX_PART_NUMBER) {
    throw new S3Error('InvalidArgument', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`)
  }
  return Number(value)
}

/** The binding's `put` options of a decoded PutObject whose body keeps `checksum` (S3's default checksum when it announced no x-amz-checksum-*). */
function putOptions (put: PutRequest, checksum: BucketUploadPartOptions, defaultStorageClass: StorageClass): BucketPutOptions {
  const options: BucketPutOptions = { httpMetadata: put.httpMetadata, customMetadata: put.customMetadata, storageClass: put.storageClass ?? defaultStorageClass }
  if (put.onlyIf !== undefined) options.onlyIf = put.onlyIf
  if (takesDefaultChecksum(put.body)) options.computeChecksums = [defaultChecksum]
  return Object.assign(options, checksum, put.ssec)
}

export async function putObject (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket, info } = await openBucketForUpload(ctx)
  const put = decodePutRequest(ctx.request.headers, ctx.signature)
  const body = bodyPipeline(ctx.request.raw, put.body)
  const object = await bucket.put(ctx.key, body.stream, putOptions(put, body.checksum, info.settings.storageClass))
  if (object === null) throw preconditionFailed(put.onlyIf)
  ctx.request.logFields = { bucket: ctx.bucketName, key: ctx.key, bytes: object.size }
  ctx.reply.code(200).header('etag', object.httpEtag).headers(checksumHeaders(object)).headers(expirationHeaders(info, object)).headers(ssecAnswerHeaders(object.ssecKeyMd5))
  await ctx.reply.send()
}

export interface ReadAnswer {
  status: number
  headers: Record<string, string>
  body?: Buffer | Readable
}

/** A 304 carries the validators, and the Cache-Control and Expires a 200 would (RFC 9110 section 15.4.5), no other metadata. */
function notModified (object: BucketObject): ReadAnswer {
  const described = objectHeaders(object)
  const headers: Record<string, string> = { etag: described.etag, 'last-modified': described['last-modified'] }
  for (const name of ['cache-control', 'expires']) {
    if (described[name] !== undefined) headers[name] = described[name]
  }
  return { status: 304, headers }
}

function unsatisfiable (size: number): never {
  throw new S3Error('InvalidRange', undefined, { 'content-range': `bytes */${size}` })
}

/** The headers of whole reads asking for no overrides and no checksums. */
const wholeHeaders = new VersionHeaders()

function answerHeaders (requestHeaders: IncomingHttpHeaders, query: Record<string, string | string[]>, outcome: BucketReadServed): { status: number, headers: Record<string, string> } {
  const { object, range: served, partsCount: parts, partChecksum } = outcome
  const checksumsAsked = single(requestHeaders, 'x-amz-checksum-mode')?.toUpperCase() === 'ENABLED'
  const overrides = responseOverridesFrom(query)
  const plain = served === null && parts === undefined && !checksumsAsked && Object.keys(overrides).length === 0
  const known = plain ? wholeHeaders.copy(object) : undefined
  if (known !== undefined) return { status: 200, headers: known }
  // The whole object's checksums describe it whole: a range is answered without them, a part with its own if kept.
  const headers = objectHeaders(object, { overrides, checksums: served === null && checksumsAsked })
  if (checksumsAsked && partChecksum !== undefined) {
    headers[`x-amz-checksum-${partChecksum.algorithm}`] = Buffer.from(partChecksum.value).toString('base64')
    headers['x-amz-checksum-type'] = partChecksum.type
  }
  if (parts !== undefined) headers['x-amz-mp-parts-count'] = String(parts)
  Object.assign(headers, ssecAnswerHeaders(object.ssecKeyMd5))
  // In development mode this port takes unsigned requests from its own origin: an HTML object must not act as it (SDKs ignore both headers).
  sandboxObjectHeaders(headers)
  if (served === null) {
    headers['content-length'] = String(object.size)
    if (plain) wholeHeaders.keep(object, headers)
    return { status: 200, headers }
  }
  headers['content-length'] = String(served.length)
  headers['content-range'] = `bytes ${served.offset}-${served.offset + served.length - 1}/${object.size}`
  return { status: 206, headers }
}

/** What a GetObject or HeadObject asks the engine, read from its headers and query. */
interface ReadRequest { options: BucketReadOptions, partNumber: number | undefined, onlyIf: ReturnType<typeof conditionalFrom> }

function readRequest (requestHeaders: IncomingHttpHeaders, query: Record<string, string | string[]>, method: 'GET' | 'HEAD'): ReadRequest {
  const rangeHeader = single(requestHeaders, 'range')
  const partParameter = Array.isArray(query.partNumber) ? query.partNumber[0] : query.partNumber
  const partNumber = partParameter === undefined ? undefined : partNumberFrom(partParameter)
  if (partNumber !== undefined && rangeHeader !== undefined) throw new S3Error('InvalidRequest', 'Cannot specify both Range header and partNumber query parameter')
  const unsendable = unsendableOverride(query)
  if (unsendable !== undefined) throw new S3Error('InvalidArgument', `${unsendable} holds a control character, which no header can carry.`, {}, { ArgumentName: unsendable })
  const onlyIf = conditionalFrom(requestHeaders, 'read')
  return { options: { onlyIf, range: rangeHeader, partNumber, body: method === 'GET', ...ssecOption(requestHeaders) }, partNumber, onlyIf }
}

/** The answer to the engine's outcome, or the S3 error it is. */
function answerOf (outcome: BucketReadOutcome, asked: ReadRequest, requestHeaders: IncomingHttpHeaders, query: Record<string, string | string[]>, info: BucketInfo): ReadAnswer {
  switch (outcome.status) {
    case 'not-found': throw new S3Error('NoSuchKey')
    case 'precondition-failed': throw preconditionFailed(asked.onlyIf)
    case 'not-modified': return notModified(outcome.object)
    case 'range-not-satisfiable':
      if (asked.partNumber !== undefined) throw new S3Error('InvalidPartNumber')
      return unsatisfiable(outcome.object.size)
  }
  const answer = answerHeaders(requestHeaders, query, outcome)
  Object.assign(answer.headers, expirationHeaders(info, outcome.object))
  return outcome.body === null ? answer : { status: answer.status, headers: answer.headers, body: outcome.body }
}

/**
 * GetObject/HeadObject of `key` with the request's headers and query: the
 * engine's read decision (conditions, then the range or part), translated.
 */
export async function readAnswer (requestHeaders: IncomingHttpHeaders, query: Record<string, string | string[]>, bucket: Bucket, info: BucketInfo, key: string, method: 'GET' | 'HEAD'): Promise<ReadAnswer> {
  const asked = readRequest(requestHeaders, query, method)
  return answerOf(await bucket.read(key, asked.options), asked, requestHeaders, query, info)
}

/** `readAnswer` without a query, at once when the engine decides it so (`readNow`); undefined otherwise. */
export function readAnswerNow (requestHeaders: IncomingHttpHeaders, bucket: Bucket, info: BucketInfo, key: string, method: 'GET' | 'HEAD'): ReadAnswer | undefined {
  const asked = readRequest(requestHeaders, {}, method)
  const outcome = bucket.readNow(key, asked.options)
  return outcome === undefined ? undefined : answerOf(outcome, asked, requestHeaders, {}, info)
}

export async function getObject (ctx: S3Context, method: 'GET' | 'HEAD'): Promise<void> {
  checkKey(ctx.key)
  const { bucket, info } = await openNamedBucket(ctx)
  const answer = await readAnswer(ctx.request.headers, ctx.query, bucket, info, ctx.key, method)
  ctx.reply.code(answer.status).headers(answer.headers)
  // A stored body that lends its chunks is sent as the fast read sends it: a body cut short after the headers is logged as such.
  if (isRecyclingStream(answer.body)) return await sendRecycling(ctx.reply, answer.body)
  await ctx.reply.send(answer.body)
}

/** Conditions a DeleteObject may carry: S3's If-Match (and the time and size of directory buckets), and the other conditional headers, refused by the HTTP routes too. */
const deleteConditionHeaders = ['if-match', 'x-amz-if-match-last-modified-time', 'x-amz-if-match-size', 'if-none-match', 'if-modified-since', 'if-unmodified-since']

/**
 * The binding's delete takes no conditions, and a door does not judge them
 * itself: a conditional DeleteObject, or a DeleteObjects entry carrying an
 * ETag, LastModifiedTime or Size, is NotImplemented, nothing deleted, rather
 * than deleting what the client meant to keep (as the HTTP routes refuse it).
 */
function refuseConditionalDelete (condition: string | undefined): void {
  if (condition !== undefined) throw new S3Error('NotImplemented', `Conditional deletes (${condition}) are not supported by this server; nothing was deleted.`)
}

export async function deleteObject (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const headers = ctx.request.headers
  refuseConditionalDelete(deleteConditionHeaders.find(name => headers[name] !== undefined))
  const { bucket } = await openNamedBucket(ctx)
  await bucket.delete(ctx.key)
  await ctx.reply.code(204).send()
}

function validKey (key: string): boolean {
  return Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES && key.isWellFormed()
}

export async function deleteObjects (ctx: S3Context): Promise<void> {
  const { bucket } = await openNamedBucket(ctx)
  // Every element S3's schema puts there, no other: a miscased `Etag` read as absent would delete without its condition.
  const document = elementsOf(await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'document').stream, 'Delete'), ['Object', 'Quiet'], 'Delete')
  const objects = list(document, 'Object').map(entry => elementsOf(entry, ['Key', 'VersionId', 'ETag', 'LastModifiedTime', 'Size'], 'Object'))
  if (objects.length === 0 || objects.length > MAX_DELETE_KEYS) {
    throw new S3Error('MalformedXML', `A Delete names 1 to ${MAX_DELETE_KEYS} objects.`)
  }
  const quietText = text(document, 'Quiet')?.trim().toLowerCase()
  if (quietText !== undefined && !['true', 'false', '1', '0'].includes(quietText)) throw new S3Error('MalformedXML', 'Quiet is true or false.')
  const quiet = quietText === 'true' || quietText === '1'
  const deleted: Array<Record<string, string>> = []
  const errors: Array<Record<string, string>> = []
  for (const entry of objects) {
    const key = text(entry, 'Key')
    if (key === undefined || key === '') throw new S3Error('MalformedXML', 'Every Object of a Delete has a Key.')
    refuseConditionalDelete(['ETag', 'LastModifiedTime', 'Size'].find(name => text(entry, name) !== undefined))
    const version = text(entry, 'VersionId')
    const named: Record<string, string> = version === undefined ? {} : { VersionId: version }
    // As for DeleteObject: versions are not kept, `null` is the object itself and any other id names nothing to delete.
    if (version !== undefined && version !== 'null') errors.push({ Key: key, ...named, Code: 'InvalidArgument', Message: 'Invalid version id specified' })
    // Temporary credentials limited to prefixes or keys delete those only; the others are refused one by one.
    else if (ctx.principal !== null && !authorize(ctx.principal, 'object:write', ctx.bucketName, key, 'DeleteObjects')) errors.push({ Key: key, ...named, Code: 'AccessDenied', Message: 'Access Denied' })
    else if (validKey(key)) deleted.push({ Key: key, ...named })
    else errors.push({ Key: key, Code: 'KeyTooLongError', Message: 'Your key is too long' })
  }
  if (deleted.length > 0) {
    // A key a bucket lock retains stays, and is an error entry of its own; the others are deleted.
    const refused = new Set(await bucket.deleteEach(deleted.map(d => d.Key)))
    if (refused.size > 0) {
      const locked = deleted.filter(d => refused.has(d.Key))
      deleted.splice(0, deleted.length, ...deleted.filter(d => !refused.has(d.Key)))
      errors.push(...locked.map(d => Object.assign({}, d, { Code: fromCatalogue.ObjectLocked, Message: BucketErrors.ObjectLocked.message })))
    }
  }
  const result: { Deleted?: typeof deleted, Error?: typeof errors } = {}
  if (!quiet) result.Deleted = deleted
  if (errors.length > 0) result.Error = errors
  await sendXml(ctx, 200, 'DeleteResult', result)
}

/** `x-amz-copy-source`: `[/]bucket/key[?versionId=...]`, percent-encoded. */
export function copySourceFrom (ctx: S3Context): { bucket: string, key: string } {
  const raw = single(ctx.request.headers, 'x-amz-copy-source') ?? ''
  const version = /\?versionId=([^&]*)$/.exec(raw)?.[1]
  // Versions are not kept: `null` (S3's name for the one version of an unversioned object) is the object itself.
  if (version !== undefined && version !== 'null') throw new S3Error('InvalidArgument', 'Invalid version id specified')
  const withoutVersion = raw.replace(/\?versionId=[^&]*$/, '')
  let decoded: string
  try {
    decoded = decodeURIComponent(withoutVersion)
  } catch {
    throw new S3Error('InvalidArgument', 'x-amz-copy-source has malformed percent-encoding.')
  }
  const path = decoded.startsWith('/') ? decoded.slice(1) : decoded
  const slash = path.indexOf('/')
  if (slash <= 0 || slash === path.length - 1) throw new S3Error('InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey')
  return { bucket: path.slice(0, slash), key: path.slice(slash + 1) }
}

/** The copy source read with its `x-amz-copy-source-if-*` conditions (and a range for UploadPartCopy). */
export async function readCopySource (ctx: S3Context, range?: BucketRange): Promise<BucketObjectBody> {
  const source = copySourceFrom(ctx)
  checkKey(source.key)
  const { bucket } = await openNamedBucket(ctx, source.bucket)
  const onlyIf = conditionalFrom(ctx.request.headers, 'read', 'x-amz-copy-source-')
  const object = await bucket.get(source.key, { onlyIf, range, ssecKey: copySourceSsecKey(ctx.request.headers) })
  if (object === null) throw new S3Error('NoSuchKey')
  if (!('body' in object)) throw new S3Error('PreconditionFailed', undefined, {})
  return object
}

export async function copyObject (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const headers = ctx.request.headers
  const directive = (single(headers, 'x-amz-metadata-directive') ?? 'COPY').toUpperCase()
  // MERGE is the hosted service's (extensions.ts): the request's metadata laid over the source's.
  if (directive !== 'COPY' && directive !== 'REPLACE' && directive !== 'MERGE') throw new S3Error('InvalidArgument', 'Unknown metadata directive.')
  const storageClass = storageClassFrom(headers)
  const source = copySourceFrom(ctx)
  const ssec = ssecOption(headers)
  // Plain on both sides, or the same customer key on both, changes no encryption attribute; a key on one side
  // only (decrypting in place, or encrypting) or two different keys do change it.
  const sourceKey = copySourceSsecKey(headers)
  const sameEncryption = ssec.ssecKey === undefined || sourceKey === undefined
    ? ssec.ssecKey === sourceKey
    : Buffer.from(sourceKey).equals(Buffer.from(ssec.ssecKey))
  if (source.bucket === ctx.bucketName && source.key === ctx.key && directive === 'COPY' && storageClass === undefined && sameEncryption) {
    throw new S3Error('InvalidRequest', 'This copy request is illegal because it is trying to copy an object to itself without changing the object\'s metadata, storage class, website redirect location or encryption attributes.')
  }
  const checksumAlgorithm = copyChecksumAlgorithmFrom(single(headers, 'x-amz-checksum-algorithm'))
  // cf-copy-destination-if-* (and If-Match, If-None-Match) judge the object the copy would replace.
  const onlyIf = copyDestinationConditionalFrom(headers)
  const { bucket, info } = await openNamedBucket(ctx)
  // As a put: without x-amz-storage-class the copy takes the destination bucket's default, not the source's (S3's CopyObject).
  const copiedClass = storageClass ?? info.settings.storageClass
  if (source.bucket === ctx.bucketName) {
    // Within one bucket the binding's copy: the bytes shared, or read again for a multipart source or a checksum the source lacks.
    checkKey(source.key)
    const outcome = await bucket.copy(source.key, ctx.key, {
      onlyIf,
      sourceOnlyIf: conditionalFrom(headers, 'read', 'x-amz-copy-source-'),
      ...(directive === 'COPY' ? {} : { httpMetadata: httpMetadataFrom(headers), customMetadata: customMetadataFrom(headers) }),
      ...(directive === 'MERGE' ? { mergeMetadata: true } : {}),
      storageClass: copiedClass,
      ...(checksumAlgorithm === undefined ? {} : { checksumAlgorithm }),
      sourceSsecKey: sourceKey,
      ...ssec
    })
    if (outcome.status === 'not-found') throw new S3Error('NoSuchKey')
    // A copy source's condition is not named: S3's name for it is not known to this door.
    if (outcome.status === 'source-precondition-failed') throw new S3Error('PreconditionFailed', undefined, {})
    if (outcome.status === 'precondition-failed') throw preconditionFailed(onlyIf)
    ctx.reply.headers(ssecAnswerHeaders(outcome.object.ssecKeyMd5))
    await sendXml(ctx, 200, 'CopyObjectResult', copyResult(outcome.object, checksumAlgorithm))
    return
  }
  const object = await readCopySource(ctx)
  // The copy's checksums, as the binding's copy chooses them, computed as the bytes stream.
  const had = Object.keys(object.checksums.toJSON()) as BucketChecksumAlgorithm[]
  const computeChecksums = copiedChecksums(had, object.checksums.composite?.algorithm, checksumAlgorithm)
  const copied = await bucket.putCopied(ctx.key, object, {
    httpMetadata: directive === 'COPY' ? object.httpMetadata : directive === 'MERGE' ? Object.assign({}, object.httpMetadata, httpMetadataFrom(headers)) : httpMetadataFrom(headers),
    customMetadata: directive === 'COPY' ? object.customMetadata : directive === 'MERGE' ? mergeCustomMetadata(object.customMetadata, customMetadataFrom(headers)) : customMetadataFrom(headers),
    storageClass: copiedClass,
    computeChecksums,
    onlyIf,
    ...ssec
  }, { bucket: source.bucket, key: object.key })
  if (copied === null) throw preconditionFailed(onlyIf)
  ctx.reply.headers(ssecAnswerHeaders(copied.ssecKeyMd5))
  await sendXml(ctx, 200, 'CopyObjectResult', copyResult(copied, checksumAlgorithm))
}

const s3ChecksumAlgorithms = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const

/** x-amz-checksum-algorithm of a CopyObject: one of S3's, or InvalidRequest. */
function copyChecksumAlgorithmFrom (value: string | undefined): BucketChecksumAlgorithm | undefined {
  if (value === undefined) return undefined
  const algorithm = value.trim().toLowerCase()
  if (!(s3ChecksumAlgorithms as readonly string[]).includes(algorithm)) {
    throw new S3Error('InvalidRequest', 'Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]')
  }
  return algorithm as BucketChecksumAlgorithm
}

/** CopyObjectResult: the copy's time and ETag, and its checksum (the one asked for, else the first it has), FULL_OBJECT as S3's copies are. */
function copyResult (copy: BucketObject, asked: BucketChecksumAlgorithm | undefined): Record<string, string> {
  const stored = copy.checksums.toJSON() as Partial<Record<BucketChecksumAlgorithm, string>>
  const algorithm = asked ?? s3ChecksumAlgorithms.find(a => stored[a] !== undefined)
  const hex = algorithm === undefined ? undefined : stored[algorithm]
  return {
    LastModified: copy.uploaded.toISOString(),
    ETag: copy.httpEtag,
    ...(algorithm === undefined || hex === undefined
      ? {}
      : { [`Checksum${algorithm.toUpperCase()}`]: Buffer.from(hex, 'hex').toString('base64'), ChecksumType: 'FULL_OBJECT' })
  }
}
