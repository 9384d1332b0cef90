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

/** The retries of a lock: `retries` attempts more, waiting `minTimeout` ms, twice as long each time, at most `maxTimeout`. */
export interface LockRetries { retries: number, minTimeout: number, maxTimeout: number }

/** Locks `file` (proper-lockfile's `lock`, with `retries` taken here); resolves with the release. */
export async function lockFile (file: string, options: Omit<LockOptions, 'retries'> & { retries?: LockRetries }): Promise<() => Promise<void>> {
  const lockfile = (await import('proper-lockfile')).default
  const lockDirectory = path.dirname(options.lockfilePath ?? `${file}.lock`)
  const { retries = 0, minTimeout = 0, maxTimeout = 0 } = options.retries ?? {}
  const once = Object.assign({}, options, { retries: 0 })
  for (let attempt = 0; ; attempt++) {
    try {
      return await lockfile.lock(file, once)
    } catch (err) {
      // The retries are spent, or the directory that would hold the lock is gone: no wait brings it back.
      if (attempt >= retries || ((err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(lockDirectory))) throw err
      await new Promise(resolve => setTimeout(resolve, Math.min(minTimeout * 2 ** attempt, maxTimeout)))
    }
  }
}
