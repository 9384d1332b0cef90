/**
 * Whether this process can serve (`GET /_health/ready`, docs/operations.md):
 * the data directory takes writes, and the catalog answers.
 *
 * - `data-directory`: `access(W_OK)` on the data directory, then `statfs`
 *   of its file system, which must have free blocks (and free inodes where
 *   it counts them). The kernel's access check sees a read-only mount
 *   (EROFS) and the permission bits of the user the server runs as; nothing
 *   is written, so a probe every few seconds leaves no trace and wears
 *   nothing. (Start-up, preflight.ts, writes a probe file everywhere, once.)
 *   What this does not see: a disk whose writes fail with EIO; requests
 *   answer 503 for those, and the log says so.
 * - `catalog`: one `SELECT 1` to a PostgreSQL catalog (`--catalog`); the
 *   SQLite catalogs live in the data directory, whose check covers them.
 *
 * Each check has `timeoutMs` (1.5 s) to answer, so a hung catalog server
 * or file system gives a 503 in time instead of a probe that hangs. A check
 * still running when the next probe comes is joined, not started again: a
 * hung server holds at most one statement of the probes at a time.
 * Failures are logged when a check starts failing and when it recovers,
 * with the reason, which the answer itself never carries.
 */
import { constants, promises as fsp } from 'node:fs'
import type { BucketRegistry } from '../bucket/index.js'

/** The names a failed check has in a readiness answer. */
export type ReadinessCheck = 'data-directory' | 'catalog'

export interface ReadinessLog {
  warn: (fields: Record<string, unknown>, message: string) => void
  info: (fields: Record<string, unknown>, message: string) => void
}

export const defaultReadinessTimeoutMs = 1500

/** Throws unless the directory's file system takes writes. */
export async function checkDataDirectory (dir: string): Promise<void> {
  await fsp.access(dir, constants.W_OK)
  const fs = await fsp.statfs(dir)
  if (fs.blocks > 0 && fs.bavail === 0) throw Object.assign(new Error(`no space left on the data directory's file system`), { code: 'ENOSPC' })
  if (fs.files > 0 && fs.ffree === 0) throw Object.assign(new Error(`no inode left on the data directory's file system`), { code: 'ENOSPC' })
}

class Check {
  #running: Promise<void> | null = null
  #failing = false

  constructor (readonly name: ReadinessCheck, readonly run: () => Promise<void>, readonly timeoutMs: number, readonly log: ReadinessLog | null) {}

  /** True when the check passed within its time. */
  async passes (): Promise<boolean> {
    this.#running ??= this.run().finally(() => { this.#running = null })
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error(`no answer within ${this.timeoutMs} ms`)) }, this.timeoutMs)
    })
    try {
      await Promise.race([this.#running, timeout])
      if (this.#failing) this.log?.info({ check: this.name }, 'readiness check passes again')
      this.#failing = false
      return true
    } catch (err) {
      if (!this.#failing) this.log?.warn({ check: this.name, err }, 'readiness check failed')
      this.#failing = true
      return false
    } finally {
      clearTimeout(timer)
    }
  }
}

/** The readiness of a process serving `registry` over `dataDir`: the names of the checks that failed, none when ready. */
export function readinessChecks (dataDir: string | null, registry: BucketRegistry, options: { timeoutMs?: number, log?: ReadinessLog } = {}): () => Promise<ReadinessCheck[]> {
  const timeoutMs = options.timeoutMs ?? defaultReadinessTimeoutMs
  // A registry in memory (`--memory`) has no data directory to check.
  const checks = [
    ...(dataDir === null ? [] : [new Check('data-directory', async () => { await checkDataDirectory(dataDir) }, timeoutMs, options.log ?? null)]),
    new Check('catalog', async () => { await registry.ping() }, timeoutMs, options.log ?? null)
  ]
  return async () => {
    const passed = await Promise.all(checks.map(async check => await check.passes()))
    return checks.filter((_check, i) => !passed[i]).map(check => check.name)
  }
}
