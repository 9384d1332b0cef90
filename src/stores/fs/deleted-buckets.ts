/**
 * The directories of deleted buckets at the top of a data directory, shared
 * by both stores' registries, which delete buckets this way.
 */
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { removeTree } from './blobs.js'

/** `.deleted-<bucket>-<12 hex digits>` (24: a PostgreSQL store's id): never a bucket's name (those start with no dot), nor a state area's (`.<letters>`). */
const DELETED_BUCKET = /^\.deleted-.+-([0-9a-f]{12}|[0-9a-f]{24})$/
/** How often a process looks for deleted buckets' directories: every bucket's sweep asks, one look serves a sweep of them all. */
const DELETED_LOOK_EVERY_MS = 60_000

/**
 * The directories of deleted buckets at the top of a data directory. A delete
 * first moves the bucket's directory to `.deleted-<name>-<random>`, so it is
 * gone at once for every process and a bucket of that name made meanwhile
 * starts afresh, then removes it; a delete cut short there (a crash, a
 * restart, a failed removal) leaves it, with every body it held. Nothing
 * reads such a directory once it is moved, so the sweeper removes any it
 * finds, however young (but for one a PostgreSQL catalog's delete moved and
 * did not commit: see `live`).
 */
export class DeletedBuckets {
  readonly #dataDir: string
  readonly #live: ((tag: string) => Promise<boolean>) | undefined
  #lookedAt = -Infinity

  /**
   * `live`: whether the store a directory moved away under `tag` (place's)
   * still exists, its delete not committed (a PostgreSQL catalog moves a
   * bucket's directory before the commit): such a directory is kept.
   */
  constructor (dataDir: string, live?: (tag: string) => Promise<boolean>) {
    this.#dataDir = dataDir
    this.#live = live
  }

  /** Where the directory of bucket `name` goes when the bucket is deleted: named by `tag` (24 hex digits, a store's id), else at random. */
  place (name: string, tag = randomBytes(6).toString('hex')): string {
    return path.join(this.#dataDir, `.deleted-${name}-${tag}`)
  }

  /** Removes the directories deleted buckets left; how many (none when this process looked less than a minute ago). */
  async sweep (): Promise<number> {
    if (Date.now() - this.#lookedAt < DELETED_LOOK_EVERY_MS) return 0
    this.#lookedAt = Date.now()
    const listing = await fsp.readdir(this.#dataDir, { withFileTypes: true }).catch(() => [])
    // A Dirent does not follow links: a link of that name is left alone.
    let removed = 0
    for (const entry of listing.filter(entry => entry.isDirectory() && DELETED_BUCKET.test(entry.name))) {
      const dir = path.join(this.#dataDir, entry.name)
      // A delete still in flight, or one that never committed: the bucket's directory, put back when the bucket opens.
      // (Unsure, with the catalog out of reach: kept until a sweep can tell.)
      if (this.#live !== undefined && await this.#live(entry.name.slice(entry.name.lastIndexOf('-') + 1)).catch(() => true)) continue
      await removeTree(dir)
      // Counted when gone: removeTree says nothing of what it could not remove (the next sweep tries again).
      if (await fsp.lstat(dir).then(() => false, () => true)) removed++
    }
    return removed
  }
}
