/**
 * A store that keeps everything in memory, in one process. It exists so the
 * conformance suites have a second, trivially correct implementation of the
 * storage port to run against: a rule that passes here and fails on disk is
 * a storage bug, not a semantics bug. It is also handy for unit tests of
 * doors that need no disk. Like every store, once retired it refuses every
 * write with 10006 (`bucketRetired`).
 */
import { Readable } from 'node:stream'
import { randomHex } from '../../bucket/port.js'
import {
  assembleListPage, bucketLocked, putChange, bucketRetired, objectLocked, retainingRule, type BucketStore, type LockRule, type DeleteOptions, type DeleteOutcome, type EventSink, type LeasedMessage, type LeaseRef, type LeaseRetry, type LeaseRules, type ObjectChange, type Outbox, type OutboxMessage, type CommitOptions, type CompleteBuilder, type CompleteOptions, type CopyBuilder, type CopyOptions, type CopyOutcome, type ListPage, type ListQuery, type ObjectReader,
  type Precondition, type StagedBody, type StoredObject, type StoredPart, type StoredUpload, type SweepReport, type UploadListQuery, withFields
} from '../../bucket/port.js'

/** Bodies up to this size are handed to a read whole (`ObjectReader.bytes`); larger ones stream. */
const WHOLE_BODY = 64 * 1024

class MemoryBody implements StagedBody {
  constructor (readonly bytes: Buffer) {}
  get size (): number { return this.bytes.byteLength }
  async discard (): Promise<void> {}
}

interface Entry { record: StoredObject, chunks: Buffer[] }

function readerOf (entry: Entry): ObjectReader {
  const all = Buffer.concat(entry.chunks)
  const reader: ObjectReader = {
    object: entry.record,
    stream: (offset, length) => Readable.from([all.subarray(offset, offset + length)]),
    close: async () => {}
  }
  // A small body is handed over whole, as the fs store hands over its small ones: the read answers it in one write.
  return all.length <= WHOLE_BODY ? Object.assign(reader, { bytes: all }) : reader
}

interface WaitingMessage extends OutboxMessage { seq: number, visibleAt: number, attempts: number, lease: string | null }

/** The outbox in memory: messages in the order written (the store is itself all in memory, so this is too). */
class MemoryOutbox implements Outbox {
  readonly messages: WaitingMessage[] = []
  #seq = 0

