/**
 * The one way a file is replaced: write a temporary file in the same
 * directory, fsync it, rename it over the target, fsync the directory.
 * A reader sees the old file or the new one, never a mix, and after the
 * promise resolves the new one survives a crash (when `fsync` is on).
 *
 * Operating-system errors that a user can act on become typed errors here,
 * at the edge, so callers never parse errno strings.
 */
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'

/** An error of the storage layer with the errno it came from. */
export class StorageError extends Error {
  readonly errno: string
  constructor (errno: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StorageError'
    this.errno = errno
  }
}

const explained: Record<string, string> = {
  ENOSPC: 'no space left on the device holding the data directory',
  EROFS: 'the data directory is on a read-only file system',
  ENAMETOOLONG: 'a file name in the data directory is too long',
  EMFILE: 'too many open files in this process',
  ENFILE: 'too many open files on this system',
  EACCES: 'permission denied in the data directory',
  EPERM: 'operation not permitted in the data directory',
  EDQUOT: 'disk quota exceeded'
}

/** Turns an operating-system error into a StorageError; other errors pass through. */
export function storageError (err: unknown, what: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  if (code !== undefined && code in explained) {
    return new StorageError(code, `${what}: ${explained[code]} (${code})`, { cause: err })
  }
  return err
}

export function temporaryName (target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`)
}

export async function fsyncDirectory (dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export interface AtomicWriteOptions {
  /** fsync the file and its directory (default true). */
  fsync?: boolean
  /** File mode of the new file (default 0o644). */
  mode?: number
}

/** Replaces `target` with `data`, atomically. */
export async function writeFileAtomic (target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const durable = options.fsync ?? true
  const tmp = temporaryName(target)
  try {
    const handle = await fsp.open(tmp, 'wx', options.mode ?? 0o644)
    try {
      await handle.writeFile(data)
      if (durable) await handle.sync()
    } finally {
      await handle.close()
    }
    await fsp.rename(tmp, target)
    if (durable) await fsyncDirectory(path.dirname(target))
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => {})
    throw storageError(err, `writing ${path.basename(target)}`)
  }
}

/** Replaces `target` with the JSON of `value`, atomically. */
export async function writeJsonAtomic (target: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(target, JSON.stringify(value, null, 2) + '\n', options)
}

/** Reads a JSON file, or returns `fallback` when it does not exist. */
export async function readJson<T> (file: string, fallback: T): Promise<T> {
  let text: string
  try {
    text = await fsp.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fallback
    throw storageError(err, `reading ${path.basename(file)}`)
  }
  return JSON.parse(text) as T
}
