/**
 * The library benchmark (`npm run bench`): the bucket binding over a
 * directory, measured against what the same machine does without it, in the
 * same run. It prints one table; every row names its baseline and, where the
 * project has one, its goal.
 *
 *   1 KiB objects    put (fsync on and off), get, head, in ops/s with one call
 *                    in flight; baselines: open+write+fsync+close, the same
 *                    without fsync, readFile, stat of 1 KiB files.
 *   64 MiB object    put from a file stream, in MB/s, beside the real
 *                    `md5sum` of the same file (put must hash the bytes too)
 *                    and a copy + fsync of it (the disk's share of a durable put);
 *                    get into a discarding sink beside a plain read stream of
 *                    the same bytes. Goals: both at 70% of their baseline.
 *   list             pages of 1,000 from buckets of BENCH_KEYS/10 and
 *                    BENCH_KEYS keys shaped `dirDDDD/fileNNNNNN.txt` (100 per
 *                    directory): from a random key, under a random prefix
 *                    that holds 10,000 keys, and with delimiter "/" (a page
 *                    of 1,000 directory prefixes); median of 50 pages.
 *                    Baseline: readdir + stat of a directory of 1,000 files.
 *                    Goal: under 20 ms from 1,000,000 keys. Buckets are
 *                    filled with fsync off, 32 puts in flight, in random
 *                    order; the fill time is reported.
 *   streaming RSS    peak RSS of a process putting, then of one getting, a
 *                    generated 1 GiB stream; baseline: a process piping the
 *                    same bytes to and from a plain file. Goal: < 150 MiB.
 *   multipart        completing an upload of 1 GiB in 10 parts; baseline:
 *                    concatenating the same part files with fs. Goal: < 2 s.
 *   scale            the bucket of BENCH_KEYS keys (scale.ts): the catalog's
 *                    size on disk, the time to open it (beside an empty
 *                    bucket), list pages from a fresh handle.
 *   pg               the PostgreSQL column (postgres.ts): small durable puts,
 *                    gets and heads and list pages with the catalog in a
 *                    throwaway PostgreSQL beside SQLite, and two HTTP
 *                    gateways sharing it beside one.
 *
 * Rounds of a measurement and of its baseline alternate, and the median is
 * kept, so load from other processes falls on both; the footer says how much
 * CPU other processes took during each section.
 *
 * Environment:
 *   BENCH_KEYS      keys of the larger list bucket (default 1000000)
 *   BENCH_STREAM    bytes of the streaming and multipart runs (default 1 GiB)
 *   BENCH_SECONDS   length of one round of a 1 KiB measurement (default 1)
 *   BENCH_ONLY      sections to run, comma-separated: small,large,list,scale,rss,multipart,pg
 *   PG_SQLITE_KEYS  keys of the SQLite bucket the PostgreSQL list pages are set beside (default BENCH_KEYS)
 *   BENCH_DIR       where the temporary directory goes (default the OS's)
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, mkdtempSync, promises as fsp, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { bodyStream, openBucket, type Bucket, type BucketObjectBody, type BucketUploadedPart } from '../../src/index.js'
import { discardingSink, generatedBytes, GiB, KiB, MiB } from './generated-bytes.js'
import { postgresColumn } from './postgres.js'
import { median } from './ratio.js'
import { catalogScale } from './scale.js'

const MB = 1e6

function envNumber (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw.replace(/_/g, ''))
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got ${raw})`)
  return n
}

const KEYS = Math.round(envNumber('BENCH_KEYS', 1_000_000))
const STREAM_BYTES = Math.round(envNumber('BENCH_STREAM', GiB))
const ROUND_SECONDS = envNumber('BENCH_SECONDS', 1)
const SECTIONS = new Set((process.env.BENCH_ONLY ?? 'small,large,list,scale,rss,multipart,pg').split(',').map(s => s.trim()))
const LARGE_BYTES = 64 * MiB
const SMALL_BYTES = KiB
const ROUNDS = 3
const LIST_PAGES = 50
const LIST_WARMUP = 5
const FILL_IN_FLIGHT = 32
const KEYS_PER_DIR = 100

// ---------------------------------------------------------------- the table

interface Row {
  what: string
  value: string
  baseline: string
  /** value / baseline, oriented so that 1.0 means "as good as the baseline". */
  ratio: string
  goal: string
  met: string
}

