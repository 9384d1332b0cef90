/**
 * proper-lockfile, loaded at the first lock rather than with the package:
 * it installs signal handlers (signal-exit) as it loads, and importing
 * fsbucket, or serving from memory, must install none (docs/embedding.md).
 */
import type { LockOptions } from 'proper-lockfile'

/** Locks `file` (proper-lockfile's `lock`); resolves with the release. */
export async function lockFile (file: string, options: LockOptions): Promise<() => Promise<void>> {
  return await (await import('proper-lockfile')).default.lock(file, options)
}
