/**
 * Multipart uploads: CreateMultipartUpload, UploadPart, UploadPartCopy,
 * CompleteMultipartUpload and AbortMultipartUpload over the binding's
 * multipart calls. An upload is the binding's: one started through the
 * binding or the HTTP routes is completed here with its upload id, and the
 * other way round. The ETag of a completed upload is the binding's
 * `md5-of-md5s-N`.
 *
 * ListMultipartUploads and ListParts page through the binding's
 * `listMultipartUploads` and `upload.listParts`.
 *
 * CompleteMultipartUpload lists parts in ascending order, as S3 requires
 * (InvalidPartOrder otherwise); If-Match / If-None-Match on it are the
 * binding's `onlyIf`, judged in the commit's critical section.
 *
 * Checksums: a part's x-amz-checksum-* (header or trailer) is verified and
 * kept by the binding, echoed by UploadPart and listed by ListParts; the
 * Checksum* of each Part in CompleteMultipartUpload must be the part's
 * (InvalidPart), and the binding makes the object's checksum from the
 * parts' (COMPOSITE `<base64>-N`, or FULL_OBJECT; CRC64NVME is always
 * FULL_OBJECT, as S3). The algorithm and type named at CreateMultipartUpload
 * are kept with the upload by the binding, which holds its parts and its
 * completion to them as S3 does (InvalidRequest, BadDigest); ListParts and
 * ListMultipartUploads answer them, and a completion without
 * x-amz-checksum-type takes the upload's. A completion's x-amz-checksum-*
 * (one header at most, put-request.ts) is the binding's to judge, of the
 * upload's algorithm (InvalidRequest) and value (BadDigest), when the
 * completion is asked again too.
 */
import {
  bodyStream, compareIds, copiedBytes, isBucketError, MAX_UPLOAD_PAGE, uploadAbortHeaders, type BucketChecksumAlgorithm, type BucketMultipartUpload,
  type BucketUploadChecksumAlgorithm
} from '../bucket/index.js'
import { bodyPipeline, decodedBody, defaultChecksum, takesDefaultChecksum } from './body.js'
import { openBucketForUpload } from './extensions.js'
import { OWNER, openNamedBucket, param, sendXml, type S3Context } from './context.js'
import { S3Error } from './errors.js'
import { customMetadataFrom, httpMetadataFrom, preconditionFailed, s3StorageClass, single, storageClassFrom, writeConditionalFrom } from './headers.js'
import { checkKey, copySourceFrom, expirationHeaders, partNumberFrom, readCopySource } from './objects.js'
import { completionChecksumFrom, decodePartRequest } from './put-request.js'
import { ssecAnswerHeaders, ssecEchoHeaders, ssecOption } from './ssec.js'
import { elementsOf, list, readXmlBody, text } from './xml.js'
import { listEncoder } from './list-encoding.js'

const checksumElements: Record<string, BucketChecksumAlgorithm> = {
  ChecksumCRC32: 'crc32', ChecksumCRC32C: 'crc32c', ChecksumCRC64NVME: 'crc64nvme', ChecksumSHA1: 'sha1', ChecksumSHA256: 'sha256'
}

/** Hex checksums → the Checksum* elements of a part or an object (a composite one as `<base64>-N`). */
function checksumElementsOf (checksums: Record<string, string>, parts?: number): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [element, algorithm] of Object.entries(checksumElements)) {
    const hex = checksums[algorithm]
    if (hex !== undefined) out[element] = Buffer.from(hex, 'hex').toString('base64') + (parts === undefined ? '' : `-${parts}`)
  }
  return out
}

/** x-amz-checksum-type: COMPOSITE or FULL_OBJECT, or undefined. */
function checksumTypeFrom (ctx: S3Context): 'COMPOSITE' | 'FULL_OBJECT' | undefined {
  const value = single(ctx.request.headers, 'x-amz-checksum-type')?.trim().toUpperCase()
  if (value === undefined) return undefined
  if (value !== 'COMPOSITE' && value !== 'FULL_OBJECT') throw new S3Error('InvalidRequest', 'Value for x-amz-checksum-type header is invalid.')
  return value
}

function uploadIdFrom (ctx: S3Context): string {
  const uploadId = param(ctx, 'uploadId')
  if (uploadId === undefined || uploadId === '') throw new S3Error('NoSuchUpload')
  return uploadId
}