  add (message: OutboxMessage): void {
    this.messages.push(Object.assign({}, message, { seq: ++this.#seq, visibleAt: message.created, attempts: 0, lease: null }))
  }

  async lease (queue: string, limit: number, now: number, leaseMs: number, rules: LeaseRules): Promise<LeasedMessage[]> {
    const ready = this.messages.filter(m => m.queue === queue && m.visibleAt <= now && m.created <= rules.writtenBy && m.attempts < rules.maxDeliveries)
      .sort((a, b) => a.visibleAt - b.visibleAt || a.seq - b.seq).slice(0, limit)
    return ready.map(m => {
      m.lease = randomHex(16)
      m.attempts++
      m.visibleAt = now + leaseMs
      return { seq: m.seq, id: m.id, body: m.body, created: m.created, attempts: m.attempts, lease: m.lease }
    })
  }

  async queues (): Promise<string[]> {
    return [...new Set(this.messages.map(m => m.queue))]
  }

  async retire (queue: string, maxDeliveries: number, now: number, to: string | null): Promise<number> {
    const spent = this.messages.filter(m => m.queue === queue && m.visibleAt <= now && m.attempts >= maxDeliveries)
    for (const m of spent) {
      if (to === null) this.messages.splice(this.messages.indexOf(m), 1)
      else Object.assign(m, { queue: to, id: randomHex(16), created: now, attempts: 0, lease: null, visibleAt: now }) // a new message of `to`
    }
    return spent.length
  }

  async settle (queue: string, acks: LeaseRef[], retries: LeaseRetry[]): Promise<{ acked: number, retried: number }> {
    const find = (ref: LeaseRef): number => this.messages.findIndex(m => m.queue === queue && m.seq === ref.seq && m.lease === ref.lease)
    let acked = 0
    let retried = 0
    for (const ref of acks) {
      const at = find(ref)
      if (at !== -1) { this.messages.splice(at, 1); acked++ }
    }
    for (const ref of retries) {
      const at = find(ref)
      if (at === -1) continue
      const message = this.messages[at]
      Object.assign(message, { visibleAt: ref.visibleAt, lease: null, attempts: ref.uncounted === true ? Math.max(0, message.attempts - 1) : message.attempts })
      retried++
    }
    return { acked, retried }
  }

  async backlog (queue: string): Promise<number> {
    return this.messages.filter(m => m.queue === queue).length
  }

  async drop (queue: string, before = Number.MAX_SAFE_INTEGER): Promise<number> {
    const kept = this.messages.filter(m => m.queue !== queue || m.created >= before)
    const dropped = this.messages.length - kept.length
    this.messages.splice(0, this.messages.length, ...kept)
    return dropped
  }
}

export class MemoryStore implements BucketStore {
  readonly #objects = new Map<string, Entry>()
  #sorted: Array<[Buffer, string]> | undefined
  readonly #uploads = new Map<string, { id: string, upload: StoredUpload, parts: Map<number, StoredPart & { bytes: Buffer }> }>()
  #lockRules: LockRule[] = []

  async lockRules (): Promise<LockRule[]> {
    return structuredClone(this.#lockRules)
  }

  async setLockRules (rules: LockRule[]): Promise<void> {
    this.#refuseRetired()
    this.#lockRules = structuredClone(rules)
  }

  /** Whether the record of `id` is retained at `now`, the write's instant (every method here is one synchronous step: the judgement and the write are one instant). */
  #retained (id: string, now = Date.now()): boolean {
    const current = this.#objects.get(id)?.record
    return current !== undefined && retainingRule(this.#lockRules, id, current.uploaded, now) !== null
  }

  readonly outbox = new MemoryOutbox()
  #sink: EventSink | null = null

  setEventSink (sink: EventSink | null): void {
    this.#sink = sink
  }

  /** The messages of a change, in the same synchronous step as the change. */
  #emit (change: ObjectChange): void {
    if (this.#sink !== null) for (const message of this.#sink(change)) this.outbox.add(message)
  }

  async stage (source: AsyncIterable<Uint8Array>): Promise<StagedBody> {
    const chunks: Buffer[] = []
    for await (const chunk of source) chunks.push(Buffer.from(chunk))
    return new MemoryBody(Buffer.concat(chunks))
  }

  async head (id: string): Promise<StoredObject | null> {
    return this.#objects.get(id)?.record ?? null
  }

  async open (id: string): Promise<ObjectReader | null> {
    const entry = this.#objects.get(id)
    return entry === undefined ? null : readerOf(entry)
  }

  openNow (id: string): ObjectReader | null | undefined {
    const entry = this.#objects.get(id)
    if (entry === undefined) return null
    return entry.record.size <= WHOLE_BODY ? readerOf(entry) : undefined
  }

  #set (id: string, entry: Entry | undefined): void {
    if (entry === undefined) this.#objects.delete(id)
    else this.#objects.set(id, entry)
    this.#sorted = undefined
  }

  async commit (id: string, object: StoredObject, body: StagedBody, precondition: Precondition, options: CommitOptions = {}): Promise<boolean> {
    this.#refuseRetired()
    if (!precondition(this.#objects.get(id)?.record ?? null)) {
      await body.discard()
      return false
    }
    if (this.#retained(id, options.now)) {
      await body.discard()
      throw objectLocked('put', object.key)
    }
    this.#set(id, { record: object, chunks: [(body as MemoryBody).bytes] })
    this.#emit(putChange(object, options.copiedFrom))
    return true
  }

  async delete (ids: string[], { cause, versions, now }: DeleteOptions = {}): Promise<DeleteOutcome> {
    this.#refuseRetired()
    const outcome: DeleteOutcome = { retained: [], removed: 0 }
    for (const id of ids) {
      const entry = this.#objects.get(id)
      if (entry === undefined) continue
      // A record rewritten since it was judged (a lifecycle expiry's `versions`) is not the one judged: kept, whatever its lock.
      const version = versions?.get(id)
      if (version !== undefined && entry.record.version !== version) continue
      if (this.#retained(id, now)) {
        outcome.retained.push(id)
        continue
      }
      this.#set(id, undefined)
      this.#emit({ action: cause === 'lifecycle' ? 'LifecycleDeletion' : 'DeleteObject', key: entry.record.key })
      outcome.removed++
    }
    return outcome
  }

  /** One synchronous step, so atomic: the copy shares the source's buffers (they are never changed in place). */
  async copy (fromId: string, toId: string, build: CopyBuilder, precondition: Precondition, options: CopyOptions = {}): Promise<CopyOutcome> {
    const transition = options.cause === 'transition'
    this.#refuseRetired()
    const source = this.#objects.get(fromId)
    if (source === undefined) return { status: 'no-source' }
    const object = build(source.record)
    if (object === null) return { status: 'source-refused', source: source.record }
    if (!precondition(this.#objects.get(toId)?.record ?? null)) return { status: 'refused' }
    if (!transition && this.#retained(toId, options.now)) throw objectLocked('copy', object.key)
    this.#set(toId, { record: object, chunks: source.chunks })
    if (!transition) this.#emit(putChange(object, { key: source.record.key }))
    return { status: 'copied', object }
  }

  async list (query: ListQuery): Promise<ListPage> {
    this.#sorted ??= [...this.#objects.keys()].map((id): [Buffer, string] => [Buffer.from(id, 'utf8'), id])
      .sort((a, b) => Buffer.compare(a[0], b[0]))
    const prefix = Buffer.from(query.prefix, 'utf8')
    const sorted = this.#sorted
    const above = (after: Uint8Array | undefined): Array<[Buffer, string]> => sorted.filter(([bytes]) =>
      (after === undefined || Buffer.compare(bytes, after) > 0) && bytes.subarray(0, prefix.length).equals(prefix))
    return assembleListPage({
      nextId: after => above(after)[0]?.[1],
      records: (after, limit) => above(after).slice(0, limit)
        .map(([, id]) => {
          const object = (this.#objects.get(id) as Entry).record
          return { id, object: query.withMetadata ? object : withFields(object, { httpMetadata: {}, customMetadata: {} }) }
        })
    }, query)
  }

  #retired = false

  async retire (): Promise<boolean> {
    this.#refuseRetired()
    if (this.#lockRules.length > 0) throw bucketLocked()
    if (this.#objects.size > 0) return false
    this.#retired = true
    return true
  }

  #refuseRetired (): void {
    if (this.#retired) throw bucketRetired()
  }

  async createUpload (id: string, upload: StoredUpload): Promise<void> {
    this.#refuseRetired()
    this.#uploads.set(upload.uploadId, { id, upload, parts: new Map() })
  }

  async getUpload (uploadId: string): Promise<StoredUpload | null> {
    return this.#uploads.get(uploadId)?.upload ?? null
  }

  async putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean> {
    this.#refuseRetired()
    const upload = this.#uploads.get(uploadId)
    if (upload === undefined) {
      await body.discard()
      return false
    }
    // A part given without its time (port.ts) is kept with its upload's creation time, as the other stores list one.
    upload.parts.set(part.partNumber, Object.assign({}, part, { uploaded: part.uploaded ?? upload.upload.created, bytes: (body as MemoryBody).bytes }))
    return true
  }

  async completeUpload (uploadId: string, id: string, build: CompleteBuilder, options: CompleteOptions = {}): Promise<StoredObject | null> {
    this.#refuseRetired()
    const upload = this.#uploads.get(uploadId)
    if (upload === undefined) return null
    const parts = new Map([...upload.parts].map(([n, { bytes: _bytes, ...part }]) => [n, structuredClone(part)]))
    const { object, partNumbers } = build(upload.upload, parts, this.#objects.get(id)?.record ?? null)
    if (this.#retained(id, options.now)) throw objectLocked('completeMultipartUpload', object.key)
    const chunks = partNumbers.map(n => upload.parts.get(n)?.bytes as Buffer)
    this.#set(id, { record: object, chunks })
    this.#emit({ action: 'CompleteMultipartUpload', key: object.key, size: object.size, etag: object.etag })
    this.#uploads.delete(uploadId)
    return object
  }

  async abortUpload (uploadId: string): Promise<boolean> {
    this.#refuseRetired()
    return this.#uploads.delete(uploadId)
  }

  async listUploads (query: UploadListQuery): Promise<StoredUpload[]> {
    const position = (id: string, uploadId: string): [Buffer, string] => [Buffer.from(id, 'utf8'), uploadId]
    const compare = ([a, x]: [Buffer, string], [b, y]: [Buffer, string]): number => Buffer.compare(a, b) || (x < y ? -1 : x > y ? 1 : 0)
    const after = query.after === undefined ? undefined : position(query.after.id, query.after.uploadId)
    return [...this.#uploads.values()]
      .filter(u => u.id.startsWith(query.prefix) && (after === undefined || compare(position(u.id, u.upload.uploadId), after) > 0))
      .sort((a, b) => compare(position(a.id, a.upload.uploadId), position(b.id, b.upload.uploadId)))
      .slice(0, query.limit)
      .map(u => u.upload)
  }

  async listParts (uploadId: string, after: number, limit: number): Promise<StoredPart[] | null> {
    const upload = this.#uploads.get(uploadId)
    if (upload === undefined) return null
    return [...upload.parts.values()]
      .filter(p => p.partNumber > after)
      .sort((a, b) => a.partNumber - b.partNumber)
      .slice(0, limit)
      .map(({ bytes: _bytes, ...part }) => structuredClone(part))
  }

  async sweep (createdBefore: number, _leftoversBefore: number, underLock?: () => Promise<void>): Promise<SweepReport> {
    // One process holds a memory store: no lock to take.
    await underLock?.()
    let abortedUploads = 0
    for (const [uploadId, { upload }] of this.#uploads) {
      if (upload.created < createdBefore) {
        this.#uploads.delete(uploadId)
        abortedUploads++
      }
    }
    return { abortedUploads, removedLeftovers: 0 }
  }

  async close (): Promise<void> {}
}
