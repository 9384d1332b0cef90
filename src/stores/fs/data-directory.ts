/**
 * The file operations the bucket registry needs on a data directory: which
 * buckets exist, whether a settings file changed, creating and removing a
 * bucket's directory, and a lock around a read-modify-write of a settings
 * file. Kept here so that only src/persist knows node:fs and proper-lockfile.
 */
import { promises as fsp, lstatSync, statSync } from 'node:fs'
import path from 'node:path'
import { storageError } from './atomic.js'
import { makeDirectory, makeOne } from './make-directory.js'
import { lockFile } from './file-lock.js'

/**
 * Identity of a file's current content (inode, mtime, size), or null when it
 * does not exist. Synchronous on purpose: it runs on every request to see
 * whether another process replaced a settings file, and a stat from the
 * kernel's cache costs a few microseconds where a trip through the thread
 * pool costs tens.
 */
export function fingerprint (file: string): string | null {
  try {
    const stat = statSync(file, { throwIfNoEntry: false })
    return stat === undefined ? null : `${stat.ino}:${stat.mtimeMs}:${stat.size}`
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return null
    // A directory on the way closed to the process (EACCES), an I/O error: the storage failure it is, as for any other file of the store.
    throw storageError(err, `reading ${path.basename(file)}`, file)
  }
}

/** Whether `dir` is a directory itself, not a link to one. */
export function isDirectory (dir: string): boolean {
  try {
    // lstat: a symbolic link planted as a bucket's directory is not one (it would lead outside the data directory).
    return lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false
  } catch {
    return false
  }
}

/** Names of the directories directly inside `dir`. */
export async function subdirectories (dir: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(dir, { withFileTypes: true })
    return entries.filter(e => e.isDirectory()).map(e => e.name)
  } catch (err) {
    throw storageError(err, 'listing buckets', dir)
  }
}

export async function ensureDirectory (dir: string): Promise<void> {
  try {
    await makeDirectory(dir)
  } catch (err) {
    throw storageError(err, 'creating a directory', dir)
  }
}

/** Creates `dir` (its parent must exist); false when it exists already. Of two processes creating one name, exactly one wins. */
export async function createDirectory (dir: string): Promise<boolean> {
  try {
    return await makeOne(dir)
  } catch (err) {
    throw storageError(err, 'creating a directory', dir)
  }
}

/** Moves `dir` to `trash` at once (false when `dir` is gone), then removes it (what cannot be removed now, the sweeper removes). */
export async function removeTree (dir: string, trash: string): Promise<boolean> {
  try {
    await fsp.rename(dir, trash)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw storageError(err, 'removing a bucket', dir)
  }
  // The bucket is gone once moved: a failure to remove its files is no failure of the delete.
  await fsp.rm(trash, { recursive: true, force: true }).catch(() => {})
  return true
}

/** Runs `critical` holding a lock on `file` shared by every process (stale after ten seconds). */
export async function withFileLock<T> (file: string, critical: () => Promise<T>): Promise<T> {
  let release: () => Promise<void>
  try {
    release = await lockFile(file, {
      realpath: false,
      stale: 10_000,
      retries: { retries: 50, minTimeout: 5, maxTimeout: 100 }
    })
  } catch (err) {
    throw storageError(err, 'locking a settings file', file)
  }
  try {
    return await critical()
  } finally {
    await release()
  }
}
