/**
 * The readable view of a bucket: for every key that is a plain,
 * filesystem-safe path, a hard link at `<bucket>/<key>` to the body of the
 * key's current version, so a person can look inside the data directory and
 * open their files with ordinary tools.
 *
 * The view is a convenience, never the truth: reads, lists and conditionals
 * use the catalog and the version-named bodies. The store publishes a key's
 * entry right after each commit that changes the key, from the key's
 * current catalog row (never inside the write transaction, which touches no
 * file); a publisher that finds the row changed meanwhile by another process
 * publishes again, so the view follows the catalog write for write. After a
 * crash it can be one write behind the catalog for the key that was being
 * written. Keys that cannot be shown are simply absent from it:
 *   - keys with empty, `.` or `..` segments, a leading or trailing `/`,
 *     control characters, or segments longer than 255 bytes;
 *   - keys whose first segment is `.fsbucket` (the store's own directory);
 *   - a key that is also a directory of another key (`a` when `a/b` exists
 *     is shown, `a/b` is then not, or the other way round: first come);
 *   - objects completed from a multipart upload (their bytes are several files).
 * The view's files share their bytes with the stored bodies: editing one in
 * place would change a stored object behind its checksum, so treat the view
 * as read-only and write through the API.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs'
import path from 'node:path'

const MAX_SEGMENT_BYTES = 255

/** The view path of a key relative to the bucket directory, or null when the key cannot be shown. */
export function viewPath (id: string): string | null {
  const segments = id.split('/')
  if (segments[0] === '.fsbucket') return null
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') return null
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) return null
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(segment)) return null
  }
  return segments.join(path.sep)
}

export class KeyView {
  readonly #bucketDir: string

  constructor (bucketDir: string) {
    this.#bucketDir = bucketDir
  }

  /** Whether the key can have a file in the view at all. */
  shows (id: string): boolean {
    return viewPath(id) !== null
  }

  /** Shows `body` (an absolute path) as the key's file; false when the key cannot be shown. */
  show (id: string, body: string): boolean {
    const relative = viewPath(id)
    if (relative === null) return false
    const target = path.join(this.#bucketDir, relative)
    // A new key: one link, into a directory that usually exists already.
    const first = linkOrError(body, target)
    if (first === null) return true
    if (first === 'ENOENT') {
      try {
        mkdirSync(path.dirname(target), { recursive: true })
      } catch {
        return false // a parent is the file of another key
      }
      if (linkOrError(body, target) === null) return true
    }
    // A key shown already: link beside it, then replace it in one rename.
    const tmp = path.join(path.dirname(target), `.${randomBytes(8).toString('hex')}.view`)
    if (linkOrError(body, tmp) !== null) return false
    try {
      renameSync(tmp, target)
      return true
    } catch {
      try { unlinkSync(tmp) } catch {}
      return false // the target is the directory of other keys
    }
  }

  /** Removes the key's file, and the directories it leaves empty. */
  hide (id: string): void {
    const relative = viewPath(id)
    if (relative === null) return
    const target = path.join(this.#bucketDir, relative)
    try {
      unlinkSync(target)
    } catch {
      return // not shown, or a directory of other keys
    }
    for (let dir = path.dirname(target); dir !== this.#bucketDir && dir.startsWith(this.#bucketDir); dir = path.dirname(dir)) {
      try { rmdirSync(dir) } catch { return }
    }
  }
}

/** Hard-links `target` to `body`; null when done, else the error code. */
function linkOrError (body: string, target: string): string | null {
  try {
    linkSync(body, target)
    return null
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'EIO'
  }
}
