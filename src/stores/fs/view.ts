/**
 * The readable view of a bucket: for every key that is a plain,
 * filesystem-safe path, a hard link at `<bucket>/<key>` to the body of the
 * key's current version (or, for a small body kept in its catalog row, a
 * plain file written with its bytes), so a person can look inside the data
 * directory and open their files with ordinary tools.
 *
 * The view is a convenience, never the truth: reads, lists and conditionals
 * use the catalog and the version-named bodies. The store publishes a key's
 * entry right after each commit that changes the key, from the key's
 * current catalog row (never inside the write transaction, which touches no
 * file); a publisher that finds the row changed meanwhile by another process
 * publishes again, so the view follows the catalog write for write. After a
 * crash it can be one write behind the catalog for each key whose write was
 * in flight; a commit of several keys at once (a batch delete) records them
 * in the catalog with the commit, and the next process to open the store (or
 * any sweep) publishes what a crash left recorded (view-intents.ts), so a
 * crash in a batch leaves no entry of a deleted object behind. A process
 * removing the last entry of a directory removes the directory too; another
 * process adding an entry there meanwhile finds its directory gone under it,
 * and makes it again (`#made`), so that race loses no entry either. Keys that
 * cannot be shown are simply absent from it:
 *   - keys with empty, `.` or `..` segments, a leading or trailing `/`,
 *     control characters, or segments longer than 255 bytes;
 *   - keys whose first segment is `.fsbucket` (the store's own directory),
 *     in any case (a case-insensitive file system takes `.FSBUCKET` for
 *     it), or whose last is named like the view's own temporaries;
 *   - on Windows, keys with a segment holding `\`, `:`, `*`, `?`, `"`, `<`,
 *     `>`, `|` or a short name's `~` and digit, or ending in a dot or a space;
 *   - a key that is also a directory of another key (`a` when `a/b` exists
 *     is shown, `a/b` is then not, or the other way round: first come);
 *   - objects completed from a multipart upload (their bytes are several files);
 *   - objects encrypted with a customer-provided key (SSE-C: their bytes are ciphertext);
 *   - a key whose place holds an entry that is not ours (a symbolic link, a
 *     directory made by hand) or whose path crosses one: the view never
 *     follows a link, never replaces or removes a link or a directory it
 *     did not make, and never creates the bucket directory itself (a
 *     deleted bucket stays deleted). A plain file at a key's place is taken
 *     for the view's own (the bucket directory is the store's: nothing
 *     tells a file put there by hand from a small body written out).
 * The view's files share their bytes with the stored bodies: editing one in
 * place would change a stored object behind its checksum, so treat the view
 * as read-only and write through the API. (A written-out copy of a small
 * body shares nothing, and is not flushed: after a power cut it can be
 * short or empty until the key is written again; the catalog holds the
 * object.)
 *
 * A key the view cannot show or hide because the file system refused (no
 * right, no room, an immutable directory) leaves the request as it is (the
 * catalog holds the object) and is warned of, naming the path and the
 * reason, to the `warn` the view was given (a registry's: the server's log),
 * or else as a process warning (`FsbucketWarning`, which Node prints on
 * standard error). One file refused for one reason (the error's code) is
 * warned of once a minute at most (WARN_INTERVAL_MS), by each view: a key
 * written over and over under a directory that refuses it does not flood
 * the log.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, lstatSync, mkdirSync, renameSync, rmdirSync, unlinkSync, writeFileSync, type Stats } from 'node:fs'
import path from 'node:path'

const MAX_SEGMENT_BYTES = 255

/**
 * What making an entry answers when its place changed under it, so that
 * looking again can make it: a directory on the key's path vanished
 * (another process hiding the last key of that directory removed it,
 * emptied, between this one making or finding it and adding the entry),
 * or another process made the entry since this one saw none.
 */
const AGAIN = Symbol('again')

/**
 * How many times an entry is made again after AGAIN, from the directories
 * up. One `hide` removes each directory at most once, so a race with one of
 * them needs one retry; several at once need more, and the bound keeps a
 * directory removed over and over from holding a publisher forever.
 */
const RETRIES = 8

/** Temporary entries are `.<process tag><counter>.view`: unique across processes by the tag, within one by the counter. */
const processTag = randomBytes(6).toString('hex')
let temporaries = 0

