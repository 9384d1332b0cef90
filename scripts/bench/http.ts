/**
 * The HTTP benchmark (`npm run bench:http`): the gateway driven over
 * loopback, each workload beside the same workload, in the same run,
 * against nginx serving the same files statically (GET rows), against a
 * bare Fastify route that streams the file with `fs.createReadStream`, and
 * against a bare `node:http` cluster of two workers (serveBareNode): the
 * same 1 KiB from memory for the small GET and 304, one positioned read and
 * one write for a range, no routing, auth, catalog or log: the least a
 * Node server can spend on a request, so `w2 / node` is the share of
 * Node's own rate the gateway keeps.
 *
 * The small GET, 304 and small PUT rows are driven by wrk (2 threads, 50
 * connections; the PUTs by a script giving each request a new key) where
 * it is installed: autocannon, in this process, parses every answer in
 * JavaScript and takes a core the servers need. Without wrk they fall back
 * to autocannon (the table says which).
 *
 *   small GET        1 KiB object, 50 connections (req/s)
 *   small PUT        1 KiB, a new key per request, fsync on, 50 connections (req/s),
 *                    beside the raw disk doing the same durable file writes and
 *                    beside s3rver (an S3 simulator that never fsyncs) taking
 *                    the same PUTs
 *   304              GET with a matching If-None-Match, 50 connections (req/s)
 *   Range GET        1 MiB slice of a 64 MiB object, 10 connections (req/s)
 *   64 MiB GET       4 connections (MB/s)
 *   1 GiB upload     one `curl -T` (MB/s) and the server's peak RSS, beside
 *                    `md5sum` over the same file and `dd conv=fdatasync`
 *                    writing it (the raw disk, as durable as the upload)
 *   list page        GET /{bucket}?limit=1000 from a bucket of ~1,000+ keys,
 *                    10 connections (req/s)
 *   idle RSS         the largest worker's resident memory, a second after a
 *                    fresh two-worker server answered its first request,
 *                    and after 20 s without requests (V8 gives back what
 *                    start-up grew, its young generation above all, only
 *                    after some seconds of idleness)
 *   ready            milliseconds from spawning `serve` (two workers, a new
 *                    data directory) to its first HTTP answer; when
 *                    NODE_EXTRA_CA_CERTS is set, also without it (Node 20
 *                    reads and parses that file as every process starts,
 *                    before any of fsbucket's code runs: 80-90 ms of CPU
 *                    each for the system's bundle of certificates here;
 *                    Node 22 reads it when a TLS context first needs it)
 *
 * The two large-body rows use wrk too (10 connections for the ranges, 4
 * for the 64 MiB answers, after 3 and 2 s of the same load), else curl
 * (`curl -Z`, parallel transfers; the table says so): autocannon parses
 * bodies in JavaScript and caps a Node server's large responses far below
 * what the server sends (it measured ~50 MB/s where curl sees 300 MB/s),
 * and curl, a process per batch that writes every body out, kept nginx's
 * ranges at about two thirds of the rate wrk sees from it.
 *
 * fsbucket runs with one worker and with two (what `npm start` runs on two
 * cores): the goals compare the two-worker figure with nginx, s3rver and the
 * raw disk, and the one-worker figure with the bare route (the table shows
 * the one-worker ratio to the raw disk too). autocannon runs in this process, on the same cores as the servers,
 * for every column alike.
 *
 * Environment:
 *   BENCH_SECONDS   length of each autocannon run (default 5)
 *   BENCH_ROUNDS    rounds of the autocannon rows (small GET, 304, small
 *                   PUT and its raw-disk baseline), each server in turn in
 *                   every round; the table shows each cell's median (default 1)
 *   BENCH_WARMUP    seconds of the same load before each autocannon run,
 *                   not measured (default 1), for every column alike
 *   BENCH_UPLOAD    bytes of the upload file (default 1 GiB)
 *   BENCH_DIR       where the temporary directory goes (default the OS's)
 *   BENCH_ONLY      workloads to run, comma-separated names as in the table
 *                   (e.g. `small PUT,304`; default all)
 *   FSBUCKET_NODE_FLAGS  Node flags of the servers (default none, as the bin
 *                   and `npm start` run; e.g. `--max-semi-space-size=8` to
 *                   compare a young generation's size)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import cluster from 'node:cluster'
import http from 'node:http'
import { promises as fsp, createReadStream, createWriteStream, existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import autocannon from 'autocannon'
import Fastify from 'fastify'
import S3rver from 's3rver'
import { freePort, serverEnv, stop, waitForPort } from './processes.js'
import { median, ratioText } from './ratio.js'
import { putScript, wrk, wrkPath } from './wrk.js'

const run = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))
const bin = path.resolve(here, '../../../bin/fsbucket.js')
/** The server runs as `npm start` runs it (no V8 flag, as the bin's shebang). */
const serve = [...(process.env.FSBUCKET_NODE_FLAGS ?? '').split(/\s+/).filter(a => a !== ''), bin, 'serve']
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const uploadBytes = Number(process.env.BENCH_UPLOAD ?? 1024 ** 3)
const MiB = 1024 * 1024
const WORKLOADS = ['small GET', '304', 'Range GET', '64 MiB GET', 'small PUT', 'list page', '1 GiB upload', 'idle RSS', 'ready']
const only = new Set((process.env.BENCH_ONLY ?? WORKLOADS.join(',')).split(',').map(s => s.trim()))
/** Whether `workload` is one this run measures. */
const measures = (workload: string): boolean => only.has(workload)
/** Rounds of the autocannon rows, every server in turn in each; the table shows medians. */
const roundCount = Number(process.env.BENCH_ROUNDS ?? 1)
const repeatedRows = new Set(['small GET', '304', 'small PUT', 'Range GET', '64 MiB GET'])

