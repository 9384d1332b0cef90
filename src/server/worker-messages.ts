/**
 * The words of `serve`'s primary and workers to each other (over the
 * cluster's channel) about stopping and reloading, which both serve.ts and
 * shutdown.ts speak. Each is an object whose `fsbucket` names its kind.
 */
import type { Worker } from 'node:cluster'
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

/** A worker's word once its listeners are closed, before it exits: `settleHandoffs`. */
export interface ListenersClosed { fsbucket: 'listeners-closed' }
/** The primary's answer to `ListenersClosed`: `answerListenersClosed`. */
export interface HandoffsSettled { fsbucket: 'handoffs-settled' }

/** How long a worker about to exit waits for the primary's answer (a primary too busy, or gone): then it exits all the same. */
export const HANDOFF_WAIT_MS = 2000

/**
 * In a worker whose listeners are closed, before it exits: a round trip
 * with the primary, so that no connection is lost with the worker.
 *
 * Node's primary accepts every connection and hands it to a worker over
 * the channel, holding its own copy until the worker says whether it took
 * it. One handed as the worker closed its listeners (the primary had not
 * read the close yet) is refused back, and the primary hands it to
 * another worker, but only if the worker reads it before it exits. Unread
 * at the exit, the connection stays open in the primary and is never
 * answered: its client waits for good. The primary answers this word after
 * it read the close (it hands this worker nothing more), and the answer
 * comes after every connection it sent before, which the worker has then
 * read and refused. Resolves on the answer, or after `waitMs`; at once in
 * a process that is no worker.
 */
export async function settleHandoffs (waitMs = HANDOFF_WAIT_MS): Promise<void> {
  if (process.send === undefined || !process.connected) return
  await new Promise<void>(resolve => {
    const done = (): void => {
      clearTimeout(timer)
      process.off('message', onMessage)
      process.off('disconnect', done)
      resolve()
    }
    const onMessage = (message: unknown): void => { if (isMessage<HandoffsSettled>(message, 'handoffs-settled')) done() }
    const timer = setTimeout(done, waitMs)
    process.on('message', onMessage)
    process.once('disconnect', done)
    process.send?.({ fsbucket: 'listeners-closed' } satisfies ListenersClosed, undefined, {}, err => { if (err !== null) done() })
  })
}

/** In the primary: answers a worker's `ListenersClosed` (true), or says the message is another (false). */
export function answerListenersClosed (worker: Worker, message: unknown): boolean {
  if (!isMessage<ListenersClosed>(message, 'listeners-closed')) return false
  if (worker.isConnected()) worker.send({ fsbucket: 'handoffs-settled' } satisfies HandoffsSettled)
  return true
}
