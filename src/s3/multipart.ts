/**
 * Multipart uploads: CreateMultipartUpload, UploadPart, UploadPartCopy,
 * CompleteMultipartUpload and AbortMultipartUpload over the binding's
 * multipart calls. An upload is the binding's: one started through the
 * binding or the HTTP routes is completed here with its upload id, and the
 * other way round. The ETag of a completed upload is the binding's
 * `md5-of-md5s-N`.
 *
 * CompleteMultipartUpload lists parts in ascending order, as S3 requires
 * (InvalidPartOrder otherwise). Part checksums sent with UploadPart are
 * verified on the way (payload.ts); the binding stores none for parts, so no
 * composite checksum is answered.
 */
import type { BucketRange } from '../bucket/index.js'
import { decodedBody } from './body.js'
import { openNamedBucket, param, sendXml, type S3Context } from './context.js'
import { S3Error } from './errors.js'
import { customMetadataFrom, httpMetadataFrom, single, storageClassFrom } from './headers.js'
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
  const object = await upload.complete(parts)
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
