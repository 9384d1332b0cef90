/**
 * The words of `serve`'s primary and workers to each other (over the
 * cluster's channel) about stopping and reloading, which both serve.ts and
 * shutdown.ts speak. Each is an object whose `fsbucket` names its kind.
 */
import type { TlsPair } from './tls.js'

/** The primary's word to a worker: drain (the whole server stops). */
export interface Drain { fsbucket: 'drain' }
/** The primary's word to a worker: serve this certificate (read by the primary), or read the files again. */
export interface ReloadTls { fsbucket: 'reload-tls', pair?: TlsPair }
/** The primary's word to a worker stopping on a signal of its own: its replacement listens, so it may stop taking connections. */
export interface Replaced { fsbucket: 'replaced' }
/** A worker drains on a signal of its own: its exit is a stop asked for, not a death (the primary serves on and starts another). */
export interface StoppingAlone { fsbucket: 'stopping-alone', signal: string }

export function isMessage<T extends { fsbucket: string }> (message: unknown, kind: T['fsbucket']): message is T {
  return typeof message === 'object' && message !== null && (message as { fsbucket?: unknown }).fsbucket === kind
}

/** In a worker: tells the primary it stops on a signal of its own (its exit is no death); `sent` once the word is written, or could not be. */
export function sayStoppingAlone (signal: string, sent: () => void = () => {}): void {
  if (process.send?.({ fsbucket: 'stopping-alone', signal } satisfies StoppingAlone, undefined, {}, () => { sent() }) === undefined) sent()
}
