/**
 * The S3 benchmark (`npm run bench:s3`): the S3 port against the HTTP routes
 * of the same server and against s3rver, in the same run, driven over
 * loopback by wrk (wrk.ts; autocannon where wrk is not installed).
 *
 *   small GET      1 KiB object, 50 connections (req/s); S3 requests carry a
 *                  SigV4 Authorization header (signed once: a header
 *                  signature is valid for 15 minutes)
 *   small PUT      1 KiB, a new key per request, 50 connections (req/s); S3
 *                  requests signed beforehand, one per key (UNSIGNED-PAYLOAD)
 *   1 GiB upload   @aws-sdk/lib-storage, 16 MiB parts, 4 at a time, with the
 *                  SDK's default CRC32 (MB/s) and the peak RSS of a fresh
 *                  server (started for the upload alone), beside `md5sum`
 *                  over the same file, `dd conv=fdatasync` writing it (the
 *                  disk, as durable as the upload) and the same upload into
 *                  a sink: a bare server that reads every body and keeps
 *                  nothing, which measures the client (its hashes, its
 *                  signing, the socket) on this machine
 *
 * fsbucket runs with fsync on, with one worker and with two (`npm start`
 * starts one per core: two on the 2-core machines this is run on); the
 * small PUT row also has one worker with `--fsync off`, as s3rver runs (it
 * never syncs). Beside the small PUTs, "file per PUT" is a bare server that
 * writes each body to a new file of its own (no fsync, no catalog, no
 * checks): what creating one file per object costs on this disk, which
 * bounds any store that keeps objects as files, s3rver and fsbucket's
 * readable view alike. s3rver, the sink and that server run in processes
 * of their own. Goals: S3 small GETs and PUTs ≥ 0.9× the HTTP routes'
 * rates (issue 37) and ≥ 5× s3rver (issue 11); the upload ≥ 0.7× md5sum's
 * rate with the server under 100 MiB RSS.
 *
 * Environment:
 *   BENCH_SECONDS   length of each measured run (default 5)
 *   BENCH_WARMUP    seconds of the same load before each run, not measured (default 1)
 *   BENCH_ROUNDS    rounds of the small-op rows, alternating the servers; medians kept (default 3)
 *   BENCH_UPLOAD    bytes of the upload file (default 1 GiB)
 *   BENCH_DIR       where the temporary directory goes (default the OS's)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { promises as fsp, createReadStream, createWriteStream } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import autocannon from 'autocannon'
import { S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { SignatureV4 } from '@smithy/signature-v4'
import type { SourceData } from '@smithy/types'
import { freePort, serverEnv, stop, waitForPort } from './processes.js'
import { median, ratioText } from './ratio.js'
import { putScript, signedPutScript, wrkClean, wrkPath } from './wrk.js'

const run = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))
const bin = path.resolve(here, '../../../bin/fsbucket.js')
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const uploadBytes = Number(process.env.BENCH_UPLOAD ?? 1024 ** 3)
/** Seconds of load before each measured run, not measured: every server is measured warm. */
const warmUpSeconds = Number(process.env.BENCH_WARMUP ?? 1)
/** The small-op rows alternate the three servers this many times and keep each one's median. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)


/** Runs each measure `rounds` times, alternating them, and returns each one's median. */
async function alternated<K extends string> (measures: Record<K, () => Promise<number>>): Promise<Record<K, number>> {
  const results = Object.fromEntries(Object.keys(measures).map(k => [k, [] as number[]])) as Record<K, number[]>
  for (let round = 0; round < rounds; round++) {
    for (const key of Object.keys(measures) as K[]) results[key].push(await measures[key]())
  }
  return Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v as number[])])) as Record<K, number>
}
const MiB = 1024 * 1024
const small = randomBytes(1024)
const devCredentials = { accessKeyId: 'fsbucket-dev', secretAccessKey: 'fsbucket-dev-secret' }
const s3rverCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

function bytes (data: SourceData): Buffer {
  return typeof data === 'string' ? Buffer.from(data) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data)
}

