/**
 * The registry's storage on a data directory: a bucket is a directory
 * `<dataDir>/<name>/` holding its filesystem store, its settings live in
 * `<dataDir>/<name>/.fsbucket/settings.json`, and the stamp file
 * `<dataDir>/.fsbucket/stamp` is rewritten whenever some bucket's settings
 * change, so other processes see that the domain map is stale.
 *
 * Settings files are replaced with `writeJsonAtomic`, so a reader never sees
 * half a file; read-modify-writes run under proper-lockfile. Deleting a
 * bucket renames its directory out of the way first (`.deleted-<name>-<r>`),
 * so other processes see it vanish at once, then removes the files (what a
 * crash leaves there, the sweep of any bucket removes: blobs.ts). The
 * documents of a state area (the management API's) live in `<dataDir>/.<area>/`.
 */
import { randomBytes } from 'node:crypto'
import { lstatSync } from 'node:fs'
import path from 'node:path'
import { BucketError, bucketRetired, guardedWarn, isBucketError, parseSettingsDocument, type BucketStore, type RegistryStorage, type SettingsDocument, type StateDocuments } from '../../bucket/port.js'
import { fsyncDirectory, readText, writeJsonAtomic } from './atomic.js'
import { DeletedBuckets } from './deleted-buckets.js'
import { refuseMarked } from './catalog-mark.js'
import {
  createDirectory, ensureDirectory, fingerprint, isDirectory, removeTree, subdirectories, withFileLock
} from './data-directory.js'
import { JsonDirectory } from './json-directory.js'
import { TurnMemo } from '../turn.js'
import { FsStore } from './store.js'
import { processWarning } from './view.js'

/** What a create is told when a file or link made by hand holds the bucket's name. */
const NOT_A_BUCKET_DIRECTORY = 'A file or link that is not a bucket directory holds its name in the data directory.'

export interface FsRegistryOptions {
  /** fsync object writes and settings (default true). */
  fsync?: boolean
  /** Hears of a file the readable view of a bucket could not make or remove (view.ts), with the bucket's name; default a process warning. A registry's `warn` will do. */
  warn?: (fields: { bucket: string, path: string, reason: string }, message: string) => void
}

/**
 * The state areas readable by the server's user only (a directory 0700,
 * documents 0600): the tokens' records hold S3 secrets, and the management
 * API's (`.mgmt/`) its `credentials.json`, admin tokens and key pairs an
 * operator writes by hand. A `.mgmt/` an older version made 0755 is
 * tightened as the server starts (server/preflight.ts).
 */
const privateAreas = new Set(['tokens', 'mgmt'])

export class FsRegistryStorage implements RegistryStorage {
  readonly location: string
  readonly #fsync: boolean
  readonly #deleted: DeletedBuckets
  readonly #warn: FsRegistryOptions['warn']
  /** Fingerprints of settings files and of the change stamp, looked at once per turn (../turn.ts). */
  readonly #fingerprints = new TurnMemo<string | null>()

  private constructor (dataDir: string, fsync: boolean, warn: FsRegistryOptions['warn']) {
    this.location = dataDir
    this.#fsync = fsync
    // A caller's warn that throws fails nothing: the warnings here follow committed writes and refusals already decided.
    this.#warn = warn === undefined ? undefined : guardedWarn(warn)
    this.#deleted = new DeletedBuckets(dataDir)
  }

  /** The storage of the buckets in `dataDir` (created when missing). */
  static async open (dataDir: string, options: FsRegistryOptions = {}): Promise<FsRegistryStorage> {
    await ensureDirectory(dataDir)
    // Not a directory a PostgreSQL catalog keeps (catalog-mark.ts): its SQLite files are stale there.
    await refuseMarked(path.resolve(dataDir))
    return new FsRegistryStorage(path.resolve(dataDir), options.fsync ?? true, options.warn)
  }

