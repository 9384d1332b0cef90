/**
 * What the readable view (view.ts) is owed after a commit of several keys.
 *
 * The view is published after each commit, never inside it (the write
 * transaction touches no file). For one key that leaves at most that key's
 * entry one write behind after a crash. A commit of many keys at once (a
 * batch delete: DeleteObjects, the routes' bulk delete, a lifecycle page of
 * expirations) would leave up to all of them behind, and nothing else
 * looks at those entries again: view files of objects that no longer exist,
 * holding the only links to their bytes once the sweeper removes the bodies.
 *
 * So such a commit records its keys in the catalog's `view_intents` table in
 * its own transaction (durable with it, rolled back with it), and the batch
 * clears them with one statement once it has published them all. Whatever
 * a crash left recorded is published by the next process that opens the
 * store, and by every sweep (a server that stays up, beside a worker that
 * died). Publishing rereads the key's row and is repeated until the row is
 * stable, so a replay racing a live publisher, in this process or another,
 * only publishes the current row once more. Commits of one key record
 * nothing: a small put or delete costs what it did.
 */
import type { Catalog } from './catalog.js'
import { viewPath } from './view.js'

/** The rows one commit recorded (their `seq`s, consecutive: nothing else writes inside the transaction). */
export interface IntentRange { first: number, last: number }

export class ViewIntents {
  readonly #catalog: Catalog
  readonly #publish: (id: string) => void

  constructor (catalog: Catalog, publish: (id: string) => void) {
    this.#catalog = catalog
    this.#publish = publish
  }

  /**
   * Inside the write transaction that changes the rows of `ids`: records the
   * ones the view can show, when there are several; null when nothing was
   * recorded.
   */
  record (ids: string[]): IntentRange | null {
    if (ids.length < 2) return null
    let range: IntentRange | null = null
    for (const id of ids) {
      if (viewPath(id) === null) continue
      const seq = Number(this.#catalog.sql.recordViewIntent.run(Buffer.from(id, 'utf8')).lastInsertRowid)
      range = range === null ? { first: seq, last: seq } : { first: range.first, last: seq }
    }
    return range
  }

  /**
   * Clears what `record` wrote, once every key was published. Not flushed,
   * and a failure is ignored: a range left behind is only published again
   * by the next open or sweep.
   */
  async settle (range: IntentRange | null): Promise<void> {
    if (range === null) return
    await this.#catalog.write(() => this.#catalog.sql.settleViewIntents.run(range.first, range.last)).catch(() => {})
  }

  /**
   * Publishes every key still recorded (a crash came between a commit and
   * its publishing), then clears them. Best effort, like the view itself:
   * a failure leaves them for the next open or sweep.
   */
  async replay (): Promise<void> {
    let rows: Array<{ seq: number, id: Buffer }>
    try {
      rows = this.#catalog.sql.viewIntents.all()
      if (rows.length === 0) return
      for (const id of new Set(rows.map(row => row.id.toString('utf8')))) this.#publish(id)
    } catch {
      return
    }
    // One snapshot read them all, and later commits record higher seqs: this range holds only what was published here.
    await this.settle({ first: rows[0].seq, last: rows[rows.length - 1].seq })
  }
}