class Sha256 {
  readonly #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>
  constructor (secret?: SourceData) { this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret)) }
  update (data: SourceData): void { this.#hash.update(bytes(data)) }
  async digest (): Promise<Uint8Array> { return this.#hash.digest() }
  reset (): void {}
}

/** Headers of a SigV4-signed request (UNSIGNED-PAYLOAD), as a client would send them. */
async function signedHeaders (credentials: typeof devCredentials, method: string, port: number, urlPath: string): Promise<Record<string, string>> {
  const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials, sha256: Sha256, uriEscapePath: false })
  const signed = await signer.sign({
    method, protocol: 'http:', hostname: '127.0.0.1', port, path: urlPath, query: {},
    headers: { host: `127.0.0.1:${port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }
  })
  return signed.headers as Record<string, string>
}

async function cannon (options: Parameters<typeof autocannon>[0]): Promise<number> {
  if (warmUpSeconds > 0) await autocannon({ connections: 50, ...options, duration: warmUpSeconds })
  const result = await autocannon({ duration: seconds, connections: 50, ...options })
  // A failing server answers fast: a run with any failure is refused, not counted.
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${String(options.url)}: autocannon met ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} answers other than 2xx; no figure is kept from that run`)
  }
  return result['2xx'] / result.duration
}

async function smallGet (port: number, urlPath: string, credentials: typeof devCredentials | null): Promise<number> {
  const headers = credentials === null ? {} : await signedHeaders(credentials, 'GET', port, urlPath)
  const url = `http://127.0.0.1:${port}${urlPath}`
  if (wrkPath !== null) return (await wrkClean(`GET ${url}`, url, { connections: 50, seconds, warmUp: warmUpSeconds, headers })).okRate
  return await cannon({ url, headers })
}

let putRuns = 0
let scripts = 0

/** `count` PUTs of new keys under `prefix`, each signed (UNSIGNED-PAYLOAD) as a client would sign it. */
async function signedPuts (credentials: typeof devCredentials, port: number, prefix: string, count: number): Promise<Array<{ path: string, headers: Record<string, string> }>> {
  const signed: Array<{ path: string, headers: Record<string, string> }> = []
  for (let i = 0; i < count; i++) {
    const urlPath = `${prefix}${i}`
    signed.push({ path: urlPath, headers: await signedHeaders(credentials, 'PUT', port, urlPath) })
  }
  return signed
}

/** Writes a wrk script into `dir`, returning its path. */
async function scriptFile (dir: string, text: string): Promise<string> {
  const file = path.join(dir, `load-${scripts++}.lua`)
  await fsp.writeFile(file, text)
  return file
}

async function smallPut (dir: string, port: number, keyPrefix: string, credentials: typeof devCredentials | null): Promise<number> {
  // Every run writes new keys, as the first did.
  const prefix = `${keyPrefix}${putRuns++}-`
  const origin = `http://127.0.0.1:${port}`
  if (wrkPath !== null) {
    if (credentials === null) {
      const script = await scriptFile(dir, putScript)
      return (await wrkClean(`PUT ${origin}`, origin, { connections: 50, seconds, warmUp: warmUpSeconds, script, args: [prefix], warmUpArgs: [`${prefix}warm-`] })).okRate
    }
    // Signed beforehand (5,000 a second of load, more than any server here takes), keys of their own for the
    // warm-up; reused (overwritten) past that.
    if (warmUpSeconds > 0) {
      const warm = await scriptFile(dir, signedPutScript(await signedPuts(credentials, port, `${prefix}warm-`, Math.ceil(warmUpSeconds * 5_000))))
      await wrkClean(`PUT ${origin} (warm-up)`, origin, { connections: 50, seconds: warmUpSeconds, warmUp: 0, script: warm })
    }
    const count = Math.ceil(seconds * 5_000)
    const script = await scriptFile(dir, signedPutScript(await signedPuts(credentials, port, prefix, count)))
    const measured = await wrkClean(`PUT ${origin}`, origin, { connections: 50, seconds, warmUp: 0, script })
    if (measured.requests > count) console.error(`  ${origin}: ${measured.requests} PUTs for ${count} keys signed: the rest overwrote them`)
    return measured.okRate
  }
  // Enough pre-signed keys for the run; they are reused (overwritten) past that.
  const signed = credentials === null ? [] : await signedPuts(credentials, port, prefix, 40_000)
  let n = 0
  return await cannon({
    url: origin,
    requests: [{
      method: 'PUT',
      setupRequest: request => {
        const i = n++
        if (credentials === null) return { ...request, path: `${prefix}${i}`, body: small }
        const s = signed[i % signed.length]
        return { ...request, path: s.path, headers: s.headers, body: small }
      }
    }]
  })
}

