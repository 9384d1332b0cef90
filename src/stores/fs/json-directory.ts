/**
 * A directory of small JSON documents that several processes read and
 * change: every read sees a whole document (each is replaced through
 * `writeJsonAtomic`), and every change is a read-modify-write under one
 * proper-lockfile lock for the directory, so a change spanning documents
 * is applied whole. A lock left by a crashed process goes stale after ten
 * seconds. Only documents whose content changed are written back. A
 * `private` directory (the tokens' records, which hold S3 secrets; the
 * management API's state, which holds its credentials) is made 0700 as it
 * is created, and the documents written there 0600: only the server's user
 * reads them. A directory that is a symbolic link is refused (10905,
 * naming it) before anything is read or written there: the documents,
 * secrets among them, stay inside the data directory.
 *
 * A document's `version` is one `stat` of it, and must never repeat after
 * a write, or a reader keeps a stale parse (a revoked token honoured with
 * no time bound). The inode, size and times alone can repeat: over writes
 * A, B, C, ext4 gives C the inode A freed, a same-length change (a full
 * revoked list dropping one hash for another) gives C A's size, and a
 * kernel without fine-grained timestamps stamps fast writes from a clock
 * of 1–4 ms ticks. So each write makes its document's mtime strictly later
 * than the one it replaces (see `laterThan`): writes of a directory are
 * serialized by its lock, so the mtimes of one document's successive
 * versions strictly increase and no version can equal an earlier one,
 * whatever inode, size or clock. The counter lives in the file's own
 * mtime rather than in a sidecar because the reader's one `stat` then
 * sees it with the rename that publishes the document, never apart.
 */
import { promises as fsp } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { storageFailure, type DocumentTransaction, type StateDocuments } from '../../bucket/port.js'
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
    await this.#refuseLink('reading')
    return await readJson<T>(path.join(this.dir, name), fallback)
  }

  /**
   * The document's device, inode, size, and change and modification times
   * in nanoseconds, from one stat whatever the document's size. A write
   * through `transaction` always moves the mtime forward (see the note at
   * the top), so it alone tells a write from every earlier one; the other
   * fields are kept for hand edits, which may set any mtime (an editor
   * replacing the file gives a new inode, and any edit a new ctime).
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
    await this.#refuseLink('writing')
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

  /** Throws when the directory is a symbolic link: what it points at may be anywhere, outside the data directory. */
  async #refuseLink (doing: string): Promise<void> {
    if ((await fsp.lstat(this.dir).catch(() => null))?.isSymbolicLink() !== true) return
    throw storageFailure('StorageNotPermitted', `${doing} ${path.basename(this.dir)} (a symbolic link: state is kept only inside the data directory)`, { path: this.dir })
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
      const replaced = await modifiedAt(file)
      await writeJsonAtomic(file, value, { fsync, mode, beforeRename: replaced === null ? undefined : laterThan(replaced) })
    }
    for (const name of this.#changes.removed()) await fsp.rm(path.join(this.#dir, name), { force: true })
  }
}

/** The mtime of `file` in nanoseconds, or null when there is none. */
async function modifiedAt (file: string): Promise<bigint | null> {
  try {
    return (await fsp.stat(file, { bigint: true })).mtimeNs
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/**
 * Makes a written temporary's mtime later than `replaced` (ns), the mtime of
 * the document it is about to replace. The kernel's own stamp is kept when
 * it is later already (the usual case: times stay real times). Otherwise
 * the time is set just past `replaced`: Node hands `utimes` seconds as a
 * double and libuv keeps whole microseconds, truncating, so a step of 2 µs
 * past `replaced`'s microsecond is the least that surely lands beyond it on
 * a filesystem keeping nanoseconds (ext4, xfs, btrfs, tmpfs); a burst of
 * writes within one clock tick runs 2 µs a write ahead of the clock, which
 * catches up at its next tick. Each try is checked by an fstat, the very field a reader's
 * stat sees, and a filesystem keeping coarser times gets a coarser step
 * (2 ms, then 2 s: FAT keeps 2 s). One that ignores set times leaves the
 * kernel's stamp, and the version rests on inode and ctime as before.
 * Removing a document forgets its mtime, so a document written again after
 * a removal is not covered; `tokens.json` is never removed.
 */
function laterThan (replaced: bigint): (file: FileHandle) => Promise<void> {
  return async file => {
    if ((await file.stat({ bigint: true })).mtimeNs > replaced) return
    for (const stepUs of [2n, 2_000n, 2_000_000n]) {
      const seconds = Number(replaced / 1000n + stepUs) / 1e6
      await file.utimes(seconds, seconds)
      if ((await file.stat({ bigint: true })).mtimeNs > replaced) return
    }
  }
}
