/**
 * Multipart uploads: CreateMultipartUpload, UploadPart, UploadPartCopy,
 * CompleteMultipartUpload and AbortMultipartUpload over the binding's
 * multipart calls. An upload is the binding's: one started through the
 * binding or the HTTP routes is completed here with its upload id, and the
 * other way round. The ETag of a completed upload is the binding's
 * `md5-of-md5s-N`.
 *
 * ListMultipartUploads and ListParts page through the binding's
 * `listMultipartUploads` and `upload.listParts`; a delimiter in
 * ListMultipartUploads is not supported (NotImplemented).
 *
 * CompleteMultipartUpload lists parts in ascending order, as S3 requires
 * (InvalidPartOrder otherwise); If-Match / If-None-Match on it are the
 * binding's `onlyIf`, judged in the commit's critical section. Part checksums sent with UploadPart are
 * verified on the way (payload.ts); the binding stores none for parts, so no
 * composite checksum is answered.
 */
import type { BucketRange } from '../bucket/index.js'
import { decodedBody } from './body.js'
import { OWNER, openNamedBucket, param, sendXml, type S3Context } from './context.js'
import { S3Error } from './errors.js'
import { conditionalFrom, customMetadataFrom, httpMetadataFrom, s3StorageClass, single, storageClassFrom } from './headers.js'
import { checkKey, partNumberFrom, readCopySource, sourceBytes } from './objects.js'
import { list, readXmlBody, text } from './xml.js'

function uploadIdFrom (ctx: S3Context): string {
  const uploadId = param(ctx, 'uploadId')
  if (uploadId === undefined || uploadId === '') throw new S3Error('NoSuchUpload')
  return uploadId
}

export async function createMultipartUpload (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket, info } = await openNamedBucket(ctx)
  const headers = ctx.request.headers
  const upload = await bucket.createMultipartUpload(ctx.key, {
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(headers),
    storageClass: storageClassFrom(headers) ?? info.settings.storageClass
  })
  await sendXml(ctx, 200, 'InitiateMultipartUploadResult', { Bucket: ctx.bucketName, Key: upload.key, UploadId: upload.uploadId })
}

export async function uploadPart (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const partNumber = partNumberFrom(param(ctx, 'partNumber'))
  const { bucket } = await openNamedBucket(ctx)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const part = await upload.uploadPart(partNumber, decodedBody(ctx.request.raw, ctx.signature, false).stream)
  await ctx.reply.code(200).header('etag', `"${part.etag}"`).send()
}

/** `x-amz-copy-source-range: bytes=first-last`, both required (S3's form). */
function copyRangeFrom (value: string | undefined): BucketRange | undefined {
  if (value === undefined) return undefined
  const m = /^bytes=(\d+)-(\d+)$/.exec(value.trim())
  if (m === null || Number(m[2]) < Number(m[1])) {
    throw new S3Error('InvalidArgument', 'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy')
  }
  return { offset: Number(m[1]), length: Number(m[2]) - Number(m[1]) + 1 }
}

export async function uploadPartCopy (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const partNumber = partNumberFrom(param(ctx, 'partNumber'))
  const range = copyRangeFrom(single(ctx.request.headers, 'x-amz-copy-source-range'))
  const { bucket } = await openNamedBucket(ctx)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const source = await readCopySource(ctx, range)
  const part = await upload.uploadPart(partNumber, sourceBytes(source))
  await sendXml(ctx, 200, 'CopyPartResult', { LastModified: source.uploaded.toISOString(), ETag: `"${part.etag}"` })
}

export async function completeMultipartUpload (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket } = await openNamedBucket(ctx)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const document = await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, false).stream, 'CompleteMultipartUpload')
  const parts = list(document, 'Part').map(part => {
    const number = text(part, 'PartNumber')
    const etag = text(part, 'ETag')
    if (number === undefined || etag === undefined || !/^\d+$/.test(number.trim())) {
      throw new S3Error('MalformedXML', 'Every Part has a PartNumber and an ETag.')
    }
    return { partNumber: Number(number.trim()), etag: etag.trim() }
  })
  if (parts.length === 0) throw new S3Error('MalformedXML', 'You must specify at least one part')
  for (let i = 1; i < parts.length; i++) {
    if (parts[i].partNumber <= parts[i - 1].partNumber) throw new S3Error('InvalidPartOrder')
  }
  const onlyIf = conditionalFrom(ctx.request.headers)
  const object = await upload.complete(parts, onlyIf === undefined ? {} : { onlyIf })
  if (object === null) throw new S3Error('PreconditionFailed')
  await sendXml(ctx, 200, 'CompleteMultipartUploadResult', {
    Location: `/${ctx.bucketName}/${encodeURIComponent(ctx.key)}`,
    Bucket: ctx.bucketName,
    Key: object.key,
    ETag: object.httpEtag
  })
}

