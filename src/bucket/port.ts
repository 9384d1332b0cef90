/**
 * The store port: what a store implements, and all a store may import of
 * the engine. A bucket's store implements `BucketStore`; the place that
 * keeps which buckets exist implements `RegistryStorage` (a factory of
 * bucket stores too) and `StateDocuments` (the management API's state).
 *
 * The engine owns every rule (validation, conditionals, ranges, hashing,
 * multipart checks); a bucket store only keeps records and bytes and gives
 * three guarantees:
 *
 *   1. `commit`, `completeUpload` and `delete` are atomic and linearizable:
 *      the precondition is judged against the current record inside the
 *      same critical section that replaces it, across every process using
 *      the store.
 *   2. A staged body is invisible until a commit names it, and is removed
 *      when it is discarded or when the commit's precondition fails.
 *   3. `open` pins the bytes of the record it returns: a concurrent
 *      overwrite or delete never changes what an opened reader streams.
 *   4. Bucket locks (locks.ts) are kept by the store, beside the records,
 *      and judged inside the critical section of every write that would
 *      replace or remove a record (`commit`, `copy`, `completeUpload`,
 *      `delete`): a record that `retainingRule` retains at the write's
 *      instant (its options' `now`: the engine's clock, or a sweep's
 *      `now`; the real time when absent) is left as it is, and the write
 *      is refused (`objectLocked`; for `delete`, the id is answered as
 *      refused). `setLockRules` belongs to
 *      the same order of critical sections, so no write judged against the
 *      old rules lands after the new rules are committed. `retire` refuses
 *      a store that has rules (`BucketLocked`).
 *
 * Records are addressed by *id* (the NFC form of the key); `list` orders ids
 * by their UTF-8 bytes.
 */
import { Readable } from 'node:stream'
import { BucketError } from './errors.js'
import type { ListPage, ListQuery, MultipartLayout, StoredObject, StoredPart, StoredUpload, UploadListQuery } from './records.js'
import type { LockRule } from './locks.js'
import type { SettingsDocument } from './settings-document.js'
import type { SweepReport } from './types.js'
import type { ObjectChange, OutboxMessage } from './events.js'

export { assembleListPage, assembleListPageAsync, type AsyncPageSource, type PageSource } from './list-page.js'
export { pastPrefix } from './keys.js'
export type { ListPage, ListQuery, MultipartLayout, StoredChecksums, StoredObject, StoredPart, StoredUpload, UploadListQuery } from './records.js'
export { withFields } from './records.js'
export type { SweepReport } from './types.js'
export { BucketError, isBucketError, storageFailure, storageFailureOf, type StorageFailureName } from './errors.js'
export { lockRulesOf, lockRulesText, retainingRule, type LockRule } from './locks.js'

/** What a store throws for a write onto a retained record (10913), its body discarded. */
export function objectLocked (method: string, key: string): BucketError {
  return new BucketError('ObjectLocked', method, `(key: ${JSON.stringify(key)})`)
}

/** What `retire` throws for a store with lock rules (10914). */
export function bucketLocked (): BucketError {
  return new BucketError('BucketLocked', 'deleteBucket')
}
export { randomHex } from './random.js'
export { parseSettingsDocument, type SettingsDocument } from './settings-document.js'
export { guardedWarn } from './guarded-warn.js'
export type { ChangeAction, ObjectChange, OutboxMessage } from './events.js'
export { putChange } from './events.js'

/** What a store throws for a write to a retired bucket (10006), in every process. */
export function bucketRetired (method = 'write'): BucketError {
  return new BucketError('NoSuchBucket', method)
}

/**
 * The part layout of a multipart object completed before records kept one,
 * from the sizes of the part bodies a store keeps in order (one per part):
 * null unless there is one size per part of the `<md5>-<parts>` etag, all
 * but the last equal and the last no larger (what a completion accepts).
 */
export function partLayoutOfSizes (etag: string, sizes: number[]): MultipartLayout | null {
  const parts = Number(/-(\d+)$/.exec(etag)?.[1] ?? 0)
  if (parts === 0 || sizes.length !== parts) return null
  const partSize = sizes[0]
  if (sizes.slice(0, -1).some(size => size !== partSize) || sizes[sizes.length - 1] > partSize) return null
  return { parts, partSize }
}

/**
 * A part's checksums as the JSON text a store keeps beside it, null when it
 * has none; the salt of an SSE-C part rides in the same text (`ssec`).
 */