async function peakRss (pid: number, work: () => Promise<void>): Promise<number> {
  let peak = 0
  const sample = async (): Promise<void> => {
    const status = await fsp.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
    peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0))
  }
  const timer = setInterval(() => { void sample() }, 50)
  try {
    await work()
    await sample()
  } finally {
    clearInterval(timer)
  }
  return peak / 1024
}

async function upload (port: number, credentials: typeof devCredentials, file: string): Promise<void> {
  const client = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials })
  try {
    await new Upload({ client, params: { Bucket: 'bench', Key: 'big.bin', Body: createReadStream(file) }, partSize: 16 * MiB, queueSize: 4 }).done()
  } finally {
    client.destroy()
  }
}

async function makeFile (file: string, size: number): Promise<void> {
  const block = randomBytes(MiB)
  await pipeline(async function * () {
    for (let written = 0, n = 0; written < size; n++) {
      const chunk = Buffer.from(block.subarray(0, Math.min(MiB, size - written)))
      chunk.writeUInt32LE(n, 0)
      written += chunk.length
      yield chunk
    }
  }, createWriteStream(file))
}

async function serveS3rver (port: number, directory: string): Promise<void> {
  // s3rver ships no types; it is only ever loaded here.
  const name = 's3rver'
  const { default: S3rver } = await import(name) as { default: new (options: Record<string, unknown>) => { run: () => Promise<unknown> } }
  await new S3rver({ port, address: '127.0.0.1', directory, silent: true, configureBuckets: [{ name: 'bench' }] }).run()
}

/**
 * The sink: answers a multipart upload's requests as S3 would (an upload id,
 * an ETag per part, the completed object) after reading each body whole,
 * and keeps, checks and hashes nothing.
 */
function serveSink (port: number): void {
  let parts = 0
  createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const url = request.url ?? ''
      if (request.method === 'PUT') {
        response.setHeader('etag', `"${(++parts).toString(16).padStart(32, '0')}"`)
        response.end()
        return
      }
      response.setHeader('content-type', 'application/xml')
      response.end(url.includes('uploads')
        ? '<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult><Bucket>bench</Bucket><Key>big.bin</Key><UploadId>sink</UploadId></InitiateMultipartUploadResult>'
        : '<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUploadResult><Bucket>bench</Bucket><Key>big.bin</Key><ETag>"sink"</ETag></CompleteMultipartUploadResult>')
    })
  }).listen(port, '127.0.0.1')
}

/** The file-per-PUT baseline: every PUT's body written to a new file of its own, answered with an ETag; nothing else. */
function serveFilePerPut (port: number, directory: string): void {
  let files = 0
  createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method !== 'PUT') {
        response.statusCode = 405
        response.end()
        return
      }
      const body = Buffer.concat(chunks)
      fsp.writeFile(path.join(directory, String(++files)), body).then(() => {
        response.setHeader('etag', `"${createHash('md5').update(body).digest('hex')}"`)
        response.end()
      }, () => {
        response.statusCode = 500
        response.end()
      })
    })
  }).listen(port, '127.0.0.1')
}

