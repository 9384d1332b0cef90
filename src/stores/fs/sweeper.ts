/**
 * The sweeper of a bucket's filesystem store: aborts uploads created before
 * a time, and removes leftovers of interrupted writes (files no catalog row
 * names) once they are older than a grace period. One sweeper at a time per
 * bucket, across processes (proper-lockfile), and the engine's lifecycle
 * pass runs under the same lock; every step may be repeated. The sweep of
 * a store its registry opened also removes what deleted buckets left at
 * the top of the data directory (`DeletedBuckets`, blobs.ts).
 *
 * Leftovers include the readable view's temporary files
 * (`.<process tag><counter>.view`, view.ts). They are made in the store's
 * `tmp/`, swept with the rest; only where `tmp/` cannot serve are they made
 * beside the key's place, and the view then touches a marker first
 * (`view-strays`). The sweeper walks the whole view only while that marker
 * is there, and until one has walked it cleanly (crashes of versions that
 * made every temporary beside its key): a sweep's cost does not grow with
 * the number of keys. A walk never follows a symbolic link or enters
 * `.fsbucket`, and removes only regular files of exactly that name, older
 * than the grace period by ctime (linking a body under a temporary name
 * sets it). The marker goes only after a walk that read everything and
 * left no temporary behind (`viewSweep`).
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { SweepReport } from '../../bucket/port.js'
import { entries, removeTree, type BlobFiles } from './blobs.js'
import type { DeletedBuckets } from './deleted-buckets.js'
import type { Catalog } from './catalog.js'
import type { Uploads } from './uploads.js'
import { VIEW_STRAYS_MARKER, VIEW_TEMPORARY } from './view.js'
import { lockFile } from './file-lock.js'

export interface SweepRooms {
  root: string
  catalog: Catalog
  blobs: BlobFiles
  uploads: Uploads
  /** The data directory's deleted buckets, for a store its registry opened (swept with each bucket: blobs.ts). */
  deletedBuckets?: DeletedBuckets
}

export async function sweepStore (rooms: SweepRooms, createdBefore: number, leftoversBefore: number, underLock?: () => Promise<void>): Promise<SweepReport> {
  const { root, catalog, blobs, uploads } = rooms
  const sql = catalog.sql
  const report: SweepReport = { abortedUploads: 0, removedLeftovers: 0 }
  // Not this bucket's files, so not under its lock: what deleted buckets left in the data directory.
  report.removedLeftovers += await rooms.deletedBuckets?.sweep() ?? 0
  let release: () => Promise<void>
  try {
    release = await lockFile(root, {
      lockfilePath: path.join(root, 'sweep.lock'),
      realpath: false,
      stale: 60_000,
      // Every step of a sweep may be repeated, so losing the lock is harmless; the default would throw in a timer.
      onCompromised: () => {}
    })
  } catch {
    // Another process is sweeping this bucket (or was, and was killed: its lock goes stale after a minute).
    report.skippedBuckets = 1
    return report
  }
  try {
    // The lifecycle pass (lifecycle-sweep.ts) deletes through the store's ordinary delete, not here.
    await underLock?.()
    for (const { upload_id: uploadId } of sql.expiredUploads.all(createdBefore)) {
      await uploads.abort(uploadId)
      report.abortedUploads++
    }
    // Every leftover is judged before any is removed: removing one name of a
    // hard-linked body (an upload's part, a completed object's segment)
    // changes the ctime of every other name, which would make a leftover
    // judged later look young and survive this sweep.
    // Each leftover is asked again whether it is an orphan just before it
    // goes: a put whose body stalled past the grace period may have
    // committed the row naming it since it was judged.
    const doomed: Array<{ file: string, orphan: () => boolean }> = []
    const judge = async (dir: string, orphan: (name: string) => boolean): Promise<void> => {
      for (const file of await oldOrphans(blobs.abs(dir), leftoversBefore, orphan)) doomed.push({ file, orphan: () => orphan(path.basename(file)) })
    }
    await judge('tmp', () => true)
    await judge('uploads', name => sql.upload.get(name) === undefined)
    for (const sub of await entries(blobs.abs('blobs'))) {
      await judge(`blobs/${sub}`, name => sql.versionExists.get(name.split('.')[0]) === undefined)
    }
    // Parts whose row was replaced while a crash interrupted the cleanup.
    for (const uploadId of await entries(blobs.abs('uploads'))) {
      if (doomed.some(d => d.file === blobs.abs(`uploads/${uploadId}`))) continue
      const files = new Set(sql.parts.all(uploadId).map(p => p.file))
      await judge(`uploads/${uploadId}`, name => !files.has(`uploads/${uploadId}/${name}`))
    }
    const view = await viewSweep(root, leftoversBefore)
    for (const file of view.old) doomed.push({ file, orphan: () => true })
    for (const { file, orphan } of doomed) {
      if (!orphan()) continue
      await removeTree(file)
      report.removedLeftovers++
    }
    // Best effort: a marker or stamp not written only means another walk.
    await view.done().catch(() => {})
  } finally {
    await release()
  }
  return report
}