export function partChecksumsText (part: StoredPart): string | null {
  const kept = Object.assign({}, part.checksums, part.ssec === undefined ? {} : { ssec: part.ssec })
  return Object.keys(kept).length === 0 ? null : JSON.stringify(kept)
}

/** A part's `checksums` (and `ssec`) fields from that text: none for NULL (rows written before parts kept checksums). */
export function partChecksumsFrom (text: string | null | undefined): Pick<StoredPart, 'checksums' | 'ssec'> {
  if (text === null || text === undefined) return {}
  const { ssec, ...checksums } = JSON.parse(text) as NonNullable<StoredPart['checksums']> & Pick<StoredPart, 'ssec'>
  return ssec === undefined ? { checksums } : { checksums, ssec }
}

/** A body written aside, waiting for a commit. */
export interface StagedBody {
  readonly size: number
  discard (): Promise<void>
}

export interface ObjectReader {
  readonly object: StoredObject
  /** The whole body, when the store already holds it in memory (small objects). */
  readonly bytes?: Buffer
  /**
   * Streams `length` bytes from `offset`; may be called once. The stream may
   * offer `recycle(chunk)` (see `RecyclingStream`): a consumer done with a
   * chunk hands it back, and the store reads the next bytes into it.
   */
  stream (offset: number, length: number): Readable
  /** Releases the pinned bytes when no stream is wanted. */
  close (): Promise<void>
}

/**
 * A body stream whose chunks may be handed back: a consumer that has
 * finished with a chunk (written to a socket, the write completed) calls
 * `recycle(chunk)` and must not touch the chunk again. Consumers that keep
 * chunks never call it.
 */
export interface RecyclingStream extends Readable {
  recycle: (chunk: Uint8Array) => void
}

/** Whether `stream` takes its chunks back (see RecyclingStream). */
export function isRecyclingStream (stream: unknown): stream is RecyclingStream {
  return stream instanceof Readable && typeof (stream as Partial<RecyclingStream>).recycle === 'function'
}

export type Precondition = (current: StoredObject | null) => boolean

/** Options of `BucketStore.delete`. */
export interface DeleteOptions {
  /**
   * Why the objects go. Absent: a caller asked for it (the binding's
   * `delete`, a door's DELETE, DeleteObjects). `'lifecycle'`: a lifecycle
   * rule expired them (the sweeper, lifecycle-sweep.ts); an event emitter
   * reports such a deletion with the action `LifecycleDeletion` rather than
   * `DeleteObject`. A lock check applies whatever the cause.
   */
  cause?: 'lifecycle'
  /**
   * Removes an id only while its current version is the one given here
   * (ids absent from the map go unconditionally): an object rewritten after
   * it was judged expired stays. Judged inside the delete's commit.
   */
  versions?: ReadonlyMap<string, string>
  /** The instant (ms) locks are judged at (guarantee 4): the engine's clock, or a sweep's `now`; absent, the real time. */
  now?: number
}

/** What `BucketStore.delete` did. */
export interface DeleteOutcome {
  /** The ids a lock kept (guarantee 4), in the order given. */
  retained: string[]
  /** How many objects it removed: not those absent, retained, or holding another version than `versions` names. */
  removed: number
}

/** Options of `BucketStore.commit`. */
export interface CommitOptions {
  /**
   * The key (and bucket, when another) the object was copied from, when a
   * copy's bytes were written anew (a copy the store could not share: from
   * another bucket, from a multipart or encrypted source, into an
   * encryption): its event is CopyObject naming that source (`putChange`),
   * not PutObject.
   */
  copiedFrom?: { bucket?: string, key: string }
  /** The instant (ms) a lock on the record replaced is judged at (guarantee 4), as `DeleteOptions.now`. */
  now?: number
}

/** Options of `BucketStore.completeUpload`. */
export interface CompleteOptions {
  /** The instant (ms) a lock on the record replaced is judged at (guarantee 4), as `DeleteOptions.now`. */
  now?: number
}

/** Options of `BucketStore.copy`. */
export interface CopyOptions {
  /**
   * Why the object is copied, when it is not a client's copy (which a lock
   * on the destination refuses and an event emitter reports as
   * `CopyObject`). `'transition'`: a lifecycle rule moves an object to
   * another storage class, copying it onto itself with the same bytes,
   * etag, metadata and upload time (lifecycle-sweep.ts). That is neither
   * an overwrite, which a lock refuses (the lock goes on retaining the
   * object by its unchanged upload time), nor a new object, which an
   * event reports: the copy is checked against no lock and emits nothing.
   */
  cause?: 'transition'
  /** The instant (ms) a lock on the destination is judged at (guarantee 4), as `DeleteOptions.now`. */
  now?: number
}