export async function createMultipartUpload (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket, info } = await openBucketForUpload(ctx)
  const headers = ctx.request.headers
  const algorithm = single(headers, 'x-amz-checksum-algorithm')?.trim().toUpperCase()
  if (algorithm !== undefined && !['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'].includes(algorithm)) {
    throw new S3Error('InvalidRequest', 'Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]')
  }
  const type = checksumTypeFrom(ctx)
  if (type !== undefined && algorithm === undefined) throw new S3Error('InvalidRequest', 'The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.')
  if ((type === 'COMPOSITE' && algorithm === 'CRC64NVME') || (type === 'FULL_OBJECT' && (algorithm === 'SHA1' || algorithm === 'SHA256'))) {
    throw new S3Error('InvalidRequest', `The ${type} checksum type cannot be used with the ${algorithm} checksum algorithm.`)
  }
  const ssec = ssecOption(headers)
  const created = new Date()
  const upload = await bucket.createMultipartUpload(ctx.key, {
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(headers),
    storageClass: storageClassFrom(headers) ?? info.settings.storageClass,
    ...(algorithm === undefined ? {} : { checksumAlgorithm: algorithm.toLowerCase() as BucketUploadChecksumAlgorithm }),
    ...(type === undefined ? {} : { checksumType: type }),
    ...ssec
  })
  ctx.reply.headers(ssecEchoHeaders(ssec))
  // When a lifecycle rule will abort the upload, when and which, as S3 says it.
  ctx.reply.headers(uploadAbortHeaders(info.settings.lifecycle, upload.key, created) ?? {})
  if (algorithm !== undefined) {
    ctx.reply.header('x-amz-checksum-algorithm', algorithm)
    ctx.reply.header('x-amz-checksum-type', type ?? (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE'))
  }
  await sendXml(ctx, 200, 'InitiateMultipartUploadResult', { Bucket: ctx.bucketName, Key: upload.key, UploadId: upload.uploadId })
}

export async function uploadPart (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const partNumber = partNumberFrom(param(ctx, 'partNumber'))
  const { bucket } = await openNamedBucket(ctx)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const request = decodePartRequest(ctx.request.headers, ctx.signature)
  const body = bodyPipeline(ctx.request.raw, request.body, true)
  const part = await upload.uploadPart(partNumber, body.stream, Object.assign({}, body.checksum, takesDefaultChecksum(request.body) ? { defaultChecksum } : {}, request.ssec))
  // A part stored is its whole body, as long as declared (the decoder and the parser hold it to that).
  const bytes = request.body.declaredBytes
  if (bytes !== undefined) ctx.request.logFields = { bucket: ctx.bucketName, key: ctx.key, bytes }
  ctx.reply.code(200).header('etag', `"${part.etag}"`).headers(ssecEchoHeaders(request.ssec))
  for (const [element, value] of Object.entries(checksumElementsOf((part.checksums ?? {}) as Record<string, string>))) {
    ctx.reply.header(`x-amz-checksum-${checksumElements[element]}`, value)
  }
  await ctx.reply.send()
}

/** `x-amz-copy-source-range: bytes=first-last`, both required (S3's form). */
function copyRangeFrom (value: string | undefined): { offset: number, length: number } | undefined {
  if (value === undefined) return undefined
  const m = /^bytes=(\d+)-(\d+)$/.exec(value.trim())
  if (m === null || Number(m[2]) < Number(m[1])) {
    throw new S3Error('InvalidArgument', 'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy')
  }
  return { offset: Number(m[1]), length: Number(m[2]) - Number(m[1]) + 1 }
}

/** S3's answer to a copy range that is not inside the source, wherever it ends or starts. */
function invalidCopyRange (size: number | undefined): S3Error {
  return new S3Error('InvalidArgument', `Range specified is not valid for source object of size: ${size ?? 0}`)
}

export async function uploadPartCopy (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const partNumber = partNumberFrom(param(ctx, 'partNumber'))
  const range = copyRangeFrom(single(ctx.request.headers, 'x-amz-copy-source-range'))
  const { bucket } = await openNamedBucket(ctx)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const source = await readCopySource(ctx, range).catch(async (err: unknown) => {
    // A range starting past the source's end: S3 answers InvalidArgument here, not the 416 of a GET.
    if (!isBucketError(err) || err.errorName !== 'InvalidRange') throw err
    const named = copySourceFrom(ctx)
    const { bucket: from } = await openNamedBucket(ctx, named.bucket)
    throw invalidCopyRange((await from.head(named.key))?.size)
  })
  if (range !== undefined && range.offset + range.length > source.size) {
    // The engine would serve what there is; S3 refuses a range past the source's end.
    bodyStream(source).destroy()
    throw invalidCopyRange(source.size)
  }
  // The engine computes the upload's checksum over the copied bytes (the default one for an upload created without).
  const ssec = ssecOption(ctx.request.headers)
  // The engine refuses a source serving more than a copy may carry before a byte of it is read.
  const part = await upload.uploadPart(partNumber, copiedBytes('uploadPart', source), { copied: true, defaultChecksum, ...ssec })
  ctx.reply.headers(ssecEchoHeaders(ssec))
  await sendXml(ctx, 200, 'CopyPartResult', {
    LastModified: (await partUploaded(upload, partNumber, part.etag, ssec)).toISOString(),
    ETag: `"${part.etag}"`,
    ...checksumElementsOf((part.checksums ?? {}) as Record<string, string>)
  })
}

/**
 * When the part just stored was uploaded, as the binding keeps it (CopyPartResult's LastModified: AWS documents
 * it as the time the part, the object this request made, was uploaded, not its source's). The binding's
 * uploadPart answers the hosted service's shape, without it: it is listed. Should the part be gone or replaced
 * meanwhile (the upload completed or aborted, the part uploaded again), the time is this request's.
 */
async function partUploaded (upload: BucketMultipartUpload, partNumber: number, etag: string, ssec: { ssecKey?: Uint8Array }): Promise<Date> {
  const listed = await upload.listParts(Object.assign({ partNumberMarker: partNumber - 1, limit: 1 }, ssec)).catch(() => null)
  const part = listed?.parts[0]
  return part !== undefined && part.partNumber === partNumber && part.etag === etag ? part.uploaded : new Date()
}

export async function completeMultipartUpload (ctx: S3Context): Promise<void> {
  checkKey(ctx.key)
  const { bucket, info } = await openNamedBucket(ctx)
  const upload = bucket.resumeMultipartUpload(ctx.key, uploadIdFrom(ctx))
  const document = await readXmlBody(decodedBody(ctx.request.raw, ctx.signature, 'completion').stream, 'CompleteMultipartUpload')
  // Every element S3's schema puts there, no other: a miscased checksum read as absent would go unchecked.
  const parts = list(elementsOf(document, ['Part'], 'CompleteMultipartUpload'), 'Part').map(element => {
    const part = elementsOf(element, ['PartNumber', 'ETag', ...Object.keys(checksumElements)], 'Part')
    const number = text(part, 'PartNumber')
    const etag = text(part, 'ETag')
    if (number === undefined || etag === undefined || !/^\d+$/.test(number.trim())) {
      throw new S3Error('MalformedXML', 'Every Part has a PartNumber and an ETag.')
    }
    const checksums: Partial<Record<BucketChecksumAlgorithm, Buffer>> = {}
    for (const [element, algorithm] of Object.entries(checksumElements)) {
      const value = text(part, element)?.trim()
      if (value !== undefined && value !== '') checksums[algorithm] = Buffer.from(value, 'base64')
    }
    return { partNumber: Number(number.trim()), etag: etag.trim(), checksums }
  })
  if (parts.length === 0) throw new S3Error('MalformedXML', 'You must specify at least one part')
  for (let i = 1; i < parts.length; i++) {
    if (parts[i].partNumber <= parts[i - 1].partNumber) throw new S3Error('InvalidPartOrder')
  }
  const onlyIf = writeConditionalFrom(ctx.request.headers)
  // A whole-object checksum or a COMPOSITE one (`<base64>-<parts>`), one header at most: the engine judges it.
  const named = completionChecksumFrom(ctx.request.headers)
  const checksum: Partial<Record<BucketChecksumAlgorithm, Buffer>> = named.checksum === undefined ? {} : { [named.checksum.algorithm]: named.checksum.value }
  const compositeChecksum = named.composite
  // Without x-amz-checksum-type, the binding takes the upload's type (or FULL_OBJECT for a whole-object checksum).
  const checksumType = checksumTypeFrom(ctx)
  // S3 answers a completion asked again (a client retrying a lost answer) with the object it made.
  // A key sent is the upload's, or the completion is refused (the engine checks it); none is needed (S3 asks for it of an upload with a checksum).
  const ssec = ssecOption(ctx.request.headers)
  const object = await upload.complete(parts, {
    checksum, repeatable: true, ...(compositeChecksum === undefined ? {} : { compositeChecksum }), ...(onlyIf === undefined ? {} : { onlyIf }), ...(checksumType === undefined ? {} : { checksumType }), ...ssec
  })
  if (object === null) throw preconditionFailed(onlyIf)
  ctx.reply.headers(ssecAnswerHeaders(object.ssecKeyMd5))
  const composite = object.checksums.composite
  // A digest of data encrypted with a customer key goes only to who holds the key (as HeadObject and ListParts do).
  const checksums = object.ssecKeyMd5 !== undefined && ssec.ssecKey === undefined
    ? {}
    : composite === undefined
      ? checksumElementsOf(object.checksums.toJSON())
      : checksumElementsOf({ [composite.algorithm]: Buffer.from(composite.value).toString('hex') }, composite.parts)
  ctx.reply.headers(expirationHeaders(info, object))
  await sendXml(ctx, 200, 'CompleteMultipartUploadResult', {
    Location: `/${ctx.bucketName}/${encodeURIComponent(ctx.key)}`,
    Bucket: ctx.bucketName,
    Key: object.key,
    ETag: object.httpEtag,
    ...checksums,
    ...(Object.keys(checksums).length === 0 ? {} : { ChecksumType: composite === undefined ? 'FULL_OBJECT' : 'COMPOSITE' })
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
  if (raw === undefined) return MAX_UPLOAD_PAGE
  if (!/^\d+$/.test(raw)) throw new S3Error('InvalidArgument', `Provided ${name} not an integer or within integer range`)
  return Math.min(Number(raw), MAX_UPLOAD_PAGE)
}

export async function listMultipartUploads (ctx: S3Context): Promise<void> {
  const encoding = param(ctx, 'encoding-type')
  const encode = listEncoder(encoding)
  const { bucket } = await openNamedBucket(ctx)
  const limit = maxFrom(ctx, 'max-uploads')
  const prefix = param(ctx, 'prefix') ?? ''
  const delimiter = param(ctx, 'delimiter') ?? ''
  const keyMarker = param(ctx, 'key-marker') ?? ''
  const uploadIdMarker = keyMarker === '' ? '' : param(ctx, 'upload-id-marker') ?? ''
  const listed = limit === 0
    ? { uploads: [], delimitedPrefixes: [], truncated: false }
    : await bucket.listMultipartUploads({ prefix, delimiter, keyMarker, uploadIdMarker, limit })
  const prefixes = listed.delimitedPrefixes ?? []
  // The page ends with its last upload or its last prefix, whichever comes later in key order.
  const lastUpload = listed.uploads.at(-1)
  const lastPrefix = prefixes.at(-1)
  const endsWithPrefix = lastPrefix !== undefined && (lastUpload === undefined || compareIds(lastPrefix, lastUpload.key.normalize('NFC')) > 0)
  const next = !listed.truncated
    ? {}
    : endsWithPrefix
      ? { NextKeyMarker: encode(lastPrefix) }
      : lastUpload === undefined ? {} : { NextKeyMarker: encode(lastUpload.key), NextUploadIdMarker: lastUpload.uploadId }
  await sendXml(ctx, 200, 'ListMultipartUploadsResult', {
    Bucket: ctx.bucketName,
    KeyMarker: encode(keyMarker),
    UploadIdMarker: uploadIdMarker,
    ...next,
    Prefix: encode(prefix),
    ...(delimiter === '' ? {} : { Delimiter: encode(delimiter) }),
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
            Initiated: u.initiated.toISOString(),
            ...(u.checksum === undefined ? {} : { ChecksumAlgorithm: u.checksum.algorithm.toUpperCase(), ChecksumType: u.checksum.type })
          }))
        }),
    ...(prefixes.length === 0 ? {} : { CommonPrefixes: prefixes.map(p => ({ Prefix: encode(p) })) })
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
  const listed = await upload.listParts({ partNumberMarker: marker, limit: Math.max(limit, 1), ...ssecOption(ctx.request.headers) })
  // max-parts 0 asks for an empty page, never truncated: its NextPartNumberMarker would be the marker given, and a loop following it never ends.
  const parts = limit === 0 ? [] : listed.parts
  const truncated = limit !== 0 && listed.truncated
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
    ...(parts.length === 0 ? {} : { Part: parts.map(p => ({ PartNumber: p.partNumber, LastModified: p.uploaded.toISOString(), ETag: `"${p.etag}"`, Size: p.size, ...checksumElementsOf(p.checksums) })) }),
    ...(listed.checksum === undefined ? {} : { ChecksumAlgorithm: listed.checksum.algorithm.toUpperCase(), ChecksumType: listed.checksum.type })
  })
}
