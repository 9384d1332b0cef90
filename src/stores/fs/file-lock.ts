/**
 * proper-lockfile, loaded at the first lock rather than with the package:
 * it installs signal handlers (signal-exit) as it loads, and importing
 * fsbucket, or serving from memory, must install none (docs/embedding.md).
 *
 * Its retries are taken here, not by proper-lockfile: it retries every
 * failure, ENOENT too, and a lock whose directory is gone (a bucket deleted
 * by another process: its directory renamed away) would then be waited on
 * for all the retries (a store's open lock: 19 s) before failing anyway.
 * Such a lock fails at once; a lock held (ELOCKED) or any other failure is
 * retried as proper-lockfile would (same back-off).
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { LockOptions } from 'proper-lockfile'

/** The waits between attempts proper-lockfile's `retries` asks for (as the `retry` package makes them; randomize is not used here). */
function waits (retries: LockOptions['retries']): number[] {
  if (Array.isArray(retries)) return retries
  const { retries: count = 0, factor = 2, minTimeout = 1000, maxTimeout = Infinity } = typeof retries === 'number' ? { retries } : retries ?? {}
  return Array.from({ length: count }, (_, attempt) => Math.min(Math.round(minTimeout * factor ** attempt), maxTimeout))
}

/** Locks `file` (proper-lockfile's `lock`); resolves with the release. */
export async function lockFile (file: string, options: LockOptions): Promise<() => Promise<void>> {
  const lockfile = (await import('proper-lockfile')).default
  const lockDirectory = path.dirname(options.lockfilePath ?? `${file}.lock`)
  for (const wait of [...waits(options.retries), null]) {
    try {
      return await lockfile.lock(file, Object.assign({}, options, { retries: 0 }))
    } catch (err) {
      // The retries are spent, or the directory that would hold the lock is gone: no wait brings it back.
      if (wait === null || ((err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(lockDirectory))) throw err
      await new Promise(resolve => setTimeout(resolve, wait))
    }
  }
  throw new Error('unreachable')
}
