/**
 * Turns of the event loop, for looks at shared state that every request of
 * one turn may share: a SQLite catalog's data version (has another process
 * committed?) and the fingerprints of settings files (the data directory's
 * store), a bucket's settings version and the custom domains' change token
 * (statements to the PostgreSQL catalog, shared as promises). Shared by the
 * stores, so it touches no file itself.
 *
 * Why a look may be shared: a request handled during a turn arrived before
 * that turn's poll for I/O returned, and the look is taken after it (a
 * statement is sent after it, and reads what had committed by then). So a
 * commit that resolved before such a request arrived had resolved before
 * the look, and the look sees it: read-after-write across processes holds
 * exactly as with a look per request. The turn ends at the loop's check
 * phase (`setImmediate`), before the next poll.
 *
 * Two conditions make this hold, so sharing is off unless a server turns
 * it on (`shareChecksWithinTurns`):
 * - what the process learns of other processes arrives through the event
 *   loop (true of a server; a library caller could learn of a commit
 *   synchronously, say from `execFileSync`, and must look again);
 * - one poll returns every request of the turn. libuv polls again within
 *   the same turn only after 1,024 ready descriptors, so the server shares
 *   looks only while it has fewer connections than that.
 */
let share: () => boolean = () => false
let turn = 0
let inTurn = false

function endTurn (): void {
  inTurn = false
}

/** Lets looks be shared within a turn while `when()` holds (a server with fewer than ~1,000 connections). */
export function shareChecksWithinTurns (when: () => boolean): void {
  share = when
}

/** A number naming the current turn when looks may be shared; else a new number at every call (every look fresh). */
export function currentTurn (): number {
  if (!share()) return ++turn
  if (!inTurn) {
    inTurn = true
    turn++
    setImmediate(endTurn)
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
