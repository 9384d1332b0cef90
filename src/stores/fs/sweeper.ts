/**
 * The sweeper of a bucket's filesystem store: aborts uploads created before
 * a time, and removes leftovers of interrupted writes (files no catalog row
 * names) once they are older than a grace period. One sweeper at a time per
 * bucket, across processes (proper-lockfile); every step may be repeated.
 *
 * Leftovers include the readable view's temporary files
 * (`.<process tag><counter>.view`, view.ts), which a crash between their
 * creation and their rename leaves beside the key's place: the whole view
 * is walked for them (never through
 * a symbolic link, never into `.fsbucket`), and only regular files of
 * exactly that name, older than the grace period by ctime (linking a body
 * under a temporary name sets it), are removed.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import type { SweepReport } from '../../bucket/port.js'
import { entries, removeTree, type BlobFiles } from './blobs.js'
import type { Catalog } from './catalog.js'
import type { Uploads } from './uploads.js'

export interface SweepRooms {
  root: string
  catalog: Catalog
  blobs: BlobFiles
  uploads: Uploads
}

export async function sweepStore (rooms: SweepRooms, createdBefore: number, leftoversBefore: number): Promise<SweepReport> {
  const { root, catalog, blobs, uploads } = rooms
  const sql = catalog.sql
  const report: SweepReport = { abortedUploads: 0, removedLeftovers: 0 }
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(root, {
      lockfilePath: path.join(root, 'sweep.lock'),
      realpath: false,
      stale: 60_000,
      // Every step of a sweep may be repeated, so losing the lock is harmless; the default would throw in a timer.
      onCompromised: () => {}
    })
  } catch {
    return report // another process is sweeping this bucket
  }
  try {
    for (const { upload_id: uploadId } of sql.expiredUploads.all(createdBefore)) {
      await uploads.abort(uploadId)
      report.abortedUploads++
    }
    // Every leftover is judged before any is removed: removing one name of a
    // hard-linked body (an upload's part, a completed object's segment)
    // changes the ctime of every other name, which would make a leftover
    // judged later look young and survive this sweep.
    const doomed: string[] = []
    const judge = async (dir: string, orphan: (name: string) => boolean): Promise<void> => {
      doomed.push(...await oldOrphans(blobs.abs(dir), leftoversBefore, orphan))
    }
    await judge('tmp', () => true)
    await judge('uploads', name => sql.upload.get(name) === undefined)
    for (const sub of await entries(blobs.abs('blobs'))) {
      await judge(`blobs/${sub}`, name => sql.versionExists.get(name.split('.')[0]) === undefined)
    }
    // Parts whose row was replaced while a crash interrupted the cleanup.
    for (const uploadId of await entries(blobs.abs('uploads'))) {
      if (doomed.includes(blobs.abs(`uploads/${uploadId}`))) continue
      const files = new Set(sql.parts.all(uploadId).map(p => p.file))
      await judge(`uploads/${uploadId}`, name => !files.has(`uploads/${uploadId}/${name}`))
    }
    doomed.push(...await oldViewTemporaries(path.dirname(root), leftoversBefore))
    for (const file of doomed) await removeTree(file)
    report.removedLeftovers += doomed.length
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

/** A temporary name of the readable view (view.ts): a dot, a 12-hex-digit process tag, a base-36 counter, `.view` (16 hex digits before). */
const VIEW_TEMPORARY = /^\.[0-9a-f]{12}[0-9a-z]{1,13}\.view$/

/** The view's temporary files under `viewRoot` older than `before` (by ctime), as paths; one directory open at a time. */
async function oldViewTemporaries (viewRoot: string, before: number): Promise<string[]> {
  const found: string[] = []
  const pending = [viewRoot]
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const listing = await fsp.opendir(dir).catch(() => null)
    if (listing === null) continue
    for await (const entry of listing) {
      const file = path.join(dir, entry.name)
      // Dirents do not follow links: a symbolic link is neither a directory nor a file here.
      if (entry.isDirectory()) {
        if (!(dir === viewRoot && entry.name === '.fsbucket')) pending.push(file)
      } else if (entry.isFile() && VIEW_TEMPORARY.test(entry.name)) {
        const stat = await fsp.lstat(file).catch(() => null)
        if (stat !== null && stat.isFile() && stat.ctimeMs < before) found.push(file)
      }
    }
  }
  return found
}
