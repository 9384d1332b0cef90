/**
 * The outbox of a bucket's filesystem store: the messages of its event
 * notifications, kept in the catalog's `outbox` table. The store writes a
 * change's messages in the change's own transaction (Catalog.emit), so an
 * acknowledged write has its messages on disk with it; the queues read and
 * settle them here, each call one write transaction made durable like any
 * commit (a lease handed out is not forgotten by a crash: the message comes
 * back when the lease ends).
 *
 * A lease is a random secret stored in the row: an acknowledgement or a
 * retry names the row and the secret, so one that comes after the message
 * was leased again to someone else changes nothing. Reads go through the
 * index on (queue, visible_at, seq): a pull reads the rows it hands out,
 * never the whole queue.
 */
import type { LeasedMessage, LeaseRef, LeaseRetry, LeaseRules, Outbox } from '../../bucket/port.js'
import { randomHex } from '../../bucket/port.js'
import type { Catalog } from './catalog.js'
import type { Commits } from './commit.js'

export class CatalogOutbox implements Outbox {
  readonly #catalog: Catalog
  readonly #commits: Commits

  constructor (catalog: Catalog, commits: Commits) {
    this.#catalog = catalog
    this.#commits = commits
  }

  async lease (queue: string, limit: number, now: number, leaseMs: number, rules: LeaseRules): Promise<LeasedMessage[]> {
    const sql = this.#catalog.sql
    const { writtenBy, maxDeliveries } = rules
    // A look first: a pull of an empty queue (what a polling consumer mostly does) writes nothing.
    if (sql.visibleMessages.all(queue, now, writtenBy, maxDeliveries, 1).length === 0) return []
    return await this.#commits.commit(() => sql.visibleMessages.all(queue, now, writtenBy, maxDeliveries, limit).map(row => {
      const lease = randomHex(16)
      sql.leaseMessage.run(now + leaseMs, lease, row.seq)
      return { seq: row.seq, id: row.id, body: row.body, created: row.created, attempts: row.attempts + 1, lease }
    }))
  }

  async retire (queue: string, maxDeliveries: number, now: number, to: string | null): Promise<number> {
    const sql = this.#catalog.sql
    if (sql.spentMessage.get(queue, now, maxDeliveries) === undefined) return 0
    return await this.#commits.commit(() => to === null
      ? sql.dropSpent.run(queue, now, maxDeliveries).changes
      : sql.moveSpent.run(to, now, now, queue, now, maxDeliveries).changes)
  }

  async settle (queue: string, acks: LeaseRef[], retries: LeaseRetry[]): Promise<{ acked: number, retried: number }> {
    if (acks.length === 0 && retries.length === 0) return { acked: 0, retried: 0 }
    const sql = this.#catalog.sql
    return await this.#commits.commit(() => {
      let acked = 0
      let retried = 0
      for (const { seq, lease } of acks) acked += sql.ackMessage.run(seq, queue, lease).changes
      for (const { seq, lease, visibleAt, uncounted } of retries) retried += (uncounted === true ? sql.releaseMessage : sql.retryMessage).run(visibleAt, seq, queue, lease).changes
      return { acked, retried }
    })
  }

  async backlog (queue: string): Promise<number> {
    return this.#catalog.sql.backlog.get(queue) ?? 0
  }

  async queues (): Promise<string[]> {
    return this.#catalog.sql.messageQueues.all()
  }

  async drop (queue: string, before = Number.MAX_SAFE_INTEGER): Promise<number> {
    const sql = this.#catalog.sql
    const oldest = sql.oldestMessage.get(queue)
    if (oldest === null || oldest === undefined || oldest >= before) return 0
    return await this.#commits.commit(() => sql.dropMessages.run(queue, before).changes)
  }
}