/** Writes `bytes` of pseudo-random data (a 1 MiB random block repeated with a counter). */
async function makeFile (file: string, bytes: number): Promise<void> {
  const block = Buffer.alloc(MiB)
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24
  await pipeline(async function * () {
    for (let written = 0, n = 0; written < bytes; n++) {
      const chunk = Buffer.from(block.subarray(0, Math.min(MiB, bytes - written)))
      chunk.writeUInt32LE(n, 0)
      written += chunk.length
      yield chunk
    }
  }, createWriteStream(file))
}

/** The bare Fastify baseline: one route streaming a file with fs.createReadStream (Range honoured). */
async function serveBareFastify (port: number, dir: string): Promise<void> {
  const app = Fastify()
  app.get<{ Params: { name: string } }>('/bench/:name', async (request, reply) => {
    const file = path.join(dir, path.basename(request.params.name))
    const { size } = await fsp.stat(file)
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? '')
    if (range !== null) {
      const start = Number(range[1])
      const end = Math.min(Number(range[2]), size - 1)
      reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`).header('content-length', end - start + 1)
      return await reply.send(createReadStream(file, { start, end }))
    }
    reply.header('content-length', size)
    return await reply.send(createReadStream(file))
  })
  await app.listen({ host: '127.0.0.1', port })
}

/**
 * The bare `node:http` baseline: a cluster of two workers (as the gateway
 * runs on two cores) with the least a Node server can do for each read
 * row, so the ratios to it say what Node itself allows. `small.bin` (the
 * small GET and 304 rows): the same 1 KiB from memory, or 304 to a
 * matching If-None-Match, with the headers a static server sends.
 * `big.bin`: a range (`bytes=a-b` within 1 MiB) read with one positioned
 * read into a reused buffer and written with one call; the whole file
 * streamed in 1 MiB reads. No routing, access, catalog or log.
 */
function serveBareNode (port: number, dir: string): void {
  if (cluster.isPrimary) {
    for (let i = 0; i < 2; i++) cluster.fork()
    return
  }
  void Promise.all([fsp.readFile(path.join(dir, 'small.bin')), fsp.open(path.join(dir, 'big.bin'))]).then(async ([body, big]) => {
    const bigSize = (await big.stat()).size
    const etag = '"bench-small"'
    const lastModified = new Date().toUTCString()
    const buffers: Buffer[] = []
    http.createServer((request, response) => {
      if (request.url?.endsWith('/big.bin') === true) {
        const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? '')
        if (range === null) {
          response.writeHead(200, { etag, 'last-modified': lastModified, 'content-type': 'application/octet-stream', 'content-length': bigSize })
          big.createReadStream({ start: 0, highWaterMark: MiB, autoClose: false }).pipe(response)
          return
        }
        const start = Number(range[1])
        const end = Math.min(Number(range[2]), bigSize - 1, start + MiB - 1)
        const buffer = buffers.pop() ?? Buffer.allocUnsafeSlow(MiB)
        void big.read(buffer, 0, end - start + 1, start).then(({ bytesRead }) => {
          response.writeHead(206, { etag, 'last-modified': lastModified, 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${end}/${bigSize}`, 'content-length': bytesRead })
          response.end(buffer.subarray(0, bytesRead), () => { buffers.push(buffer) })
        })
        return
      }
      if (request.headers['if-none-match'] === etag) {
        response.writeHead(304, { etag, 'last-modified': lastModified })
        response.end()
        return
      }
      response.writeHead(200, { etag, 'last-modified': lastModified, 'content-type': 'application/octet-stream', 'content-length': body.length })
      response.end(body)
    }).listen(port, '127.0.0.1')
  })
}