/**
 * The precondition of an unconditional write: it holds whatever is stored,
 * so a store may replace the record without reading it first (one
 * statement instead of a read and a write, where that saves a round trip).
 */
export const ALWAYS: Precondition = () => true

/**
 * What `completeUpload` builds from the upload, its stored parts and the
 * object `id` holds now (null when none), inside the critical section;
 * throws to refuse, leaving the upload as it was.
 */
export type CompleteBuilder = (upload: StoredUpload, parts: Map<number, StoredPart>, current: StoredObject | null) => { object: StoredObject, partNumbers: number[] }

/**
 * What `copy` makes of the source object, inside the critical section: the
 * record of the copy (the source's size and bytes, a new version), or null
 * to refuse (the source's condition failed).
 */
export type CopyBuilder = (source: StoredObject) => StoredObject | null

/**
 * What the engine makes of a change: the messages of the notification
 * rules it matches (often none). Synchronous and without I/O, because a
 * store calls it inside its write transaction.
 */
export type EventSink = (change: ObjectChange) => OutboxMessage[]

/** A message handed to a consumer under a lease. */
export interface LeasedMessage {
  /** The message's place in its store's outbox. */
  seq: number
  id: string
  body: string
  created: number
  /** Deliveries so far, this one included. */
  attempts: number
  /** The lease's secret: an acknowledgement or retry must name it. */
  lease: string
}

/** What a lease may hand out (see Outbox.lease). */
export interface LeaseRules { writtenBy: number, maxDeliveries: number }

/** A lease a consumer settles. */
export interface LeaseRef { seq: number, lease: string }

/** A leased message made visible again at `visibleAt`; `uncounted`: its delivery was cut before any verdict, so it counts no attempt. */
export interface LeaseRetry extends LeaseRef { visibleAt: number, uncounted?: boolean }

/**
 * The outbox of a store, read by the queues: messages stay until
 * acknowledged or expired; a leased message is invisible until its lease
 * ends, then is handed out again (at least once).
 */
export interface Outbox {
  /**
   * Leases at most `limit` messages of `queue` visible at `now`, oldest
   * first, invisible until `now + leaseMs`: only those written at or before
   * `rules.writtenBy` (a queue's delivery delay) and delivered fewer than
   * `rules.maxDeliveries` times.
   */
  lease (queue: string, limit: number, now: number, leaseMs: number, rules: LeaseRules): Promise<LeasedMessage[]>
  /**
   * The messages of `queue` visible at `now` that were delivered
   * `maxDeliveries` times or more: moved to queue `to` (as new: never
   * delivered, visible at once), or removed when `to` is null. Counts them.
   */
  retire (queue: string, maxDeliveries: number, now: number, to: string | null): Promise<number>
  /** Removes acknowledged messages and makes retried ones visible again at their time; counts those whose lease still held. */
  settle (queue: string, acks: LeaseRef[], retries: LeaseRetry[]): Promise<{ acked: number, retried: number }>
  /** Messages of `queue` waiting (leased or not). */
  backlog (queue: string): Promise<number>
  /** Removes the messages of `queue` written before `before` (retention), or all of them without it. */
  drop (queue: string, before?: number): Promise<number>
  /** The queues that have messages here (a queue deleted while a write committed one for it among them). */
  queues (): Promise<string[]>
}

/** What a store's `copy` did. */
export type CopyOutcome =
  | { status: 'copied', object: StoredObject }
  /** No object at the source id. */
  | { status: 'no-source' }
  /** The builder refused the source. */
  | { status: 'source-refused', source: StoredObject }
  /** The destination's precondition failed. */
  | { status: 'refused' }