async function main (): Promise<void> {
  if (process.argv[2] === '--file-per-put') {
    serveFilePerPut(Number(process.argv[3]), process.argv[4])
    return
  }
  if (process.argv[2] === '--s3rver') {
    await serveS3rver(Number(process.argv[3]), process.argv[4])
    return
  }
  if (process.argv[2] === '--sink') {
    serveSink(Number(process.argv[3]))
    return
  }
  const root = await fsp.mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'fsbucket-bench-s3-'))
  const children: ChildProcess[] = []
  try {
    const [httpPort, s3Port, s3rverPort] = [await freePort(), await freePort(), await freePort()]
    const [unsyncedHttpPort, unsyncedS3Port, sinkPort] = [await freePort(), await freePort(), await freePort()]
    const [http2Port, s32Port, filePort] = [await freePort(), await freePort(), await freePort()]
    const startFsbucket = (data: string, ports: [number, number], fsync = 'on', workers = 1): ChildProcess => {
      const child = spawn(process.execPath, [bin, 'serve', '--data', path.join(root, data), '--port', String(ports[0]),
        '--s3-port', String(ports[1]), '--workers', String(workers), '--log-level', 'warn', '--default-bucket', 'bench', '--fsync', fsync], { stdio: 'inherit', env: serverEnv })
      children.push(child)
      return child
    }
    const helper = (...args: string[]): void => { children.push(spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' })) }
    const fsbucket = startFsbucket('data', [httpPort, s3Port])
    const unsynced = startFsbucket('data-unsynced', [unsyncedHttpPort, unsyncedS3Port], 'off')
    const twoWorkers = startFsbucket('data-2', [http2Port, s32Port], 'on', 2)
    await fsp.mkdir(path.join(root, 's3rver'))
    await fsp.mkdir(path.join(root, 'files'))
    helper('--s3rver', String(s3rverPort), path.join(root, 's3rver'))
    helper('--sink', String(sinkPort))
    helper('--file-per-put', String(filePort), path.join(root, 'files'))
    await Promise.all([httpPort, s3Port, unsyncedHttpPort, unsyncedS3Port, http2Port, s32Port, s3rverPort, sinkPort, filePort].map(async port => await waitForPort(port)))
    await fetch(`http://127.0.0.1:${httpPort}/bench/small.bin`, { method: 'PUT', body: small })
    await fetch(`http://127.0.0.1:${http2Port}/bench/small.bin`, { method: 'PUT', body: small })
    await fetch(`http://127.0.0.1:${s3rverPort}/bench/small.bin`, { method: 'PUT', body: small, headers: await signedHeaders(s3rverCredentials, 'PUT', s3rverPort, '/bench/small.bin') })

    const rows: Array<[string, Record<string, string>]> = []
    const row = (name: string, s3: number, http: number, s3rver: number, extra: Record<string, string> = {}): void => {
      rows.push([name, { 'fsbucket S3': s3.toFixed(0), 'HTTP routes': http.toFixed(0), s3rver: s3rver.toFixed(0), 'S3 / HTTP': ratioText(s3, http), 'S3 / s3rver': ratioText(s3, s3rver, 1), ...extra }])
    }
    const get = await alternated({
      s3: async () => await smallGet(s3Port, '/bench/small.bin', devCredentials),
      http: async () => await smallGet(httpPort, '/bench/small.bin', null),
      s3w2: async () => await smallGet(s32Port, '/bench/small.bin', devCredentials),
      httpw2: async () => await smallGet(http2Port, '/bench/small.bin', null),
      s3rver: async () => await smallGet(s3rverPort, '/bench/small.bin', s3rverCredentials)
    })
    row('small GET, 1 worker (req/s)', get.s3, get.http, get.s3rver)
    row('small GET, 2 workers (req/s)', get.s3w2, get.httpw2, get.s3rver)
    const put = await alternated({
      s3: async () => await smallPut(root, s3Port, '/bench/put-s3-', devCredentials),
      http: async () => await smallPut(root, httpPort, '/bench/put-http-', null),
      s3w2: async () => await smallPut(root, s32Port, '/bench/put-s3-', devCredentials),
      httpw2: async () => await smallPut(root, http2Port, '/bench/put-http-', null),
      s3Unsynced: async () => await smallPut(root, unsyncedS3Port, '/bench/put-s3-', devCredentials),
      httpUnsynced: async () => await smallPut(root, unsyncedHttpPort, '/bench/put-http-', null),
      s3rver: async () => await smallPut(root, s3rverPort, '/bench/put-', s3rverCredentials),
      file: async () => await smallPut(root, filePort, '/bench/put-', null)
    })
    const filePerPut = (s3: number): Record<string, string> => ({ 'file per PUT': put.file.toFixed(0), 'S3 / file per PUT': ratioText(s3, put.file), 's3rver / file per PUT': ratioText(put.s3rver, put.file) })
    row('small PUT, 1 worker (req/s)', put.s3, put.http, put.s3rver, filePerPut(put.s3))
    row('small PUT, 2 workers (req/s)', put.s3w2, put.httpw2, put.s3rver, filePerPut(put.s3w2))
    row('small PUT, 1 worker, --fsync off (req/s)', put.s3Unsynced, put.httpUnsynced, put.s3rver, filePerPut(put.s3Unsynced))
    await stop(unsynced)
    await stop(twoWorkers)

    const file = path.join(root, 'upload.bin')
    await makeFile(file, uploadBytes)
    let started = performance.now()
    await run('md5sum', [file])
    const md5Rate = uploadBytes / MiB / ((performance.now() - started) / 1000)
    // The upload gets a fresh server, so that its peak RSS is the upload's, not what the small-op runs left in the heap.
    await stop(fsbucket)
    const uploadPorts: [number, number] = [await freePort(), await freePort()]
    const uploader = startFsbucket('data-upload', uploadPorts)
    await Promise.all(uploadPorts.map(async port => await waitForPort(port)))
    started = performance.now()
    const rss = await peakRss(uploader.pid!, async () => { await upload(uploadPorts[1], devCredentials, file) })
    const uploadRate = uploadBytes / MiB / ((performance.now() - started) / 1000)
    // The same upload with a server that does nothing: what the client reaches on this machine.
    started = performance.now()
    await upload(sinkPort, devCredentials, file)
    const sinkRate = uploadBytes / MiB / ((performance.now() - started) / 1000)
    // The disk with the same durability: what a durable upload cannot beat.
    started = performance.now()
    await run('dd', [`if=${file}`, `of=${path.join(root, 'dd.out')}`, 'bs=1M', 'conv=fdatasync'])
    const diskRate = uploadBytes / MiB / ((performance.now() - started) / 1000)
    await fsp.rm(path.join(root, 'dd.out'), { force: true })
    rows.push([`${(uploadBytes / MiB).toFixed(0)} MiB upload (MB/s)`, {
      'fsbucket S3': `${uploadRate.toFixed(0)} (peak RSS ${rss.toFixed(0)} MiB)`,
      md5sum: md5Rate.toFixed(0),
      'raw disk': diskRate.toFixed(0),
      sink: sinkRate.toFixed(0),
      'S3 / md5sum': ratioText(uploadRate, md5Rate),
      'S3 / disk': ratioText(uploadRate, diskRate),
      'S3 / sink': ratioText(uploadRate, sinkRate)
    }])

    const columns = ['fsbucket S3', 'HTTP routes', 's3rver', 'file per PUT', 'md5sum', 'raw disk', 'sink', 'S3 / HTTP', 'S3 / s3rver', 'S3 / file per PUT', 's3rver / file per PUT', 'S3 / md5sum', 'S3 / disk', 'S3 / sink']
    const lines = [['workload', ...columns], ...rows.map(([name, row]) => [name, ...columns.map(c => row[c] ?? '—')])]
    const widths = lines[0].map((_, i) => Math.max(...lines.map(l => l[i].length)))
    const format = (l: string[]): string => `| ${l.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
    console.log(format(lines[0]))
    console.log(`|${widths.map(w => '-'.repeat(w + 2)).join('|')}|`)
    for (const l of lines.slice(1)) console.log(format(l))
    console.log(`\n${os.cpus().length} cores, ${seconds} s per ${wrkPath === null ? 'autocannon' : 'wrk'} run, Node ${process.version}; goals: S3 small ops ≥ 0.9× HTTP routes (issue 37) and ≥ 5× s3rver (issue 11); upload ≥ 0.7× md5sum with peak RSS < 100 MiB.`)
  } finally {
    for (const child of children) await stop(child)
    await fsp.rm(root, { recursive: true, force: true })
  }
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
