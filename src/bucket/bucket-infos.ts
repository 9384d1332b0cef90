/**
 * The registry's reading of bucket settings: each bucket's document, kept
 * while the storage's version of it stays the same, the adoption of a
 * place without one, and what a damaged document does.
 *
 * Promises:
 * - A look is bounded: a document that vanishes between the look at its
 *   version and its read (a delete racing the request) is looked for again
 *   at most LOOKS times in all, adoption included; then the bucket is taken
 *   for gone. No content of any file makes a look loop.
 * - A damaged document (settings-document.ts: not JSON, `null`, not an
 *   object, no creation date) is remembered with its version, as a good one is: every
 *   request naming the bucket answers `SettingsDamaged` (10915) without
 *   reading the file again until it changes, and `warn` hears of it once
 *   per version of the file, naming the file and what is wrong with it.
 *   Lists leave such a bucket out, so the other buckets are still listed.
 * - A document with a field today's rules refuse serves the bucket with that
 *   field's default, and `warn` hears of it once per version of the file.
 */
import type { BucketError } from './errors.js'
import type { RegistryStorage, SettingsDocument } from './port.js'
import { damageOf, isSettingsDamaged, servedSettings } from './settings-document.js'
import { withDefaults, type BucketSettings } from './settings.js'

export interface BucketInfo {
  name: string
  creationDate: Date
  settings: BucketSettings
}

/** What the registry tells its owner that no caller hears of (a bucket left out of lists): a pino-like `(fields, message)`. */
export type RegistryWarn = (fields: { bucket: string, path?: string, reason: string }, message: string) => void

/** A settings document as read, with the version of the document it came from. */
export interface CachedInfo {
  version: string
  /** The bucket's info, or the error its document answers (damaged). */
  info: BucketInfo | BucketError
  /** When the version was last compared with the storage's (Date.now()). */
  checked: number
}

/** How many times one call looks at a bucket's settings: a document removed (or adopted) between two looks is looked for again. */
const LOOKS = 4

/**
 * How long a write trusts the notification rules of a settings document
 * checked that recently. A door reads the bucket's settings at the start of
 * every request (one indexed row of a catalog server), so the write it then
 * makes needs no second look; a write of the library binding, which no
 * door precedes, looks again once this has passed. Rules changed through
 * this process are seen at once (the change drops the cached document).
 */
const RULES_FRESH_MS = 1000

/** The process's warning, for library users who give no `warn` (a server gives its log). */
const emitWarning: RegistryWarn = (fields, message) => { process.emitWarning(`${message}: ${fields.reason}`, 'FsbucketWarning') }

export class BucketInfos {
  readonly #storage: RegistryStorage
  readonly #clock: () => Date
  readonly #warn: RegistryWarn
  readonly #infos = new Map<string, CachedInfo>()

  constructor (storage: RegistryStorage, clock: () => Date, warn: RegistryWarn = emitWarning) {
    this.#storage = storage
    this.#clock = clock
    this.#warn = warn
  }

  /** The bucket's info (null: no such bucket); throws `SettingsDamaged` for a damaged document. `name` is a valid bucket name. */
  async info (name: string): Promise<BucketInfo | null> {
    for (let look = 0; look < LOOKS; look++) {
      const current = await this.#storage.settingsVersion(name)
      if (current === null) {
        this.#infos.delete(name)
        if (!await this.#adopt(name)) return null
        continue
      }
      const cached = this.#infos.get(name)
      if (cached?.version === current) {
        cached.checked = Date.now()
        if (!('settings' in cached.info)) throw cached.info
        return cached.info
      }
      const parsed = await this.#read(name, current)
      if (parsed === null) continue // removed between the two looks
      // Once a version, as a damaged document is: a field the rules refuse is left at its default, and said so.
      const { settings, ignored } = servedSettings(parsed.settings)
      if (ignored.length > 0) this.#warn({ bucket: name, reason: ignored.join('; ') }, 'bucket settings: a field is not valid and is ignored (its default applies) until it is mended or replaced')
      const info: BucketInfo = { name, creationDate: new Date(parsed.creationDate), settings: withDefaults(settings) }
      this.#infos.set(name, { version: current, info, checked: Date.now() })
      return info
    }
    return null // gone at every look
  }

  /** The info of a document checked within RULES_FRESH_MS, for the notification rules of a write. */
  fresh (name: string): BucketInfo | undefined {
    const cached = this.#infos.get(name)
    return cached !== undefined && 'settings' in cached.info && Date.now() - cached.checked < RULES_FRESH_MS ? cached.info : undefined
  }

  /** `info` at once, when the storage looks at the document without waiting (`settingsVersionNow`) and it is the version read last; undefined when `info` must look or read. */
  infoNow (name: string): BucketInfo | undefined {
    const current = this.#storage.settingsVersionNow?.(name)
    const cached = this.#infos.get(name)
    if (current == null || cached?.version !== current || !('settings' in cached.info)) return undefined
    cached.checked = Date.now()
    return cached.info
  }

  /** The infos of the buckets `names` (valid bucket names) that exist, without those whose settings are damaged (warned of, and named in `damaged`). */
  async readable (names: string[], damaged: string[] = []): Promise<BucketInfo[]> {
    const skipped = (name: string) => (err: unknown): null => {
      if (!isSettingsDamaged(err)) throw err
      damaged.push(name)
      return null
    }
    const infos = await Promise.all(names.map(async name => await this.info(name).catch(skipped(name))))
    return infos.filter((i): i is BucketInfo => i !== null)
  }

  /** The document read, or null when there is none; a damaged one is remembered with `version` and warned of. */
  async #read (name: string, version: string): Promise<SettingsDocument | null> {
    try {
      return await this.#storage.readSettings(name)
    } catch (err) {
      if (!isSettingsDamaged(err)) throw err
      this.#infos.set(name, { version, info: err, checked: Date.now() })
      this.#warn({ bucket: name, path: err.path, reason: damageOf(err) }, 'bucket settings damaged: the bucket is left out of lists and its requests answer 10915 until the file is mended')
      throw err
    }
  }

  /** A bucket place made by hand (no settings yet) gets its settings (private, created now) on first sight; false when there is no place. */
  async #adopt (name: string): Promise<boolean> {
    if (!await this.#storage.placeExists(name)) return false
    await this.#storage.withSettingsLock(name, async () => {
      if (await this.#storage.settingsVersion(name) !== null) return // another process adopted it first
      await this.#storage.writeSettings(name, { format: 1, creationDate: this.#clock().toISOString(), settings: withDefaults({}) })
    })
    return true
  }

  /** What was read of the bucket's document, damaged or not, if anything. */
  cached (name: string): CachedInfo | undefined {
    return this.#infos.get(name)
  }

  forget (name: string): void {
    this.#infos.delete(name)
  }
}