/** The s3rver baseline of the small PUT row: the simulator with one bucket named `bench`, no credentials. */
async function serveS3rver (port: number, dir: string): Promise<void> {
  await new S3rver({ address: '127.0.0.1', port, directory: dir, silent: true, configureBuckets: [{ name: 'bench' }] }).run()
}

/**
 * The raw-disk baseline of the small PUT row: 1 KiB files written durably by
 * 50 concurrent writers, each the least a store of one file per object must
 * do (create, write, fdatasync, close, rename into one of 256 directories,
 * fsync that directory), with no HTTP and no index. Files per second.
 * Each run writes into a new `dir`, and its files stay until the bench
 * ends: ext4 without a journal (as on the machines this was measured on)
 * scans the inodes deleted in the last minutes whenever it creates a file,
 * so deleting thousands here slowed every row that creates files after it.
 */
let rawRuns = 0
/** Small PUT runs so far: each writes under a prefix of its own. */
let putRuns = 0

async function rawDurableWrites (dir: string, durationSeconds: number): Promise<number> {
  await fsp.mkdir(path.join(dir, 'tmp'), { recursive: true })
  for (let i = 0; i < 256; i++) await fsp.mkdir(path.join(dir, i.toString(16).padStart(2, '0')), { recursive: true })
  const body = Buffer.alloc(1024, 120)
  const until = performance.now() + durationSeconds * 1000
  let written = 0
  let n = 0
  const writeOne = async (): Promise<void> => {
    const name = `${process.pid}-${n++}`
    const tmp = path.join(dir, 'tmp', name)
    const handle = await fsp.open(tmp, 'wx')
    await handle.write(body)
    await handle.datasync()
    await handle.close()
    const sub = path.join(dir, (n % 256).toString(16).padStart(2, '0'))
    await fsp.rename(tmp, path.join(sub, name))
    const dirHandle = await fsp.open(sub, 'r')
    await dirHandle.sync()
    await dirHandle.close()
    written++
  }
  await Promise.all(Array.from({ length: 50 }, async () => { while (performance.now() < until) await writeOne() }))
  return written / durationSeconds
}

