/**
 * The registry of buckets, shared by every door: which buckets exist, their
 * settings, and their open engines. Where buckets and settings are kept is
 * a `RegistryStorage` (port.ts) the composition root hands in; with the
 * filesystem storage (src/stores/fs/registry-storage.ts) a bucket is a
 * directory `<dataDir>/<name>/` and its settings (public access, CORS,
 * lifecycle, custom domains, default storage class) a document:
 *
 *     { "format": 1, "creationDate": "2026-01-01T00:00:00.000Z",
 *       "settings": { "public": false, "cors": null, "lifecycle": null,
 *                     "domains": [], "storageClass": "Standard" } }
 *
 * Promises:
 * - Several processes share one data directory. A settings change made by
 *   one is seen by the next request of every other: each read stats the file
 *   (a replaced file has a new inode) and re-reads it when it changed.
 *   Read-modify-write of settings runs under the storage's settings lock,
 *   and a document is replaced atomically, so a reader never sees half.
 * - Custom domains are looked up on every request whose Host is not the
 *   server's own, so the domain map is cached and rebuilt only when a bucket
 *   appears or disappears or some bucket's settings were updated (the
 *   storage's change token, moved by `updateSettings`). Hand edits of a settings file reach `info` at once
 *   but the domain map only after the next registry write.
 * - Directories whose names start with `.` are not buckets (the management
 *   API keeps its state in `<dataDir>/.mgmt/`), nor are directories whose
 *   names are not valid bucket names.
 * - Deleting a bucket renames its directory out of the way first, so other
 *   processes see it vanish at once, then removes the files. The other
 *   processes close their handles on it within a second or so, even when
 *   no request names it again (HANDLE_CHECK_MS).
 * - A directory made by hand (no settings file yet) is adopted on first sight:
 *   it gets a settings file (private, created then), so its creation date,
 *   which tells one incarnation of a bucket name from the next, stays put.
 *
 * Lifecycle: the stored value is the management API's document, kept as
 * given; the sweep carries out every rule (lifecycle.ts says how, and
 * lifecycle-sweep.ts how it walks a store). The sweeper's age for uploads in
 * progress is the smallest `abortMultipartUploadsTransition.condition.maxAge`
 * (seconds) among enabled rules for the whole bucket (no or an empty prefix).
 */
import { BucketEngine } from './bucket.js'
import { BucketInfos, type BucketInfo, type RegistryWarn } from './bucket-infos.js'
import { guardedWarn } from './guarded-warn.js'
import { BucketError, useAfterClose } from './errors.js'
import { DomainMap } from './domains.js'
import { addSweepReport, emptySweepReport, sweepTimer } from './lifecycle-sweep.js'
import { parseLockRules, type LockRule } from './locks.js'
import type { Outbox, RegistryStorage, SettingsDocument, StateDocuments } from './port.js'
import { isSettingsDamaged, servedSettings } from './settings-document.js'
import type { QueueNotifications } from './notifications.js'
import {
  isValidBucketName, uploadMaxAgeFromLifecycle, validateSettingsPatch, withDefaults, type BucketSettings
} from './settings.js'
import type { Bucket, OpenBucketOptions, StorageClass, SweepReport } from './types.js'
import { TokenDirectory } from './tokens.js'

export * from './settings.js'
export type { BucketInfo, RegistryWarn } from './bucket-infos.js'
export { damageOf, isSettingsDamaged } from './settings-document.js'