/** A temporary's name (`temporaryEntry`): what the sweeper removes from the view once old. */
export const VIEW_TEMPORARY = /^\.[0-9a-f]{12}[0-9a-z]{1,13}\.view$/

function temporaryEntry (parent: string): string {
  return path.join(parent, `.${processTag}${(temporaries++).toString(36)}.view`)
}

/**
 * The file, in the store's directory, whose presence says that the view may
 * hold temporaries beside keys (made where the scratch directory could not
 * serve): the sweeper walks the view for them only then. Touched at every
 * such temporary, before it is made; a sweep claims it by renaming it to
 * `view-strays.walking`.
 */
export const VIEW_STRAYS_MARKER = 'view-strays'

/**
 * Whether a first segment names the store's own directory on some file
 * system: case-insensitive ones (macOS's, Windows') take `.FSBUCKET` for
 * `.fsbucket`, and some fold compatibility forms too (`ſ` for `s`).
 */
function isStoreDirectory (segment: string): boolean {
  return segment.normalize('NFKC').toUpperCase().toLowerCase() === '.fsbucket'
}

/**
 * What Windows cannot hold in a name, or reads otherwise than as written:
 * its separator `\`, a drive's or a stream's `:`, its wildcards and
 * quoting characters, a trailing dot or space (dropped from a name), and
 * `~` and a digit, the mark of a short (8.3) name, which may name another
 * entry (`FSBUCK~1` the store's own directory).
 */
const windowsUnsafe = /[\\:*?"<>|]|[. ]$|~\d/

/**
 * The view path of a key relative to the bucket directory, or null when the
 * key cannot be shown; `sep` is the platform's separator (given by tests).
 */
export function viewPath (id: string, sep: string = path.sep): string | null {
  const segments = id.split('/')
  if (isStoreDirectory(segments[0])) return null
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') return null
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) return null
    if (/[\u0000-\u001f\u007f]/.test(segment)) return null
    // A segment holding Windows' separator would climb out of its directory there (`a\..\..`).
    if (sep === '\\' && windowsUnsafe.test(segment)) return null
  }
  // Named like a temporary, its entry would be swept away as one.
  if (VIEW_TEMPORARY.test(segments[segments.length - 1])) return null
  return segments.join(sep)
}

/** The entry at `file` without following a link, or null when there is none (or it cannot be looked at). */
function entryAt (file: string): Stats | null {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) ?? null
  } catch {
    return null
  }
}

/**
 * What a failure (its error code) to add an entry to `parent` means: AGAIN
 * when the directory is gone, to be made again, false otherwise. Looked at
 * only after a failure for a missing name.
 */
function vanished (code: string | undefined, parent: string): false | typeof AGAIN {
  return code === 'ENOENT' && entryAt(parent) === null ? AGAIN : false
}

function codeOf (err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code
}

/** The reason a file system call failed, for a warning: its message (which names the code and the call), or the value thrown. */
function reasonOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** Hears of a view entry the file system refused: a pino-like `(fields, message)`, as a logger's `warn` bound. */
export type ViewWarn = (fields: { path: string, reason: string }, message: string) => void

/** The process's warning, for library users who give no `warn` (a server gives its log); the registry storage's too. */
export const processWarning: ViewWarn = (fields, message) => { process.emitWarning(`${message}: ${fields.path}: ${fields.reason}`, 'FsbucketWarning') }

/** How long one file refused for one reason is not warned of again. */
export const WARN_INTERVAL_MS = 60_000

/** How many (file, reason) pairs a view remembers having warned of; past it, the oldest are forgotten (and may be warned of again sooner). */
const WARNED_MAX = 1000

interface KeyViewOptions {
  /** Where refusals are warned of (default: a process warning). */
  warn?: ViewWarn
  /** A clock in ms, for the warnings' interval (tests inject one; default `performance.now`, which never goes back). */
  now?: () => number
}

export class KeyView {
  readonly #bucketDir: string
  readonly #scratchDir: string | undefined
  readonly #strays: string | undefined
  readonly #warn: ViewWarn
  readonly #now: () => number
  /** When each (what, file, code) was last warned of, oldest first. */
  readonly #warned = new Map<string, number>()