async function ensureNginx (): Promise<string | null> {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(candidate)) return candidate
  try {
    console.error('installing nginx with apt-get ...')
    await run('apt-get', ['install', '-y', '-qq', 'nginx'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
      .catch(async () => {
        await run('apt-get', ['update', '-qq'])
        await run('apt-get', ['install', '-y', '-qq', 'nginx'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
      })
    return existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : null
  } catch (err) {
    console.error(`nginx unavailable: ${(err as Error).message}`)
    return null
  }
}

async function startNginx (nginx: string, port: number, root: string, prefix: string): Promise<ChildProcess> {
  await fsp.mkdir(path.join(prefix, 'logs'), { recursive: true })
  const conf = path.join(prefix, 'nginx.conf')
  await fsp.writeFile(conf, `
worker_processes 2;
error_log ${prefix}/logs/error.log warn;
pid ${prefix}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    location / { }
  }
}
`)
  const child = spawn(nginx, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: 'inherit' })
  await waitForPort(port)
  return child
}

interface Column {
  name: string
  port: number
  /** Workloads this column takes part in. */
  does: Set<string>
}

interface Measured { value: number, unit: string, note?: string }

type Row = Record<string, Measured | null>

/** Seconds of load sent, and not measured, before each measured run: every server is measured warm (a JIT compiles its hot paths in the first second or two). */
const warmUpSeconds = Number(process.env.BENCH_WARMUP ?? 1)

async function cannon (options: Parameters<typeof autocannon>[0]): Promise<Awaited<ReturnType<typeof autocannon>>> {
  if (warmUpSeconds > 0) await autocannon({ ...options, duration: warmUpSeconds })
  const result = await autocannon({ duration: seconds, ...options })
  if (result.errors > 0 || result.timeouts > 0) console.error(`  ${options.url}: ${result.errors} errors, ${result.timeouts} timeouts`)
  return result
}

/**
 * PUTs per second of 1 KiB bodies to new keys under `base` (a URL ending
 * in the keys' prefix), 50 connections: wrk where installed, else
 * autocannon. The warm-up writes keys of its own.
 */
async function putLoad (base: string, scriptFile: string): Promise<Measured> {
  const { origin, pathname } = new URL(base)
  if (wrkPath !== null) {
    const { okRate, errors } = await wrk(origin, { connections: 50, seconds, warmUp: warmUpSeconds, script: scriptFile, args: [pathname], warmUpArgs: [`${pathname}warm-`] })
    return { value: okRate, unit: 'req/s', note: errors ?? undefined }
  }
  let n = 0
  const r = await cannon({
    url: origin,
    connections: 50,
    requests: [{ method: 'PUT', body: Buffer.alloc(1024, 120), setupRequest: request => ({ ...request, path: `${pathname}${n++}` }) }]
  })
  return { value: r.requests.average, unit: 'req/s', note: `autocannon, ${r.non2xx} non-2xx` }
}

/** The small GET and 304 rows' load: wrk where installed, else autocannon. */
async function smallLoad (url: string, headers: Record<string, string> = {}): Promise<Measured> {
  if (wrkPath !== null) {
    const { rate } = await wrk(url, { connections: 50, seconds, warmUp: warmUpSeconds, headers })
    return { value: rate, unit: 'req/s' }
  }
  const r = await cannon({ url, connections: 50, headers })
  return { value: r.requests.average, unit: 'req/s', note: 'autocannon' }
}

/** Resident memory of `pid` in MiB (0 when it is gone). */
async function rssMiB (pid: number): Promise<number> {
  const status = await fsp.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

/**
 * How a process's resident memory splits (MiB): the pages of the node
 * binary it has touched (file pages every node process on the host shares),
 * and the anonymous memory that is its own (V8's heap, malloc).
 */
async function rssParts (pid: number): Promise<{ binary: number, anonymous: number }> {
  const smaps = await fsp.readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => '')
  const binary = await fsp.realpath(process.execPath)
  let mapped = ''
  let binaryKb = 0
  for (const line of smaps.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (mapping !== null) mapped = mapping[1]
    else if (mapped === binary && line.startsWith('Rss:')) binaryKb += Number(/(\d+)/.exec(line)?.[1] ?? 0)
  }
  const rollup = await fsp.readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '')
  return { binary: binaryKb / 1024, anonymous: Number(/Anonymous:\s+(\d+)/.exec(rollup)?.[1] ?? 0) / 1024 }
}

/** Resolves once `port` answers HTTP, polling every 5 ms: the `ready` row's clock. */
async function answered (port: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer()
      return
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise(resolve => setTimeout(resolve, 5))
    }
  }
}

/**
 * `count` transfers by curl, `parallel` at a time, bodies discarded: the load
 * generator for large bodies, where autocannon's JavaScript parser, not the
 * server, would set the pace.
 */
async function curlBatch (url: string, count: number, parallel: number, extra: string[], dir: string): Promise<{ seconds: number, bytes: number }> {
  const config = path.join(dir, `curl-${process.hrtime.bigint()}.cfg`)
  await fsp.writeFile(config, `url = "${url}"\noutput = "/dev/null"\n`.repeat(count))
  const started = performance.now()
  const { stdout } = await run('curl', ['-s', '-Z', '--parallel-max', String(parallel), '-w', '%{size_download}\n', ...extra, '-K', config], { maxBuffer: 16 * MiB })
  const seconds = (performance.now() - started) / 1000
  const bytes = stdout.split('\n').filter(l => l !== '').reduce((sum, l) => sum + Number(l), 0)
  return { seconds, bytes }
}

