/**
 * The lifecycle sweep benchmark (`npm run bench:sweep`): what a sweep costs
 * on a bucket of BENCH_KEYS objects (default 1,000,000) in the filesystem
 * store, beside the baseline measured in the same run: one plain walk of
 * the whole catalog in key order (store list pages of 1,000), which is
 * what reading every object once costs.
 *
 *   whole bucket, nothing due   one rule for the whole bucket whose age is
 *                               not reached: the sweep reads every object
 *                               once. Goal: within 2x of the walk.
 *   10 rules, nothing due       the same rule and nine others on prefixes
 *                               inside the bucket: still one walk (nested
 *                               prefixes are not walked again), not ten.
 *                               Goal: within 2x of the walk.
 *   1% prefix, nothing due      a rule on a prefix holding 1% of the keys:
 *                               only that key range is read. Goal: under
 *                               10% of the walk.
 *   expire 10%                  a rule expiring a prefix holding 10% of
 *                               the keys: deletions in batches of 1,000
 *                               through the store's delete; objects/s.
 *   transition 1%               a rule moving a prefix holding 1% of the
 *                               keys to InfrequentAccess (one copy commit
 *                               per object, one at a time); objects/s.
 *
 * The lifecycle rows time the lifecycle pass alone (what the rules add to a
 * sweep); one more row times a whole sweep of the bucket without rules
 * (uploads and leftovers), for scale.
 *
 * The bucket is filled by writing its catalog rows directly (bodies of one
 * byte, kept in the row, as the store keeps small bodies), 10,000 rows to a
 * transaction, keys `dirDDD.../fileNNNNNNN` with 100 per directory; the
 * fill time is reported. BENCH_KEYS should be 100 times a power of ten,
 * so that the prefixes `dir1`, `dir00`, `dir20` hold 10% and 1% of the keys.
 *
 * Environment:
 *   BENCH_KEYS   objects in the bucket (default 1000000)
 *   BENCH_DIR    where the temporary directory goes (default the OS's)
 */
import { mkdtempSync, promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { BucketEngine } from '../../src/bucket/bucket.js'
import { lifecycleRules } from '../../src/bucket/lifecycle.js'
import { sweepLifecycle } from '../../src/bucket/lifecycle-sweep.js'
import { randomHex } from '../../src/bucket/index.js'
import type { StoredObject } from '../../src/bucket/port.js'
import { Catalog } from '../../src/stores/fs/catalog.js'
import { FsStore } from '../../src/stores/fs/store.js'

const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000)
const FILL_BATCH = 10_000
const PER_DIR = 100
const DAY_S = 86_400

const dirs = Math.ceil(KEYS / PER_DIR)
const dirDigits = Math.max(1, String(dirs - 1).length)

function key (i: number): string {
  return `dir${String(Math.floor(i / PER_DIR)).padStart(dirDigits, '0')}/file${String(i).padStart(7, '0')}`
}

/** The prefix of the directories whose numbers start with `digits`: 1/10^digits.length of the keys. */
function dirPrefix (digits: string): string {
  return `dir${digits}`
}

function fmt (n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
}

function progress (line: string): void {
  process.stderr.write(`${line}\n`)
}

const uploaded = Date.UTC(2026, 0, 1)

function record (id: string): StoredObject {
  return {
    key: id,
    version: randomHex(16),
    size: 1,
    etag: '9dd4e461268c8034f5c8564e155c67a6',
    uploaded,
    storageClass: 'Standard',
    httpMetadata: {},
    customMetadata: {},
    checksums: {}
  }
}

/** Writes the rows of every object straight into the bucket's catalog, 10,000 to a transaction (bodies kept in the row); seconds. */
async function fill (dir: string): Promise<number> {
  const started = performance.now()
  // The store lays the bucket out; the rows are then written as its commits would write them.
  await (await FsStore.open(dir, { fsync: false })).close()
  const catalog = Catalog.open(path.join(dir, '.fsbucket', 'catalog.db'), false)
  try {
    for (let from = 0; from < KEYS; from += FILL_BATCH) {
      await catalog.write(() => {
        for (let i = from; i < Math.min(KEYS, from + FILL_BATCH); i++) {
          const id = key(i)
          catalog.putRow(Buffer.from(id, 'utf8'), record(id), [], Buffer.from('x'))
        }
      })
      if ((from / FILL_BATCH) % 20 === 19) progress(`  filled ${fmt(from + FILL_BATCH)} of ${fmt(KEYS)}`)
    }
  } finally {
    catalog.close()
  }
  return (performance.now() - started) / 1000
}

