/**
 * A directory of small JSON documents that several processes read and
 * change: every read sees a whole document (each is replaced through
 * `writeJsonAtomic`), and every change is a read-modify-write under one
 * proper-lockfile lock for the directory, so a change spanning documents
 * is applied whole. A lock left by a crashed process goes stale after ten
 * seconds. Only documents whose content changed are written back. A
 * `private` directory (the tokens' records, which hold S3 secrets) is made
 * 0700 and its documents 0600: only the server's user reads them.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { DocumentTransaction, StateDocuments } from '../../bucket/port.js'
import { DocumentChanges } from '../document-changes.js'
import { readJson, writeJsonAtomic } from './atomic.js'
import { lockFile } from './file-lock.js'

export class JsonDirectory implements StateDocuments {
  readonly dir: string
  readonly #fsync: boolean
  readonly #private: boolean

  constructor (dir: string, options: { fsync?: boolean, private?: boolean } = {}) {
    this.dir = dir
    this.#fsync = options.fsync ?? true
    this.#private = options.private ?? false
  }

  /** Reads the document `name` (a path relative to the directory), or `fallback` when it does not exist. */
  async read<T> (name: string, fallback: T): Promise<T> {
    return await readJson<T>(path.join(this.dir, name), fallback)
  }

  /**
   * The document's device, inode, size, and change and modification times
   * in nanoseconds: every write replaces the file by a rename (a new inode,
   * new times), and a hand edit moves the times, so a write that left all
   * five alike would need the same inode back, the same size and the same
   * nanosecond. One stat, whatever the document's size.
   */
  async version (name: string): Promise<string | null> {
    try {
      const stat = await fsp.stat(path.join(this.dir, name), { bigint: true })
      return `${stat.dev}:${stat.ino}:${stat.size}:${stat.ctimeNs}:${stat.mtimeNs}`
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  /** Runs `change` under the directory's lock, then writes the documents it changed and removes those it removed. */
  async transaction<R> (change: (tx: JsonTransaction) => Promise<R>): Promise<R> {
    await fsp.mkdir(this.dir, { recursive: true, mode: this.#private ? 0o700 : 0o777 })
    const release = await lockFile(this.dir, {
      lockfilePath: path.join(this.dir, 'state.lock'),
      realpath: false,
      stale: 10_000,
      retries: { retries: 100, minTimeout: 5, maxTimeout: 100 }
    })
    try {
      const tx = new JsonTransaction(this.dir)
      const result = await change(tx)
      await tx.commit(this.#fsync, this.#private ? 0o600 : 0o644)
      return result
    } finally {
      await release()
    }
  }
}

/** The documents one change has read; `commit` writes those that changed. */
export class JsonTransaction implements DocumentTransaction {
  readonly #dir: string
  readonly #changes = new DocumentChanges()

  constructor (dir: string) {
    this.#dir = dir
  }

  /** The document `name` as this change sees it; changes to the returned value are written at commit. */
  async load<T> (name: string, fallback: T): Promise<T> {
    return await this.#changes.load(name, fallback, async () => await readJson<T | undefined>(path.join(this.#dir, name), undefined))
  }

  remove (name: string): void {
    this.#changes.remove(name)
  }

  async commit (fsync: boolean, mode = 0o644): Promise<void> {
    for (const [name, value] of this.#changes.changed()) {
      const file = path.join(this.#dir, name)
      await fsp.mkdir(path.dirname(file), { recursive: true })
      await writeJsonAtomic(file, value, { fsync, mode })
    }
    for (const name of this.#changes.removed()) await fsp.rm(path.join(this.#dir, name), { force: true })
  }
}
