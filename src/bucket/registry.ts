/**
 * The registry of buckets in one data directory, shared by every door.
 *
 * A bucket is a directory `<dataDir>/<name>/` opened with `openBucket`. Its
 * settings (public access, CORS, lifecycle, custom domains, default storage
 * class) live in `<dataDir>/<name>/.fsbucket/settings.json`:
 *
 *     { "format": 1, "creationDate": "2026-01-01T00:00:00.000Z",
 *       "settings": { "public": false, "cors": null, "lifecycle": null,
 *                     "domains": [], "storageClass": "Standard" } }
 *
 * Promises:
 * - Several processes share one data directory. A settings change made by
 *   one is seen by the next request of every other: each read stats the file
 *   (a replaced file has a new inode) and re-reads it when it changed.
 *   Read-modify-write of settings runs under proper-lockfile, and the file is
 *   replaced with `writeJsonAtomic`, so a reader never sees half a file.
 * - Custom domains are looked up on every request whose Host is not the
 *   server's own, so the domain map is cached and rebuilt only when a bucket
 *   appears or disappears (the data directory's mtime) or some bucket's
 *   settings were updated (the stamp file `<dataDir>/.fsbucket/stamp`, rewritten
 *   by `updateSettings`). Hand edits of a settings file reach `info` at once
 *   but the domain map only after the next registry write.
 * - Directories whose names start with `.` are not buckets (the management
 *   API keeps its state in `<dataDir>/.mgmt/`), nor are directories whose
 *   names are not valid bucket names.
 * - Deleting a bucket renames its directory out of the way first, so other
 *   processes see it vanish at once, then removes the files.
 * - A directory made by hand (no settings file yet) is adopted on first sight:
 *   it gets a settings file (private, created then), so its creation date,
 *   which tells one incarnation of a bucket name from the next, stays put.
 *
 * Lifecycle: the stored value is the management API's document, kept as
 * given. The sweeper reads from it the age after which uploads in progress
 * are aborted: the smallest `abortMultipartUploadsTransition.condition.maxAge`
 * (seconds) among enabled rules that apply to the whole bucket (no prefix, or
 * an empty one):
 *
 *     { "rules": [{ "id": "abort-7d", "enabled": true, "conditions": { "prefix": "" },
 *                   "abortMultipartUploadsTransition": { "condition": { "type": "Age", "maxAge": 604800 } } }] }
 *
 * Rules limited to a prefix are stored but not enforced by the sweeper: the
 * engine sweeps a bucket with one age.
 */
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { readJson, writeJsonAtomic } from '../persist/atomic.js'
import {
  createDirectory, ensureDirectory, fingerprint, isDirectory, removeTree, subdirectories, withFileLock
} from '../persist/data-directory.js'
import { BucketError } from './errors.js'
import { openBucket } from './open.js'
import type { Bucket, StorageClass } from './types.js'

export interface CorsRule {
  allowedOrigins: string[]
  allowedMethods: string[]
  allowedHeaders?: string[]
  exposeHeaders?: string[]
  maxAgeSeconds?: number
}

export interface BucketSettings {
  /** GET/HEAD without credentials. */
  public: boolean
  /** null = the default CORS of public buckets. */
  cors: CorsRule[] | null
  /** The management API's lifecycle document, stored as given (see the notes above). */
  lifecycle: unknown | null
  /** Custom domains: requests whose Host is one of these are served from this bucket, read-only and public. */
  domains: string[]
  /** Storage class of objects put without one. */
  storageClass: StorageClass
}

export interface BucketInfo {
  name: string
  creationDate: Date
  settings: BucketSettings
}

export interface BucketRegistry {
  readonly dataDir: string
  list (): Promise<BucketInfo[]>
  info (name: string): Promise<BucketInfo | null>
  create (name: string, settings?: Partial<BucketSettings>): Promise<BucketInfo>
  delete (name: string): Promise<void>
  /** `known`: the bucket's info just read by the caller, to spare a second look at its settings. */
  open (name: string, known?: BucketInfo): Promise<Bucket | null>
  updateSettings (name: string, patch: Partial<BucketSettings>): Promise<BucketSettings>
  bucketForDomain (host: string): Promise<string | null>
  sweep (): Promise<void>
  startSweeper (intervalMs: number, onError?: (err: unknown) => void): void
  close (): Promise<void>
}