export async function abortMultipartUpload (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket } = await openNamedBucket(ctx)
  await bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx)).abort()
  await ctx.reply.code(204).send()
}

/** `max-uploads` / `max-parts`: 0 to 1,000 (more is 1,000, as S3). */
function maxFrom (ctx: S3Context, name: string): number {
  const raw = param(ctx, name)
  if (raw === undefined) return 1000
  if (!/^\d+$/.test(raw)) throw new S3Error('InvalidArgument', `Provided ${name} not an integer or within integer range`)
  return Math.min(Number(raw), 1000)
}

export async function listMultipartUploads (ctx: S3Context): Promise<void> {
  if (param(ctx, 'delimiter') !== undefined && param(ctx, 'delimiter') !== '') throw new S3Error('NotImplemented', 'ListMultipartUploads with a delimiter is not supported.')
  const encoding = param(ctx, 'encoding-type')
  if (encoding !== undefined && encoding !== 'url') throw new S3Error('InvalidArgument', 'Invalid Encoding Method specified in Request')
  const encode = encoding === 'url' ? encodeURIComponent : (value: string) => value
  const { bucket } = await openNamedBucket(ctx)
  const limit = maxFrom(ctx, 'max-uploads')
  const prefix = param(ctx, 'prefix') ?? ''
  const keyMarker = param(ctx, 'key-marker') ?? ''
  const uploadIdMarker = keyMarker === '' ? '' : param(ctx, 'upload-id-marker') ?? ''
  const listed = limit === 0
    ? { uploads: [], truncated: false }
    : await bucket.listMultipartUploads({ prefix, keyMarker, uploadIdMarker, limit })
  const last = listed.uploads.at(-1)
  await sendXml(ctx, 200, 'ListMultipartUploadsResult', {
    Bucket: ctx.bucketName,
    KeyMarker: encode(keyMarker),
    UploadIdMarker: uploadIdMarker,
    ...(listed.truncated && last !== undefined ? { NextKeyMarker: encode(last.key), NextUploadIdMarker: last.uploadId } : {}),
    Prefix: encode(prefix),
    MaxUploads: limit,
    IsTruncated: listed.truncated,
    ...(encoding === undefined ? {} : { EncodingType: 'url' }),
    ...(listed.uploads.length === 0
      ? {}
      : {
          Upload: listed.uploads.map(u => ({
            Key: encode(u.key),
            UploadId: u.uploadId,
            Initiator: OWNER,
            Owner: OWNER,
            StorageClass: s3StorageClass(u.storageClass),
            Initiated: u.initiated.toISOString()
          }))
        })
  })
}

export async function listParts (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket } = await openNamedBucket(ctx)
  const limit = maxFrom(ctx, 'max-parts')
  const markerText = param(ctx, 'part-number-marker') ?? '0'
  if (!/^\d{1,5}$/.test(markerText)) throw new S3Error('InvalidArgument', 'part-number-marker must be a part number.')
  const marker = Number(markerText)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const listed = await upload.listParts({ partNumberMarker: marker, limit: Math.max(limit, 1) })
  const parts = limit === 0 ? [] : listed.parts
  const truncated = limit === 0 ? listed.parts.length > 0 : listed.truncated
  await sendXml(ctx, 200, 'ListPartsResult', {
    Bucket: ctx.bucketName,
    Key: ctx.key,
    UploadId: upload.uploadId,
    PartNumberMarker: marker,
    ...(truncated ? { NextPartNumberMarker: parts.at(-1)?.partNumber ?? marker } : {}),
    MaxParts: limit,
    IsTruncated: truncated,
    Initiator: OWNER,
    Owner: OWNER,
    ...(parts.length === 0 ? {} : { Part: parts.map(p => ({ PartNumber: p.partNumber, ETag: `"${p.etag}"`, Size: p.size })) })
  })
}
