/**
 * What the stores tell the metrics (src/server/metrics.ts, docs/operations.md):
 * how long catalog commits take, how many writes a group commit carries,
 * and how the PostgreSQL pool is used. Shared by the stores, so it imports
 * no metrics library: each server of the process adds its observer
 * (`observeStores`) and removes it as it closes; without one, noting a
 * commit costs a clock read and a loop over nothing.
 */
import { performance } from 'node:perf_hooks'

/** Which catalog committed. */
export type CatalogKind = 'sqlite' | 'postgresql'

/** A connection pool's use when the metrics are read. */
export interface PoolUse {
  /** Connections open. */
  total: number
  /** Open and unused. */
  idle: number
  /** Requests waiting for a connection. */
  waiting: number
  /** Most connections the pool may open. */
  max: number
}

export interface StoreObserver {
  /** A catalog write committed (durable): seconds from its start; `batch`, the writes a group commit carried (null: a commit of its own). */
  committed: (catalog: CatalogKind, seconds: number, batch: number | null) => void
}

const observers = new Set<StoreObserver>()
const pools = new Set<() => PoolUse>()

/** Adds an observer of this process's stores (every server's counts the process's commits) until the returned function is called. */
export function observeStores (observer: StoreObserver): () => void {
  observers.add(observer)
  return () => { observers.delete(observer) }
}

/** A start time for `noteCommit`. */
export function commitStarted (): number {
  return performance.now()
}

export function noteCommit (catalog: CatalogKind, started: number, batch: number | null): void {
  if (observers.size === 0) return
  const seconds = (performance.now() - started) / 1000
  for (const observer of observers) observer.committed(catalog, seconds, batch)
}

/** Counts a pool's use in the metrics until the returned function is called (the pool closed). */
export function notePool (use: () => PoolUse): () => void {
  pools.add(use)
  return () => { pools.delete(use) }
}

/** The use of every pool open in this process, added up. */
export function poolUse (): PoolUse {
  const sum: PoolUse = { total: 0, idle: 0, waiting: 0, max: 0 }
  for (const use of pools) {
    const one = use()
    sum.total += one.total
    sum.idle += one.idle
    sum.waiting += one.waiting
    sum.max += one.max
  }
  return sum
}
