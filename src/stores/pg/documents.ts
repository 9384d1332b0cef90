/**
 * The documents of a state area (the management API's zones, records,
 * invites, tokens) as rows of the catalog's `documents` table: a read sees
 * a whole document, and a transaction is one catalog transaction holding
 * the area's advisory lock, so a change spanning documents is applied whole
 * or not at all, and every gateway sees it on its next read. A row that
 * is not JSON (edited by hand) is StateDamaged naming it, its text unquoted
 * (a document may hold secrets).
 */
import type pg from 'pg'
import type { DocumentTransaction, StateDocuments } from '../../bucket/port.js'
import { DocumentChanges, parseDocument } from '../document-changes.js'
import type { PgCatalog } from './catalog.js'

export class PgDocuments implements StateDocuments {
  readonly #catalog: PgCatalog
  readonly #area: string

  constructor (catalog: PgCatalog, area: string) {
    this.#catalog = catalog
    this.#area = area
  }

  async read<T> (name: string, fallback: T): Promise<T> {
    const { rows } = await this.#catalog.query<{ value: string }>('reading state', 'SELECT value FROM fsbucket.documents WHERE area = $1 AND name = $2', [this.#area, name])
    return rows.length === 0 ? fallback : parseDocument<T>(rows[0].value, this.where(name), true, `reading ${name}`)
  }

  /** The row's version (`xmin`, the transaction that wrote it, with its place `ctid`): every upsert writes a new one; the value is not sent. */
  async version (name: string): Promise<string | null> {
    const { rows } = await this.#catalog.query<{ version: string }>('reading state', 'SELECT xmin::text || \':\' || ctid::text AS version FROM fsbucket.documents WHERE area = $1 AND name = $2', [this.#area, name])
    return rows.length === 0 ? null : rows[0].version
  }

  /** The document's row, as a settings row is named (`the settings of bucket b in the catalog`). */
  where (name: string): string {
    return `the document ${name} of state area ${this.#area} in the catalog`
  }

  async transaction<R> (change: (tx: DocumentTransaction) => Promise<R>): Promise<R> {
    return await this.#catalog.transaction('changing state', async client => {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`fsbucket:state:${this.#area}`])
      const tx = new PgTransaction(client, this.#area, name => this.where(name))
      const result = await change(tx)
      await tx.commit()
      return result
    })
  }
}

/** The documents one change has read; `commit` writes those that changed and deletes those removed. */
class PgTransaction implements DocumentTransaction {
  readonly #client: pg.ClientBase
  readonly #area: string
  readonly #changes = new DocumentChanges()

  readonly #where: (name: string) => string

  constructor (client: pg.ClientBase, area: string, where: (name: string) => string) {
    this.#client = client
    this.#area = area
    this.#where = where
  }

  async load<T> (name: string, fallback: T): Promise<T> {
    return await this.#changes.load(name, fallback, async () => {
      const { rows } = await this.#client.query<{ value: string }>('SELECT value FROM fsbucket.documents WHERE area = $1 AND name = $2', [this.#area, name])
      return rows.length === 0 ? undefined : parseDocument<T>(rows[0].value, this.#where(name), true, `reading ${name}`)
    })
  }

  remove (name: string): void {
    this.#changes.remove(name)
  }

  async commit (): Promise<void> {
    for (const [name, value] of this.#changes.changed()) {
      await this.#client.query(`INSERT INTO fsbucket.documents (area, name, value) VALUES ($1, $2, $3)
        ON CONFLICT (area, name) DO UPDATE SET value = excluded.value`, [this.#area, name, JSON.stringify(value)])
    }
    for (const name of this.#changes.removed()) {
      await this.#client.query('DELETE FROM fsbucket.documents WHERE area = $1 AND name = $2', [this.#area, name])
    }
  }
}