export interface RegistryOptions {
  /** fsync object writes and settings (default true). */
  fsync?: boolean
  /** Current time, for tests. */
  clock?: () => Date
  /** Smallest multipart part but the last (tests lower it). */
  minPartSize?: number
}

export const defaultSettings: Readonly<BucketSettings> = Object.freeze({
  public: false,
  cors: null,
  lifecycle: null,
  domains: [],
  storageClass: 'Standard'
})

/** Settings with every field present (files written by older versions may lack some). */
function withDefaults (settings: Partial<BucketSettings>): BucketSettings {
  return { ...defaultSettings, domains: [], ...settings }
}

/** 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit. */
const bucketNamePattern = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/

export function isValidBucketName (name: string): boolean {
  return bucketNamePattern.test(name)
}

/** `Host` header value → the lowercase host name without port (IPv6 brackets kept). */
export function hostName (host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '')
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']')
    return end === -1 ? lower : lower.slice(0, end + 1)
  }
  const colon = lower.indexOf(':')
  return (colon === -1 ? lower : lower.slice(0, colon)).replace(/\.$/, '')
}

/**
 * Abort age (ms) of uploads in progress from a lifecycle document, or
 * undefined when no enabled whole-bucket rule sets one (the engine's 7 days).
 */
export function uploadMaxAgeFromLifecycle (lifecycle: unknown): number | undefined {
  const rules = (lifecycle as { rules?: unknown } | null)?.rules
  if (!Array.isArray(rules)) return undefined
  let smallest: number | undefined
  for (const rule of rules as Array<Record<string, any>>) {
    if (rule?.enabled === false) continue
    const prefix = rule?.conditions?.prefix
    if (typeof prefix === 'string' && prefix !== '') continue
    const condition = rule?.abortMultipartUploadsTransition?.condition
    if (condition?.type !== 'Age' || typeof condition.maxAge !== 'number' || !(condition.maxAge >= 0)) continue
    const ms = condition.maxAge * 1000
    if (smallest === undefined || ms < smallest) smallest = ms
  }
  return smallest
}

/** Checks a settings patch and returns it with normalised values; throws TypeError on a wrong shape. */
export function validateSettingsPatch (patch: Partial<BucketSettings>): Partial<BucketSettings> {
  const out: Partial<BucketSettings> = {}
  if (patch.public !== undefined) {
    if (typeof patch.public !== 'boolean') throw new TypeError('settings.public must be a boolean')
    out.public = patch.public
  }
  if (patch.storageClass !== undefined) {
    if (patch.storageClass !== 'Standard' && patch.storageClass !== 'InfrequentAccess') {
      throw new TypeError('settings.storageClass must be "Standard" or "InfrequentAccess"')
    }
    out.storageClass = patch.storageClass
  }
  if (patch.domains !== undefined) {
    if (!Array.isArray(patch.domains) || !patch.domains.every(d => typeof d === 'string' && d.length > 0)) {
      throw new TypeError('settings.domains must be an array of host names')
    }
    out.domains = [...new Set(patch.domains.map(hostName))]
  }
  if (patch.cors !== undefined) {
    if (patch.cors !== null && !(Array.isArray(patch.cors) && patch.cors.every(isCorsRule))) {
      throw new TypeError('settings.cors must be null or an array of {allowedOrigins, allowedMethods, allowedHeaders?, exposeHeaders?, maxAgeSeconds?}')
    }
    out.cors = patch.cors
  }
  if (patch.lifecycle !== undefined) out.lifecycle = patch.lifecycle
  return out
}

function isStringArray (value: unknown): value is string[] {
  return Array.isArray(value) && value.every(v => typeof v === 'string')
}

function isCorsRule (rule: unknown): rule is CorsRule {
  const r = rule as CorsRule
  return typeof r === 'object' && r !== null &&
    isStringArray(r.allowedOrigins) && isStringArray(r.allowedMethods) &&
    (r.allowedHeaders === undefined || isStringArray(r.allowedHeaders)) &&
    (r.exposeHeaders === undefined || isStringArray(r.exposeHeaders)) &&
    (r.maxAgeSeconds === undefined || (typeof r.maxAgeSeconds === 'number' && r.maxAgeSeconds >= 0))
}

interface SettingsFile {
  format: 1
  creationDate: string
  settings: BucketSettings
}

/** A settings file as read, with the identity of the file it came from. */
interface CachedInfo {
  fingerprint: string
  info: BucketInfo
}