  /** `storeDir`: where the scratch directory (`tmp`) and the marker of temporaries beside keys are. */
  constructor (bucketDir: string, storeDir?: string, options: KeyViewOptions = {}) {
    this.#bucketDir = bucketDir
    this.#scratchDir = storeDir === undefined ? undefined : path.join(storeDir, 'tmp')
    this.#strays = storeDir === undefined ? undefined : path.join(storeDir, VIEW_STRAYS_MARKER)
    this.#warn = options.warn ?? processWarning
    this.#now = options.now ?? (() => performance.now())
  }

  /** Whether the key can have a file in the view at all. */
  shows (id: string): boolean {
    return viewPath(id) !== null
  }

  /** Where the key's file goes: its checked directory (`#parent`) and path; null when the key is not in the view. */
  #place (id: string, create: boolean): { parent: string, target: string } | null | typeof AGAIN {
    const relative = viewPath(id)
    if (relative === null) return null
    const parent = this.#parent(relative, create)
    return parent === null || parent === AGAIN ? parent : { parent, target: path.join(parent, path.basename(relative)) }
  }

  /**
   * The directory that holds the key's file, checked component by
   * component without following links: every component must be a real
   * directory inside the bucket (with `create`, missing ones are made, one
   * level at a time, never the bucket directory itself). Null when a
   * component is a link, a file, or missing: the key is then not in the view;
   * AGAIN when a component made (or found) was removed before the next one
   * could be made in it.
   */
  #parent (relative: string, create: boolean): string | null | typeof AGAIN {
    if (entryAt(this.#bucketDir)?.isDirectory() !== true) return null // the bucket is gone: never bring it back
    let dir = this.#bucketDir
    for (const component of path.dirname(relative).split(path.sep)) {
      if (component === '.') break
      dir = path.join(dir, component)
      let entry = entryAt(dir)
      if (entry === null && create) {
        try {
          mkdirSync(dir)
        } catch (err) {
          const code = codeOf(err)
          if (code !== 'EEXIST' && code !== 'ENOENT') { // not made (no room, no right): the key is not shown
            this.#refused('made', dir, err)
            return null
          }
        }
        entry = entryAt(dir)
        if (entry === null) return AGAIN // removed since, or its own directory was, so it could not be made
      }
      if (entry === null || !entry.isDirectory()) return null // missing, a file of another key, or a link (isDirectory is false for links)
    }
    return dir
  }

  /**
   * Shows `body` (an absolute path) as the key's file; false when the key
   * cannot be shown. An entry at the key's place that is not ours (a link,
   * a directory) is left alone and the key is not shown.
   */
  show (id: string, body: string): boolean {
    return this.#made(id, (parent, target) => {
      const existing = entryAt(target)
      if (existing === null) {
        try {
          linkSync(body, target)
          return true
        } catch (err) {
          const code = codeOf(err)
          if (code === 'EEXIST') return AGAIN // another process showed the key since: replace its entry
          const again = vanished(code, parent)
          if (again === false) this.#refused('made', target, err)
          return again
        }
      }
      if (!existing.isFile()) return false // a link or a directory: not ours
      // A key shown already: link beside it, then replace it in one rename (rename never follows the target).
      return this.#replaceEntry(parent, target, tmp => { linkSync(body, tmp) }, true)
    })
  }

  /**
   * Shows `bytes` as the key's file, written out as a new plain file that
   * replaces the entry in one rename (a reader of the view never sees half
   * of it); false when the key cannot be shown, as for `show`. Written
   * synchronously, like the links of `show`: for a small body the file
   * system calls cost less than handing each of them to the thread pool
   * (measured with 50 concurrent 1 KiB puts: 17% more puts per second, and
   * reads served beside them waited less, not more).
   */
  write (id: string, bytes: Uint8Array): boolean {
    return this.#made(id, (parent, target) => {
      const existing = entryAt(target)
      if (existing !== null && !existing.isFile()) return false // a link or a directory: not ours
      return this.#replaceEntry(parent, target, tmp => { writeFileSync(tmp, bytes, { flag: 'wx', mode: 0o644 }) })
    })
  }

  /**
   * Makes the key's entry with `make` in its place (its directories made),
   * and starts again from the directories while `make` or the making of
   * them answers AGAIN, at most RETRIES times: the entry of a key written
   * while another process hid the last key beside it lands in the
   * directory made again, instead of being lost with the removed one.
   */
  #made (id: string, make: (parent: string, target: string) => boolean | typeof AGAIN): boolean {
    for (let retries = 0; ; retries++) {
      const place = this.#place(id, true)
      if (place === null) return false
      const made = place === AGAIN ? AGAIN : make(place.parent, place.target)
      if (made !== AGAIN) return made
      if (retries === RETRIES) return false
    }
  }

  /**
   * Makes a new entry with `make` and renames it over `target`. The entry is
   * made in the store's scratch directory when there is one: a directory
   * holding many keys is slow to add a name to (creating a file there cost
   * a small put more than all its other file work), and the rename then adds
   * the only new name to it. Where the scratch directory cannot serve (a
   * rename across file systems), the entry is made beside `target`, and
   * the marker that sends the sweeper through the view is touched first.
   */
  #replaceEntry (parent: string, target: string, make: (tmp: string) => void, link = false): boolean | typeof AGAIN {
    if (this.#scratchDir !== undefined) {
      const failure = this.#replace(this.#scratchDir, target, make, link)
      if (failure === null) return true
      if (vanished(codeOf(failure), parent) === AGAIN) return AGAIN // and no temporary beside the key, where there is no directory
    }
    if (this.#strays !== undefined) {
      try {
        writeFileSync(this.#strays, '')
      } catch (err) {
        this.#refused('made', target, err)
        return false // no marker, no temporary beside the key: the sweeper would never look for it
      }
    }
    const failure = this.#replace(parent, target, make, link)
    if (failure === null) return true
    const again = vanished(codeOf(failure), parent)
    if (again === false) this.#refused('made', target, failure)
    return again
  }

  /**
   * Makes a new entry in `dir` with `make`, then renames it over `target`;
   * null on success, else the failure's error, and nothing left behind. A `link` to the body `target` already links
   * (another process published the same version) is the same file: rename
   * then succeeds and leaves both names, so the temporary one is removed
   * after it.
   */
  #replace (dir: string, target: string, make: (tmp: string) => void, link = false): unknown {
    const tmp = temporaryEntry(dir)
    try {
      make(tmp)
      renameSync(tmp, target)
      if (link) {
        try { unlinkSync(tmp) } catch {}
      }
      return null
    } catch (err) {
      try { unlinkSync(tmp) } catch {}
      return err ?? new Error('failed')
    }
  }

  /**
   * Warns that the view's entry at `file` could not be `made` or `removed`:
   * the key's file is missing from the view, or left in it. Not again for
   * the same file and reason (its code: the message of a refused link also
   * names the body, which changes with every write) within WARN_INTERVAL_MS.
   */
  #refused (what: 'made' | 'removed', file: string, err: unknown): void {
    const now = this.#now()
    const key = `${what}\0${file}\0${codeOf(err) ?? reasonOf(err)}`
    const last = this.#warned.get(key)
    if (last !== undefined && now - last < WARN_INTERVAL_MS) return
    this.#warned.delete(key) // set again below: the map stays in the order of the warnings
    this.#warned.set(key, now)
    for (const [old, at] of this.#warned) {
      if (this.#warned.size <= WARNED_MAX && now - at < WARN_INTERVAL_MS) break
      this.#warned.delete(old)
    }
    const message = what === 'made' ? 'the readable view could not show a key' : 'the readable view could not remove a deleted key\'s file'
    // A registry's `warn` comes guarded (registry-storage.ts): a warning never fails the write it follows.
    this.#warn({ path: file, reason: reasonOf(err) }, message)
  }

  /** Removes the key's file (only a plain file of ours, never through a link), and the directories it leaves empty. */
  hide (id: string): void {
    const place = this.#place(id, false)
    if (place === null || place === AGAIN) return
    const { parent, target } = place
    if (entryAt(target)?.isFile() !== true) return // not shown, a directory of other keys, or not ours
    try {
      unlinkSync(target)
    } catch (err) {
      if (codeOf(err) !== 'ENOENT') this.#refused('removed', target, err) // ENOENT: another process hid it first
      return
    }
    for (let dir = parent; dir !== this.#bucketDir && dir.startsWith(this.#bucketDir + path.sep); dir = path.dirname(dir)) {
      try { rmdirSync(dir) } catch { return }
    }
  }
}