const rows: Row[] = []
const notes: string[] = []

function row (what: string, value: string, baseline = '', ratio = '', goal = '', met = ''): void {
  rows.push({ what, value, baseline, ratio, goal, met })
}

function printTable (): void {
  const header: Row = { what: 'measurement', value: 'fsbucket', baseline: 'baseline (same run)', ratio: 'ratio', goal: 'goal', met: 'met' }
  const columns = Object.keys(header) as Array<keyof Row>
  const widths = columns.map(c => Math.max(...[header, ...rows].map(r => r[c].length)))
  const line = (r: Row): string => columns.map((c, i) => (c === 'value' || c === 'ratio' ? r[c].padStart(widths[i]) : r[c].padEnd(widths[i]))).join(' | ').trimEnd()
  const lines = [line(header), widths.map(w => '-'.repeat(w)).join('-|-'), ...rows.map(line)]
  process.stdout.write(`\n${lines.join('\n')}\n\n${notes.join('\n')}\n`)
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const verdict = (ok: boolean): string => ok ? 'yes' : 'NO'

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

function progress (message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
}

// ---------------------------------------------------------------- noise

/** CPU seconds used by the whole machine and by this process (with its reaped children), from /proc. */
function cpuSeconds (): { machine: number, own: number } {
  const tick = 100 // USER_HZ on Linux
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + cpu[7] // user nice system irq softirq steal
  const self = readFileSync('/proc/self/stat', 'utf8')
  const fields = self.slice(self.lastIndexOf(')') + 2).split(' ')
  const own = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) // utime stime cutime cstime
  return { machine: busy / tick, own: own / tick }
}

async function section (name: string, fn: () => Promise<void>): Promise<void> {
  if (!SECTIONS.has(name)) return
  progress(`${name}: start`)
  const before = cpuSeconds()
  const started = performance.now()
  await fn()
  const wall = (performance.now() - started) / 1000
  const after = cpuSeconds()
  const others = Math.max(0, (after.machine - before.machine) - (after.own - before.own)) / wall
  const own = (after.own - before.own) / wall
  notes.push(`  ${name.padEnd(9)} ${fmt(wall, 1).padStart(6)} s; CPU: this benchmark ${fmt(own, 2)} cores, other processes ${fmt(others, 2)} cores (of ${os.cpus().length})`)
  progress(`${name}: done in ${fmt(wall, 1)} s`)
}

// ---------------------------------------------------------------- timing

async function seconds (fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await fn()
  return (performance.now() - started) / 1000
}

/** Calls `op` one at a time for ROUND_SECONDS; returns calls per second. */
async function opsPerSecond (op: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  const end = started + ROUND_SECONDS * 1000
  let n = 0
  let now = started
  while (now < end) {
    await op()
    n++
    now = performance.now()
  }
  return n / ((now - started) / 1000)
}

/** Runs every measurement once per round, rounds alternating; the median of each. */
async function interleaved (measures: Record<string, () => Promise<number>>, rounds = ROUNDS): Promise<Record<string, number>> {
  const results: Record<string, number[]> = Object.fromEntries(Object.keys(measures).map(k => [k, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [name, measure] of Object.entries(measures)) results[name].push(await measure())
  }
  return Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]))
}

// ---------------------------------------------------------------- fs baselines

async function writeFileDurably (file: string, data: Buffer, fsync: boolean): Promise<void> {
  const handle = await fsp.open(file, 'w')
  try {
    await handle.writeFile(data)
    if (fsync) await handle.sync()
  } finally {
    await handle.close()
  }
}

