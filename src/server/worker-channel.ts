/**
 * When a worker of the cluster is done with its channel to the primary.
 *
 * A worker's 'exit' (its process ended) may come before its last messages
 * are read; its 'disconnect' comes after them (the channel read to its
 * end). But Node never emits 'disconnect' for a worker that died holding a
 * connection the primary had handed it and it had not yet taken (a worker
 * stopped, then killed): its channel ends unannounced. So what must see a
 * worker's last words waits for its 'disconnect', and at most
 * CHANNEL_WAIT_MS after its 'exit'.
 */
import type { Worker } from 'node:cluster'

/** How long after a worker's exit its 'disconnect' is waited for. */
export const CHANNEL_WAIT_MS = 1000

/** Runs `then` once, when the exited `worker`'s channel is closed: at once if it is, else on its 'disconnect', at most CHANNEL_WAIT_MS from now. */
export function afterChannel (worker: Worker, then: () => void): void {
  if (!worker.isConnected()) {
    then()
    return
  }
  let done = false
  const once = (): void => {
    if (done) return
    done = true
    clearTimeout(timer)
    worker.off('disconnect', once)
    then()
  }
  const timer = setTimeout(once, CHANNEL_WAIT_MS)
  worker.once('disconnect', once)
}
