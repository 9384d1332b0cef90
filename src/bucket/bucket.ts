/**
 * The bucket engine: every rule of the binding, over any `BucketStore`.
 *
 * Promises kept here, whatever the store:
 *   - arguments are validated before a byte is read, with the errors a
 *     script would see from the hosted runtime (TypeError / RangeError for
 *     shape mistakes, `BucketError` with a numeric code otherwise);
 *   - bodies stream through a hashing pass to the store's staging area, and
 *     a write becomes visible only by the store's atomic commit, judged
 *     against `onlyIf` inside the store's critical section;
 *   - a conditional put is first judged against the current object before
 *     the body is read, so a refused upload costs no disk write;
 *   - a handle its user closed refuses every later call (ERR_USE_AFTER_CLOSE),
 *     one the registry closed for a deleted bucket answers 10006.
 *
 * Deliberate differences from the hosted runtime: a ReadableStream of
 * unknown length is accepted by `put` and `uploadPart` (the HTTP door
 * streams chunked uploads through it), and any async iterable of bytes (a
 * Node.js stream) is accepted as a value.
 */
import { ArgumentRangeError as RangeError, ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { isUnconditional, judgeRecord, parseConditional } from './conditional.js'
import { BucketError, useAfterClose } from './errors.js'
import { keyArguments, keyId, lookupId, optionsObject, stringArgument } from './keys.js'
import { checkedDefaultStorageClass, checksumsHex, parseChecksumOption, parseCustomMetadata, parseHttpMetadata, parseStorageClass } from './metadata.js'
import { keylessView, ObjectBody, ObjectMetadata } from './object.js'
import { parseRangeHeader, resolveRange, validateRange, type ResolvedRange } from './range.js'
import { loopTurnNow } from './loop-turns.js'
import { ALWAYS, type BucketStore, type CommitOptions, type DeleteOptions, type Outbox, type StoredObject, type StoredUpload } from './port.js'
import { messagesFor, type QueueNotifications } from './notifications.js'
import type {
  Bucket, BucketCopyOptions, BucketCopyOutcome, BucketGetOptions, BucketListOptions, BucketMultipartOptions, BucketMultipartUpload, BucketObject,
  BucketCompleteOptions, BucketObjectBody, BucketObjects, BucketPartListOptions, BucketParts, BucketPutOptions, BucketRange,
  BucketUploadedPart, BucketUploadListOptions, BucketUploadPartOptions, BucketUploads, BucketValue,
  BucketReadOptions, BucketReadOutcome, OpenBucketOptions, SweepOptions, SweepReport
} from './types.js'
import { hashAlgorithms, type HashAlgorithm } from './checksums.js'
import { copiedBytes, copyObject } from './copy.js'
import { lifecycleRules, type LifecycleRule } from './lifecycle.js'
import { sweepLifecycle, sweepTimer, type LifecycleSweepReport } from './lifecycle-sweep.js'
import { listObjects } from './listing.js'
import { parseLockRules, type LockRule } from './locks.js'
import { completedAgain, completedBefore, completedObject, completionVersion, defaultPartChecksum, expectedComposite, listPartsPage, listUploadsPage, partChecksumAlgorithm, uploadChecksumOption } from './multipart.js'
import { DEFAULT_MIN_PART_BYTES, DEFAULT_UPLOAD_MAX_AGE_MS, MAX_DELETE_KEYS, MAX_PART_BYTES, MAX_PART_NUMBER, MAX_PUT_BYTES } from './limits.js'
import { randomBase64url, randomHex } from './random.js'
import { decideRead, decideReadNow } from './read.js'
import { MeasuredBody, valueSource, verifiedDigests } from './value.js'
import { judgeSsecKey, newSalt, newSsecRecord, parseSsecKey, readerWithKey, SealedBody } from './ssec.js'
import { MultipartUpload } from './upload-handle.js'

const DEFAULT_LEFTOVER_GRACE_MS = 15 * 60 * 1000

function newVersion (): string {
  return randomHex(16)
}

/** `computeChecksums` of a put: known algorithms only. */
function computedChecksums (algorithms: unknown): HashAlgorithm[] {
  if (algorithms === undefined) return []
  if (!Array.isArray(algorithms) || !algorithms.every(a => (hashAlgorithms as readonly unknown[]).includes(a))) {
    throw new TypeError(`put: computeChecksums must list checksum algorithms (${hashAlgorithms.join(', ')}).`)
  }
  return algorithms as HashAlgorithm[]
}

/**
 * A part number as workerd reads its `int` argument: converted and truncated (1.5 is part 1, '2' part 2),
 * held to 1..10,000, every refusal a TypeError with workerd's sentence, named after the method called.
 */
function validPartNumber (method: string, partNumber: unknown): number {
  const n = typeof partNumber === 'object' || typeof partNumber === 'symbol' ? Number.NaN : Math.trunc(Number(partNumber))
  if (!(n >= 1 && n <= MAX_PART_NUMBER)) {
    throw new TypeError(`${method}: Part number must be between 1 and ${MAX_PART_NUMBER} (inclusive). Actual value was: ${typeof partNumber === 'object' && partNumber !== null ? 'an object' : String(partNumber)}`)
  }
  return n
}

/** What a read of the whole object reports as its range (the hosted binding always reports one). */
function wholeRange (record: StoredObject): ResolvedRange {
  return { offset: 0, length: record.size }
}

function unquoteEtag (etag: string): string {
  return etag.startsWith('"') && etag.endsWith('"') && etag.length >= 2 ? etag.slice(1, -1) : etag
}

export class BucketEngine implements Bucket {
  readonly #store: BucketStore
  readonly #clock: () => Date
  readonly #minPartSize: number
  readonly #uploadMaxAgeMs: number
  #timer: NodeJS.Timeout | undefined
  /** Sweeps in progress: `close` waits for them, and the timer starts none while one runs. */
  readonly #sweeping = new Set<Promise<SweepReport>>()
  readonly #notifications: OpenBucketOptions['notifications']
  readonly #defaultStorageClass: NonNullable<OpenBucketOptions['defaultStorageClass']>
  /**
   * The notification rules as last read (before each write): the store's
   * event sink runs inside its transaction, where nothing can be awaited.
   */
  #rules: readonly QueueNotifications[] = []
  /**
   * Set by a close, for every later call, the same on every store: 'closed'
   * by its user (ERR_USE_AFTER_CLOSE); 'deleted' by the registry for a
   * bucket deleted (here or by another process): 10006, as its absence.
   */
  #closed: 'closed' | 'deleted' | null = null
  #closing: Promise<void> | null = null

  constructor (store: BucketStore, options: OpenBucketOptions = {}) {
    this.#store = store
    this.#clock = options.clock ?? (() => new Date())
    this.#minPartSize = options.minPartSize ?? DEFAULT_MIN_PART_BYTES
    this.#uploadMaxAgeMs = options.uploadMaxAgeMs ?? DEFAULT_UPLOAD_MAX_AGE_MS
    this.#notifications = options.notifications
    this.#defaultStorageClass = options.defaultStorageClass ?? (async () => 'Standard')
    if (options.sweepIntervalMs !== undefined && options.sweepIntervalMs > 0) {
      this.#timer = sweepTimer(options.sweepIntervalMs, () => { if (this.#sweeping.size === 0) this.sweep().catch(() => {}) })
    }
  }

  /** Every call starts here (before its arguments are judged): a closed handle refuses it. */
  #live (method: string): void {
    if (this.#closed === 'deleted') throw new BucketError('NoSuchBucket', method)
    if (this.#closed !== null) throw useAfterClose(method, 'bucket')
  }

  /** Whether the handle was closed (the registry opens a new one for a handle its user closed). */
  get closed (): boolean {
    return this.#closed !== null
  }

  #now (): number {
    return this.#clock().getTime()
  }

  /** Reads the notification rules before a write, so the change's events follow the rules of that moment. */
  async #readRules (): Promise<void> {
    const notifications = this.#notifications
    if (notifications === undefined || this.#store.setEventSink === undefined) return
    const rules = await notifications.rules()
    if (rules === this.#rules) return
    this.#rules = rules
    // No rules, no sink: a store then writes as it would without notifications.
    this.#store.setEventSink(rules.length === 0 ? null : change => messagesFor(rules, notifications.bucket, change, this.#clock()))
  }

  /** The store's outbox, where the messages of this bucket's events wait (undefined when the store keeps none). */
  get outbox (): Outbox | undefined {
    return this.#store.outbox
  }

  async head (key: string): Promise<BucketObject | null> {
    this.#live('head')
    const turn = loopTurnNow()
    if (turn !== undefined) await turn
    const record = await this.#store.head(lookupId('head', stringArgument('head', key)))
    return record === null ? null : new ObjectMetadata(keylessView(record), wholeRange(record))
  }

  async read (key: string, options?: BucketReadOptions): Promise<BucketReadOutcome> {
    this.#live('read')
    const id = lookupId('read', stringArgument('read', key))
    return await decideRead(this.#store, id, optionsObject<BucketReadOptions>('read', options))
  }

  readNow (key: string, options?: BucketReadOptions): BucketReadOutcome | undefined {
    this.#live('read')
    return decideReadNow(this.#store, lookupId('read', stringArgument('read', key)), optionsObject<BucketReadOptions>('read', options))
  }

  async get (key: string, options?: BucketGetOptions): Promise<BucketObjectBody | BucketObject | null> {
    this.#live('get')
    const id = lookupId('get', stringArgument('get', key))
    const opts = optionsObject<BucketGetOptions>('get', options)
    const conditional = parseConditional(opts.onlyIf, 'get')
    let range: BucketRange | null = null
    const fromHeader = opts.range instanceof Headers
    if (opts.range instanceof Headers) range = parseRangeHeader(opts.range.get('range'))
    else if (opts.range !== undefined) range = validateRange('get', opts.range)
    const ssecKey = parseSsecKey('get', opts.ssecKey)

    const turn = loopTurnNow()
    if (turn !== undefined) await turn
    const opened = await this.#store.open(id)
    if (opened === null) return null
    const reader = await readerWithKey('get', opened, ssecKey)
    const record = reader.object
    if (judgeRecord(conditional, record) !== 'pass') {
      await reader.close()
      return new ObjectMetadata(record, wholeRange(record))
    }
    let served: ResolvedRange = wholeRange(record)
    if (range !== null) {
      try {
        served = resolveRange(range, record.size, 'get')
      } catch (err) {
        // A Range header that cannot be satisfied is ignored: the whole object is served.
        if (!fromHeader) {
          await reader.close()
          throw err
        }
      }
    }
    const bytes = reader.bytes?.subarray(served.offset, served.offset + served.length)
    // A body held in memory gets its stream only if someone asks for one.
    const stream = bytes === undefined ? reader.stream(served.offset, served.length) : () => reader.stream(served.offset, served.length)
    return new ObjectBody(record, served, stream, bytes)
  }

  async put (key: string, value: BucketValue, options?: BucketPutOptions): Promise<BucketObject | null> {
    return await this.#put(key, value, options, {})
  }

  async putCopied (key: string, value: BucketObjectBody, options: BucketPutOptions | undefined, source: { bucket: string, key: string }): Promise<BucketObject | null> {
    return await this.#put(key, copiedBytes('put', value), options, { copiedFrom: { bucket: source.bucket, key: source.key } })
  }

  async #put (keyGiven: string, value: BucketValue, options: BucketPutOptions | undefined, commit: CommitOptions): Promise<BucketObject | null> {
    this.#live('put')
    const key = stringArgument('put', keyGiven)
    const id = keyId('put', key)
    const opts = optionsObject<BucketPutOptions>('put', options)
    const conditional = parseConditional(opts.onlyIf, 'put')
    const httpMetadata = parseHttpMetadata('put', opts.httpMetadata)
    const customMetadata = parseCustomMetadata('put', opts.customMetadata)
    const storageClass = opts.storageClass == null ? checkedDefaultStorageClass('put', await this.#defaultStorageClass()) : parseStorageClass('put', opts.storageClass)
    const checksum = parseChecksumOption('put', opts as Record<string, unknown>)
    const ssecKey = parseSsecKey('put', opts.ssecKey)
    const computed = computedChecksums(opts.computeChecksums)
    const source = valueSource(value, 'put')

    const unconditional = isUnconditional(conditional)
    if (!unconditional && judgeRecord(conditional, await this.#store.head(id)) !== 'pass') return null
    await this.#readRules()

    const body = new MeasuredBody(source, ['md5', ...(checksum === null ? [] : [checksum.algorithm]), ...computed], MAX_PUT_BYTES, 'put')
    const version = newVersion()
    const ssec = ssecKey === undefined ? undefined : newSsecRecord(ssecKey)
    const sealed = ssecKey === undefined || ssec === undefined ? undefined : new SealedBody(body, ssecKey, ssec.salt)
    const staged = await this.#store.stage(sealed ?? body, version)
    const { md5, ...others } = await verifiedDigests('put', body, checksum, staged)
    // An SSE-C object keeps no digest of its data that was not asked for: its ETag is its ciphertext's MD5 (ssec.ts). An MD5 given is kept, as any checksum given.
    const digests = sealed === undefined ? { md5, ...others } : Object.assign({ ssec }, checksum?.algorithm === 'md5' ? { md5 } : {}, others)
    const record: StoredObject = {
      key,
      version,
      size: body.size,
      etag: sealed === undefined ? md5 as string : sealed.etag(),
      uploaded: this.#now(),
      storageClass,
      httpMetadata,
      customMetadata,
      checksums: digests
    }
    const committed = await this.#store.commit(id, record, staged,
      unconditional ? ALWAYS : current => judgeRecord(conditional, current) === 'pass', Object.assign({ now: record.uploaded }, commit))
    return committed ? new ObjectMetadata(record) : null
  }

  async delete (keys: string | string[]): Promise<void> {
    const refused = await this.deleteEach(keyArguments('delete', keys))
    // The others are deleted; the binding has one error to throw, for the first key a lock rule kept.
    if (refused.length > 0) throw new BucketError('ObjectLocked', 'delete', `(key: ${JSON.stringify(refused[0])})`)
  }

  /** `delete` of each key, answering the keys a lock rule kept; `{cause: 'lifecycle'}` for objects a lifecycle rule expired (their event is LifecycleDeletion). */
  async deleteEach (keys: string[], options: DeleteOptions = {}): Promise<string[]> {
    this.#live('delete')
    if (keys.length > MAX_DELETE_KEYS) {
      throw new RangeError(`delete: at most ${MAX_DELETE_KEYS} keys can be deleted at once (got ${keys.length}).`)
    }
    const ids = keys.map(k => lookupId('delete', k))
    await this.#readRules()
    const refused = new Set((await this.#store.delete([...new Set(ids)], { cause: options.cause, now: this.#now() })).retained)
    return keys.filter((_, i) => refused.has(ids[i]))
  }

  async lockRules (): Promise<LockRule[]> {
    this.#live('lockRules')
    return await this.#store.lockRules()
  }

  async setLockRules (rules: unknown): Promise<LockRule[]> {
    this.#live('setLockRules')
    const parsed = parseLockRules(rules)
    await this.#store.setLockRules(parsed)
    return parsed
  }

  async list (options?: BucketListOptions): Promise<BucketObjects> {
    this.#live('list')
    const turn = loopTurnNow()
    if (turn !== undefined) await turn
    return await listObjects(this.#store, optionsObject<BucketListOptions>('list', options))
  }

  async copy (sourceKey: string, key: string, options?: BucketCopyOptions): Promise<BucketCopyOutcome> {
    this.#live('copy')
    await this.#readRules()
    return await copyObject(this.#store, stringArgument('copy', sourceKey), stringArgument('copy', key), optionsObject<BucketCopyOptions>('copy', options), { now: this.#now(), version: newVersion() })
  }

  async createMultipartUpload (keyGiven: string, options?: BucketMultipartOptions): Promise<BucketMultipartUpload> {
    this.#live('createMultipartUpload')
    const key = stringArgument('createMultipartUpload', keyGiven)
    const id = keyId('createMultipartUpload', key)
    const opts = optionsObject<BucketMultipartOptions>('createMultipartUpload', options)
    const storageClass = opts.storageClass == null ? checkedDefaultStorageClass('createMultipartUpload', await this.#defaultStorageClass()) : parseStorageClass('createMultipartUpload', opts.storageClass)
    const upload: StoredUpload = {
      uploadId: randomBase64url(24),
      key,
      created: this.#now(),
      httpMetadata: parseHttpMetadata('createMultipartUpload', opts.httpMetadata),
      customMetadata: parseCustomMetadata('createMultipartUpload', opts.customMetadata),
      storageClass,
      ...uploadChecksumOption(opts)
    }
    const ssecKey = parseSsecKey('createMultipartUpload', opts.ssecKey)
    if (ssecKey !== undefined) upload.ssec = newSsecRecord(ssecKey)
    await this.#store.createUpload(id, upload)
    return new MultipartUpload(this, key, upload.uploadId)
  }

  resumeMultipartUpload (keyGiven: string, uploadId: string): BucketMultipartUpload {
    this.#live('resumeMultipartUpload')
    const key = stringArgument('resumeMultipartUpload', keyGiven)
    lookupId('resumeMultipartUpload', key)
    return new MultipartUpload(this, key, stringArgument('resumeMultipartUpload', uploadId))
  }

  /** The upload, checked to belong to `key`, or 10024. */
  async #liveUpload (method: string, key: string, uploadId: string): Promise<StoredUpload> {
    const upload = await this.#store.getUpload(uploadId)
    if (upload === null || upload.key.normalize('NFC') !== key.normalize('NFC')) throw new BucketError('NoSuchUpload', method)
    return upload
  }

  async uploadPart (key: string, uploadId: string, partNumber: unknown, value: BucketValue, options?: BucketUploadPartOptions): Promise<BucketUploadedPart> {
    this.#live('uploadPart')
    lookupId('uploadPart', key)
    const n = validPartNumber('uploadPart', partNumber)
    if (value === null || value === undefined) throw new TypeError('uploadPart: a part needs a value (got null).')
    const opts = optionsObject<BucketUploadPartOptions>('uploadPart', options)
    const checksum = parseChecksumOption('uploadPart', opts)
    const fallback = defaultPartChecksum(opts.defaultChecksum)
    const ssecKey = parseSsecKey('uploadPart', opts.ssecKey)
    const source = valueSource(value, 'uploadPart')
    const upload = await this.#liveUpload('uploadPart', key, uploadId)
    judgeSsecKey('uploadPart', upload.ssec, ssecKey)
    const computed = partChecksumAlgorithm(upload, checksum?.algorithm, opts.copied === true, fallback)
    const algorithms: HashAlgorithm[] = ['md5', ...(checksum === null ? [] : [checksum.algorithm]), ...(computed === undefined ? [] : [computed])]
    const body = new MeasuredBody(source, algorithms, MAX_PART_BYTES, 'uploadPart')
    const salt = ssecKey === undefined ? undefined : newSalt()
    const sealed = ssecKey === undefined || salt === undefined ? undefined : new SealedBody(body, ssecKey, salt)
    const staged = await this.#store.stage(sealed ?? body)
    const { md5, ...checksums } = await verifiedDigests('uploadPart', body, checksum, staged)
    const etag = sealed === undefined ? md5 : sealed.etag()
    if (etag === undefined) throw new Error('uploadPart: the MD5 of the part was not computed.')
    const part = { partNumber: n, etag, size: body.size, uploaded: this.#now(), checksums, ...(salt === undefined ? {} : { ssec: { salt } }) }
    if (!await this.#store.putPart(uploadId, part, staged)) {
      throw new BucketError('NoSuchUpload', 'uploadPart')
    }
    return Object.keys(checksums).length === 0 ? { partNumber: n, etag } : { partNumber: n, etag, checksums }
  }

  async listMultipartUploads (options?: BucketUploadListOptions): Promise<BucketUploads> {
    this.#live('listMultipartUploads')
    return await listUploadsPage(this.#store, options)
  }

  async listParts (key: string, uploadId: string, options?: BucketPartListOptions): Promise<BucketParts> {
    this.#live('listParts')
    lookupId('listParts', key)
    const upload = await this.#liveUpload('listParts', key, uploadId)
    return await listPartsPage(this.#store, upload, options)
  }

  /** Aborts the upload of `key`; 10024 when there is none (unknown id, or an upload of another key). */
  async abortUpload (key: string, uploadId: string): Promise<void> {
    this.#live('abortMultipartUpload')
    lookupId('abortMultipartUpload', key)
    await this.#liveUpload('abortMultipartUpload', key, uploadId)
    // A completion (or another abort) may remove it between the look and the abort: then only that one succeeded.
    if (!await this.#store.abortUpload(uploadId)) throw new BucketError('NoSuchUpload', 'abortMultipartUpload')
  }

  async completeUpload (key: string, uploadId: string, uploadedParts: BucketUploadedPart[], options?: BucketCompleteOptions): Promise<BucketObject | null> {
    const method = 'completeMultipartUpload'
    this.#live(method)
    const id = keyId(method, key)
    const opts = optionsObject<BucketCompleteOptions>(method, options)
    const conditional = parseConditional(opts.onlyIf, method)
    const unconditional = isUnconditional(conditional)
    const ssecKey = parseSsecKey(method, opts.ssecKey)
    if (!Array.isArray(uploadedParts)) throw new TypeError(`${method}: uploadedParts must be an array.`)
    const named = uploadedParts.map(p => {
      if (p === null || typeof p !== 'object' || typeof p.etag !== 'string') throw new TypeError(`${method}: each part must be {partNumber, etag}.`)
      return { partNumber: validPartNumber(method, p.partNumber), etag: unquoteEtag(p.etag), checksums: checksumsHex(method, p.checksums) }
    })
    // The hosted service takes the parts in ascending order only, as S3 does.
    for (let i = 1; i < named.length; i++) {
      if (named[i].partNumber === named[i - 1].partNumber) throw new BucketError('InvalidPart', method, `Part ${named[i].partNumber} is listed twice.`)
      if (named[i].partNumber < named[i - 1].partNumber) {
        throw new BucketError('InvalidPartOrder', method, 'The parts must be listed in ascending order of part number.')
      }
    }
    if (opts.checksumType !== undefined && opts.checksumType !== 'COMPOSITE' && opts.checksumType !== 'FULL_OBJECT') {
      throw new TypeError(`${method}: checksumType must be "COMPOSITE" or "FULL_OBJECT".`)
    }
    const request = {
      key, version: completionVersion(uploadId, randomHex(8)), uploaded: this.#now(), minPartSize: this.#minPartSize, checksumType: opts.checksumType, expected: checksumsHex(method, opts.checksum), composite: expectedComposite(opts.compositeChecksum), keyless: ssecKey === undefined
    }
    await this.#readRules()
    // A failed onlyIf (judged against the key's current object by the store's critical section) leaves the upload as it was.
    const refused = new Error('precondition failed')
    const record = await this.#store.completeUpload(uploadId, id, (upload, stored, current) => {
      if (upload.key.normalize('NFC') !== id) throw new BucketError('NoSuchUpload', method)
      if (ssecKey !== undefined) judgeSsecKey(method, upload.ssec, ssecKey)
      if (!unconditional && judgeRecord(conditional, current) !== 'pass') throw refused
      const object = completedObject(upload, stored, named, request)
      return { object, partNumbers: named.map(p => p.partNumber) }
    }, { now: request.uploaded }).catch((err: unknown) => { if (err === refused) return refused; throw err })
    if (record === refused) return null
    if (record === null || record instanceof Error) {
      if (opts.repeatable === true) {
        const current = await this.#store.head(id)
        if (current !== null && completedBefore(current, uploadId, named)) return completedAgain(current, ssecKey, request)
      }
      throw new BucketError('NoSuchUpload', method)
    }
    return new ObjectMetadata(record)
  }

  async sweep (options: SweepOptions = {}): Promise<SweepReport> {
    this.#live('sweep')
    // Registered before its first await: a close() called meanwhile waits for it.
    const sweeping = this.#sweep(options)
    this.#sweeping.add(sweeping)
    try {
      return await sweeping
    } finally {
      this.#sweeping.delete(sweeping)
    }
  }

  async #sweep (options: SweepOptions): Promise<SweepReport> {
    // A sweep may delete (lifecycle expiry): its events follow the rules of now.
    await this.#readRules()
    const maxAge = options.uploadMaxAgeMs ?? this.#uploadMaxAgeMs
    const now = options.now ?? this.#now()
    // Leftovers are judged by their files' real times, not by the injected clock.
    const grace = options.leftoverGraceMs ?? DEFAULT_LEFTOVER_GRACE_MS
    const rules = lifecycleRules(options.lifecycle)
    const lifecycleNow = options.lifecycleNow
    const rulesNow = lifecycleNow === undefined ? undefined : async (): Promise<LifecycleRule[]> => lifecycleRules(await lifecycleNow())
    let lifecycle: LifecycleSweepReport | undefined
    // The rules are carried out under the store's sweep lock: one sweeper at a time, in every process.
    const underLock = rules.length === 0 ? undefined : async (): Promise<void> => { lifecycle = await sweepLifecycle(this.#store, rules, now, Math.min(now, this.#now()), rulesNow) }
    const report = await this.#store.sweep(now - maxAge, Date.now() - grace, underLock)
    return lifecycle === undefined
      ? report
      : {
          abortedUploads: report.abortedUploads + lifecycle.abortedUploads,
          removedLeftovers: report.removedLeftovers,
          expiredObjects: lifecycle.expiredObjects,
          transitionedObjects: lifecycle.transitionedObjects
        }
  }

  async retire (): Promise<boolean> {
    this.#live('retire')
    return await this.#store.retire()
  }

  /** Final: every later call on this handle (and its upload handles) is refused with ERR_USE_AFTER_CLOSE; a second close does nothing more. */
  async close (): Promise<void> {
    await this.#close('closed')
  }

  /** What the registry calls for a bucket deleted (here or by another process): every later call answers 10006. */
  async closeDeleted (): Promise<void> {
    await this.#close('deleted')
  }

  async #close (why: 'closed' | 'deleted'): Promise<void> {
    this.#closed ??= why
    this.#closing ??= (async () => {
      if (this.#timer !== undefined) clearInterval(this.#timer)
      // A sweep still running would touch files after close returned.
      await Promise.allSettled(this.#sweeping)
      await this.#store.close()
    })()
    await this.#closing
  }
}
