/**
 * Copies within a bucket of the PostgreSQL store: the source's body files
 * are hard-linked under the copy's version (no byte is read or written
 * again), and the copy's row commits in the transaction that holds the
 * source's row and the destination's, so the copy is of the source as it
 * is at the commit, and a source deleted meanwhile is `no-source`.
 *
 * Body files are removed only a grace period after their row is replaced
 * (the garbage table), so the files of a locked source row are there to
 * link. Links made for a copy that never commits are leftovers, which the
 * sweeper removes.
 */
import { insertMessages } from './outbox.js'
import { bucketRetired, lockRulesOf, objectLocked, putChange, retainingRule, type CopyBuilder, type CopyOptions, type CopyOutcome, type EventSink, type Precondition } from '../../bucket/port.js'
import type { BlobFiles } from '../fs/blobs.js'
import type { PgCatalog } from './catalog.js'
import { FULL_COLUMNS, LIVE_STORE_RULES, OBJECT_COLUMNS, OBJECT_UPDATE, OBJECT_VALUES, objectValues, toObject, type PgObjectRow, type Segment } from './rows.js'

export interface CopyRooms {
  catalog: PgCatalog
  storeId: string
  blobs: BlobFiles
  /** Where the copy's event goes (null without rules). */
  sink: EventSink | null
}

/** Thrown inside the transaction when another writer created the destination first: the copy judges again. */
const RACED = new Error('the destination was created meanwhile')

export async function copyPgObject (rooms: CopyRooms, fromId: string, toId: string, build: CopyBuilder, precondition: Precondition, options: CopyOptions = {}): Promise<CopyOutcome> {
  const transition = options.cause === 'transition'
  const { catalog, storeId, blobs } = rooms
  const fromBytes = Buffer.from(fromId, 'utf8')
  const toBytes = Buffer.from(toId, 'utf8')
  for (;;) {
    let linked: Segment[] = []
    try {
      return await catalog.transaction('copying an object', async client => {
        const live = await client.query<{ lock_rules: string | null }>(LIVE_STORE_RULES, [storeId])
        if (live.rowCount === 0) throw bucketRetired()
        // Both rows locked at once, in id order, so two copies in opposite directions cannot deadlock.
        const { rows } = await client.query<PgObjectRow & { id: Buffer }>(`SELECT ${FULL_COLUMNS} FROM fsbucket.objects
          WHERE store_id = $1 AND id = ANY($2::bytea[]) ORDER BY id FOR UPDATE`, [storeId, [fromBytes, toBytes]])
        const sourceRow = rows.find(row => row.id.equals(fromBytes))
        const currentRow = rows.find(row => row.id.equals(toBytes))
        if (sourceRow === undefined) return { status: 'no-source' }
        const source = toObject(sourceRow)
        const object = build(source)
        if (object === null) return { status: 'source-refused', source }
        if (!precondition(currentRow === undefined ? null : toObject(currentRow))) return { status: 'refused' }
        // The store's row (FOR SHARE) and the destination's (FOR UPDATE) are held: the judgement stands until the commit.
        if (!transition && currentRow !== undefined && retainingRule(lockRulesOf(live.rows[0].lock_rules), toId, Number(currentRow.uploaded), options.now ?? Date.now()) !== null) {
          throw objectLocked('copy', object.key)
        }
        linked = await catalog.busy(client, async progress => await blobs.linkSegments(object.version, sourceRow.segments, progress))
        const values = [storeId, toBytes, ...objectValues(object, linked)]
        if (currentRow === undefined) {
          const inserted = await client.query(`INSERT INTO fsbucket.objects (store_id, id, ${OBJECT_COLUMNS}) VALUES ($1, $2, ${OBJECT_VALUES})
            ON CONFLICT (store_id, id) DO NOTHING`, values)
          if (inserted.rowCount === 0) throw RACED
        } else {
          await client.query(`UPDATE fsbucket.objects SET ${OBJECT_UPDATE} WHERE store_id = $1 AND id = $2`, values)
          await client.query('INSERT INTO fsbucket.garbage (store_id, file, since) SELECT $1, f, $2 FROM unnest($3::text[]) f',
            [storeId, Date.now(), currentRow.segments.map(s => s[0])])
        }
        if (!transition) await insertMessages(client, storeId, rooms.sink?.(putChange(object, { key: source.key })) ?? [])
        return { status: 'copied', object }
      })
    } catch (err) {
      // Rolled back for certain: the links name nothing. (After another failure the commit may have
      // happened, so they stay; the sweeper removes them if no row names them.)
      if (err !== RACED) throw err
      await blobs.removeSegments(linked)
    }
  }
}