export interface BucketRegistry {
  readonly dataDir: string
  /**
   * The buckets, by name. A bucket whose settings are damaged (10915) is
   * left out (and warned of, once per version of its file), or with
   * `strict` makes the list throw that error (a server's start-up).
   */
  list (options?: { strict?: boolean }): Promise<BucketInfo[]>
  /** null: no such bucket; throws `SettingsDamaged` (10915) for a bucket whose settings are damaged. */
  info (name: string): Promise<BucketInfo | null>
  create (name: string, settings?: Partial<BucketSettings>): Promise<BucketInfo>
  delete (name: string): Promise<void>
  /** `known`: the bucket's info just read by the caller, to spare a second look at its settings. */
  open (name: string, known?: BucketInfo): Promise<Bucket | null>
  /** `info` and `open` at once, from the settings read last (unchanged since) and a bucket already open; undefined otherwise: then those. */
  openNow (name: string): { info: BucketInfo, bucket: Bucket } | undefined
  updateSettings (name: string, patch: Partial<BucketSettings>): Promise<BucketSettings>
  /** The bucket's lock rules (kept by its store, beside its objects: see locks.ts and port.ts, guarantee 4). */
  lockRules (name: string): Promise<LockRule[]>
  /** Replaces the bucket's lock rules (checked first: an argument error names the first mistake); answers them as kept. */
  setLockRules (name: string, rules: unknown): Promise<LockRule[]>
  /**
   * Replaces the bucket's notification rules with what `change` makes of
   * the current ones, under the settings lock (a rule judged against the
   * others is judged against the latest); `change` may throw to refuse.
   */
  changeNotifications (name: string, change: (current: QueueNotifications[]) => QueueNotifications[]): Promise<QueueNotifications[]>
  /** The outbox of bucket `name`'s store, where its event messages wait; null when the bucket or the outbox does not exist. */
  outbox (name: string): Promise<Outbox | null>
  bucketForDomain (host: string): Promise<string | null>
  /** `bucketForDomain` at once, from the map made last while nothing has changed since; undefined otherwise: then that. */
  bucketForDomainNow (host: string): string | null | undefined
  /**
   * Sweeps every bucket (one sweep at a time per process), or those of
   * `buckets`, carrying out each one's lifecycle rules as they stand (read
   * when its sweep starts and again before each batch it acts on); what was
   * removed, added up. `now`: judge rules and upload ages as if the clock
   * read this instant (stored times unchanged).
   */
  sweep (options?: { now?: Date, buckets?: string[] }): Promise<SweepReport>
  /** Sweeps every `intervalMs`; `onSwept` hears of each sweep that finished, with its length in ms. */
  startSweeper (intervalMs: number, onError?: (err: unknown) => void, onSwept?: (report: SweepReport, ms: number) => void): void
  /** Resolves when the catalog answers a trivial question (readiness); rejects with why it did not. */
  ping (): Promise<void>
  /** The documents of `area` kept beside the buckets (`mgmt`: the management API's state). */
  state (area: string): StateDocuments
  /** The scoped tokens (kept in the state area `tokens`; tokens.ts). */
  readonly tokens: TokenDirectory
  close (): Promise<void>
}

export interface RegistryOptions {
  /** Current time, for tests. */
  clock?: () => Date
  /** Smallest multipart part but the last (tests lower it). */
  minPartSize?: number
  /** Hears what no caller does: a bucket left out of lists for its damaged settings (default: `process.emitWarning`). */
  warn?: RegistryWarn
}

/**
 * How often a process looks whether buckets it holds open were deleted or
 * created again by another process, which closes them there but not here:
 * until then this process would keep the deleted bucket's catalog (its
 * files, and the disk space they hold) open. A look asks the storage's
 * change token (a stat or two, or one row of a catalog server), and only
 * when it moved looks at each open bucket's settings; no request waits for
 * it, and a request to such a bucket reopens or refuses it by itself.
 */
const HANDLE_CHECK_MS = 1000

interface OpenHandle {
  /** The bucket's creation date: a bucket deleted and created again is a new bucket. */
  incarnation: number
  bucket: Promise<BucketEngine>
  /** The bucket, once open. */
  opened?: BucketEngine
}

/**
 * A bucket retired already, by a delete that stopped before removing its
 * place (the process died, the catalog went away) or by one running now,
 * holds nothing and refuses writes: the delete goes on, and removing the
 * place decides which of two racing deletes succeeds.
 */
function alreadyRetired (err: unknown): true {
  if (err instanceof BucketError && err.errorName === 'NoSuchBucket') return true
  throw err
}

