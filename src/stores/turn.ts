/**
 * Turns of the event loop, for looks at shared state that requests may
 * share: a SQLite catalog's data version (has another process committed?)
 * and the fingerprints of settings files (the data directory's store), a
 * bucket's settings version and the custom domains' change token
 * (statements to the PostgreSQL catalog, shared as promises). Shared by the
 * stores, so it touches no file itself.
 *
 * The promise kept: a look is used only by work that started before the
 * look was taken. So a request sees every commit that finished before it
 * arrived, as with a look per request: read-after-write across processes.
 *
 * How: a turn here is the stretch between two polls for I/O. A request
 * reaches the process as an I/O callback (its bytes were read once a poll
 * returned them), so a look taken after that poll returned is at least as
 * recent as every request handled before the next one; a timer, an
 * immediate or a group commit's flush runs within such a stretch too. The
 * turn is named by libuv's own counts (`performance.nodeTiming.uvMetricsInfo`):
 * loop iterations, counted as a poll begins, and I/O events, counted after
 * each poll's callbacks (so also when libuv polls again within one
 * iteration, past 1,024 ready descriptors). Either moving ends the turn. A
 * look taken in a timer or an immediate is therefore never handed to a
 * request read by the poll after it: ending the turn at a fixed point
 * instead (the next check phase, `setImmediate`) let a look taken before
 * the poll serve the requests that poll brought in.
 *
 * Reading the counts costs one call into Node (a few hundred nanoseconds)
 * per look; under load the looks they save are statements and system calls.
 * Sharing stays off unless a server turns it on (`shareChecksWithinTurns`)
 * because what the process learns of other processes must arrive through
 * the event loop: a library caller could learn of a commit synchronously,
 * say from `execFileSync`, and must look again. On a Node that does not
 * report the counts (before 20.18 and 22.8) every look is fresh.
 */
import { performance } from 'node:perf_hooks'

/** libuv's counts (loop iterations, I/O events); undefined where this Node does not report them. */
const timing: { readonly uvMetricsInfo?: { loopCount: number, events: number } } = performance.nodeTiming

let share: () => boolean = () => false
let turn = 0
let loops = -1
let events = -1

/** Lets looks be shared within a turn while `when()` holds (a server). */
export function shareChecksWithinTurns (when: () => boolean): void {
  share = when
}

/** A number naming the current turn when looks may be shared; else a new number at every call (every look fresh). */
export function currentTurn (): number {
  if (!share()) return ++turn
  const now = timing.uvMetricsInfo
  if (now === undefined) return ++turn
  if (now.loopCount !== loops || now.events !== events) {
    loops = now.loopCount
    events = now.events
    turn++
  }
  return turn
}

/** Answers kept for the rest of the current turn, by key; `forget` after a write of this process. */
export class TurnMemo<T> {
  #turn = -1
  readonly #answers = new Map<string, T>()

  get (key: string, compute: () => T): T {
    const turn = currentTurn()
    if (turn !== this.#turn) {
      this.#answers.clear()
      this.#turn = turn
    }
    const known = this.#answers.get(key)
    if (known !== undefined || this.#answers.has(key)) return known as T
    const answer = compute()
    this.#answers.set(key, answer)
    return answer
  }

  forget (): void {
    this.#answers.clear()
  }
}
