/**
 * Turns of the event loop, for looks at shared state that requests may
 * share: a SQLite catalog's data version (has another process committed?)
 * and the fingerprints of settings files (the data directory's store), a
 * bucket's settings version and the custom domains' change token
 * (statements to the PostgreSQL catalog, shared as promises). Shared by the
 * stores, so it touches no file itself.
 *
 * The promise kept: a request uses only looks taken after it arrived,
 * that is after the poll for I/O that read it returned. So it sees every
 * commit that finished before it arrived, as with a look of its own:
 * read-after-write across processes.
 *
 * How: a turn is the stretch between two polls. Every request handled in
 * a stretch had arrived when the poll that opened it returned (that poll
 * or an earlier one read it), so a look taken anywhere
 * in the stretch (in an I/O callback, a timer, an immediate, a group
 * commit's flush) is as recent as each of them; the next poll may read
 * new ones, so it ends the turn. The stretch is named by libuv's own
 * counts (`performance.nodeTiming.uvMetricsInfo`): loop iterations,
 * counted just before each poll, and I/O events, counted after each
 * poll's callbacks (so also when libuv polls again within one iteration,
 * past 1,024 ready descriptors); either moving ends the turn. Ending it
 * at a fixed point instead, the next check phase (`setImmediate`), let a
 * look taken in a timer or an immediate serve the requests read by the
 * poll after it, and those could miss a commit made in between.
 *
 * Cost: one call into Node per look (about a quarter of a microsecond).
 * A small GET under 50 connections takes about one turn per 50 requests,
 * as with the check-phase end; ending the turn with each callback (a
 * microtask) would take every look anew for every request, as without
 * sharing (measured with the server and wrk).
 *
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