class Registry implements BucketRegistry {
  readonly #storage: RegistryStorage
  readonly #clock: () => Date
  readonly #engineOptions: OpenBucketOptions
  readonly #infos: BucketInfos
  readonly #handles = new Map<string, OpenHandle>()
  readonly #domains: DomainMap
  #sweeper: NodeJS.Timeout | null = null
  /** The timer of the looks at open buckets (HANDLE_CHECK_MS), running while one is open; and the change token last looked at. */
  #handleCheck: NodeJS.Timeout | null = null
  #checkedToken: string | null = null
  #checking: Promise<void> | null = null
  /** Set by `close`: no timer starts again (a bucket opened after it would have it run on closed storage). */
  #closed = false
  /** Set by `close` once the sweep in progress has ended: every call is refused from then on. */
  #refusing = false
  #closing: Promise<void> | null = null
  /** Every public call (and an open still on its way) starts here: once `close` refuses, a call would open closed stores again behind the caller's back. */
  #live (method: string): void {
    if (this.#refusing) throw useAfterClose(method, 'registry')
  }
  #sweeping: Promise<SweepReport> | null = null
  readonly #tokens: TokenDirectory
  get tokens (): TokenDirectory {
    this.#live('tokens')
    return this.#tokens
  }

  constructor (storage: RegistryStorage, options: RegistryOptions) {
    this.#storage = storage
    this.#clock = options.clock ?? (() => new Date())
    this.#engineOptions = { clock: this.#clock, minPartSize: options.minPartSize }
    this.#tokens = new TokenDirectory(storage.state('tokens'), this.#clock)
    this.#infos = new BucketInfos(storage, this.#clock, options.warn === undefined ? undefined : guardedWarn(options.warn))
    this.#domains = new DomainMap(storage, this.#infos, async () => await this.#names())
  }

  get dataDir (): string {
    return this.#storage.location
  }