export interface BucketStore {
  /**
   * Receives a body. `version`, when given, is the version the body will be
   * committed under (a put's), so a store may put the bytes where that version
   * belongs at once; they stay invisible until `commit`. Parts come without.
   */
  stage (source: AsyncIterable<Uint8Array>, version?: string): Promise<StagedBody>
  head (id: string): Promise<StoredObject | null>
  open (id: string): Promise<ObjectReader | null>
  /**
   * Optional: `open` answered at once, for a store that holds the row and
   * the bytes without waiting (from its caches, or by reading a small file
   * in the same step): the reader with its `bytes` (nothing to close), or
   * null for no object; undefined when it cannot answer so (a body too large
   * to hold, a catalog it must wait for), and then `open` does.
   */
  openNow? (id: string): ObjectReader | null | undefined
  /**
   * Replaces the record of `id` when `precondition` holds; false (and the
   * body discarded) otherwise. Throws `objectLocked` (body discarded) when
   * the current record is retained (guarantee 4).
   */
  commit (id: string, object: StoredObject, body: StagedBody, precondition: Precondition, options?: CommitOptions): Promise<boolean>
  /**
   * Removes the objects `ids` (those not stored are no error), but those
   * retained (guarantee 4), whose ids it answers in the order given, with
   * the count of those it removed. Every
   * deletion goes through here, the sweeper's lifecycle expiries included
   * (`options.cause`), so a check or an effect that belongs to every
   * deletion (a lock, an event) sits in this commit.
   */
  delete (ids: string[], options?: DeleteOptions): Promise<DeleteOutcome>
  /**
   * Copies the object of `fromId` to `toId` without its bytes passing
   * through the engine (shared, hard-linked or reflinked, never streamed).
   * Atomic as `commit`: the source record `build` judges, the bytes of the
   * copy and the precondition's judgement of `toId` all belong to one
   * instant, so a copy racing a delete of its source either copies the
   * object as it was or finds no source, and never leaves a record without
   * its bytes. `fromId` and `toId` may be the same (a metadata change).
   */
  copy (fromId: string, toId: string, build: CopyBuilder, precondition: Precondition, options?: CopyOptions): Promise<CopyOutcome>
  /** The bucket's lock rules (locks.ts), as last set; none at first. */
  lockRules (): Promise<LockRule[]>
  /** Replaces the bucket's lock rules (checked by `parseLockRules`), in the order of writes (guarantee 4). */
  setLockRules (rules: LockRule[]): Promise<void>
  /**
   * Optional: the part layout of the multipart object `version` of `id`
   * completed before records kept one (`partLayoutOfSizes` of its part
   * bodies); null when the store cannot tell or the version is not current.
   */
  derivePartLayout? (id: string, version: string): Promise<MultipartLayout | null>
  /** One page, as `assembleListPage` (list-page.ts) defines it; `assembleListPageAsync` for a store whose seeks are awaited. */
  list (query: ListQuery): Promise<ListPage>

  createUpload (id: string, upload: StoredUpload): Promise<void>
  getUpload (uploadId: string): Promise<StoredUpload | null>
  /** Stores a part; false (and the body discarded) when the upload does not exist. */
  putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean>
  /** Completes an upload into the object `id`; null when the upload does not exist; `objectLocked` (the upload kept) when `id` holds a retained record. */
  completeUpload (uploadId: string, id: string, build: CompleteBuilder, options?: CompleteOptions): Promise<StoredObject | null>
  /** Removes an upload and its parts; false when there was none (unknown, or completed or aborted first: the one that removed it says true). */
  abortUpload (uploadId: string): Promise<boolean>
  /** Uploads in progress, in (id bytes, uploadId) order, at most `limit`. */
  listUploads (query: UploadListQuery): Promise<StoredUpload[]>
  /** Parts of an upload numbered above `after`, in order, at most `limit`; null when the upload does not exist. */
  listParts (uploadId: string, after: number, limit: number): Promise<StoredPart[] | null>

  /**
   * When no object is stored and no lock rule is set (else `bucketLocked`), marks the store retired (every later write, in
   * any process, fails with 10006) and returns true; false otherwise. The
   * check and the mark are one critical section, so no acknowledged write is
   * lost to a bucket deletion.
   */
  retire (): Promise<boolean>

  /**
   * Optional: where the events of changes go. A store that has one calls
   * the sink set last inside the transaction of every change it commits
   * (put, copy, completion, each key a delete removes) and writes the
   * messages it returns into its outbox in that transaction, so a change
   * and its messages are durable together; a refused or failed write
   * writes none.
   */
  setEventSink? (sink: EventSink | null): void
  /** The outbox those messages wait in (present with `setEventSink`). */
  readonly outbox?: Outbox

  /**
   * Aborts uploads created before `createdBefore`, removes leftovers older
   * than `leftoversBefore`. `underLock` (the engine's lifecycle pass) runs
   * first, while the store holds its sweep lock: one sweep at a time per
   * store across every process using it. When another process holds the
   * lock, the sweep does nothing (and `underLock` does not run).
   */
  sweep (createdBefore: number, leftoversBefore: number, underLock?: () => Promise<void>): Promise<SweepReport>
  close (): Promise<void>
}