interface OpenHandle {
  /** The bucket's creation date: a bucket deleted and created again is a new bucket. */
  incarnation: number
  bucket: Promise<Bucket>
}

class DirectoryRegistry implements BucketRegistry {
  readonly dataDir: string
  readonly #fsync: boolean
  readonly #clock: () => Date
  readonly #minPartSize: number | undefined
  readonly #infos = new Map<string, CachedInfo>()
  readonly #handles = new Map<string, OpenHandle>()
  #domains: { fingerprint: string, map: Map<string, string> } | null = null
  #sweeper: NodeJS.Timeout | null = null
  #sweeping: Promise<void> | null = null

  constructor (dataDir: string, options: RegistryOptions) {
    this.dataDir = dataDir
    this.#fsync = options.fsync ?? true
    this.#clock = options.clock ?? (() => new Date())
    this.#minPartSize = options.minPartSize
  }

  #bucketDir (name: string): string {
    return path.join(this.dataDir, name)
  }

  #settingsFile (name: string): string {
    return path.join(this.dataDir, name, '.fsbucket', 'settings.json')
  }

  get #stampFile (): string {
    return path.join(this.dataDir, '.fsbucket', 'stamp')
  }

  async list (): Promise<BucketInfo[]> {
    const names = (await subdirectories(this.dataDir)).filter(isValidBucketName).sort()
    const infos = await Promise.all(names.map(async name => await this.info(name)))
    return infos.filter((i): i is BucketInfo => i !== null)
  }

  async info (name: string): Promise<BucketInfo | null> {
    if (!isValidBucketName(name)) return null
    const file = this.#settingsFile(name)
    const current = fingerprint(file)
    if (current === null) {
      this.#infos.delete(name)
      return await this.#adopt(name)
    }
    const cached = this.#infos.get(name)
    if (cached?.fingerprint === current) return cached.info
    const parsed = await readJson<SettingsFile | null>(file, null)
    if (parsed === null) return await this.info(name) // removed between stat and read
    const info: BucketInfo = {
      name,
      creationDate: new Date(parsed.creationDate),
      settings: withDefaults(parsed.settings)
    }
    this.#infos.set(name, { fingerprint: current, info })
    return info
  }

  /** A bucket directory made by hand gets its settings file (private, created now) on first sight. */
  async #adopt (name: string): Promise<BucketInfo | null> {
    if (!isDirectory(this.#bucketDir(name))) return null
    const file = this.#settingsFile(name)
    await ensureDirectory(path.dirname(file))
    await this.#withSettingsLock(name, async () => {
      if (fingerprint(file) !== null) return // another process adopted it first
      const adopted: SettingsFile = { format: 1, creationDate: this.#clock().toISOString(), settings: withDefaults({}) }
      await writeJsonAtomic(file, adopted, { fsync: this.#fsync })
    })
    return await this.info(name)
  }

  async #withSettingsLock<T> (name: string, critical: () => Promise<T>): Promise<T> {
    return await withFileLock(this.#settingsFile(name), critical)
  }

  async create (name: string, settings: Partial<BucketSettings> = {}): Promise<BucketInfo> {
    if (!isValidBucketName(name)) throw new BucketError('InvalidBucketName', 'createBucket')
    const patch = validateSettingsPatch(settings)
    await ensureDirectory(this.dataDir)
    if (!await createDirectory(this.#bucketDir(name))) throw new BucketError('BucketAlreadyExists', 'createBucket')
    const creationDate = this.#clock()
    const file: SettingsFile = {
      format: 1,
      creationDate: creationDate.toISOString(),
      settings: withDefaults(patch)
    }
    await ensureDirectory(path.dirname(this.#settingsFile(name)))
    await writeJsonAtomic(this.#settingsFile(name), file, { fsync: this.#fsync })
    await this.#touchStamp()
    return { name, creationDate, settings: file.settings }
  }

  async delete (name: string): Promise<void> {
    const info = await this.info(name)
    if (info === null) throw new BucketError('NoSuchBucket', 'deleteBucket')
    const bucket = await this.open(name)
    // Emptiness is judged and the bucket closed to writes in one critical
    // section of its catalog: a put racing this delete either lands first
    // (and the delete is refused) or fails; it is never acknowledged and lost.
    if (!await bucket!.retire()) throw new BucketError('BucketNotEmpty', 'deleteBucket')
    await this.#closeHandle(name)
    const trash = path.join(this.dataDir, `.deleted-${name}-${randomBytes(6).toString('hex')}`)
    this.#infos.delete(name)
    if (!await removeTree(this.#bucketDir(name), trash)) throw new BucketError('NoSuchBucket', 'deleteBucket')
    await this.#touchStamp()
  }

  async open (name: string, known?: BucketInfo): Promise<Bucket | null> {
    const info = known ?? await this.info(name)
    if (info === null) {
      await this.#closeHandle(name)
      return null
    }
    const incarnation = info.creationDate.getTime()
    const handle = this.#handles.get(name)
    if (handle !== undefined && handle.incarnation === incarnation) return await handle.bucket
    if (handle !== undefined) await this.#closeHandle(name)
    const bucket = openBucket(this.#bucketDir(name), {
      fsync: this.#fsync,
      clock: this.#clock,
      minPartSize: this.#minPartSize
    })
    this.#handles.set(name, { incarnation, bucket })
    bucket.catch(() => this.#handles.delete(name))
    return await bucket
  }

  async #closeHandle (name: string): Promise<void> {
    const handle = this.#handles.get(name)
    if (handle === undefined) return
    this.#handles.delete(name)
    await (await handle.bucket.catch(() => null))?.close()
  }

  async updateSettings (name: string, patch: Partial<BucketSettings>): Promise<BucketSettings> {
    const checked = validateSettingsPatch(patch)
    const info = await this.info(name)
    if (info === null) throw new BucketError('NoSuchBucket', 'updateBucket')
    const file = this.#settingsFile(name)
    const settings = await this.#withSettingsLock(name, async () => {
      const current = await readJson<SettingsFile | null>(file, null)
      if (current === null) throw new BucketError('NoSuchBucket', 'updateBucket') // deleted meanwhile
      const next: SettingsFile = { ...current, settings: withDefaults({ ...current.settings, ...checked }) }
      await writeJsonAtomic(file, next, { fsync: this.#fsync })
      return next.settings
    })
    this.#infos.delete(name)
    await this.#touchStamp()
    return settings
  }

  async #touchStamp (): Promise<void> {
    await ensureDirectory(path.dirname(this.#stampFile))
    await writeJsonAtomic(this.#stampFile, { changed: randomBytes(8).toString('hex') }, { fsync: false })
  }

  async bucketForDomain (host: string): Promise<string | null> {
    const dir = fingerprint(this.dataDir)
    if (dir === null) return null
    const current = `${dir}/${fingerprint(this.#stampFile) ?? '-'}`
    if (this.#domains?.fingerprint !== current) {
      const map = new Map<string, string>()
      for (const info of await this.list()) {
        for (const domain of info.settings.domains) if (!map.has(domain)) map.set(domain, info.name)
      }
      this.#domains = { fingerprint: current, map }
    }
    return this.#domains.map.get(hostName(host)) ?? null
  }

  async sweep (): Promise<void> {
    // One sweep at a time per process; a timer tick during a long sweep joins it.
    this.#sweeping ??= this.#sweepAll().finally(() => { this.#sweeping = null })
    await this.#sweeping
  }

  async #sweepAll (): Promise<void> {
    for (const info of await this.list()) {
      const bucket = await this.open(info.name)
      await bucket?.sweep({ uploadMaxAgeMs: uploadMaxAgeFromLifecycle(info.settings.lifecycle) })
    }
  }

  startSweeper (intervalMs: number, onError: (err: unknown) => void = () => {}): void {
    if (this.#sweeper !== null) clearInterval(this.#sweeper)
    this.#sweeper = setInterval(() => { this.sweep().catch(onError) }, intervalMs)
    this.#sweeper.unref()
  }

  async close (): Promise<void> {
    if (this.#sweeper !== null) clearInterval(this.#sweeper)
    this.#sweeper = null
    await this.#sweeping?.catch(() => {})
    await Promise.all([...this.#handles.keys()].map(async name => await this.#closeHandle(name)))
  }
}

/** Opens the registry of the buckets in `dataDir` (created when missing). */
export async function openRegistry (dataDir: string, options: RegistryOptions = {}): Promise<BucketRegistry> {
  await ensureDirectory(dataDir)
  return new DirectoryRegistry(path.resolve(dataDir), options)
}