  async list (options: { strict?: boolean } = {}): Promise<BucketInfo[]> {
    this.#live('list')
    const names = await this.#names()
    if (options.strict !== true) return await this.#infos.readable(names)
    const infos = await Promise.all(names.map(async name => await this.#infos.info(name)))
    return infos.filter((i): i is BucketInfo => i !== null)
  }

  /** The storage's places that are buckets by name, sorted. */
  async #names (): Promise<string[]> {
    return (await this.#storage.names()).filter(isValidBucketName).sort()
  }

  async info (name: string): Promise<BucketInfo | null> {
    this.#live('info')
    if (!isValidBucketName(name)) return null
    return await this.#infos.info(name)
  }

  async create (name: string, settings: Partial<BucketSettings> = {}): Promise<BucketInfo> {
    this.#live('create')
    if (!isValidBucketName(name)) throw new BucketError('InvalidBucketName', 'createBucket')
    const patch = validateSettingsPatch(settings)
    if (!await this.#storage.createPlace(name)) throw new BucketError('BucketAlreadyExists', 'createBucket')
    const creationDate = this.#clock()
    const document: SettingsDocument = {
      format: 1,
      creationDate: creationDate.toISOString(),
      settings: withDefaults(patch)
    }
    // Under the settings lock: another process that saw the new place without settings adopts it under that lock (bucket-infos.ts), and its default settings must not replace these.
    await this.#storage.withSettingsLock(name, async () => { await this.#storage.writeSettings(name, document) })
    await this.#storage.touch()
    return { name, creationDate, settings: withDefaults(patch) }
  }

  async delete (name: string): Promise<void> {
    this.#live('delete')
    const info = await this.info(name)
    if (info === null) throw new BucketError('NoSuchBucket', 'deleteBucket')
    let retired: boolean
    try {
      const bucket = await this.open(name)
      if (bucket === null) throw new BucketError('NoSuchBucket', 'deleteBucket') // gone since the look: another delete won
      // Emptiness is judged and the bucket closed to writes in one critical
      // section of its catalog: a put racing this delete either lands first
      // (and the delete is refused) or fails; it is never acknowledged and lost.
      // A bucket with lock rules is refused there too (10914), even when empty.
      retired = await bucket.retire().catch(alreadyRetired)
    } catch (err) {
      // A racing delete removed the bucket's place while this one opened it (its files vanished under the open): that one won.
      this.#infos.forget(name)
      if (!(err instanceof BucketError) && await this.info(name).then(found => found === null, () => false)) throw new BucketError('NoSuchBucket', 'deleteBucket')
      throw err
    }
    if (!retired) throw new BucketError('BucketNotEmpty', 'deleteBucket')
    await this.#closeHandle(name, true)
    this.#infos.forget(name)
    if (!await this.#storage.removePlace(name)) throw new BucketError('NoSuchBucket', 'deleteBucket')
    await this.#storage.touch()
  }

  async open (name: string, known?: BucketInfo): Promise<Bucket | null> {
    this.#live('open')
    const info = known ?? await this.info(name)
    if (info === null) {
      await this.#closeHandle(name, true)
      return null
    }
    const incarnation = info.creationDate.getTime()
    const handle = this.#handles.get(name)
    if (handle === undefined || handle.incarnation !== incarnation) return await this.#openEngine(name, incarnation, handle)
    if (!(await handle.bucket).closed) return await handle.bucket
    if (this.#handles.get(name) === handle) this.#handles.delete(name) // closed by its user: opened again, once for all who found it so
    return await this.open(name, info)
  }

  openNow (name: string): { info: BucketInfo, bucket: Bucket } | undefined {
    if (this.#refusing || !isValidBucketName(name)) return undefined
    const info = this.#infos.infoNow(name)
    const bucket = this.#handles.get(name)
    if (info === undefined || bucket?.opened === undefined || bucket.incarnation !== info.creationDate.getTime() || bucket.opened.closed) return undefined
    return { info, bucket: bucket.opened }
  }

  async #openEngine (name: string, incarnation: number, handle: OpenHandle | undefined): Promise<BucketEngine> {
    // A call begun before `close` and still on its way: what it opened now would never be closed.
    this.#live('open')
    if (handle !== undefined) await this.#closeHandle(name, true, handle) // of a bucket deleted, and created again
    // Another open may have made a handle meanwhile: one a bucket (an older bucket's closed), none left unclosed.
    const made = this.#handles.get(name)
    if (made !== undefined) return made.incarnation >= incarnation ? await made.bucket : await this.#openEngine(name, incarnation, made)
    const notifications = { bucket: name, rules: async () => await this.#rules(name) }
    // A put or upload naming no storage class takes the bucket's, as the hosted binding does.
    const defaultStorageClass = async (): Promise<StorageClass> => (await this.info(name))?.settings.storageClass ?? 'Standard'
    const bucket = this.#storage.openStore(name).then(store => new BucketEngine(store, { ...this.#engineOptions, notifications, defaultStorageClass }))
    const opened: OpenHandle = { incarnation, bucket }
    this.#handles.set(name, opened)
    bucket.then(engine => { opened.opened = engine }, () => this.#handles.get(name) === opened && this.#handles.delete(name))
    this.#startHandleCheck()
    return await bucket
  }

  #startHandleCheck (): void {
    if (this.#handleCheck !== null || this.#closed) return
    this.#handleCheck = setInterval(() => {
      // A look that failed (a catalog server unreachable) is tried again at the next tick.
      this.#checking ??= this.#closeGoneHandles().catch(() => {}).finally(() => { this.#checking = null })
    }, HANDLE_CHECK_MS)
    this.#handleCheck.unref()
  }

  #stopHandleCheck (): void {
    if (this.#handleCheck !== null) clearInterval(this.#handleCheck)
    this.#handleCheck = null
    this.#checkedToken = null
  }

  /**
   * Closes the open buckets that were deleted, or deleted and created
   * again, since the change token last moved (a delete moves it). Only the
   * handle looked at is closed: one opened meanwhile for a new bucket of the
   * name stays. Never adopts a place without settings (that may be a bucket
   * being created): a request does that.
   */
  async #closeGoneHandles (): Promise<void> {
    if (this.#handles.size === 0) {
      this.#stopHandleCheck()
      return
    }
    const token = await this.#storage.changeToken()
    if (token === this.#checkedToken) return
    for (const [name, handle] of [...this.#handles]) {
      const version = await this.#storage.settingsVersion(name)
      let gone = version === null
      if (!gone && this.#infos.cached(name)?.version !== version) {
        // A damaged document says nothing of whether the bucket was replaced: its handle stays, and requests answer 10915.
        const document = await this.#storage.readSettings(name).catch(err => { if (isSettingsDamaged(err)) return undefined; throw err })
        gone = document === null || (document !== undefined && new Date(document.creationDate).getTime() !== handle.incarnation)
      }
      if (gone && this.#handles.get(name) === handle) {
        this.#handles.delete(name)
        this.#infos.forget(name)
        await (await handle.bucket.catch(() => null))?.closeDeleted()
      }
    }
    this.#checkedToken = token
  }

  /** The bucket's notification rules for a write about to be made (bucket-infos.ts: RULES_FRESH_MS). */
  async #rules (name: string): Promise<readonly QueueNotifications[]> {
    return (this.#infos.fresh(name) ?? await this.info(name))?.settings.notifications ?? []
  }

  /** Closes `handle` (default: the name's): `deleted`, it answers 10006 from now on; else as closed by its user (ERR_USE_AFTER_CLOSE). */
  async #closeHandle (name: string, deleted: boolean, handle = this.#handles.get(name)): Promise<void> {
    if (handle === undefined) return
    if (this.#handles.get(name) === handle) this.#handles.delete(name)
    const bucket = await handle.bucket.catch(() => null)
    await (deleted ? bucket?.closeDeleted() : bucket?.close())
  }

  async updateSettings (name: string, patch: Partial<BucketSettings>): Promise<BucketSettings> {
    this.#live('updateSettings')
    const checked = validateSettingsPatch(patch)
    const info = await this.info(name)
    if (info === null) throw new BucketError('NoSuchBucket', 'updateBucket')
    const settings = await this.#storage.withSettingsLock(name, async () => {
      const current = await this.#storage.readSettings(name)
      if (current === null) throw new BucketError('NoSuchBucket', 'updateBucket') // deleted meanwhile
      // Over the stored fields, as stored: one the change does not name stays as it was (even one ignored today).
      const next: SettingsDocument = { ...current, settings: withDefaults({ ...current.settings, ...checked }) }
      await this.#storage.writeSettings(name, next)
      return withDefaults(servedSettings(next.settings).settings)
    })
    this.#infos.forget(name)
    await this.#storage.touch()
    return settings
  }

  async lockRules (name: string): Promise<LockRule[]> {
    this.#live('lockRules')
    return await (await this.#openOrFail(name, 'getBucketLock')).lockRules()
  }

  async setLockRules (name: string, rules: unknown): Promise<LockRule[]> {
    this.#live('setLockRules')
    const parsed = parseLockRules(rules)
    return await (await this.#openOrFail(name, 'putBucketLock')).setLockRules(parsed)
  }

  async #openOrFail (name: string, method: string): Promise<Bucket> {
    const bucket = await this.open(name)
    if (bucket === null) throw new BucketError('NoSuchBucket', method)
    return bucket
  }

  async changeNotifications (name: string, change: (current: QueueNotifications[]) => QueueNotifications[]): Promise<QueueNotifications[]> {
    this.#live('changeNotifications')
    if (await this.info(name) === null) throw new BucketError('NoSuchBucket', 'updateBucket')
    const notifications = await this.#storage.withSettingsLock(name, async () => {
      const current = await this.#storage.readSettings(name)
      if (current === null) throw new BucketError('NoSuchBucket', 'updateBucket') // deleted meanwhile
      const served = withDefaults(servedSettings(current.settings).settings)
      const next = validateSettingsPatch({ notifications: change(served.notifications) }).notifications ?? []
      await this.#storage.writeSettings(name, { ...current, settings: { ...withDefaults(current.settings), notifications: next } })
      return next
    })
    this.#infos.forget(name)
    await this.#storage.touch()
    return notifications
  }

  async outbox (name: string): Promise<Outbox | null> {
    this.#live('outbox')
    const bucket = await this.open(name)
    return (bucket as BucketEngine | null)?.outbox ?? null
  }

  async bucketForDomain (host: string): Promise<string | null> {
    this.#live('bucketForDomain')
    return await this.#domains.bucketFor(host)
  }

  bucketForDomainNow (host: string): string | null | undefined {
    return this.#refusing ? undefined : this.#domains.bucketForNow(host)
  }

  async sweep (options: { now?: Date, buckets?: string[] } = {}): Promise<SweepReport> {
    this.#live('sweep')
    // One sweep at a time per process; a timer tick during a long sweep joins it (a sweep at another instant, or of some buckets, waits for it).
    if (options.now !== undefined || options.buckets !== undefined) {
      // Not joined: it runs after the one in progress (each store sweeps one at a time anyway).
      await this.#sweeping?.catch(() => undefined)
      return await this.#sweepAll(options.now?.getTime(), options.buckets)
    }
    this.#sweeping ??= this.#sweepAll().finally(() => { this.#sweeping = null })
    return await this.#sweeping
  }

  async #sweepAll (now?: number, only?: string[]): Promise<SweepReport> {
    const total = emptySweepReport()
    for (const name of only ?? (await this.list()).map(info => info.name)) {
      // The rules as they stand when the bucket's turn comes (a pass over many buckets takes minutes), then before each batch.
      const info = await this.info(name).catch((err: unknown) => { if (isSettingsDamaged(err)) return null; throw err })
      const bucket = info === null ? null : await this.open(name, info)
      if (info === null || bucket === null) continue
      const lifecycle = info.settings.lifecycle
      // Rules that cannot be read again (settings damaged meanwhile, a catalog out of reach) act on nothing more here; the pass goes on.
      const lifecycleNow = async (): Promise<unknown> => await this.info(name).then(info => info?.settings.lifecycle ?? null, () => null)
      const report = await bucket.sweep({ uploadMaxAgeMs: uploadMaxAgeFromLifecycle(lifecycle), lifecycle, lifecycleNow, now })
      addSweepReport(total, report)
    }
    return total
  }

  async ping (): Promise<void> {
    this.#live('ping')
    await this.#storage.ping?.()
  }

  state (area: string): StateDocuments {
    this.#live('state')
    return this.#storage.state(area)
  }

  startSweeper (intervalMs: number, onError: (err: unknown) => void = () => {}, onSwept: (report: SweepReport, ms: number) => void = () => {}): void {
    this.#live('startSweeper')
    if (this.#sweeper !== null) clearInterval(this.#sweeper)
    this.#sweeper = sweepTimer(intervalMs, () => {
      // A tick during a long sweep has nothing to add (it would join it): the sweep is heard of once.
      if (this.#sweeping !== null) return
      const started = Date.now()
      this.sweep().then(report => { onSwept(report, Date.now() - started) }, onError)
    })
  }

  async close (): Promise<void> {
    await (this.#closing ??= this.#close())
  }

  async #close (): Promise<void> {
    this.#closed = true
    if (this.#sweeper !== null) clearInterval(this.#sweeper)
    this.#sweeper = null
    this.#stopHandleCheck()
    await this.#checking
    await this.#sweeping?.catch(() => undefined)
    this.#refusing = true
    await Promise.all([...this.#handles.keys()].map(async name => await this.#closeHandle(name, false)))
    await this.#storage.close?.()
  }
}

/** The registry of the buckets kept by `storage` (the composition root chooses the storage). */
export function createRegistry (storage: RegistryStorage, options: RegistryOptions = {}): BucketRegistry {
  return new Registry(storage, options)
}