async function fsyncFile (file: string): Promise<void> {
  const handle = await fsp.open(file, 'r+')
  try { await handle.sync() } finally { await handle.close() }
}

async function md5sum (file: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = spawn('md5sum', [file], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
    child.on('error', reject)
    child.on('close', code => code === 0 ? resolve(out.split(' ')[0]) : reject(new Error(`md5sum exited with ${String(code)}`)))
  })
}

async function readAll (object: BucketObjectBody): Promise<number> {
  let n = 0
  for await (const chunk of bodyStream(object)) n += (chunk as Buffer).byteLength
  return n
}

// ---------------------------------------------------------------- sections

async function smallObjects (work: string): Promise<void> {
  const durable = await openBucket(path.join(work, 'small-durable'))
  const fast = await openBucket(path.join(work, 'small-fast'), { fsync: false })
  const raw = path.join(work, 'small-raw')
  await fsp.mkdir(raw, { recursive: true })
  const value = randomBytes(SMALL_BYTES)
  const counters = { durable: 0, fast: 0, raw: 0, rawFast: 0 }

  // Objects and files to read: 1,000 of each, read in random order.
  const readable = 1000
  for (let i = 0; i < readable; i++) {
    await fast.put(`read/${i}`, value)
    await writeFileDurably(path.join(raw, `read-${i}`), value, false)
  }
  const pick = (): number => Math.floor(Math.random() * readable)

  const r = await interleaved({
    putDurable: async () => await opsPerSecond(async () => await durable.put(`put/${counters.durable++}`, value)),
    writeDurable: async () => await opsPerSecond(async () => { await writeFileDurably(path.join(raw, `write-${counters.raw++}`), value, true) }),
    putFast: async () => await opsPerSecond(async () => await fast.put(`put/${counters.fast++}`, value)),
    writeFast: async () => await opsPerSecond(async () => { await writeFileDurably(path.join(raw, `fast-${counters.rawFast++}`), value, false) }),
    get: async () => await opsPerSecond(async () => await readAll(await fast.get(`read/${pick()}`) as BucketObjectBody)),
    readFile: async () => await opsPerSecond(async () => await fsp.readFile(path.join(raw, `read-${pick()}`))),
    head: async () => await opsPerSecond(async () => await fast.head(`read/${pick()}`)),
    stat: async () => await opsPerSecond(async () => await fsp.stat(path.join(raw, `read-${pick()}`)))
  })
  const ops = (n: number): string => `${fmt(n)} ops/s`
  const ratio = (a: number, b: number): string => fmt(a / b, 2)
  row('put 1 KiB, fsync on', ops(r.putDurable), `open+write+fsync+close ${ops(r.writeDurable)}`, ratio(r.putDurable, r.writeDurable))
  row('put 1 KiB, fsync off', ops(r.putFast), `open+write+close ${ops(r.writeFast)}`, ratio(r.putFast, r.writeFast))
  row('get 1 KiB', ops(r.get), `readFile ${ops(r.readFile)}`, ratio(r.get, r.readFile))
  row('head 1 KiB', ops(r.head), `stat ${ops(r.stat)}`, ratio(r.head, r.stat))
  await durable.close()
  await fast.close()
}

