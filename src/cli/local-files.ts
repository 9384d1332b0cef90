/**
 * The user's own files, the only ones the command door touches: what `cp`
 * and `mirror` read to upload and write when they download, and the walk of
 * a directory for `-r`. Every node:fs call of src/cli/ is here (the
 * architecture test allows this one module of the door to touch files);
 * buckets are reached only through the engine's surface.
 *
 * - A walk yields regular files, symbolic links followed to what they name
 *   (as `cp -r` and `aws s3 cp --recursive` do); sockets, pipes, devices
 *   and dangling links are skipped. A file found under a link to a directory
 *   is marked `throughLink`: it may be anywhere, outside the directory
 *   walked or a second name of a file inside it, so mirror never removes it.
 *   A link to a directory that holds it (`ln -s .. up`) is skipped: followed,
 *   it would repeat the tree under itself until the kernel gives up.
 * - A download streams into a temporary file beside the destination,
 *   renamed over it once complete: an interrupted download (Ctrl-C,
 *   SIGTERM, a failed stdout; stopping.ts) never leaves a truncated file
 *   under the real name, nor a temporary one behind.
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { keySuffix } from './paths.js'
import { undoIfStopped } from './stopping.js'
import { CliError } from './errors.js'

export interface LocalFile {
  path: string
  /** `/`-separated path under the directory walked. */
  relative: string
  size: number
  /** Reached through a symbolic link to a directory. */
  throughLink: boolean
}

/** What is at `file` (links followed), or null when nothing is. */
export async function fileKind (file: string): Promise<{ kind: 'file' | 'directory' | 'other', size: number } | null> {
  const info = await stat(file).catch(() => null)
  if (info === null) return null
  return { kind: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other', size: info.size }
}

/**
 * Refuses a data directory that does not exist: a command that reads one
 * never makes it (a mistyped `--data` would become a new, empty one);
 * `mb`, `bucket create` and `serve` make it. `hint` says what else to try.
 */
export async function requireDataDirectory (dataDir: string, hint = ''): Promise<void> {
  if ((await fileKind(dataDir))?.kind !== 'directory') throw new CliError(`no data directory ${dataDir} (set --data or FSBUCKET_DATA${hint})`)
}

/** Regular files under `root`, depth first, each directory's entries in name order. */
export async function * walkFiles (root: string): AsyncGenerator<LocalFile> {
  const info = await stat(root)
  yield * walkFrom(root, '', false, new Set([`${info.dev}:${info.ino}`]))
}

/** `ancestors`: the directories from the root down to this one, by device and inode. */
async function * walkFrom (root: string, relative: string, throughLink: boolean, ancestors: Set<string>): AsyncGenerator<LocalFile> {
  const dir = path.join(root, relative)
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  for (const entry of entries) {
    const child = path.join(relative, entry.name)
    const full = path.join(root, child)
    const info = entry.isSymbolicLink() || entry.isFile() || entry.isDirectory() ? await stat(full).catch(() => null) : null
    if (info === null) continue
    if (info.isDirectory()) {
      // A link to a directory that holds it would be walked again and again (up to the kernel's 40 links): skipped.
      const id = `${info.dev}:${info.ino}`
      if (ancestors.has(id)) continue
      yield * walkFrom(root, child, throughLink || entry.isSymbolicLink(), new Set([...ancestors, id]))
    } else if (info.isFile()) {
      yield { path: full, relative: keySuffix(child), size: info.size, throughLink }
    }
  }
}

/** The bytes of a file, or of `length` bytes from `start`. */
export function readLocal (file: string, range?: { start: number, length: number }): Readable {
  return range === undefined ? createReadStream(file) : createReadStream(file, { start: range.start, end: range.start + range.length - 1 })
}

/** Streams `body` through `through` into `file`, by way of a temporary file renamed over it at the end. */
export async function writeLocal (file: string, body: Readable, through: Transform): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
  // Not named after the file: a name near the file system's limit (255 bytes) would leave no room for a suffix.
  const temporary = path.join(path.dirname(file), `.fsbucket-${randomBytes(6).toString('hex')}.download`)
  const release = undoIfStopped('file', async () => { await unlink(temporary).catch(() => {}) })
  try {
    await pipeline(body, through, createWriteStream(temporary, { flags: 'wx' }))
    await rename(temporary, file)
  } catch (err) {
    body.destroy()
    await unlink(temporary).catch(() => {})
    // The user never named the temporary file: a failure is the destination's.
    const errno = err as NodeJS.ErrnoException
    if (errno.path === temporary) errno.path = file
    throw err
  } finally {
    release()
  }
}

export async function makeDirectory (dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
}

export async function removeLocal (file: string): Promise<void> {
  await unlink(file)
}
