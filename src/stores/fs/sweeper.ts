/**
 * The sweeper of a bucket's filesystem store: aborts uploads created before
 * a time, and removes leftovers of interrupted writes (files no catalog row
 * names) once they are older than a grace period. One sweeper at a time per
 * bucket, across processes (proper-lockfile); every step may be repeated.
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
