/**
 * Commit and flush of a bucket's filesystem store: a write transaction of
 * the catalog followed by making it durable (an fdatasync of the WAL file on
 * the thread pool, shared by every commit made meanwhile), and group commit
 * (the writes that reach their commit during one turn of the event loop
 * share one transaction and one flush).
 */
import { promises as fsp } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { commitStarted, noteCommit } from '../meter.js'
import { fsyncDirectory, storageError } from './atomic.js'
import type { Catalog } from './catalog.js'

/** Errors of writes whose transaction did not take effect (rolled back, or never started). */
const rolledBack = new WeakSet<object>()

function markRolledBack (err: unknown): unknown {
  if (typeof err === 'object' && err !== null) rolledBack.add(err)
  return err
}

/**
 * Whether a failed write left the catalog as it was: then the files
 * prepared for it can go at once. A write that failed only while being
 * flushed did take effect (readers see it), so its files must stay.
 */
export function wasRolledBack (err: unknown): boolean {
  return typeof err === 'object' && err !== null && rolledBack.has(err)
}

export class Commits {
  readonly #catalog: Catalog
  readonly walFile: string
  readonly #fsync: boolean
  /** The catalog's WAL file, opened on the first write, for flushing commits off the event loop. */
  #wal: Promise<FileHandle> | undefined
  /** The WAL flush in progress, and the one queued behind it (shared by every commit made meanwhile). */
  #flushing: Promise<void> | undefined
  #nextFlush: Promise<void> | undefined

  constructor (catalog: Catalog, catalogFile: string, fsync: boolean) {
    this.#catalog = catalog
    this.walFile = `${catalogFile}-wal`
    this.#fsync = fsync
  }

  /** A write transaction of the catalog, then waits until it is on disk. */
  async commit<T> (fn: () => T): Promise<T> {
    const started = commitStarted()
    let result: T
    try {
      result = await this.#catalog.write(fn)
    } catch (err) {
      throw markRolledBack(storageError(err, 'committing a write', this.walFile))
    }
    try {
      await this.durable()
    } catch (err) {
      throw storageError(err, 'committing a write', this.walFile)
    }
    noteCommit('sqlite', started, null)
    return result
  }

  /**
   * Makes every commit made so far durable: an fdatasync of the WAL file on
   * the thread pool. SQLite's own sync at commit (synchronous=FULL) would
   * hold the event loop for the length of a disk flush on every write
   * transaction; here the loop goes on serving while the disk works, and the
   * commits made meanwhile share the next flush. A write resolves only after
   * its flush, so what is acknowledged is durable, as before. A commit is
   * visible to readers a moment before it is durable: a power loss in that
   * moment can undo a write that was seen but never acknowledged.
   */
  async durable (): Promise<void> {
    if (!this.#fsync) return
    // A flush already running may have started before this commit: wait for the next one.
    if (this.#nextFlush !== undefined) return await this.#nextFlush
    if (this.#flushing === undefined) return await this.#startFlush()
    const next = this.#flushing.catch(() => {}).then(async () => {
      this.#nextFlush = undefined
      await this.#startFlush()
    })
    this.#nextFlush = next
    return await next
  }

  async #startFlush (): Promise<void> {
    const flush = (async () => {
      if (this.#wal === undefined) {
        const opening = this.#wal = fsp.open(this.walFile, 'r').then(async handle => {
          // SQLite syncs the directory holding a new WAL only when it syncs the WAL itself.
          await fsyncDirectory(path.dirname(this.walFile))
          return handle
        })
        opening.catch(() => { if (this.#wal === opening) this.#wal = undefined })
      }
      await (await this.#wal).datasync()
    })()
    this.#flushing = flush
    try {
      await flush
    } finally {
      if (this.#flushing === flush) this.#flushing = undefined
    }
  }

  async close (): Promise<void> {
    await Promise.allSettled([this.#flushing, this.#nextFlush])
    const wal = this.#wal
    this.#wal = undefined
    await (await wal?.catch(() => undefined))?.close()
  }
}

interface Pending<J, O> {
  job: J
  resolve: (outcome: O) => void
  reject: (err: unknown) => void
}

/**
 * Group commit: the jobs submitted during one turn of the event loop share
 * one write transaction, so one catalog flush serves them all. `apply` runs
 * inside the transaction and judges each job against the rows as the ones
 * before it in the batch left them, so the outcome is the same as
 * committing them one by one.
 */
export class GroupCommit<J, O> {
  readonly #commits: Commits
  readonly #catalog: Catalog
  readonly #walFile: string
  readonly #apply: (batch: J[]) => O[]
  readonly #committed: (batch: J[], outcomes: O[]) => void | Promise<void>
  readonly #what: string
  readonly #queue: Array<Pending<J, O>> = []

  /**
   * `apply` runs inside the write transaction and touches nothing but the
   * catalog; `committed` runs right after it (the file-system work that
   * follows a commit, such as publishing the readable view), beside the
   * flush: the batch resolves when both are done.
   */
  constructor (catalog: Catalog, commits: Commits, what: string, apply: (batch: J[]) => O[], committed: (batch: J[], outcomes: O[]) => void | Promise<void> = () => {}) {
    this.#catalog = catalog
    this.#commits = commits
    this.#walFile = commits.walFile
    this.#what = what
    this.#apply = apply
    this.#committed = committed
  }

  async submit (job: J): Promise<O> {
    return await new Promise<O>((resolve, reject) => {
      this.#queue.push({ job, resolve, reject })
      if (this.#queue.length === 1) setImmediate(() => { void this.#flush() })
    })
  }

  async #flush (): Promise<void> {
    const batch = this.#queue.splice(0)
    const jobs = batch.map(p => p.job)
    const started = commitStarted()
    let outcomes: O[]
    try {
      outcomes = await this.#catalog.write(() => this.#apply(jobs))
    } catch (err) {
      for (const pending of batch) pending.reject(markRolledBack(storageError(err, this.#what, this.#walFile)))
      return
    }
    try {
      // The flush starts first: the work after the commit runs while the disk flushes.
      const flushed = this.#commits.durable()
      await Promise.all([(async () => { await this.#committed(jobs, outcomes) })(), flushed])
    } catch (err) {
      for (const pending of batch) pending.reject(storageError(err, this.#what, this.#walFile))
      return
    }
    noteCommit('sqlite', started, batch.length)
    batch.forEach((pending, i) => { pending.resolve(outcomes[i]) })
  }
}
