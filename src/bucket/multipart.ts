/**
 * Rules of multipart uploads that need no engine state: the part sizes a
 * completion accepts, and the listings of uploads in progress and of their
 * parts. The listings go beyond the binding (S3's ListMultipartUploads and
 * ListParts need them): uploads come in the UTF-8 byte order of their keys,
 * then by upload id; parts by number; pages of 1 to 1,000.
 */
import { BucketError } from './errors.js'
import type { BucketStore, StoredPart } from './port.js'
import type { BucketPartListOptions, BucketParts, BucketUploadListOptions, BucketUploads } from './types.js'

const MAX_PAGE = 1000

/** Every part but the last at least `minPartSize`, all but the last equal, the last no larger. */
export function checkPartSizes (parts: StoredPart[], minPartSize: number): void {
  if (parts.length < 2) return
  const uniform = parts[0].size
  for (const part of parts.slice(0, -1)) {
    if (part.size < minPartSize) {
      throw new BucketError('EntityTooSmall', 'completeMultipartUpload', `Part ${part.partNumber} has ${part.size} bytes; the minimum is ${minPartSize}.`)
    }
    if (part.size !== uniform) {
      throw new BucketError('InvalidPartOrder', 'completeMultipartUpload', 'All non-trailing parts must have the same length.')
    }
  }
  if (parts[parts.length - 1].size > uniform) {
    throw new BucketError('InvalidPartOrder', 'completeMultipartUpload', 'The last part must not be larger than the others.')
  }
}

function pageOptions<T extends { limit?: number }> (method: string, options: unknown): Partial<T> & { limit: number } {
  if (options !== undefined && options !== null && typeof options !== 'object') throw new TypeError(`${method}: options must be an object.`)
  const opts = (options ?? {}) as Partial<T>
  const limit = opts.limit === undefined ? MAX_PAGE : Math.trunc(Number(opts.limit))
  if (!Number.isFinite(limit) || limit < 1 || limit > MAX_PAGE) throw new BucketError('InvalidMaxKeys', method)
  return { ...opts, limit }
}

/** One page of the uploads in progress (`listMultipartUploads`). */
export async function listUploadsPage (store: BucketStore, options: unknown): Promise<BucketUploads> {
  const opts = pageOptions<BucketUploadListOptions>('listMultipartUploads', options)
  const prefix = opts.prefix === undefined ? '' : String(opts.prefix).normalize('NFC')
  let after: { id: string, uploadId: string } | undefined
  if (opts.keyMarker !== undefined && opts.keyMarker !== '') {
    // Upload ids are [A-Za-z0-9_-]: '~' sorts after all of them, so a key marker alone skips the key's every upload.
    const uploadId = opts.uploadIdMarker === undefined || opts.uploadIdMarker === '' ? '~' : String(opts.uploadIdMarker)
    after = { id: String(opts.keyMarker).normalize('NFC'), uploadId }
  }
  const found = await store.listUploads({ prefix, after, limit: opts.limit + 1 })
  return {
    uploads: found.slice(0, opts.limit).map(u => ({ key: u.key, uploadId: u.uploadId, initiated: new Date(u.created), storageClass: u.storageClass })),
    truncated: found.length > opts.limit
  }
}

/** One page of an upload's parts (`upload.listParts`); the caller checked the upload belongs to its key. */
export async function listPartsPage (store: BucketStore, uploadId: string, options: unknown): Promise<BucketParts> {
  const opts = pageOptions<BucketPartListOptions>('listParts', options)
  const marker = opts.partNumberMarker === undefined ? 0 : Math.trunc(Number(opts.partNumberMarker))
  if (!Number.isFinite(marker) || marker < 0) throw new RangeError('listParts: partNumberMarker must be a non-negative number.')
  const found = await store.listParts(uploadId, marker, opts.limit + 1)
  if (found === null) throw new BucketError('NoSuchUpload', 'listParts')
  return { parts: found.slice(0, opts.limit), truncated: found.length > opts.limit }
}