async function largeObject (work: string): Promise<void> {
  const source = path.join(work, 'large.bin')
  await pipeline(generatedBytes(LARGE_BYTES), createWriteStream(source))
  await fsyncFile(source)
  const expected = await md5sum(source)
  const durable = await openBucket(path.join(work, 'large-durable'))
  const fast = await openBucket(path.join(work, 'large-fast'), { fsync: false })
  let n = 0

  const put = async (bucket: Bucket): Promise<number> => {
    const key = `large/${n++}`
    const t = await seconds(async () => {
      const object = await bucket.put(key, createReadStream(source))
      if (object?.etag !== expected) throw new Error(`put: etag ${String(object?.etag)}, md5sum says ${expected}`)
    })
    // A fresh key each time, so a put never pays for removing the body it replaces.
    await bucket.delete(key)
    return t
  }
  await durable.put('large', createReadStream(source))
  const r = await interleaved({
    md5sum: async () => await seconds(async () => await md5sum(source)),
    putDurable: async () => await put(durable),
    putFast: async () => await put(fast),
    // The disk's part of a durable put, without hashing or a catalog: copy the bytes to a new file and fsync it.
    copyDurable: async () => await seconds(async () => {
      const copy = path.join(work, 'large-copy.bin')
      await pipeline(createReadStream(source, { highWaterMark: 1024 * KiB }), createWriteStream(copy))
      await fsyncFile(copy)
      await fsp.rm(copy)
    }),
    read: async () => await seconds(async () => {
      const sink = discardingSink()
      await pipeline(createReadStream(source, { highWaterMark: 512 * KiB }), sink)
      if (sink.bytes !== LARGE_BYTES) throw new Error('short read')
    }),
    get: async () => await seconds(async () => {
      const object = await durable.get('large') as BucketObjectBody
      const sink = discardingSink()
      await pipeline(bodyStream(object), sink)
      if (sink.bytes !== LARGE_BYTES) throw new Error('short get')
    })
  }, 5)
  const rate = (s: number): number => LARGE_BYTES / MB / s
  const mbs = (s: number): string => `${fmt(rate(s))} MB/s`
  const md5Rate = rate(r.md5sum)
  row('put 64 MiB, fsync on', mbs(r.putDurable), `md5sum ${mbs(r.md5sum)}`, fmt(rate(r.putDurable) / md5Rate, 2),
    '>= 0.70 of md5sum', verdict(rate(r.putDurable) / md5Rate >= 0.7))
  row('  the disk: copy + fsync of the same bytes', mbs(r.putDurable), `copy+fsync ${mbs(r.copyDurable)}`, fmt(rate(r.putDurable) / rate(r.copyDurable), 2))
  row('put 64 MiB, fsync off', mbs(r.putFast), `md5sum ${mbs(r.md5sum)}`, fmt(rate(r.putFast) / md5Rate, 2),
    '>= 0.70 of md5sum', verdict(rate(r.putFast) / md5Rate >= 0.7))
  row('get 64 MiB', mbs(r.get), `read stream ${mbs(r.read)}`, fmt(rate(r.get) / rate(r.read), 2),
    '>= 0.70 of read', verdict(rate(r.get) / rate(r.read) >= 0.7))
  await durable.close()
  await fast.close()
  await fsp.rm(source)
}

// ---- list

function digitsFor (n: number): number {
  return Math.max(4, String(n - 1).length)
}

/** Key i of the list buckets: 100 files per directory, directories numbered in order. */
function listKey (i: number, dirDigits: number): string {
  const dir = Math.floor(i / KEYS_PER_DIR)
  return `dir${String(dir).padStart(dirDigits, '0')}/file${String(i).padStart(7, '0')}.txt`
}

/** A small deterministic generator, so every run fills in the same order. */
function mulberry32 (seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6D2B79F5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Puts keys [from, to) in random order with FILL_IN_FLIGHT puts in flight; returns seconds. */
async function fill (bucket: Bucket, from: number, to: number, dirDigits: number): Promise<number> {
  const order = new Uint32Array(to - from)
  for (let i = 0; i < order.length; i++) order[i] = from + i
  const random = mulberry32(from + 1)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const t = order[i]; order[i] = order[j]; order[j] = t
  }
  let next = 0
  let lastReport = performance.now()
  const started = performance.now()
  const worker = async (): Promise<void> => {
    while (next < order.length) {
      const i = order[next++]
      await bucket.put(listKey(i, dirDigits), 'x')
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now()
        const done = next
        progress(`  filled ${fmt(from + done)} of ${fmt(to)} keys (${fmt(done / ((lastReport - started) / 1000))} puts/s)`)
      }
    }
  }
  await Promise.all(Array.from({ length: FILL_IN_FLIGHT }, worker))
  return (performance.now() - started) / 1000
}

