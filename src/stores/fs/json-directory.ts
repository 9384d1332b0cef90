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
 *
 * A change of several documents is all or nothing across a failure or a
 * crash: every new document is first written and synced under a temporary
 * name (a failure there changes nothing), then a journal naming every
 * rename and removal is written (the commit point), then they are carried
 * out and the journal removed. A journal left by a crash is carried out by
 * the next change of the directory, under its lock, before anything else.
 * A change of one document is its one rename, as before.
 */
import { promises as fsp } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { storageFailure, type DocumentTransaction, type StateDocuments } from '../../bucket/port.js'
import { DocumentChanges, parseDocument } from '../document-changes.js'
import { fsyncDirectory, readJson, readText, stageFile, storageError, writeJsonAtomic } from './atomic.js'
import { makeDirectory } from './make-directory.js'
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
    return await readDocument<T>(this.where(name), fallback, this.#private)
  }

  /** The document's file, by its full path. */
  where (name: string): string {
    return path.join(this.dir, name)
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
    await makeDirectory(this.dir, { fsync: this.#fsync, mode: this.#private ? 0o700 : 0o777 })
    const release = await lockFile(this.dir, {
      lockfilePath: path.join(this.dir, 'state.lock'),
      realpath: false,
      stale: 10_000,
      retries: { retries: 100, minTimeout: 5, maxTimeout: 100 }
    })
    try {
      await finishJournal(this.dir, this.#fsync)
      const tx = new JsonTransaction(this.dir, this.#fsync, this.#private)
      const result = await change(tx)
      await tx.commit(this.#private ? 0o600 : 0o644)
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

/** A document, or `fallback` when it does not exist; one that is not JSON is StateDamaged naming the file (`parseDocument`). */
async function readDocument<T> (file: string, fallback: T, secrets: boolean): Promise<T> {
  const text = await readText(file)
  return text === null ? fallback : parseDocument<T>(text, file, secrets, `reading ${path.basename(file)}`)
}

/** The documents one change has read; `commit` writes those that changed. */
export class JsonTransaction implements DocumentTransaction {
  readonly #dir: string
  readonly #fsync: boolean
  readonly #secrets: boolean
  readonly #changes = new DocumentChanges()

  constructor (dir: string, fsync: boolean, secrets: boolean) {
    this.#dir = dir
    this.#fsync = fsync
    this.#secrets = secrets
  }

  /** The document `name` as this change sees it; changes to the returned value are written at commit. */
  async load<T> (name: string, fallback: T): Promise<T> {
    return await this.#changes.load(name, fallback, async () => await readDocument<T | undefined>(path.join(this.#dir, name), undefined, this.#secrets))
  }

  remove (name: string): void {
    this.#changes.remove(name)
  }

  async commit (mode = 0o644): Promise<void> {
    const fsync = this.#fsync
    const changed = [...this.#changes.changed()]
    const removed = [...this.#changes.removed()]
    if (changed.length + removed.length <= 1) {
      for (const [name, value] of changed) await writeJsonAtomic(await this.#prepared(name), value, { fsync, mode, beforeRename: await this.#later(name) })
      for (const name of removed) await fsp.rm(path.join(this.#dir, name), { force: true })
      return
    }
    const journal: Journal = { renames: [], removes: removed }
    const file = path.join(this.#dir, JOURNAL)
    let committed = false
    try {
      for (const [name, value] of changed) {
        const temp = await stageFile(await this.#prepared(name), JSON.stringify(value, null, 2) + '\n', { fsync, mode, beforeRename: await this.#later(name) })
        journal.renames.push([path.relative(this.#dir, temp), name])
      }
      // The temporaries' own entries, before the journal names them: a power cut must not lose one the replay would skip.
      if (fsync) for (const dir of new Set(journal.renames.map(([temp]) => path.dirname(path.join(this.#dir, temp))))) await fsyncDirectory(dir)
      const staged = await stageFile(file, JSON.stringify(journal, null, 2) + '\n', { fsync, mode })
      await fsp.rename(staged, file).catch(async (err: unknown) => { await fsp.rm(staged, { force: true }).catch(() => {}); throw err })
      // The commit point: from here the journal names the temporaries, which go only by its renames (now, or by the next change).
      committed = true
      if (fsync) await fsyncDirectory(this.#dir)
    } catch (err) {
      if (!committed) for (const [temp] of journal.renames) await fsp.rm(path.join(this.#dir, temp), { force: true }).catch(() => {})
      throw storageError(err, `writing ${JOURNAL}`, file)
    }
    await carryOut(this.#dir, journal, fsync)
  }

  /** The file of `name`, its directory made. */
  async #prepared (name: string): Promise<string> {
    const file = path.join(this.#dir, name)
    await makeDirectory(path.dirname(file), { fsync: this.#fsync })
    return file
  }

  /** What makes the new version of `name` later than the one it replaces (see `laterThan`). */
  async #later (name: string): Promise<((file: FileHandle) => Promise<void>) | undefined> {
    const replaced = await modifiedAt(path.join(this.#dir, name))
    return replaced === null ? undefined : laterThan(replaced)
  }
}

/** The journal of a change of several documents, beside them. */
const JOURNAL = 'commit.journal'

/** The renames (a synced temporary's path and the document it becomes, relative to the directory) and removals of one change. */
interface Journal {
  renames: Array<[temp: string, name: string]>
  removes: string[]
}

/**
 * Carries out a journal left by a change that did not finish (a crash, a
 * failure after its commit point). One that is not this code's (edited,
 * damaged, or naming a path outside the directory) is never acted on: the
 * change fails naming the file, for the operator to mend or remove.
 */
async function finishJournal (dir: string, fsync: boolean): Promise<void> {
  const file = path.join(dir, JOURNAL)
  const journal = await readJson<unknown>(file, null).catch(() => undefined)
  if (journal === null) return
  if (!isJournal(journal, dir)) throw storageFailure('StorageIoError', `finishing the change its journal records: ${file} is not a journal of this directory`, { path: file })
  await carryOut(dir, journal, fsync)
}

function isJournal (value: unknown, dir: string): value is Journal {
  const inside = (name: unknown): boolean => typeof name === 'string' && name !== '' && !path.isAbsolute(name) &&
    !path.relative(dir, path.resolve(dir, name)).startsWith('..')
  const journal = value as Partial<Journal> | undefined
  return Array.isArray(journal?.renames) && Array.isArray(journal.removes) && journal.removes.every(inside) &&
    journal.renames.every(pair => Array.isArray(pair) && pair.length === 2 && inside(pair[0]) && inside(pair[1]))
}

/** Renames and removes what `journal` names (a temporary already renamed is skipped), then removes the journal. */
async function carryOut (dir: string, journal: Journal, fsync: boolean): Promise<void> {
  const touched = new Set<string>([dir])
  try {
    for (const [temp, name] of journal.renames) {
      const file = path.join(dir, name)
      await fsp.rename(path.join(dir, temp), file).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err })
      touched.add(path.dirname(file))
    }
    for (const name of journal.removes) {
      await fsp.rm(path.join(dir, name), { force: true })
      touched.add(path.dirname(path.join(dir, name)))
    }
    if (fsync) for (const changed of touched) await fsyncDirectory(changed)
    await fsp.rm(path.join(dir, JOURNAL), { force: true })
    if (fsync) await fsyncDirectory(dir)
  } catch (err) {
    throw storageError(err, 'writing the state documents', dir)
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
