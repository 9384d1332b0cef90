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
 * to autocannon (the table says which). A wrk run that met a socket error,
 * a timeout or an answer other than 2xx/3xx is refused (the bench stops,
 * naming the server and row): an error answers fast, and its rate is no
 * server's throughput. The 304 and Range rows also check, before and after
 * their measured run, that the server answers 304 to the ETag and 206 with
 * the range asked for.
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
 *   list page        GET /{bucket}?limit=1000, a page of 1,000 keys (the row
 *                    puts 1,000 keys of its own first, so the page is full
 *                    whether or not small PUT ran), 10 connections (req/s)
 *   idle RSS         the largest worker's resident memory after 20 s without
 *                    requests, in a fresh two-worker server with its S3
 *                    port on, as `npm start` runs it (V8 gives back
 *                    what start-up grew, its young generation above all,
 *                    only after some seconds of idleness: the goal is
 *                    judged on this figure); the note gives it a second
 *                    after the first answer too, and how that worker's
 *                    memory splits
 *   ready            milliseconds from spawning `serve` (two workers, the S3
 *                    port on, a new data directory) to its first HTTP
 *                    answer; when
 *                    NODE_EXTRA_CA_CERTS is set, also without it (Node 20
 *                    reads and parses that file as every process starts,
 *                    before any of fsbucket's code runs: 80-90 ms of CPU
 *                    each for the system's bundle of certificates here;
 *                    Node 22 reads it when a TLS context first needs it)
 *
 * The two large-body rows use wrk too (10 connections for the ranges, 4
 * for the 64 MiB answers, after 3 and 2 s of the same load whatever
 * BENCH_WARMUP says), else curl (`curl -Z`, parallel transfers, after 2,500
 * unmeasured ranges and eight unmeasured downloads; the table says so):
 * autocannon parses bodies in JavaScript and caps a Node server's large responses far below
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
 *   BENCH_SECONDS   length of each measured wrk or autocannon run (default 5)
 *   BENCH_ROUNDS    rounds of the rows whose figures move (small GET, 304,
 *                   small PUT and its raw-disk baseline, Range GET, 64 MiB
 *                   GET), each server in turn in every round, the order
 *                   rotated by one each round (round 1 starts with w1,
 *                   round 2 with w2, and so on) so that no server is always
 *                   measured first; the table shows each cell's median
 *                   (default 1)
 *   BENCH_WARMUP    seconds of the same load before each wrk or autocannon
 *                   run of the small GET, 304, small PUT and list page rows,
 *                   not measured (default 1), for every column alike (the
 *                   large-body rows have the fixed warm-ups said above)
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
import { cleanupOnce, freePort, serverEnv, stop, waitForPort } from './processes.js'
import { median, ratioText } from './ratio.js'
import { putScript, wrkClean, wrkPath } from './wrk.js'

const run = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))
const bin = path.resolve(here, '../../../bin/fsbucket.js')
/**
 * The server runs as `npm start` runs it (no V8 flag, as the bin's shebang),
 * with fsync on said outright: an FSBUCKET_FSYNC=off in the environment
 * would otherwise turn the durable-write rows into something else.
 */
const serve = [...(process.env.FSBUCKET_NODE_FLAGS ?? '').split(/\s+/).filter(a => a !== ''), bin, 'serve', '--fsync', 'on']
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const uploadBytes = Number(process.env.BENCH_UPLOAD ?? 1024 ** 3)
const MiB = 1024 * 1024
const WORKLOADS = ['small GET', '304', 'Range GET', '64 MiB GET', 'small PUT', 'list page', '1 GiB upload', 'idle RSS', 'ready']
const only = new Set((process.env.BENCH_ONLY ?? WORKLOADS.join(',')).split(',').map(s => s.trim()))
/** Whether `workload` is one this run measures. */
const measures = (workload: string): boolean => only.has(workload)
/** Rounds of the rows whose figures move, every server in turn in each; the table shows medians. */
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

/** Starts nginx, in `children` from its spawn on (so that it is stopped even if it never answers), and waits until it answers. */
async function startNginx (nginx: string, port: number, root: string, prefix: string, children: ChildProcess[]): Promise<void> {
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
  children.push(spawn(nginx, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: 'inherit' }))
  await waitForPort(port)
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

/**
 * An autocannon run whose every answer was a success (a 304 too, where
 * `notModified` says the row asks for it), with no error or timeout: any
 * other is refused, naming `what`, as wrkClean refuses a wrk run.
 */
