/**
 * A server streaming a large upload holds about what it held idle, with
 * Node's default young generation (16 MiB on Node 20), which `npm start`
 * runs with: the chunks a socket reads are freed every
 * few MiB (stores/fs/young-garbage.ts) rather than when the young
 * generation fills, which let 40–50 MiB of them wait here.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within } from './serve-process.js'

const MiB = 1024 * 1024

function rssOf (pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(line?.[1] ?? 0) * 1024
}

/** PUTs `total` bytes in 64 KiB chunks, as fast as the server takes them; the status. */
async function upload (port: number, urlPath: string, total: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 'fsbucket ')
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'PUT', path: urlPath, headers: { 'content-length': String(total) } }, res => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    let sent = 0
    const more = (): void => {
      while (sent < total) {
        sent += chunk.length
        if (!req.write(chunk)) {
          req.once('drain', more)
          return
        }
      }
      req.end()
    }
    more()
  })
}

t.test('a 384 MiB upload raises the server\'s RSS by less than 24 MiB', { skip: process.platform !== 'linux' && 'reads /proc' }, async t => {
  const port = await freePort()
  const served = run(['serve', '--data', testdir(t), '--port', String(port), '--s3-port', '0', '--workers', '1', '--log-level', 'warn', '--default-bucket', 'big'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await answering(port, served)
  const pid = served.child.pid as number
  t.equal((await call(port, 'PUT', '/big/warm-up', 'x')).status, 200)
  const idle = rssOf(pid)
  let peak = idle
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid)) }, 10)
  try {
    t.equal(await upload(port, '/big/large.bin', 384 * MiB), 200)
  } finally {
    clearInterval(sampler)
  }
  const head = await call(port, 'HEAD', '/big/large.bin')
  t.equal(head.status, 200, 'the upload was stored')
  t.ok(peak - idle < 24 * MiB, `peak ${(peak / MiB).toFixed(1)} MiB against ${(idle / MiB).toFixed(1)} MiB idle`)
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})
