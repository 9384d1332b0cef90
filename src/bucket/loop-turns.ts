/**
 * Turns of the event loop for the binding's reads. A store may answer a
 * read without waiting for any I/O (the filesystem store from its caches
 * and SQLite): the read's promise then settles within the current task,
 * and a caller polling for a write of its own process
 * (`while (await bucket.head(k) === null) {}`) would hold the event loop
 * forever, the write never getting the turn it waits for. So the binding's
 * `head`, `get` and `list` count themselves here, and every 256th since the
 * loop last turned waits for its next turn.
 */

const READS_BEFORE_A_TURN = 256
let readsThisTurn = 0
let turnWatched = false

/** The wait for the loop's next turn when this read is due to give it one; else undefined (nothing to await). */
export function loopTurnNow (): Promise<void> | undefined {
  if (!turnWatched) {
    turnWatched = true
    setImmediate(() => {
      turnWatched = false
      readsThisTurn = 0
    })
  }
  return ++readsThisTurn >= READS_BEFORE_A_TURN ? new Promise<void>(resolve => { setImmediate(resolve) }) : undefined
}
