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
 * crash in a batch leaves no entry of a deleted object behind. Keys that
 * cannot be shown are simply absent from it:
 *   - keys with empty, `.` or `..` segments, a leading or trailing `/`,
 *     control characters, or segments longer than 255 bytes;
 *   - keys whose first segment is `.fsbucket` (the store's own directory),
 *     or whose last is named like the view's own temporaries;
 *   - a key that is also a directory of another key (`a` when `a/b` exists
 *     is shown, `a/b` is then not, or the other way round: first come);
 *   - objects completed from a multipart upload (their bytes are several files);
 *   - objects encrypted with a customer-provided key (SSE-C: their bytes are ciphertext);
 *   - a key whose place holds an entry that is not ours (a symbolic link, a
 *     directory made by hand) or whose path crosses one: the view never
 *     follows a link, never replaces or removes an entry it did not make,
 *     and never creates the bucket directory itself (a deleted bucket stays
 *     deleted).
 * The view's files share their bytes with the stored bodies: editing one in
 * place would change a stored object behind its checksum, so treat the view
 * as read-only and write through the API. (A written-out copy of a small
 * body shares nothing, and is not flushed: after a power cut it can be
 * short or empty until the key is written again; the catalog holds the
 * object.)
 */
import { randomBytes } from 'node:crypto'
import { linkSync, lstatSync, mkdirSync, renameSync, rmdirSync, unlinkSync, writeFileSync, type Stats } from 'node:fs'
import path from 'node:path'

const MAX_SEGMENT_BYTES = 255

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

/** The view path of a key relative to the bucket directory, or null when the key cannot be shown. */
export function viewPath (id: string): string | null {
  const segments = id.split('/')
  if (segments[0] === '.fsbucket') return null
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') return null
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) return null
    if (/[\u0000-\u001f\u007f]/.test(segment)) return null
  }
  // Named like a temporary, its entry would be swept away as one.
  if (VIEW_TEMPORARY.test(segments[segments.length - 1])) return null
  return segments.join(path.sep)
}

/** The entry at `file` without following a link, or null when there is none (or it cannot be looked at). */
function entryAt (file: string): Stats | null {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) ?? null
  } catch {
    return null
  }
}

export class KeyView {
  readonly #bucketDir: string
  readonly #scratchDir: string | undefined
  readonly #strays: string | undefined

  /** `storeDir`: where the scratch directory (`tmp`) and the marker of temporaries beside keys are. */
  constructor (bucketDir: string, storeDir?: string) {
    this.#bucketDir = bucketDir
    this.#scratchDir = storeDir === undefined ? undefined : path.join(storeDir, 'tmp')
    this.#strays = storeDir === undefined ? undefined : path.join(storeDir, VIEW_STRAYS_MARKER)
  }

  /** Whether the key can have a file in the view at all. */
  shows (id: string): boolean {
    return viewPath(id) !== null
  }

  /** Where the key's file goes: its checked directory (`#parent`) and path; null when the key is not in the view. */
  #place (id: string, create: boolean): { parent: string, target: string } | null {
    const relative = viewPath(id)
    if (relative === null) return null
    const parent = this.#parent(relative, create)
    return parent === null ? null : { parent, target: path.join(parent, path.basename(relative)) }
  }

  /**
   * The directory that holds the key's file, checked component by
   * component without following links: every component must be a real
   * directory inside the bucket (with `create`, missing ones are made, one
   * level at a time, never the bucket directory itself). Null when a
   * component is a link, a file, or missing: the key is then not in the view.
   */
  #parent (relative: string, create: boolean): string | null {
    if (entryAt(this.#bucketDir)?.isDirectory() !== true) return null // the bucket is gone: never bring it back
    let dir = this.#bucketDir
    for (const component of path.dirname(relative).split(path.sep)) {
      if (component === '.') break
      dir = path.join(dir, component)
      let entry = entryAt(dir)
      if (entry === null && create) {
        try { mkdirSync(dir) } catch {}
        entry = entryAt(dir)
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
    const place = this.#place(id, true)
    if (place === null) return false
    const { parent, target } = place
    const existing = entryAt(target)
    if (existing === null) {
      try {
        linkSync(body, target)
        return true
      } catch {
        return false
      }
    }
    if (!existing.isFile()) return false // a link or a directory: not ours
    // A key shown already: link beside it, then replace it in one rename (rename never follows the target).
    return this.#replaceEntry(parent, target, tmp => { linkSync(body, tmp) }, true)
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
    const place = this.#place(id, true)
    if (place === null) return false
    const { parent, target } = place
    const existing = entryAt(target)
    if (existing !== null && !existing.isFile()) return false // a link or a directory: not ours
    return this.#replaceEntry(parent, target, tmp => { writeFileSync(tmp, bytes, { flag: 'wx', mode: 0o644 }) })
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
  #replaceEntry (parent: string, target: string, make: (tmp: string) => void, link = false): boolean {
    if (this.#scratchDir !== undefined && this.#replace(this.#scratchDir, target, make, link)) return true
    if (this.#strays !== undefined) {
      try {
        writeFileSync(this.#strays, '')
      } catch {
        return false // no marker, no temporary beside the key: the sweeper would never look for it
      }
    }
    return this.#replace(parent, target, make, link)
  }

  /**
   * Makes a new entry in `dir` with `make`, then renames it over `target`;
   * false (and nothing left behind) on failure. A `link` to the body
   * `target` already links (another process published the same version)
   * is the same file: rename then succeeds and leaves both names, so the
   * temporary one is removed after it.
   */
  #replace (dir: string, target: string, make: (tmp: string) => void, link = false): boolean {
    const tmp = temporaryEntry(dir)
    try {
      make(tmp)
      renameSync(tmp, target)
      if (link) {
        try { unlinkSync(tmp) } catch {}
      }
      return true
    } catch {
      try { unlinkSync(tmp) } catch {}
      return false
    }
  }

  /** Removes the key's file (only a plain file of ours, never through a link), and the directories it leaves empty. */
  hide (id: string): void {
    const place = this.#place(id, false)
    if (place === null) return
    const { parent, target } = place
    if (entryAt(target)?.isFile() !== true) return // not shown, a directory of other keys, or not ours
    try {
      unlinkSync(target)
    } catch {
      return
    }
    for (let dir = parent; dir !== this.#bucketDir && dir.startsWith(this.#bucketDir + path.sep); dir = path.dirname(dir)) {
      try { rmdirSync(dir) } catch { return }
    }
  }
}