async function peakRssDuring<T> (pids: number[], work: () => Promise<T>): Promise<{ result: T, peakMiB: number }> {
  let peak = 0
  const sample = async (): Promise<void> => {
    let total = 0
    for (const pid of pids) {
      const status = await fsp.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
      total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    }
    peak = Math.max(peak, total)
  }
  const timer = setInterval(() => { void sample() }, 50)
  try {
    const result = await work()
    await sample()
    return { result, peakMiB: peak / 1024 }
  } finally {
    clearInterval(timer)
  }
}

async function workerPids (primaryPid: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(primaryPid)]).catch(() => ({ stdout: '' }))
  const children = stdout.split('\n').map(s => Number(s.trim())).filter(n => n > 0)
  return children.length > 0 ? children : [primaryPid]
}

async function main (): Promise<void> {
  if (process.argv[2] === '--bare-fastify') {
    await serveBareFastify(Number(process.argv[3]), process.argv[4])
    return
  }
  if (process.argv[2] === '--bare-node') {
    serveBareNode(Number(process.argv[3]), process.argv[4])
    return
  }
  if (process.argv[2] === '--s3rver') {
    await serveS3rver(Number(process.argv[3]), process.argv[4])
    return
  }
  const root = await fsp.mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'fsbucket-bench-http-'))
  // nginx's workers run as an unprivileged user: they must be able to read the static files.
  await fsp.chmod(root, 0o755)
  const children: ChildProcess[] = []
  const cleanup = async (): Promise<void> => {
    for (const child of children) await stop(child).catch(() => {})
    await fsp.rm(root, { recursive: true, force: true })
  }
  process.on('SIGINT', () => { void cleanup().then(() => process.exit(130)) })
  try {
    const files = path.join(root, 'static', 'bench')
    await fsp.mkdir(files, { recursive: true, mode: 0o755 })
    console.error(`preparing files in ${root} ...`)
    await makeFile(path.join(files, 'small.bin'), 1024)
    await makeFile(path.join(files, 'big.bin'), 64 * MiB)
    const putScriptFile = path.join(root, 'put.lua')
    await fsp.writeFile(putScriptFile, putScript)
    const uploadFile = path.join(root, 'upload.bin')
    if (measures('1 GiB upload')) await makeFile(uploadFile, uploadBytes)

    // Servers: fsbucket with one and two workers (separate data directories), nginx, bare Fastify.
    const columns: Column[] = []
    const gets = ['small GET', 'Range GET', '64 MiB GET']
    for (const workers of [1, 2]) {
      const port = await freePort()
      const data = path.join(root, `data-${workers}`)
      const child = spawn(process.execPath, [...serve, '--data', data, '--port', String(port), '--workers', String(workers), '--log-level', 'warn', '--default-bucket', 'bench', '--s3-port', '0'], { stdio: 'inherit', env: serverEnv })
      children.push(child)
      await waitForPort(port)
      for (const name of ['small.bin', 'big.bin']) {
        const res = await fetch(`http://127.0.0.1:${port}/bench/${name}`, { method: 'PUT', body: await fsp.readFile(path.join(files, name)) })
        if (!res.ok) throw new Error(`seeding ${name}: ${res.status} ${await res.text()}`)
      }
      columns.push({ name: `fsbucket w${workers}`, port, does: new Set([...gets, 'small PUT', '304', '1 GiB upload', 'list page']) })
    }
    const nginx = await ensureNginx()
    if (nginx !== null) {
      const port = await freePort()
      children.push(await startNginx(nginx, port, path.join(root, 'static'), path.join(root, 'nginx')))
      columns.push({ name: 'nginx', port, does: new Set([...gets, '304']) })
    }
    {
      const port = await freePort()
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare-fastify', String(port), files], { stdio: 'inherit' })
      children.push(child)
      await waitForPort(port)
      columns.push({ name: 'bare Fastify', port, does: new Set(gets) })
    }
    {
      const port = await freePort()
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare-node', String(port), files], { stdio: 'inherit' })
      children.push(child)
      await waitForPort(port)
      columns.push({ name: 'bare node', port, does: new Set([...gets, '304']) })
    }
    {
      const port = await freePort()
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--s3rver', String(port), path.join(root, 's3rver')], { stdio: 'inherit' })
      children.push(child)
      await waitForPort(port)
      columns.push({ name: 's3rver', port, does: new Set(['small PUT']) })
    }

    const rows = new Map<string, Row>()
    /** Every round's measure of a cell; the table shows the median. */
    const rounds = new Map<string, Measured[]>()
    const record = (workload: string, column: string, measured: Measured | null): void => {
      const row = rows.get(workload) ?? {}
      const cell = `${workload}\u0000${column}`
      const taken = [...(rounds.get(cell) ?? []), ...(measured === null ? [] : [measured])]
      rounds.set(cell, taken)
      // The median of the rounds, with the unit and note of the round nearest below it.
      const value = median(taken.map(m => m.value))
      row[column] = taken.length === 0 ? null : { ...[...taken].sort((a, b) => a.value - b.value)[(taken.length - 1) >> 1], value }
      rows.set(workload, row)
      if (measured !== null) console.error(`  ${workload} / ${column}: ${measured.value.toFixed(1)} ${measured.unit}${measured.note === undefined ? '' : ` (${measured.note})`}`)
    }

    for (let round = 0; round < roundCount; round++) for (const column of columns) {
      // Later rounds repeat the rows whose figures move (the others are long and steady).
      const inRound = (workload: string): boolean => measures(workload) && (round === 0 || repeatedRows.has(workload))
      const url = (name: string): string => `http://127.0.0.1:${column.port}/bench/${name}`
      console.error(`${column.name}${roundCount > 1 ? ` (round ${round + 1} of ${roundCount})` : ''}:`)
      if (column.does.has('small GET') && inRound('small GET')) {
        const probe = await fetch(url('small.bin'))
        if (probe.status !== 200) throw new Error(`${column.name} answers ${probe.status} to GET small.bin`)
        record('small GET', column.name, await smallLoad(url('small.bin')))
      }
      if (column.does.has('304') && inRound('304')) {
        const etag = (await fetch(url('small.bin'))).headers.get('etag') ?? ''
        const probe = await fetch(url('small.bin'), { headers: { 'if-none-match': etag } })
        if (probe.status !== 304) console.error(`  ${column.name} answers ${probe.status} to a matching If-None-Match`)
        const measured = await smallLoad(url('small.bin'), { 'if-none-match': etag })
        record('304', column.name, { ...measured, note: [`answers ${probe.status}`, ...(measured.note === undefined ? [] : [measured.note])].join(', ') })
      }
      // Warm, as every row: a Node server's JIT took about 2,500 ranges here to stop compiling what a range runs (from 1,000 to 1,700 req/s).
      if (column.does.has('Range GET') && inRound('Range GET')) {
        const range = `bytes=${8 * MiB}-${9 * MiB - 1}`
        if (wrkPath !== null) {
          const measured = await wrk(url('big.bin'), { connections: 10, seconds, warmUp: 3, timeout: 30, headers: { range } })
          record('Range GET', column.name, { value: measured.rate, unit: 'req/s', ...(measured.errors === null ? {} : { note: measured.errors }) })
        } else {
          await curlBatch(url('big.bin'), 2500, 10, ['-H', `Range: ${range}`], root)
          const { seconds: taken } = await curlBatch(url('big.bin'), 400, 10, ['-H', `Range: ${range}`], root)
          record('Range GET', column.name, { value: 400 / taken, unit: 'req/s', note: 'curl' })
        }
      }
      if (column.does.has('64 MiB GET') && inRound('64 MiB GET')) {
        if (wrkPath !== null) {
          const measured = await wrk(url('big.bin'), { connections: 4, seconds, warmUp: 2, timeout: 30 })
          record('64 MiB GET', column.name, { value: measured.bytesPerSecond / MiB, unit: 'MB/s', ...(measured.errors === null ? {} : { note: measured.errors }) })
        } else {
          await curlBatch(url('big.bin'), 8, 4, [], root)
          const { seconds: taken, bytes } = await curlBatch(url('big.bin'), 24, 4, [], root)
          record('64 MiB GET', column.name, { value: bytes / MiB / taken, unit: 'MB/s', note: 'curl' })
        }
      }
      if (column.does.has('small PUT') && inRound('small PUT')) {
        // Distinct keys in every run, under a prefix of its own (its warm-up included): the same keys again would measure overwrites.
        record('small PUT', column.name, await putLoad(url(`put/${putRuns++}-`), putScriptFile))
        if (column.name === 'fsbucket w1') {
          record('small PUT', 'raw disk', { value: await rawDurableWrites(path.join(root, `raw-puts-${rawRuns++}`), seconds), unit: 'files/s', note: 'create+fdatasync+rename+dir fsync' })
        }
      }
      if (column.does.has('list page') && inRound('list page')) {
        const r = await cannon({ url: `http://127.0.0.1:${column.port}/bench?limit=1000`, connections: 10 })
        record('list page', column.name, { value: r.requests.average, unit: 'req/s', note: `p50 ${r.latency.p50} ms` })
      }
    }

    // A fresh two-worker server on a new data directory: how soon it answers, then what its idle workers hold.
    if (measures('ready') || measures('idle RSS')) {
      const readyMs: number[] = []
      const readyWithoutCaMs: number[] = []
      const rss: number[] = []
      const settledRss: number[] = []
      const parts: Array<{ binary: number, anonymous: number }> = []
      const { NODE_EXTRA_CA_CERTS: extraCa, ...withoutCa } = serverEnv
      /** Spawns a fresh server in `env`; `measure` runs once it answered, given the milliseconds that took. A start that never answers is reported, and the table is still printed. */
      const fresh = async (env: NodeJS.ProcessEnv, dir: string, measure: (ms: number, child: ChildProcess) => Promise<void>): Promise<void> => {
        const port = await freePort()
        const started = performance.now()
        const child = spawn(process.execPath, [...serve, '--data', path.join(root, dir), '--port', String(port), '--workers', '2', '--log-level', 'warn', '--s3-port', '0'], { stdio: 'inherit', env })
        children.push(child)
        try {
          await answered(port)
          await measure(performance.now() - started, child)
        } catch (err) {
          console.error(`  a fresh server did not answer: ${(err as Error).message}`)
        } finally {
          await stop(child)
        }
      }
      for (let start = 0; start < 3; start++) {
        // The same start without the variable, just before each start with it.
        if (extraCa !== undefined && measures('ready')) await fresh(withoutCa, `data-fresh-noca-${start}`, async ms => { readyWithoutCaMs.push(ms) })
        await fresh(serverEnv, `data-fresh-${start}`, async (ms, child) => {
          readyMs.push(ms)
          const largest = async (): Promise<number> => Math.max(...await Promise.all((await workerPids(child.pid!)).map(rssMiB)))
          await new Promise(resolve => setTimeout(resolve, 1000))
          rss.push(await largest())
          const [worker] = await workerPids(child.pid!)
          if (worker !== undefined) parts.push(await rssParts(worker))
          await new Promise(resolve => setTimeout(resolve, 19_000))
          settledRss.push(await largest())
        })
      }
      if (measures('ready') && readyMs.length > 0) {
        const withoutCa = readyWithoutCaMs.length > 0 ? `; ${median(readyWithoutCaMs).toFixed(0)} ms without NODE_EXTRA_CA_CERTS, which this environment sets` : ''
        record('ready', 'fsbucket w2', { value: median(readyMs), unit: 'ms', note: `median of ${readyMs.length} starts${withoutCa}` })
      }
      if (measures('idle RSS') && rss.length > 0) {
        const split = parts.length > 0 ? `; of a worker's, ${median(parts.map(p => p.binary)).toFixed(1)} MiB are pages of the node binary, ${median(parts.map(p => p.anonymous)).toFixed(1)} MiB anonymous` : ''
        record('idle RSS', 'fsbucket w2', { value: median(rss), unit: 'MiB', note: `largest worker 1 s after ready, median of ${rss.length} starts; ${settledRss.length > 0 ? median(settledRss).toFixed(1) : '?'} MiB after 20 s idle${split}` })
      }
    }

    // The 1 GiB upload: a fresh one-worker server, so its peak RSS is the upload's.
    if (measures('1 GiB upload')) {
      const port = await freePort()
      const child = spawn(process.execPath, [...serve, '--data', path.join(root, 'data-upload'), '--port', String(port), '--workers', '1', '--log-level', 'warn', '--default-bucket', 'bench'], { stdio: 'inherit', env: serverEnv })
      children.push(child)
      await waitForPort(port)
      const started = performance.now()
      const { peakMiB } = await peakRssDuring(await workerPids(child.pid!), async () =>
        await run('curl', ['-sS', '-o', '/dev/null', '-T', uploadFile, `http://127.0.0.1:${port}/bench/upload.bin`]))
      const secondsTaken = (performance.now() - started) / 1000
      record('1 GiB upload', 'fsbucket w1', { value: uploadBytes / MiB / secondsTaken, unit: 'MB/s', note: `peak RSS ${peakMiB.toFixed(0)} MiB` })
      await stop(child)
      const md5Started = performance.now()
      await run('md5sum', [uploadFile])
      record('1 GiB upload', 'md5sum', { value: uploadBytes / MiB / ((performance.now() - md5Started) / 1000), unit: 'MB/s' })
      // The disk itself, with the same durability: what a durable upload cannot beat.
      const ddStarted = performance.now()
      await run('dd', [`if=${uploadFile}`, `of=${path.join(root, 'dd.out')}`, 'bs=1M', 'conv=fdatasync'])
      record('1 GiB upload', 'raw disk', { value: uploadBytes / MiB / ((performance.now() - ddStarted) / 1000), unit: 'MB/s', note: 'dd, fdatasync' })
      await fsp.rm(path.join(root, 'dd.out'), { force: true })
    }

    printTable(rows, rounds, [...columns.map(c => c.name), 'md5sum', 'raw disk'])
  } finally {
    await cleanup()
  }
}

