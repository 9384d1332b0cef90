/**
 * SIGHUP (`systemctl reload`, docs/deployment.md's unit) never stops a
 * server: without TLS a line says there is nothing to reload, with or
 * without workers; and the signals are the server's from its first moments
 * (a SIGHUP or SIGTERM while it loads is not Node's default death). With
 * `-p 0` and workers, the primary's lines name the ports the workers got.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within, type Served } from './serve-process.js'

const quiet = ['--fsync', 'off', '--log-level', 'info', '--s3-port', '0']

/** Whether a process catches a signal (its bit in /proc's SigCgt): set once a handler is. */
function catches (pid: number, signal: number): boolean {
  try {
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '0'
    return (BigInt(`0x${mask}`) & (1n << BigInt(signal - 1))) !== 0n
  } catch {
    return false
  }
}

async function until (what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

const lines = (served: Served): string[] => served.stdout().split('\n').filter(l => l !== '')

t.test('SIGHUP without TLS: a line says there is nothing to reload, and the server goes on serving', async t => {
  for (const workers of ['1', '2']) {
    const port = await freePort()
    const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(port), '--workers', workers, ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    await answering(port, served)
    served.child.kill('SIGHUP')
    await until('the SIGHUP line', () => served.stdout().includes('SIGHUP: nothing to reload (no --tls-cert); still serving'))
    t.equal((await call(port, 'PUT', '/default/after-hup', 'x')).status, 200, `--workers ${workers}: still serving`)
    t.equal(served.child.exitCode, null, `--workers ${workers}: not stopped`)
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0, `--workers ${workers}: SIGTERM still drains and exits 0`)
  }
})

t.test('signals as the server starts: a SIGHUP does not kill it, a SIGTERM drains it', async t => {
  for (const workers of ['1', '2']) {
    const port = await freePort()
    const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(port), '--workers', workers, ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    const pid = served.child.pid ?? 0
    // As soon as the command's code runs (its first module holds the signals), while it still loads.
    await until('SIGHUP handled', () => catches(pid, 1) || served.child.exitCode !== null)
    const hangups = setInterval(() => { served.child.kill('SIGHUP') }, 20)
    try {
      await answering(port, served)
    } finally {
      clearInterval(hangups)
    }
    t.equal(served.child.exitCode, null, `--workers ${workers}: SIGHUPs while starting did not stop it`)
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0)
  }
  for (const workers of ['1', '2']) {
    const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(await freePort()), '--workers', workers, ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    // Node catches SIGTERM natively from its start (to re-raise it): the SIGHUP bit says the command's handlers are set.
    await until('signals handled', () => catches(served.child.pid ?? 0, 1) || served.child.exitCode !== null)
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0, `--workers ${workers}: start-up finished, then drained`)
    t.notMatch(served.stdout(), /listening at/, `--workers ${workers}: it never listened`)
  }
})

t.test('-p 0 with workers: the primary names the ports the workers listen on', async t => {
  const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', '0', '--s3-port', String(await freePort()), '--workers', '2', '--fsync', 'off', '--log-level', 'info'])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await until('the serving line', () => served.stdout().includes('"msg":"web console'))
  const serving = lines(served).map(l => JSON.parse(l) as Record<string, unknown>).find(l => l.msg === 'serving')
  const listening = lines(served).map(l => /HTTP gateway listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(l)?.[1]).find(p => p !== undefined)
  const s3Listening = lines(served).map(l => /S3 API listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(l)?.[1]).find(p => p !== undefined)
  t.ok(listening !== undefined && Number(listening) > 0, 'a worker says its port')
  t.equal(serving?.httpGatewayPort, Number(listening))
  t.equal(serving?.s3ApiPort, Number(s3Listening))
  t.match(served.stdout(), `web console: http://127.0.0.1:${listening}/_console/`)
  t.match(served.stdout(), new RegExp(`127\\.0\\.0\\.1:${s3Listening}`), 'the S3 note names the bound S3 port')
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})
