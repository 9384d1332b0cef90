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
import { removeTree, type BlobFiles } from './blobs.js'
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
    const sweep = async (dir: string, orphan: (name: string) => boolean): Promise<void> => {
      report.removedLeftovers += await sweepDirectory(blobs.abs(dir), leftoversBefore, orphan)
    }
    await sweep('tmp', () => true)
    await sweep('uploads', name => sql.upload.get(name) === undefined)
    for (const sub of await entries(blobs.abs('blobs'))) {
      await sweep(`blobs/${sub}`, name => sql.versionExists.get(name.split('.')[0]) === undefined)
    }
    // Parts whose row was replaced while a crash interrupted the cleanup.
    for (const uploadId of await entries(blobs.abs('uploads'))) {
      const files = new Set(sql.parts.all(uploadId).map(p => p.file))
      await sweep(`uploads/${uploadId}`, name => !files.has(`uploads/${uploadId}/${name}`))
    }
  } finally {
    await release()
  }
  return report
}

async function entries (dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    throw err
  }
}

/** Removes the entries of `dir` that are `orphan` and older than `before` (by ctime). */
async function sweepDirectory (dir: string, before: number, orphan: (name: string) => boolean): Promise<number> {
  let removed = 0
  for (const name of await entries(dir)) {
    if (!orphan(name)) continue
    const file = path.join(dir, name)
    const stat = await fsp.stat(file).catch(() => null)
    if (stat === null || stat.ctimeMs >= before) continue
    await removeTree(file)
    removed++
  }
  return removed
}
