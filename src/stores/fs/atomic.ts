/**
 * The one way a file is replaced: write a temporary file in the same
 * directory, fsync it, rename it over the target, fsync the directory.
 * A reader sees the old file or the new one, never a mix, and after the
 * promise resolves the new one survives a crash (when `fsync` is on).
 *
 * Operating-system errors that a user can act on become the storage
 * failures of the engine's catalogue here, at the edge, so callers never
 * parse errno strings.
 */
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { storageFailure, storageFailureOf, type StorageFailureName } from '../../bucket/port.js'

/**
 * Turns an operating-system or SQLite error into the storage failure of the
 * engine's catalogue (ENOSPC → 507, EROFS → 503, ...); other errors pass
 * through. `path` is the file involved, when the error does not name one.
 */
export function storageError (err: unknown, what: string, path?: string): unknown {
  const sqlite = (err as { code?: unknown } | null)?.code
  if (typeof sqlite === 'string' && sqlite.startsWith('SQLITE_')) {
    const name = sqliteFailures.find(([prefix]) => sqlite.startsWith(prefix))?.[1]
    return name === undefined ? err : storageFailure(name, what, { path, cause: err })
  }
  return storageFailureOf(err, what, path)
}

/** SQLite's result codes that are storage failures (extended codes start with these). */
const sqliteFailures: Array<[string, StorageFailureName]> = [
  ['SQLITE_FULL', 'NoSpaceLeft'],
  ['SQLITE_READONLY', 'ReadOnlyStorage'],
  ['SQLITE_PERM', 'StoragePermissionDenied'],
  ['SQLITE_IOERR', 'StorageIoError'],
  ['SQLITE_CANTOPEN', 'StorageIoError'],
  // A catalog file damaged on disk, or replaced by something that is not SQLite's.
  ['SQLITE_CORRUPT', 'StorageIoError'],
  ['SQLITE_NOTADB', 'StorageIoError']
]

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
  /** Runs on the written temporary file before it is synced and renamed over the target (to set its times, say). */
  beforeRename?: (file: FileHandle) => Promise<void>
}

/** Replaces `target` with `data`, atomically. */
export async function writeFileAtomic (target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const tmp = await stageFile(target, data, options)
  try {
    await fsp.rename(tmp, target)
    if (options.fsync ?? true) await fsyncDirectory(path.dirname(target))
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => {})
    throw storageError(err, `writing ${path.basename(target)}`, target)
  }
}

/**
 * Writes `data` to a temporary file beside `target` (synced when `fsync`),
 * ready to be renamed over it, and returns its path; on failure nothing is
 * left behind.
 */
export async function stageFile (target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<string> {
  const tmp = temporaryName(target)
  try {
    const handle = await fsp.open(tmp, 'wx', options.mode ?? 0o644)
    try {
      await handle.writeFile(data)
      if (options.beforeRename !== undefined) await options.beforeRename(handle)
      if (options.fsync ?? true) await handle.sync()
    } finally {
      await handle.close()
    }
    return tmp
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => {})
    throw storageError(err, `writing ${path.basename(target)}`, target)
  }
}

/** Replaces `target` with the JSON of `value`, atomically. */
export async function writeJsonAtomic (target: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(target, JSON.stringify(value, null, 2) + '\n', options)
}

/** Reads a JSON file, or returns `fallback` when it does not exist. */
export async function readJson<T> (file: string, fallback: T): Promise<T> {
  const text = await readText(file)
  return text === null ? fallback : parseJsonOf<T>(file, text)
}

/** The text of `file`, or null when it does not exist (any other failure is a storage error naming the file). */
export async function readText (file: string): Promise<string | null> {
  try {
    return await fsp.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw storageError(err, `reading ${path.basename(file)}`, file)
  }
}

/** `text`, the contents of `file`, parsed; a SyntaxError naming the file to mend when it is not JSON (edited by hand and left broken, say). */
export function parseJsonOf<T> (file: string, text: string): T {
  try {
    return JSON.parse(text) as T
  } catch (err) {
    throw new SyntaxError(`${file} is not valid JSON: ${(err as Error).message}`)
  }
}