interface PageTimes { median: number, p90: number, cpu: number, entries: number }

async function timePages (bucket: Bucket, options: () => Record<string, unknown>): Promise<PageTimes> {
  const times: number[] = []
  const cpu: number[] = []
  let entries = 0
  for (let i = 0; i < LIST_WARMUP + LIST_PAGES; i++) {
    const opts = { limit: 1000, ...options() }
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    const page = await bucket.list(opts)
    const ms = performance.now() - started
    const cpuUsed = process.cpuUsage(cpuBefore)
    if (i < LIST_WARMUP) continue
    times.push(ms)
    cpu.push((cpuUsed.user + cpuUsed.system) / 1000)
    entries += page.objects.length + page.delimitedPrefixes.length
  }
  return { median: median(times), p90: percentile(times, 0.9), cpu: median(cpu), entries: entries / LIST_PAGES }
}

async function listPages (work: string): Promise<void> {
  // Baseline: what one page of a plain directory costs (names, then sizes).
  const dir = path.join(work, 'list-raw')
  await fsp.mkdir(dir, { recursive: true })
  for (let i = 0; i < 1000; i++) await writeFileDurably(path.join(dir, `file${String(i).padStart(7, '0')}.txt`), Buffer.from('x'), false)
  const readdirStat = async (): Promise<number> => await seconds(async () => {
    const names = await fsp.readdir(dir)
    for (const name of names) await fsp.stat(path.join(dir, name))
  }) * 1000
  const baselines: number[] = []
  for (let i = 0; i < LIST_PAGES; i++) baselines.push(await readdirStat())
  const baseline = median(baselines)
  await fsp.rm(dir, { recursive: true })

  const sizes = [Math.max(KEYS_PER_DIR * 10, Math.round(KEYS / 10)), KEYS]
  const dirDigits = digitsFor(Math.ceil(KEYS / KEYS_PER_DIR))
  const bucket = await openBucket(path.join(work, 'list'), { fsync: false })
  let filled = 0
  let fillSeconds = 0
  for (const size of sizes) {
    progress(`list: filling to ${fmt(size)} keys`)
    fillSeconds += await fill(bucket, filled, size, dirDigits)
    filled = size
    const dirs = Math.ceil(size / KEYS_PER_DIR)
    const random = mulberry32(size)
    const randomInt = (n: number): number => Math.floor(random() * n)
    const dirName = (d: number): string => `dir${String(d).padStart(dirDigits, '0')}`
    // Prefixes of all but the last two digits of a directory: 100 directories, 10,000 keys.
    const groups = Math.ceil(dirs / 100)
    const groupPrefix = (g: number): string => `dir${String(g).padStart(dirDigits - 2, '0')}`

    const plain = await timePages(bucket, () => ({ startAfter: listKey(randomInt(Math.max(1, size - 1000)), dirDigits) }))
    const prefixed = await timePages(bucket, () => ({ prefix: groupPrefix(randomInt(groups)) }))
    const delimited = await timePages(bucket, () => ({ delimiter: '/', startAfter: `${dirName(randomInt(Math.max(1, dirs - 1000)))}/` }))

    const goal = size >= 1_000_000 ? '< 20 ms median' : ''
    const met = (ms: number): string => goal === '' ? '' : verdict(ms < 20)
    const ms = (t: PageTimes): string => `${fmt(t.median, 1)} ms (p90 ${fmt(t.p90, 1)}, CPU ${fmt(t.cpu, 1)})`
    const vs = `readdir+stat 1,000 files ${fmt(baseline, 1)} ms`
    const short = (t: PageTimes): string => t.entries < 999 ? `, ${fmt(t.entries)} entries/page` : ''
    const n = fmt(size)
    row(`list 1,000 of ${n} keys${short(plain)}`, ms(plain), vs, fmt(baseline / plain.median, 2), goal, met(plain.median))
    row(`list 1,000 of ${n}, prefix (10,000 keys)${short(prefixed)}`, ms(prefixed), vs, fmt(baseline / prefixed.median, 2), goal, met(prefixed.median))
    row(`list 1,000 of ${n}, delimiter "/"${short(delimited)}`, ms(delimited), vs, fmt(baseline / delimited.median, 2), goal, met(delimited.median))
    row(`fill to ${n} keys (fsync off, ${FILL_IN_FLIGHT} in flight)`, `${fmt(fillSeconds, 1)} s`, `${fmt(size / fillSeconds)} puts/s`)
  }
  await bucket.close()
  // The million body files go with the working directory, after the table is printed.
}

