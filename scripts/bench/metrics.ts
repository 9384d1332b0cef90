/**
 * What the metrics cost a request (`node dist/scripts/bench/metrics.js`):
 * wrk against a 1 KiB GET on two `fsbucket serve` processes, one with
 * metrics on and one with `--metrics off`, the same flags otherwise, run in
 * alternate rounds so that the machine's drift touches both alike. Prints
 * each round's requests per second and the ratio on/off, then the median
 * ratio.
 *
 * Environment:
 *   BENCH_SECONDS      length of each wrk run (default 5)
 *   BENCH_ROUNDS       rounds, each measuring both servers (default 5)
 *   BENCH_WORKERS      workers of each server (default 1)
 *   BENCH_CONNECTIONS  wrk's connections (default 50)
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort, serverEnv, stop, waitForPort } from './processes.js'

const run = promisify(execFile)
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/fsbucket.js')
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const workers = process.env.BENCH_WORKERS ?? '1'
const connections = process.env.BENCH_CONNECTIONS ?? '50'

async function wrk (url: string, duration: number): Promise<number> {
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, url])
  const match = /Requests\/sec:\s+([\d.]+)/.exec(stdout)
  if (match === null) throw new Error(`wrk printed no rate: ${stdout}`)
  return Number(match[1])
}

const root = await mkdtemp(path.join(os.tmpdir(), 'fsbucket-bench-metrics-'))
const servers: Array<{ name: string, url: string, child: ReturnType<typeof spawn> }> = []
try {
  for (const metrics of ['on', 'off']) {
    const port = await freePort()
    const child = spawn(process.execPath, ['--max-semi-space-size=1', bin, 'serve', '--data', path.join(root, metrics), '--port', String(port),
      '--workers', workers, '--log-level', 'warn', '--s3-port', '0', '--metrics', metrics, '--default-bucket', 'bench'], { stdio: 'inherit', env: serverEnv })
    await waitForPort(port)
    const url = `http://127.0.0.1:${port}/bench/small`
    const put = await fetch(url, { method: 'PUT', body: Buffer.alloc(1024, 7) })
    if (put.status !== 200) throw new Error(`PUT answered ${put.status}`)
    await wrk(url, 2) // warm-up, not measured
    servers.push({ name: `metrics ${metrics}`, url, child })
  }
  const ratios: number[] = []
  console.log('round | metrics on (req/s) | metrics off (req/s) | on/off')
  for (let round = 1; round <= rounds; round++) {
    // Alternate which server goes first, so neither always runs on the warmer machine.
    const order = round % 2 === 1 ? [0, 1] : [1, 0]
    const rates = [0, 0]
    for (const i of order) rates[i] = await wrk(servers[i].url, seconds)
    ratios.push(rates[0] / rates[1])
    console.log(`${round} | ${rates[0].toFixed(0)} | ${rates[1].toFixed(0)} | ${(rates[0] / rates[1]).toFixed(3)}`)
  }
  ratios.sort((a, b) => a - b)
  console.log(`median on/off: ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}`)
} finally {
  for (const server of servers) await stop(server.child)
  await rm(root, { recursive: true, force: true })
}
