/**
 * The outbox of the PostgreSQL catalog: the messages of event
 * notifications, in `fsbucket.outbox`, one table for every store (keyed by
 * `store_id`). A write with messages inserts them in its own transaction
 * (`insertMessages`), so a change and its messages commit together or not
 * at all; a write without messages is the single statement it always was.
 *
 * Leasing is one statement: the visible rows, oldest first, are locked
 * with SKIP LOCKED (two gateways pulling at once hand out different
 * messages) and updated with a new lease secret and visibility time. An
 * acknowledgement or retry names the row and its secret, so a stale lease
 * settles nothing.
 */
import type pg from 'pg'
import type { LeasedMessage, LeaseRef, LeaseRetry, LeaseRules, Outbox, OutboxMessage } from '../../bucket/port.js'
import type { PgCatalog } from './catalog.js'

/** Writes `messages` of store `storeId` into the outbox, on `client` (inside the change's transaction). */
export async function insertMessages (client: pg.ClientBase, storeId: string, messages: OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return
  await client.query(`INSERT INTO fsbucket.outbox (store_id, queue, id, body, created, visible_at)
    SELECT $1, m->>'queue', m->>'id', m->>'body', (m->>'created')::bigint, (m->>'created')::bigint FROM jsonb_array_elements($2::jsonb) m`,
  [storeId, JSON.stringify(messages)])
}

interface LeasedRow { seq: string, id: string, body: string, created: string, attempts: number, lease: string }

export class PgOutbox implements Outbox {
  readonly #catalog: PgCatalog
  readonly #storeId: string

  constructor (catalog: PgCatalog, storeId: string) {
    this.#catalog = catalog
    this.#storeId = storeId
  }

  async lease (queue: string, limit: number, now: number, leaseMs: number, rules: LeaseRules): Promise<LeasedMessage[]> {
    const { rows } = await this.#catalog.query<LeasedRow>('leasing messages', `UPDATE fsbucket.outbox o
      SET visible_at = $4, lease = md5(random()::text || clock_timestamp()::text || o.seq::text), attempts = o.attempts + 1
      WHERE o.seq IN (SELECT seq FROM fsbucket.outbox WHERE store_id = $1 AND queue = $2 AND visible_at <= $3
        AND created <= $6 AND attempts < $7
        ORDER BY visible_at, seq LIMIT $5 FOR UPDATE SKIP LOCKED)
      RETURNING o.seq, o.id, o.body, o.created, o.attempts, o.lease`, [this.#storeId, queue, now, now + leaseMs, limit, rules.writtenBy, rules.maxDeliveries])
    return rows.map(r => ({ seq: Number(r.seq), id: r.id, body: r.body, created: Number(r.created), attempts: r.attempts, lease: r.lease }))
      .sort((a, b) => a.seq - b.seq)
  }

  async retire (queue: string, maxDeliveries: number, now: number, to: string | null): Promise<number> {
    const where = 'store_id = $1 AND queue = $2 AND visible_at <= $3 AND attempts >= $4'
    const result = to === null
      ? await this.#catalog.query('dropping spent messages', `DELETE FROM fsbucket.outbox WHERE ${where}`, [this.#storeId, queue, now, maxDeliveries])
      // A new message of the dead-letter queue: a new id (32 hex digits), its age from now.
      : await this.#catalog.query('dead-lettering messages', `UPDATE fsbucket.outbox SET queue = $5, id = md5(random()::text || clock_timestamp()::text || seq::text),
        created = $3, attempts = 0, lease = NULL, visible_at = $3 WHERE ${where}`,
        [this.#storeId, queue, now, maxDeliveries, to])
    return result.rowCount ?? 0
  }

  async settle (queue: string, acks: LeaseRef[], retries: LeaseRetry[]): Promise<{ acked: number, retried: number }> {
    let acked = 0
    let retried = 0
    if (acks.length > 0) {
      const result = await this.#catalog.query('acknowledging messages', `DELETE FROM fsbucket.outbox o USING unnest($3::bigint[], $4::text[]) AS a(seq, lease)
        WHERE o.store_id = $1 AND o.queue = $2 AND o.seq = a.seq AND o.lease = a.lease`,
      [this.#storeId, queue, acks.map(a => a.seq), acks.map(a => a.lease)])
      acked = result.rowCount ?? 0
    }
    if (retries.length > 0) {
      // `back`: 1 for a retry whose delivery counts for nothing (LeaseRetry.uncounted), its attempt taken back.
      const result = await this.#catalog.query('retrying messages', `UPDATE fsbucket.outbox o SET visible_at = r.at, lease = NULL, attempts = GREATEST(o.attempts - r.back, 0)
        FROM unnest($3::bigint[], $4::text[], $5::bigint[], $6::int[]) AS r(seq, lease, at, back)
        WHERE o.store_id = $1 AND o.queue = $2 AND o.seq = r.seq AND o.lease = r.lease`,
      [this.#storeId, queue, retries.map(r => r.seq), retries.map(r => r.lease), retries.map(r => r.visibleAt), retries.map(r => r.uncounted === true ? 1 : 0)])
      retried = result.rowCount ?? 0
    }
    return { acked, retried }
  }

  async backlog (queue: string): Promise<number> {
    const { rows } = await this.#catalog.query<{ n: number }>('counting messages',
      'SELECT count(*)::int AS n FROM fsbucket.outbox WHERE store_id = $1 AND queue = $2', [this.#storeId, queue])
    return rows[0].n
  }

  async queues (): Promise<string[]> {
    const { rows } = await this.#catalog.query<{ queue: string }>('listing the queues of messages',
      'SELECT DISTINCT queue FROM fsbucket.outbox WHERE store_id = $1', [this.#storeId])
    return rows.map(row => row.queue)
  }

  async drop (queue: string, before = Number.MAX_SAFE_INTEGER): Promise<number> {
    const result = await this.#catalog.query('dropping messages',
      'DELETE FROM fsbucket.outbox WHERE store_id = $1 AND queue = $2 AND created < $3', [this.#storeId, queue, before])
    return result.rowCount ?? 0
  }
}