// ---- streaming memory

interface StreamRun { maxRssBytes: number, sampledPeakBytes: number, seconds: number, bytes: number }

async function streamInChild (mode: string, target: string): Promise<StreamRun> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stream-rss.js')
  return await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, mode, target, String(STREAM_BYTES)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
    child.on('error', reject)
    child.on('close', code => {
      if (code !== 0) { reject(new Error(`stream-rss ${mode} exited with ${String(code)}`)); return }
      const run = JSON.parse(out) as StreamRun
      if (run.bytes !== STREAM_BYTES) { reject(new Error(`stream-rss ${mode} moved ${run.bytes} bytes`)); return }
      resolve(run)
    })
  })
}

async function streamingMemory (work: string): Promise<void> {
  const bucketDir = path.join(work, 'stream-bucket')
  const file = path.join(work, 'stream.bin')
  const write = await streamInChild('fs-write', file)
  const put = await streamInChild('bucket-put', bucketDir)
  const read = await streamInChild('fs-read', file)
  const get = await streamInChild('bucket-get', bucketDir)
  const size = STREAM_BYTES >= GiB ? `${fmt(STREAM_BYTES / GiB, 0)} GiB` : `${fmt(STREAM_BYTES / MiB)} MiB`
  const mib = (run: StreamRun): string => `${fmt(run.maxRssBytes / MiB)} MiB`
  const speed = (run: StreamRun): string => `${fmt(STREAM_BYTES / MB / run.seconds)} MB/s`
  row(`peak RSS, put ${size} stream (${speed(put)})`, mib(put), `write file ${mib(write)} (${speed(write)})`,
    fmt(write.maxRssBytes / put.maxRssBytes, 2), '< 150 MiB', verdict(put.maxRssBytes < 150 * MiB))
  row(`peak RSS, get ${size} stream (${speed(get)})`, mib(get), `read file ${mib(read)} (${speed(read)})`,
    fmt(read.maxRssBytes / get.maxRssBytes, 2), '< 150 MiB', verdict(get.maxRssBytes < 150 * MiB))
  await fsp.rm(bucketDir, { recursive: true })
  await fsp.rm(file)
}

// ---- multipart