async function cannon (what: string, options: Parameters<typeof autocannon>[0], notModified = false): Promise<Awaited<ReturnType<typeof autocannon>>> {
  if (warmUpSeconds > 0) await autocannon({ ...options, duration: warmUpSeconds })
  const result = await autocannon({ duration: seconds, ...options })
  // autocannon counts a 304 among the answers other than 2xx; the probes around the 304 row make sure they are 304s.
  const failed = notModified ? result.non2xx - (result['3xx'] ?? 0) : result.non2xx
  if (result.errors > 0 || result.timeouts > 0 || failed > 0) {
    throw new Error(`${what}: autocannon met ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} answers other than 2xx; no figure is kept from that run`)
  }
  return result
}

/**
 * PUTs per second of 1 KiB bodies to new keys under `base` (a URL ending
 * in the keys' prefix), 50 connections: wrk where installed, else
 * autocannon. The warm-up writes keys of its own. `what` names the server
 * and row in a refusal.
 */
async function putLoad (what: string, base: string, scriptFile: string): Promise<Measured> {
  const { origin, pathname } = new URL(base)
  if (wrkPath !== null) {
    const { okRate } = await wrkClean(what, origin, { connections: 50, seconds, warmUp: warmUpSeconds, script: scriptFile, args: [pathname], warmUpArgs: [`${pathname}warm-`] })
    return { value: okRate, unit: 'req/s' }
  }
  let n = 0
  const r = await cannon(what, {
    url: origin,
    connections: 50,
    requests: [{ method: 'PUT', body: Buffer.alloc(1024, 120), setupRequest: request => ({ ...request, path: `${pathname}${n++}` }) }]
  })
  return { value: r.requests.average, unit: 'req/s', note: 'autocannon' }
}