/**
 * The table. A ratio is the median of the ratios of the same round (both
 * servers measured minutes apart at most, under the same neighbours' load),
 * which moves less on a shared machine than the ratio of two medians.
 */
function printTable (rows: Map<string, Row>, rounds: Map<string, Measured[]>, columnNames: string[]): void {
  const cell = (m: Measured | null | undefined): string =>
    m == null ? '—' : `${m.value >= 100 ? m.value.toFixed(0) : m.value.toFixed(1)} ${m.unit}${m.note === undefined ? '' : ` (${m.note})`}`
  let workload = ''
  const ratio = (a: string, b: string): string => {
    const as = rounds.get(`${workload}\u0000${a}`) ?? []
    const bs = rounds.get(`${workload}\u0000${b}`) ?? []
    const paired = as.length === bs.length
      ? as.map((m, i) => ({ a: m.value, b: bs[i].value })).filter(r => r.b !== 0)
      : []
    if (paired.length === 0) {
      const [x, y] = [rows.get(workload)?.[a], rows.get(workload)?.[b]]
      return x == null || y == null || y.value === 0 ? '—' : `${ratioText(x.value, y.value)}×`
    }
    return `${ratioText(median(paired.map(r => r.a / r.b)), 1)}×`
  }
  const header = ['workload', ...columnNames, 'w2 / node', 'w1 / nginx', 'w2 / nginx', 'w1 / bare', 'w1 / md5sum', 'w1 / disk', 'w2 / disk', 'w2 / s3rver']
  const lines = [header]
  for (const [name, row] of rows) {
    workload = name
    lines.push([
      name,
      ...columnNames.map(column => cell(row[column])),
      ratio('fsbucket w2', 'bare node'),
      ratio('fsbucket w1', 'nginx'),
      ratio('fsbucket w2', 'nginx'),
      ratio('fsbucket w1', 'bare Fastify'),
      ratio('fsbucket w1', 'md5sum'),
      ratio('fsbucket w1', 'raw disk'),
      ratio('fsbucket w2', 'raw disk'),
      ratio('fsbucket w2', 's3rver')
    ])
  }
  const widths = header.map((_, i) => Math.max(...lines.map(l => l[i].length)))
  const format = (l: string[]): string => `| ${l.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  console.log(format(header))
  console.log(`|${widths.map(w => '-'.repeat(w + 2)).join('|')}|`)
  for (const l of lines.slice(1)) console.log(format(l))
  console.log(`\n${os.cpus().length} cores, ${seconds} s per autocannon run, Node ${process.version}; goals: small GET and 304 w2 ≥ 0.75× bare node; Range ≥ 0.8× nginx; 64 MiB GET ≥ 1.2× nginx; idle RSS ≤ 60 MiB a worker; ready ≤ 500 ms; small PUT w2 ≥ 4× s3rver (which syncs nothing) and above the raw disk; upload ≥ 0.8× md5sum with peak RSS < 100 MiB.`)
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
