/**
 * The sweeper of a PostgreSQL store: aborts uploads created before a time,
 * removes the body files in `garbage` (replaced or deleted) once they are
 * older than the grace period, and removes leftovers of interrupted writes
 * (files no row names and `garbage` does not hold) older than it too, all
 * judged before any file is removed. One sweeper at a time per store, across
 * every gateway: an advisory lock of the catalog (a gateway that dies loses
 * it), held by the engine's lifecycle pass too. Every step may be repeated.
 * The sweep of a store the registry opened also removes what deleted
 * buckets left at the top of the data directory (`DeletedBuckets`, blobs.ts).
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { SweepReport } from '../../bucket/port.js'
import { entries, removeTree, type BlobFiles } from '../fs/blobs.js'
import type { DeletedBuckets } from '../fs/deleted-buckets.js'
import type { PgCatalog } from './catalog.js'
import type { PgUploads } from './uploads.js'

export interface PgSweepRooms {
  catalog: PgCatalog
  storeId: string
  root: string
  blobs: BlobFiles
  uploads: PgUploads
  /** The data directory's deleted buckets, for a store its registry opened (swept with each bucket: blobs.ts). */
  deletedBuckets?: DeletedBuckets
}

/** Garbage rows removed per statement. */
const GARBAGE_BATCH = 500

export async function sweepPgStore (rooms: PgSweepRooms, createdBefore: number, leftoversBefore: number, underLock?: () => Promise<void>): Promise<SweepReport> {
  const { catalog, storeId } = rooms
  // Not this store's files, so not under its lock: what deleted buckets left in the shared data directory.
  const deleted = await rooms.deletedBuckets?.sweep() ?? 0
  const report: SweepReport = { abortedUploads: 0, removedLeftovers: deleted }
  const swept = await catalog.withLock('sweeping', `sweep:${storeId}`, async () => {
    // The engine's lifecycle pass: its deletions go through the store's ordinary delete.
    await underLock?.()
    // Every leftover is judged before any file is removed: removing one name
    // of a hard-linked body (an upload's part, a completed object's segment)
    // changes the ctime of every other name, which would make a leftover
    // judged later look young and survive this sweep.
    const doomed = await oldOrphans(rooms, leftoversBefore)
    for (const uploadId of await rooms.uploads.expired(createdBefore)) {
      await rooms.uploads.abort(uploadId)
      report.abortedUploads++
    }
    report.removedLeftovers += await removeGarbage(rooms, leftoversBefore)
    const removable = await stillOrphans(rooms, doomed)
    for (const file of removable) await removeTree(file)
    report.removedLeftovers += removable.length
    return true
  }, false)
  // Another gateway is sweeping this store.
  return swept === undefined ? { abortedUploads: 0, removedLeftovers: deleted, skippedBuckets: 1 } : report
}

/** Files of `garbage` recorded before `before`: unlinked, then their rows deleted. */
async function removeGarbage ({ catalog, storeId, blobs }: PgSweepRooms, before: number): Promise<number> {
  let removed = 0
  for (;;) {
    const { rows } = await catalog.query<{ seq: number, file: string }>('sweeping',
      'SELECT seq, file FROM fsbucket.garbage WHERE store_id = $1 AND since < $2 ORDER BY seq LIMIT $3', [storeId, before, GARBAGE_BATCH])
    if (rows.length === 0) return removed
    for (const { file } of rows) await blobs.removeFile(file)
    await catalog.query('sweeping', 'DELETE FROM fsbucket.garbage WHERE seq = ANY($1::bigint[])', [rows.map(r => r.seq)])
    removed += rows.length
    if (rows.length < GARBAGE_BATCH) return removed
  }
}

/** Absolute paths of the files no row names (and not waiting in `garbage`) changed before `before`. */
async function oldOrphans (rooms: PgSweepRooms, before: number): Promise<string[]> {
  const { catalog, storeId, blobs } = rooms
  const doomed: string[] = []
  const judge = async (dir: string, orphans: (names: string[]) => Promise<Set<string>>): Promise<void> => {
    const names = await entries(blobs.abs(dir))
    if (names.length === 0) return
    doomed.push(...await changedBefore(blobs.abs(dir), [...await orphans(names)], before))
  }
  await judge('tmp', async names => new Set(names))
  await judge('uploads', async names => {
    const { rows } = await catalog.query<{ upload_id: string }>('sweeping',
      'SELECT upload_id FROM fsbucket.uploads WHERE store_id = $1 AND upload_id = ANY($2::text[])', [storeId, names])
    const live = new Set(rows.map(r => r.upload_id))
    return new Set(names.filter(n => !live.has(n)))
  })
  for (const sub of await entries(blobs.abs('blobs'))) {
    await judge(`blobs/${sub}`, async names => {
      const live = await liveVersions(rooms, names)
      return new Set(names.filter(n => !live.has(versionOf(n))))
    })
  }
  // Part files whose row was replaced while a crash interrupted the cleanup.
  for (const uploadId of await entries(blobs.abs('uploads'))) {
    const dir = `uploads/${uploadId}`
    if (doomed.includes(blobs.abs(dir))) continue
    await judge(dir, async names => {
      const { rows } = await catalog.query<{ file: string }>('sweeping',
        'SELECT file FROM fsbucket.parts WHERE store_id = $1 AND upload_id = $2', [storeId, uploadId])
      const live = new Set(rows.map(r => r.file))
      return new Set(names.filter(n => !live.has(`${dir}/${n}`)))
    })
  }
  // Read after the judging: a body replaced or deleted on another gateway
  // while its directory was judged was no row's any more, and the statement
  // that replaced it put it in `garbage`, where it waits for its grace period.
  const { rows } = await catalog.query<{ file: string }>('sweeping', 'SELECT file FROM fsbucket.garbage WHERE store_id = $1', [storeId])
  const waiting = new Set(rows.map(r => blobs.abs(r.file)))
  return doomed.filter(file => !waiting.has(file))
}

/** The version a body file of blobs/ belongs to (`<version>` or `<version>.<segment>`). */
function versionOf (name: string): string {
  return name.split('.')[0]
}

/** The versions of the body files `names` that some object row names. */
async function liveVersions ({ catalog, storeId }: PgSweepRooms, names: string[]): Promise<Set<string>> {
  const versions = [...new Set(names.map(versionOf))]
  const { rows } = await catalog.query<{ version: string }>('sweeping',
    'SELECT DISTINCT version FROM fsbucket.objects WHERE store_id = $1 AND version = ANY($2::text[])', [storeId, versions])
  return new Set(rows.map(r => r.version))
}

/**
 * `doomed` without the bodies a row names now: a put whose body stalled
 * past the grace period, on any gateway, may have committed since its file
 * was judged a leftover.
 */
async function stillOrphans (rooms: PgSweepRooms, doomed: string[]): Promise<string[]> {
  const bodies = `${rooms.blobs.abs('blobs')}${path.sep}`
  const names = doomed.filter(file => file.startsWith(bodies)).map(file => path.basename(file))
  if (names.length === 0) return doomed
  const live = await liveVersions(rooms, names)
  return doomed.filter(file => !file.startsWith(bodies) || !live.has(versionOf(path.basename(file))))
}

/** The entries `names` of `dir` changed before `before` (by ctime), as absolute paths. */
async function changedBefore (dir: string, names: string[], before: number): Promise<string[]> {
  const found: string[] = []
  for (const name of names) {
    const file = path.join(dir, name)
    const stat = await fsp.stat(file).catch(() => null)
    if (stat !== null && stat.ctimeMs < before) found.push(file)
  }
  return found
}