/** The small GET and 304 rows' load: wrk where installed, else autocannon. `what` names the server and row in a refusal. */
async function smallLoad (what: string, url: string, headers: Record<string, string> = {}): Promise<Measured> {
  if (wrkPath !== null) {
    const { okRate } = await wrkClean(what, url, { connections: 50, seconds, warmUp: warmUpSeconds, headers })
    return { value: okRate, unit: 'req/s' }
  }
  const r = await cannon(what, { url, connections: 50, headers }, headers['if-none-match'] !== undefined)
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
  /** Every server, from its spawn on (before it answers or is seeded), so that cleanup stops it whatever happens next. */
  const children: ChildProcess[] = []
  const cleanup = cleanupOnce(async () => {
    for (const child of children) await stop(child).catch(() => {})
    await fsp.rm(root, { recursive: true, force: true })
  })
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
      await startNginx(nginx, port, path.join(root, 'static'), path.join(root, 'nginx'), children)
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

    // The order rotated by one each round (round 1 starts with w1, round 2 with w2, and so on), so that no server is always the first measured.
    for (let round = 0; round < roundCount; round++) for (const column of [...columns.slice(round % columns.length), ...columns.slice(0, round % columns.length)]) {
      // Later rounds repeat the rows whose figures move (the others are long and steady).
      const inRound = (workload: string): boolean => measures(workload) && (round === 0 || repeatedRows.has(workload))
      const url = (name: string): string => `http://127.0.0.1:${column.port}/bench/${name}`
      console.error(`${column.name}${roundCount > 1 ? ` (round ${round + 1} of ${roundCount})` : ''}:`)
      if (column.does.has('small GET') && inRound('small GET')) {
        const probe = await fetch(url('small.bin'))
        if (probe.status !== 200) throw new Error(`${column.name} answers ${probe.status} to GET small.bin`)
        record('small GET', column.name, await smallLoad(`${column.name}, small GET`, url('small.bin')))
      }
      if (column.does.has('304') && inRound('304')) {
        const etag = (await fetch(url('small.bin'))).headers.get('etag') ?? ''
        if (etag === '') throw new Error(`${column.name} sends no ETag with small.bin: no 304 row`)
        // Before and after the measured run: a server that stopped answering 304 under load would have been measured doing something else.
        const probe = async (when: string): Promise<void> => {
          const answer = await fetch(url('small.bin'), { headers: { 'if-none-match': etag } })
          await answer.arrayBuffer()
          if (answer.status !== 304) throw new Error(`${column.name}, 304: answers ${answer.status} to If-None-Match ${etag} ${when} the measured run, not 304`)
        }
        await probe('before')
        record('304', column.name, await smallLoad(`${column.name}, 304`, url('small.bin'), { 'if-none-match': etag }))
        await probe('after')
      }
      // Warm, as every row: a Node server's JIT took about 2,500 ranges here to stop compiling what a range runs (from 1,000 to 1,700 req/s).
      if (column.does.has('Range GET') && inRound('Range GET')) {
        const [first, last] = [8 * MiB, 9 * MiB - 1]
        const range = `bytes=${first}-${last}`
        // Before and after the measured run, as the 304 row: a 200 with the whole 64 MiB, or another slice, is not the row's workload.
        const probe = async (when: string): Promise<void> => {
          const answer = await fetch(url('big.bin'), { headers: { range } })
          await answer.arrayBuffer()
          const contentRange = answer.headers.get('content-range')
          if (answer.status !== 206 || contentRange !== `bytes ${first}-${last}/${64 * MiB}`) {
            throw new Error(`${column.name}, Range GET: answers ${answer.status} (Content-Range ${contentRange ?? 'none'}) to Range: ${range} ${when} the measured run, not 206 with bytes ${first}-${last}/${64 * MiB}`)
          }
        }
        await probe('before')
        if (wrkPath !== null) {
          const { okRate } = await wrkClean(`${column.name}, Range GET`, url('big.bin'), { connections: 10, seconds, warmUp: 3, timeout: 30, headers: { range } })
          record('Range GET', column.name, { value: okRate, unit: 'req/s' })
        } else {
          await curlBatch(url('big.bin'), 2500, 10, ['-H', `Range: ${range}`], root)
          const { seconds: taken } = await curlBatch(url('big.bin'), 400, 10, ['-H', `Range: ${range}`], root)
          record('Range GET', column.name, { value: 400 / taken, unit: 'req/s', note: 'curl' })
        }
        await probe('after')
      }
      if (column.does.has('64 MiB GET') && inRound('64 MiB GET')) {
        if (wrkPath !== null) {
          // Transfer/sec counts every answer's bytes: of answers that were all 2xx, as wrkClean makes sure.
          const { bytesPerSecond } = await wrkClean(`${column.name}, 64 MiB GET`, url('big.bin'), { connections: 4, seconds, warmUp: 2, timeout: 30 })
          record('64 MiB GET', column.name, { value: bytesPerSecond / MiB, unit: 'MB/s' })
        } else {
          await curlBatch(url('big.bin'), 8, 4, [], root)
          const { seconds: taken, bytes } = await curlBatch(url('big.bin'), 24, 4, [], root)
          record('64 MiB GET', column.name, { value: bytes / MiB / taken, unit: 'MB/s', note: 'curl' })
        }
      }
      if (column.does.has('small PUT') && inRound('small PUT')) {
        // Distinct keys in every run, under a prefix of its own (its warm-up included): the same keys again would measure overwrites.
        record('small PUT', column.name, await putLoad(`${column.name}, small PUT`, url(`put/${putRuns++}-`), putScriptFile))
        if (column.name === 'fsbucket w1') {
          record('small PUT', 'raw disk', { value: await rawDurableWrites(path.join(root, `raw-puts-${rawRuns++}`), seconds), unit: 'files/s', note: 'create+fdatasync+rename+dir fsync' })
        }
      }
      if (column.does.has('list page') && inRound('list page')) {
        // 1,000 keys of its own (list-0000 to list-0999), so that the page is a full one whether or not the small PUT row ran before it.
        const body = Buffer.alloc(1024, 120)
        await Promise.all(Array.from({ length: 10 }, async (_, lane) => {
          for (let i = lane; i < 1000; i += 10) {
            const answer = await fetch(url(`list-${String(i).padStart(4, '0')}`), { method: 'PUT', body })
            await answer.arrayBuffer()
            if (!answer.ok) throw new Error(`${column.name}, list page: answers ${answer.status} to PUT list-${i}`)
          }
        }))
        const r = await cannon(`${column.name}, list page`, { url: `http://127.0.0.1:${column.port}/bench?limit=1000`, connections: 10 })
        record('list page', column.name, { value: r.requests.average, unit: 'req/s', note: `p50 ${r.latency.p50} ms` })
      }
    }

    // A fresh two-worker server on a new data directory: how soon it answers, then what its idle workers hold.
    if (measures('ready') || measures('idle RSS')) {
      const readyMs: number[] = []
      const readyWithoutCaMs: number[] = []
      /** The largest worker's RSS after 20 s idle (the goal's figure, the cell), and a second after ready (the note's). */
      const settledRss: number[] = []
      const earlyRss: number[] = []
      const parts: Array<{ binary: number, anonymous: number }> = []
      const { NODE_EXTRA_CA_CERTS: extraCa, ...withoutCa } = serverEnv
      /** Spawns a fresh server in `env`; `measure` runs once it answered, given the milliseconds that took. A start that never answers is reported, and the table is still printed. */
      const fresh = async (env: NodeJS.ProcessEnv, dir: string, measure: (ms: number, child: ChildProcess) => Promise<void>): Promise<void> => {
        const port = await freePort()
        // As `npm start` runs it: the S3 port on too (on a free port rather than 8788).
        const s3Port = await freePort()
        const started = performance.now()
        const child = spawn(process.execPath, [...serve, '--data', path.join(root, dir), '--port', String(port), '--workers', '2', '--log-level', 'warn', '--s3-port', String(s3Port)], { stdio: 'inherit', env })
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
          // The ready row alone does not wait for the workers to idle.
          if (!measures('idle RSS')) return
          /** The worker holding the most resident memory now, and how much (MiB). */
          const largest = async (): Promise<{ pid: number, rss: number }> => {
            const workers = await Promise.all((await workerPids(child.pid!)).map(async pid => ({ pid, rss: await rssMiB(pid) })))
            return workers.reduce((a, b) => b.rss > a.rss ? b : a)
          }
          await new Promise(resolve => setTimeout(resolve, 1000))
          earlyRss.push((await largest()).rss)
          await new Promise(resolve => setTimeout(resolve, 19_000))
          const settled = await largest()
          settledRss.push(settled.rss)
          parts.push(await rssParts(settled.pid))
        })
      }
      if (measures('ready') && readyMs.length > 0) {
        const withoutCa = readyWithoutCaMs.length > 0 ? `; ${median(readyWithoutCaMs).toFixed(0)} ms without NODE_EXTRA_CA_CERTS, which this environment sets` : ''
        record('ready', 'fsbucket w2', { value: median(readyMs), unit: 'ms', note: `median of ${readyMs.length} starts${withoutCa}` })
      }
      if (measures('idle RSS') && settledRss.length > 0) {
        const split = `; of that worker's, ${median(parts.map(p => p.binary)).toFixed(1)} MiB are pages of the node binary, ${median(parts.map(p => p.anonymous)).toFixed(1)} MiB anonymous`
        record('idle RSS', 'fsbucket w2', { value: median(settledRss), unit: 'MiB', note: `largest worker after 20 s idle, median of ${settledRss.length} starts; ${median(earlyRss).toFixed(1)} MiB 1 s after ready${split}` })
      }
    }

    // The 1 GiB upload: a fresh one-worker server, so its peak RSS is the upload's.
    if (measures('1 GiB upload')) {
      const port = await freePort()
      const child = spawn(process.execPath, [...serve, '--data', path.join(root, 'data-upload'), '--port', String(port), '--workers', '1', '--log-level', 'warn', '--default-bucket', 'bench', '--s3-port', '0'], { stdio: 'inherit', env: serverEnv })
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
  const header = ['workload', ...columnNames, 'w2 / node', 'w1 / nginx', 'w2 / nginx', 'w1 / bare', 'w1 / md5sum', 'w1 / disk', 'w2 / disk', 'w1 / s3rver', 'w2 / s3rver']
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
      ratio('fsbucket w1', 's3rver'),
      ratio('fsbucket w2', 's3rver')
    ])
  }
  const widths = header.map((_, i) => Math.max(...lines.map(l => l[i].length)))
  const format = (l: string[]): string => `| ${l.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  console.log(format(header))
  console.log(`|${widths.map(w => '-'.repeat(w + 2)).join('|')}|`)
  for (const l of lines.slice(1)) console.log(format(l))
  console.log(`\n${os.cpus().length} cores, ${seconds} s per ${wrkPath === null ? 'autocannon' : 'wrk (autocannon for the list page)'} run, Node ${process.version}; goals: small GET and 304 w2 ≥ 0.75× bare node; Range ≥ 0.8× nginx; 64 MiB GET ≥ 1.2× nginx; idle RSS ≤ 60 MiB a worker after 20 s idle; ready ≤ 500 ms; small PUT w2 ≥ 4× s3rver (which syncs nothing) and above the raw disk; upload ≥ 0.8× md5sum with peak RSS < 100 MiB.`)
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
