/**
 * What a store has recently read: catalog rows by id, and small bodies by
 * version.
 *
 * Bodies are immutable files named by version, so a cached body never goes
 * stale; only its row decides whether it is still the object's. Rows are
 * valid while the catalog is unchanged: the store clears them after each of
 * its own write transactions and whenever the catalog's data version (which
 * moves when any other connection, in any process, commits) has moved since
 * the last look at it (every read's own look, or in a server one look per
 * turn of the event loop: see ../turn.ts). A read therefore never returns a row
 * older than the last commit that resolved before it started, which is the
 * multi-process guarantee of the format.
 */
import type { StoredObject } from '../../bucket/port.js'

/** A row as the store keeps it: the record and the body files it names, or whether the row holds the body itself. */
export interface CachedRow {
  object: StoredObject
  segments: Array<[file: string, size: number]>
  /** The body is in the catalog row (read by version when asked for, then kept with the other small bodies). */
  inline?: boolean
}

export interface ReadCacheLimits {
  /** Rows kept (default 10,000). */
  rows?: number
  /** Bytes of bodies kept (default 8 MiB). */
  bodyBytes?: number
}

export class ReadCache {
  /** id → row, or null for "no such object". Oldest first. */
  readonly #rows = new Map<string, CachedRow | null>()
  /** version → bytes. Oldest first. */
  readonly #bodies = new Map<string, Buffer>()
  readonly #maxRows: number
  readonly #maxBodyBytes: number
  #bodyBytes = 0
  #dataVersion: unknown

  constructor (limits: ReadCacheLimits = {}) {
    this.#maxRows = limits.rows ?? 10_000
    this.#maxBodyBytes = limits.bodyBytes ?? 8 * 1024 * 1024
  }

  /** Forgets every row unless `dataVersion` is the one seen last. */
  validate (dataVersion: unknown): void {
    if (dataVersion === this.#dataVersion) return
    this.#dataVersion = dataVersion
    this.#rows.clear()
  }

  /** Forgets every row (after a write of this store). Bodies stay: they never change. */
  clearRows (): void {
    this.#rows.clear()
  }

  /** The cached row of `id`: a row, null for a known miss, undefined when not cached. */
  row (id: string): CachedRow | null | undefined {
    return this.#rows.get(id)
  }

  setRow (id: string, row: CachedRow | null): void {
    if (this.#rows.size >= this.#maxRows) this.#rows.delete(this.#rows.keys().next().value as string)
    this.#rows.set(id, row)
  }

  forgetRow (id: string): void {
    this.#rows.delete(id)
  }

  body (version: string): Buffer | undefined {
    return this.#bodies.get(version)
  }

  setBody (version: string, bytes: Buffer): void {
    if (bytes.byteLength > this.#maxBodyBytes || this.#bodies.has(version)) return
    while (this.#bodyBytes + bytes.byteLength > this.#maxBodyBytes) {
      const [oldest, evicted] = this.#bodies.entries().next().value as [string, Buffer]
      this.#bodies.delete(oldest)
      this.#bodyBytes -= evicted.byteLength
    }
    this.#bodies.set(version, bytes)
    this.#bodyBytes += bytes.byteLength
  }
}