/** One change of a set of documents: what it loads and changes is written back whole, or not at all. */
export interface DocumentTransaction {
  /** The document `name` as this change sees it; changes to the returned value are written at the end. */
  load<T> (name: string, fallback: T): Promise<T>
  remove (name: string): void
}

/**
 * Small JSON documents shared by every process, such as the management
 * API's state: a read sees a whole document; a transaction is a
 * read-modify-write under one lock for all the documents of the set.
 * Names are relative paths the caller chooses (`zones.json`, `zones/<id>.json`).
 */
export interface StateDocuments {
  read<T> (name: string, fallback: T): Promise<T>
  /**
   * A cheap mark of the document `name` as it stands (null: there is none),
   * which differs after any write or removal of it, by any process: a reader
   * that keeps what it parsed asks this instead of reading it all again.
   * Optional: a storage without it is read whole each time.
   */
  version?: (name: string) => Promise<string | null>
  transaction<R> (change: (tx: DocumentTransaction) => Promise<R>): Promise<R>
  /** How a message names the document `name` for whoever must mend it: a file's full path, or its place in a catalog. */
  where (name: string): string
}

/**
 * Where the registry keeps which buckets exist and their settings, and the
 * factory of their stores. The registry owns every rule (names, defaults,
 * adoption, emptiness before deletion, the domain map); the storage keeps
 * documents, places and locks, shared by every process using it.
 */
export interface RegistryStorage {
  /** Where the buckets are (the data directory), for messages and the management API's state. */
  readonly location: string
  /** Names of the places that may hold buckets; the registry keeps the valid bucket names. */
  names (): Promise<string[]>
  /** Whether the place of bucket `name` exists (one without settings is adopted). */
  placeExists (name: string): boolean | Promise<boolean>
  /**
   * A token that changes whenever the bucket's settings document is
   * replaced, null when it has none. Synchronous: it is asked on every
   * request, so it must be cheap (a stat from the kernel's cache, or one
   * indexed row of a catalog server).
   */
  settingsVersion (name: string): string | null | Promise<string | null>
  /** Optional: `settingsVersion` of a storage that answers it without waiting (a stat), so that a request may be served in one step (the registry's `openNow`). */
  settingsVersionNow? (name: string): string | null
  /**
   * The bucket's settings document, through `parseSettingsDocument`; null
   * only when it has none. A document that is not one throws that
   * function's `SettingsDamaged` (10915), never null.
   */
  readSettings (name: string): Promise<SettingsDocument | null>
  /** Replaces the document atomically: a reader sees the old one or the new one. */
  writeSettings (name: string, document: SettingsDocument): Promise<void>
  /** Runs `critical` holding the bucket's settings lock, shared by every process. */
  withSettingsLock<T> (name: string, critical: () => Promise<T>): Promise<T>
  /**
   * Creates the bucket's place; false when it exists already (of two racing
   * creators, one wins). A store whose place can be held by something that
   * is no bucket's (a file made by hand in a data directory) throws
   * `BucketAlreadyExists` with a detail saying so.
   */
  createPlace (name: string): Promise<boolean>
  /** Removes the bucket's place, at once for every process, then its contents; false when it was gone. */
  removePlace (name: string): Promise<boolean>
  /** A token that changes when a bucket appears or disappears or after `touch`; null when the data place is gone. */
  changeToken (): string | null | Promise<string | null>
  /** Optional: `changeToken` of a storage that answers it without waiting (a stat), for the registry's answers at once. */
  changeTokenNow? (): string | null
  /** Records that some bucket's settings changed (moves `changeToken`). */
  touch (): Promise<void>
  /** Opens the store of bucket `name` (its place exists). */
  openStore (name: string): Promise<BucketStore>
  /** The documents of `area` (lowercase letters), kept beside the buckets: `mgmt` is the management API's. */
  state (area: string): StateDocuments
  /**
   * Asks the catalog server a trivial question: resolves when it answers
   * (readiness; the caller bounds the wait). Absent where the catalog is
   * in-process files (the data directory's storage: its check is the data
   * directory's).
   */
  ping? (): Promise<void>
  /** Releases what the storage holds open (a catalog server's connections); the registry's `close` calls it. */
  close? (): Promise<void>
}