async function multipart (work: string): Promise<void> {
  const partCount = 10
  const partBytes = Math.ceil(STREAM_BYTES / partCount)
  const sizes = Array.from({ length: partCount }, (_, i) => i < partCount - 1 ? partBytes : STREAM_BYTES - partBytes * (partCount - 1))
  const raw = path.join(work, 'parts')
  await fsp.mkdir(raw, { recursive: true })
  const partFile = (n: number): string => path.join(raw, `part${n}`)

  // The parts as plain files first: their writing is the baseline of the whole upload.
  const writeParts = await seconds(async () => {
    for (let i = 0; i < partCount; i++) {
      await pipeline(generatedBytes(sizes[i]), createWriteStream(partFile(i + 1)))
      await fsyncFile(partFile(i + 1))
    }
  })

  const bucket = await openBucket(path.join(work, 'multipart'), { minPartSize: Math.min(5 * MiB, partBytes) })
  const uploaded: BucketUploadedPart[] = []
  let complete = 0
  const total = await seconds(async () => {
    const upload = await bucket.createMultipartUpload('multipart')
    for (let i = 0; i < partCount; i++) uploaded.push(await upload.uploadPart(i + 1, createReadStream(partFile(i + 1))))
    complete = await seconds(async () => {
      const object = await upload.complete(uploaded)
      if (object.size !== STREAM_BYTES || !object.etag.endsWith(`-${partCount}`)) throw new Error(`complete: unexpected object ${object.size} ${object.etag}`)
    })
  })

  // Baseline of complete: what joining the parts costs when bytes are copied.
  const joined = path.join(raw, 'joined')
  const concatenate = await seconds(async () => {
    const out = await fsp.open(joined, 'w')
    try {
      for (let i = 0; i < partCount; i++) {
        for await (const chunk of createReadStream(partFile(i + 1), { highWaterMark: MiB })) await out.write(chunk as Buffer)
      }
      await out.sync()
    } finally {
      await out.close()
    }
  })
  const size = STREAM_BYTES >= GiB ? `${fmt(STREAM_BYTES / GiB, 0)} GiB` : `${fmt(STREAM_BYTES / MiB)} MiB`
  row(`complete ${size} multipart, ${partCount} parts`, `${fmt(complete, 3)} s`, `concatenate parts ${fmt(concatenate, 2)} s`,
    fmt(concatenate / complete, 1), '< 2 s', verdict(complete < 2))
  row(`  whole upload (create, ${partCount} uploadPart, complete)`, `${fmt(total, 2)} s`, `write parts as files ${fmt(writeParts, 2)} s`,
    fmt(writeParts / total, 2))
  await bucket.close()
  await fsp.rm(path.join(work, 'multipart'), { recursive: true })
  await fsp.rm(raw, { recursive: true })
}

// ---------------------------------------------------------------- main

/** `rm -rf`: Node's recursive rm of a million files takes minutes and gigabytes of memory. */
async function removeTree (dir: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('rm', ['-rf', dir], { stdio: 'inherit' })
    child.on('error', reject)
    child.on('close', code => code === 0 ? resolve() : reject(new Error(`rm -rf ${dir} exited with ${String(code)}`)))
  })
}

const work = mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'fsbucket-bench-'))
const load = (): string => os.loadavg().map(l => fmt(l, 2)).join(' ')
const loadBefore = load()
try {
  progress(`working in ${work}; list buckets of ${fmt(KEYS / 10)} and ${fmt(KEYS)} keys; streams of ${fmt(STREAM_BYTES)} bytes`)
  await section('small', async () => await smallObjects(work))
  await section('large', async () => await largeObject(work))
  await section('rss', async () => await streamingMemory(work))
  await section('multipart', async () => await multipart(work))
  await section('list', async () => await listPages(work))
  await section('scale', async () => await catalogScale(work, KEYS, { row, progress, fmt, verdict, listKey, digitsFor, fill, timePages, mulberry32 }))
  await section('pg', async () => await postgresColumn(work, {
    row, progress, fmt, verdict, opsPerSecond, interleaved, roundSeconds: ROUND_SECONDS, keys: KEYS, listKey, digitsFor, fill, timePages, mulberry32
  }))
} catch (err) {
  await removeTree(work)
  throw err
}
notes.unshift(
  `fsbucket library benchmark: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${os.platform()} ${os.release()}`,
  `ratio: fsbucket's rate over the baseline's (for times and memory: the baseline's over fsbucket's); 1.00 = as fast or as small as the baseline.`,
  `1 KiB rows: one call in flight, median of ${ROUNDS} rounds of ${ROUND_SECONDS} s alternating with the baseline; 64 MiB rows: median of 5;`,
  `list: median wall time of ${LIST_PAGES} pages, p90, and the median CPU time of a page (which other processes' load does not inflate).`,
  `load average (1/5/15 min) ${loadBefore} before, ${load()} after; time and CPU by section:`
)
printTable()
progress(`removing ${work}`)
await removeTree(work)