/** Seconds to read every object once in key order, a page of 1,000 at a time. */
async function walk (store: FsStore): Promise<{ seconds: number, objects: number }> {
  const started = performance.now()
  let objects = 0
  let after: Uint8Array | undefined
  for (;;) {
    const page = await store.list({ prefix: '', after, limit: 1000, withMetadata: false })
    objects += page.entries.length
    const last = page.entries.at(-1)
    if (!page.truncated || last === undefined || !('id' in last)) break
    after = Buffer.from(last.id, 'utf8')
  }
  return { seconds: (performance.now() - started) / 1000, objects }
}

const age = (days: number): Record<string, unknown> => ({ condition: { type: 'Age', maxAge: days * DAY_S } })

function rule (id: string, prefix: string, actions: Record<string, unknown>): Record<string, unknown> {
  return { id, enabled: true, conditions: { prefix }, ...actions }
}

async function main (): Promise<void> {
  const work = mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'fsbucket-bench-sweep-'))
  const dir = path.join(work, 'bucket')
  const rows: string[][] = []
  const row = (...cells: string[]): void => { rows.push(cells); progress(cells.join('  ')) }
  progress(`filling a bucket of ${fmt(KEYS)} objects`)
  const fillSeconds = await fill(dir)
  row(`fill ${fmt(KEYS)} objects (catalog rows, ${fmt(FILL_BATCH)} a transaction)`, `${fmt(fillSeconds, 1)} s`, `${fmt(KEYS / fillSeconds)} objects/s`, '')
  const store = await FsStore.open(dir, { fsync: false })
  const engine = new BucketEngine(store)
  try {

    const baseline = await walk(store)
    row('baseline: walk of the whole catalog (pages of 1,000)', `${fmt(baseline.seconds, 2)} s`, `${fmt(baseline.objects / baseline.seconds)} objects/s`, '')
    const now = uploaded + DAY_S * 1000 * 10
    const ratio = (seconds: number): string => `${fmt(seconds / baseline.seconds, 2)}x the walk`

    const sweep = async (name: string, rules: Array<Record<string, unknown>>, goal: (seconds: number) => string, count?: (r: Awaited<ReturnType<typeof sweepLifecycle>>) => number): Promise<void> => {
      const started = performance.now()
      const report = await sweepLifecycle(store, lifecycleRules({ rules }), now)
      const seconds = (performance.now() - started) / 1000
      const done = count?.(report)
      row(name, `${fmt(seconds, 2)} s`, done === undefined ? ratio(seconds) : `${fmt(done)} objects, ${fmt(done / seconds)} objects/s`, goal(seconds))
    }
    const within = (limit: number) => (seconds: number): string => seconds <= limit * baseline.seconds ? `ok (goal <= ${limit}x)` : `MISSED (goal <= ${limit}x)`

    const plainStarted = performance.now()
    await engine.sweep({ now })
    row('whole sweep without rules (uploads, leftovers)', `${fmt((performance.now() - plainStarted) / 1000, 2)} s`, ratio((performance.now() - plainStarted) / 1000), '')
    await sweep('lifecycle pass: whole bucket, nothing due', [rule('all', '', { deleteObjectsTransition: age(365) })], within(2))
    await sweep('lifecycle pass: 10 rules (1 whole bucket, 9 prefixes), nothing due', [
      rule('all', '', { deleteObjectsTransition: age(365) }),
      ...Array.from({ length: 9 }, (_, i) => rule(`p${i}`, dirPrefix(String(i)), { storageClassTransitions: [{ storageClass: 'InfrequentAccess', ...age(365) }] }))
    ], within(2))
    await sweep('lifecycle pass: a prefix with 1% of the keys, nothing due', [rule('one-percent', dirPrefix('00'), { deleteObjectsTransition: age(365) })], within(0.1))
    await sweep('lifecycle pass: expire a prefix with 10% of the keys', [rule('expire', dirPrefix('1'), { deleteObjectsTransition: age(1) })], () => '', r => r.expiredObjects ?? 0)
    await sweep('lifecycle pass: transition a prefix with 1% of the keys', [rule('ia', dirPrefix('20'), { storageClassTransitions: [{ storageClass: 'InfrequentAccess', ...age(1) }] })], () => '', r => r.transitionedObjects ?? 0)
  } finally {
    await engine.close()
    await fsp.rm(work, { recursive: true, force: true })
  }
  const widths = [0, 1, 2, 3].map(i => Math.max(...rows.map(r => r[i].length)))
  console.log(`\nLifecycle sweep, filesystem store, ${fmt(KEYS)} objects (Node ${process.version}, ${os.cpus().length} CPUs)\n`)
  for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd())
}

await main()
