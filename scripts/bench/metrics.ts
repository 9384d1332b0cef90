/**
 * What the metrics cost a request (`node dist/scripts/bench/metrics.js`):
 * wrk against a 1 KiB GET on two `fsbucket serve` processes, one with
 * metrics on and one with `--metrics off`, the same flags otherwise, run in
 * alternate rounds so that the machine's drift touches both alike. Prints
 * each round's requests per second and the server's CPU time per request
 * (user + system, from /proc: steadier than the rate on a shared machine),
 * with the ratios on/off, then the median ratios.
 *
 * On a machine shared with other work, even alternate rounds see different
 * machines (one round's rates can differ tenfold from the next):
 * `BENCH_TOGETHER=1` drives both servers at once in each round, each with
 * its own wrk, so that whatever else runs slows both alike; the ratios are
 * then those of two servers sharing the cores.
 *
 * Environment:
 *   BENCH_SECONDS      length of each wrk run (default 5)
 *   BENCH_ROUNDS       rounds, each measuring both servers (default 5)
 *   BENCH_WORKERS      workers of each server (default 1)
 *   BENCH_CONNECTIONS  wrk's connections (default 50)
 *   BENCH_TOGETHER     1: measure both servers at once in each round (default: one after the other)
 *   BENCH_BIN          the fsbucket.js of another checkout to measure (default: this one's)
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { cleanupOnce, freePort, serverEnv, stop, waitForPort } from './processes.js'
import { median } from './ratio.js'
import { wrkErrors } from './wrk.js'

const run = promisify(execFile)
const bin = process.env.BENCH_BIN ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/fsbucket.js')
const together = process.env.BENCH_TOGETHER === '1'
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const workers = process.env.BENCH_WORKERS ?? '1'
const connections = process.env.BENCH_CONNECTIONS ?? '50'

/** CPU seconds (user + system) the process has used so far. */
async function cpuSeconds (pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Requests per second, and the server's CPU microseconds per request. A run with socket errors or answers other than 2xx/3xx is refused: an error answers fast, and would count as a request served. */
async function wrk (url: string, duration: number, pid?: number): Promise<{ rate: number, cpuUs: number }> {
  const before = pid === undefined ? 0 : await cpuSeconds(pid)
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, url])
  const after = pid === undefined ? 0 : await cpuSeconds(pid)
  const errors = wrkErrors(stdout)
  if (errors !== null) throw new Error(`wrk against ${url}: ${errors}; no figure is kept from that run`)
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(stdout)
  const count = /(\d+) requests in/.exec(stdout)
  if (rate === null || count === null) throw new Error(`wrk printed no rate: ${stdout}`)
  return { rate: Number(rate[1]), cpuUs: (after - before) * 1e6 / Number(count[1]) }
}

const root = await mkdtemp(path.join(os.tmpdir(), 'fsbucket-bench-metrics-'))
const servers: Array<{ name: string, url: string, child: ReturnType<typeof spawn> }> = []
/** Every server, from its spawn on (before it answers or is warmed), so that a failed start is stopped too. */
const children: Array<ReturnType<typeof spawn>> = []
const cleanup = cleanupOnce(async () => {
  for (const child of children) await stop(child).catch(() => {})
  await rm(root, { recursive: true, force: true })
})
try {
  for (const metrics of ['on', 'off']) {
    const port = await freePort()
    const child = spawn(process.execPath, [bin, 'serve', '--data', path.join(root, metrics), '--port', String(port),
      '--workers', workers, '--log-level', 'warn', '--s3-port', '0', '--metrics', metrics, '--default-bucket', 'bench'], { stdio: 'inherit', env: serverEnv })
    children.push(child)
    await waitForPort(port)
    const url = `http://127.0.0.1:${port}/bench/small`
    const put = await fetch(url, { method: 'PUT', body: Buffer.alloc(1024, 7) })
    if (put.status !== 200) throw new Error(`PUT answered ${put.status}`)
    await wrk(url, 2) // warm-up, not measured
    servers.push({ name: `metrics ${metrics}`, url, child })
  }
  const rateRatios: number[] = []
  const cpuRatios: number[] = []
  // With one worker the server is the process started; with more, the CPU column is left out.
  const pidOf = (i: number): number | undefined => workers === '1' ? servers[i].child.pid : undefined
  console.log('round | on req/s | off req/s | req/s on/off | on CPU us/req | off CPU us/req | CPU on/off')
  for (let round = 1; round <= rounds; round++) {
    // Alternate which server goes first, so neither always runs on the warmer machine.
    const order = round % 2 === 1 ? [0, 1] : [1, 0]
    const got = [{ rate: 0, cpuUs: 0 }, { rate: 0, cpuUs: 0 }]
    if (together) await Promise.all(order.map(async i => { got[i] = await wrk(servers[i].url, seconds, pidOf(i)) }))
    else for (const i of order) got[i] = await wrk(servers[i].url, seconds, pidOf(i))
    const [on, off] = got
    rateRatios.push(on.rate / off.rate)
    cpuRatios.push(on.cpuUs / off.cpuUs)
    console.log(`${round} | ${on.rate.toFixed(0)} | ${off.rate.toFixed(0)} | ${(on.rate / off.rate).toFixed(3)} | ${on.cpuUs.toFixed(1)} | ${off.cpuUs.toFixed(1)} | ${(on.cpuUs / off.cpuUs).toFixed(3)}`)
  }
  console.log(`median req/s on/off: ${median(rateRatios).toFixed(3)}; median CPU per request on/off: ${median(cpuRatios).toFixed(3)}`)
} finally {
  await cleanup()
}
