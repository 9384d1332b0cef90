/**
 * What a committed change tells its event notifications: the change as a
 * store reports it, and the message a queue receives. A leaf module (no
 * imports), shared by the store port and the notification rules.
 */

/** The actions an event notification names (the hosted service's). */
export type ChangeAction = 'PutObject' | 'CopyObject' | 'CompleteMultipartUpload' | 'DeleteObject' | 'LifecycleDeletion'

/**
 * A committed change of one key, as a store reports it to its event sink
 * from inside the transaction that makes it: no size or etag for
 * deletions; `copySource` (the source key) only for a copy.
 */
export interface ObjectChange {
  action: ChangeAction
  key: string
  size?: number
  etag?: string
  copySource?: string
  /** A copy's source bucket, when it is another than the change's own (S3's CopyObject between buckets). */
  copySourceBucket?: string
}

/** What a committed put or copy tells: PutObject, or CopyObject naming its source (its bucket when another). */
export function putChange (object: { key: string, size: number, etag: string }, copiedFrom?: { bucket?: string, key: string }): ObjectChange {
  const change: ObjectChange = { action: copiedFrom === undefined ? 'PutObject' : 'CopyObject', key: object.key, size: object.size, etag: object.etag }
  if (copiedFrom !== undefined) {
    change.copySource = copiedFrom.key
    if (copiedFrom.bucket !== undefined) change.copySourceBucket = copiedFrom.bucket
  }
  return change
}

/** A message for one queue, written in the same transaction as the change it tells of. */
export interface OutboxMessage {
  queue: string
  /** 32 hex digits. */
  id: string
  /** The message body (JSON text). */
  body: string
  /** When it was written, ms since the epoch. */
  created: number
}