  #bucketDir (name: string): string {
    return path.join(this.location, name)
  }

  /** Joined by hand: it runs on every request, and the registry only ever passes valid bucket names (no separators, no dots). */
  #settingsFile (name: string): string {
    return `${this.location}${path.sep}${name}${path.sep}.fsbucket${path.sep}settings.json`
  }

  get #stampFile (): string {
    return path.join(this.location, '.fsbucket', 'stamp')
  }

  async names (): Promise<string[]> {
    return await subdirectories(this.location)
  }

  placeExists (name: string): boolean {
    return isDirectory(this.#bucketDir(name))
  }

  settingsVersionNow (name: string): string | null {
    return this.settingsVersion(name)
  }

  settingsVersion (name: string): string | null {
    const file = this.#settingsFile(name)
    return this.#fingerprints.get(file, () => fingerprint(file))
  }

  async readSettings (name: string): Promise<SettingsDocument | null> {
    const file = this.#settingsFile(name)
    const text = await readText(file)
    return text === null ? null : parseSettingsDocument(text, file)
  }

  /**
   * Makes `<bucket>/.fsbucket/` inside an existing bucket directory. Never
   * recursive: a bucket deleted meanwhile must not be brought back as an
   * empty directory (which the registry would adopt as a bucket).
   */
  async #ensureInternal (name: string): Promise<string> {
    const dir = path.dirname(this.#settingsFile(name))
    // Its entry in the bucket's directory is made durable with it (the settings written inside are synced on their own).
    if (await createDirectory(dir) && this.#fsync) await fsyncDirectory(path.dirname(dir))
    return dir
  }

  /** Runs `work` on bucket `name`; a bucket whose directory vanished meanwhile (deleted) is NoSuchBucket, not a storage failure. */
  async #onBucket<T> (name: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (err) {
      if (!isBucketError(err) && !this.placeExists(name)) throw new BucketError('NoSuchBucket', 'settings')
      throw err
    }
  }

  async writeSettings (name: string, document: SettingsDocument): Promise<void> {
    await this.#onBucket(name, async () => {
      await this.#ensureInternal(name)
      try {
        await writeJsonAtomic(this.#settingsFile(name), document, { fsync: this.#fsync })
      } finally {
        this.#fingerprints.forget()
      }
    })
  }

  async withSettingsLock<T> (name: string, critical: () => Promise<T>): Promise<T> {
    return await this.#onBucket(name, async () => {
      await this.#ensureInternal(name)
      return await withFileLock(this.#settingsFile(name), critical)
    })
  }

  async createPlace (name: string): Promise<boolean> {
    await ensureDirectory(this.location)
    const dir = this.#bucketDir(name)
    try {
      // Twice at most: a bucket deleted between the refused mkdir and the look at what holds its name is made on the second.
      for (let attempt = 0; attempt < 2; attempt++) {
        if (await createDirectory(dir)) {
          // The bucket's entry in the data directory: a power cut must not lose a bucket whose creation was answered.
          if (this.#fsync) await fsyncDirectory(this.location)
          return true
        }
        const held = lstatSync(dir, { throwIfNoEntry: false })
        if (held === undefined) continue
        if (held.isDirectory()) return false
        // Something made by hand holds the name (a file, a link): no bucket is served from it, so the creator and the operator are told what.
        ;(this.#warn ?? processWarning)({ bucket: name, path: dir, reason: 'not a directory' }, 'a bucket cannot be created: a file or link that is not a bucket directory holds its name in the data directory')
        throw new BucketError('BucketAlreadyExists', 'createBucket', NOT_A_BUCKET_DIRECTORY)
      }
      return false
    } finally {
      this.#fingerprints.forget()
    }
  }

  async removePlace (name: string): Promise<boolean> {
    try {
      return await removeTree(this.#bucketDir(name), this.#deleted.place(name))
    } finally {
      this.#fingerprints.forget()
    }
  }

  changeTokenNow (): string | null {
    return this.changeToken()
  }

  changeToken (): string | null {
    const dir = this.#fingerprints.get(this.location, () => fingerprint(this.location))
    if (dir === null) return null
    return `${dir}/${this.#fingerprints.get(this.#stampFile, () => fingerprint(this.#stampFile)) ?? '-'}`
  }

  async touch (): Promise<void> {
    await ensureDirectory(path.dirname(this.#stampFile))
    try {
      await writeJsonAtomic(this.#stampFile, { changed: randomBytes(8).toString('hex') }, { fsync: false })
    } finally {
      this.#fingerprints.forget()
    }
  }

  async openStore (name: string): Promise<BucketStore> {
    // A link planted as the bucket's directory would put its catalog and bodies outside the data directory.
    if (!this.placeExists(name)) throw bucketRetired('open')
    const warn = this.#warn
    const viewWarn = warn === undefined ? undefined : (fields: { path: string, reason: string }, message: string) => { warn({ bucket: name, ...fields }, message) }
    return await FsStore.open(this.#bucketDir(name), { fsync: this.#fsync, create: false, deletedBuckets: this.#deleted, warn: viewWarn })
  }

  /** `<dataDir>/.<area>/`: a name starting with a dot is never a bucket. */
  state (area: string): StateDocuments {
    if (!/^[a-z]+$/.test(area)) throw new TypeError(`state: the area must be lowercase letters (got ${JSON.stringify(area)}).`)
    return new JsonDirectory(path.join(this.location, `.${area}`), { fsync: this.#fsync, private: privateAreas.has(area) })
  }
}
