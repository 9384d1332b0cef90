/**
 * The scale rows of `npm run bench` (section `scale`): what a bucket of
 * BENCH_KEYS objects (the list section's, filled here when that section did
 * not run) costs beyond its objects. The catalog's size on disk (its
 * database and WAL files, and the body files beside it: none for bodies
 * kept in rows), the time to open the bucket and answer a first read
 * (median of 5, each in a fresh handle, beside the same for an empty
 * bucket), and list pages from the fresh handle. The goal: nothing but the
 * disk grows with the number of objects.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { openBucket } from '../../src/index.js'
import type { BenchTools } from './postgres.js'
import { median } from './ratio.js'

type ScaleTools = Pick<BenchTools, 'row' | 'progress' | 'fmt' | 'verdict' | 'listKey' | 'digitsFor' | 'fill' | 'timePages' | 'mulberry32'>

const KEYS_PER_DIR = 100
const OPENS = 5

async function bytesOf (file: string): Promise<number> {
  return (await fsp.stat(file).catch(() => null))?.size ?? 0
}

/** Files under `dir`, recursively (0 when it is missing). */
async function filesUnder (dir: string): Promise<number> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter(e => e.isFile()).length
}

/** Opens the bucket in `dir`, reads one key and lists one page; milliseconds. */
async function openAndRead (dir: string, key: string): Promise<number> {
  const started = performance.now()
  const bucket = await openBucket(dir, { fsync: false })
  await bucket.head(key)
  await bucket.list({ limit: 1000 })
  const ms = performance.now() - started
  await bucket.close()
  return ms
}


export async function catalogScale (work: string, keys: number, tools: ScaleTools): Promise<void> {
  const { row, progress, fmt, verdict, listKey, digitsFor, fill, timePages, mulberry32 } = tools
  const dirDigits = digitsFor(Math.ceil(keys / KEYS_PER_DIR))
  const dir = path.join(work, 'list')
  const internal = path.join(dir, '.fsbucket')
  if (await bytesOf(path.join(internal, 'catalog.db')) === 0) {
    progress(`scale: filling a bucket of ${fmt(keys)} keys`)
    const bucket = await openBucket(dir, { fsync: false })
    await fill(bucket, 0, keys, dirDigits)
    await bucket.close()
  }
  const empty = path.join(work, 'scale-empty')
  await (await openBucket(empty, { fsync: false })).close()

  const catalogBytes = await bytesOf(path.join(internal, 'catalog.db')) + await bytesOf(path.join(internal, 'catalog.db-wal'))
  const bodyFiles = await filesUnder(path.join(internal, 'blobs'))
  row(`catalog of ${fmt(keys)} keys on disk (1-byte bodies)`, `${fmt(catalogBytes / 1024 / 1024, 1)} MiB`, `${fmt(catalogBytes / keys)} bytes per object, ${fmt(bodyFiles)} body files`)

  const random = mulberry32(keys + 7)
  const opened: number[] = []
  const openedEmpty: number[] = []
  for (let i = 0; i < OPENS; i++) {
    opened.push(await openAndRead(dir, listKey(Math.floor(random() * keys), dirDigits)))
    openedEmpty.push(await openAndRead(empty, 'missing'))
  }
  const ms = median(opened)
  const baseline = median(openedEmpty)
  row(`open a bucket of ${fmt(keys)} keys, head + list 1,000`, `${fmt(ms, 1)} ms`, `empty bucket ${fmt(baseline, 1)} ms`, fmt(baseline / ms, 2), '< 2x the empty bucket', verdict(ms < 2 * baseline))

  const bucket = await openBucket(dir, { fsync: false })
  try {
    const pages = await timePages(bucket, () => ({ startAfter: listKey(Math.floor(random() * Math.max(1, keys - 1000)), dirDigits) }))
    row(`list 1,000 of ${fmt(keys)} keys, fresh handle`, `${fmt(pages.median, 1)} ms (p90 ${fmt(pages.p90, 1)})`, '', '', '< 20 ms median', verdict(pages.median < 20))
  } finally {
    await bucket.close()
  }
}