/** The entries of `dir` that are `orphan` and older than `before` (by ctime), as paths. */
async function oldOrphans (dir: string, before: number, orphan: (name: string) => boolean): Promise<string[]> {
  const found: string[] = []
  for (const name of await entries(dir)) {
    if (!orphan(name)) continue
    const file = path.join(dir, name)
    const stat = await fsp.stat(file).catch(() => null)
    if (stat !== null && stat.ctimeMs < before) found.push(file)
  }
  return found
}

/** Written once the view of a store has been walked cleanly: later sweeps walk it only when a marker asks. */
const VIEW_WALKED = 'view-walked'

/**
 * The view's temporaries to remove (when a walk is due), and what to do
 * once they are gone. A sweep first claims the marker by renaming it to
 * `<marker>.walking`: a temporary made beside a key from then on makes a new
 * marker. The claimed one is removed (and the stamp written) only after a
 * clean walk: every directory read, every temporary old enough and removed.
 * Otherwise it stays, and the next sweep walks again.
 */
async function viewSweep (root: string, before: number): Promise<{ old: string[], done: () => Promise<void> }> {
  const marker = path.join(root, VIEW_STRAYS_MARKER)
  const claimed = `${marker}.walking`
  const stamp = path.join(root, VIEW_WALKED)
  await fsp.rename(marker, claimed).catch(() => {})
  const exists = async (file: string): Promise<boolean> => await fsp.lstat(file).then(() => true, () => false)
  const walked = await exists(stamp)
  if (walked && !await exists(claimed)) return { old: [], done: async () => {} }
  const { old, young, unread } = await viewTemporaries(path.dirname(root), before)
  return {
    old,
    done: async () => {
      if (young > 0 || unread > 0) return
      for (const file of old) if (await exists(file)) return
      await fsp.rm(claimed, { force: true })
      if (!walked) await fsp.writeFile(stamp, '')
    }
  }
}

/**
 * The view's temporary files under `viewRoot`: those older than `before`
 * (by ctime), as paths, how many are younger, and how many directories or
 * entries could not be read (a directory gone meanwhile is no failure); one
 * directory open at a time.
 */
async function viewTemporaries (viewRoot: string, before: number): Promise<{ old: string[], young: number, unread: number }> {
  const found: string[] = []
  let young = 0
  let unread = 0
  const failed = (err: NodeJS.ErrnoException): null => {
    if (err.code !== 'ENOENT') unread++
    return null
  }
  const pending = [viewRoot]
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const listing = await fsp.opendir(dir).catch(failed)
    if (listing === null) continue
    for await (const entry of listing) {
      const file = path.join(dir, entry.name)
      // Dirents do not follow links: a symbolic link is neither a directory nor a file here.
      if (entry.isDirectory()) {
        if (!(dir === viewRoot && entry.name === '.fsbucket')) pending.push(file)
      } else if (entry.isFile() && VIEW_TEMPORARY.test(entry.name)) {
        const stat = await fsp.lstat(file).catch(failed)
        if (stat === null || !stat.isFile()) continue
        if (stat.ctimeMs < before) found.push(file)
        else young++
      }
    }
  }
  return { old: found, young, unread }
}
