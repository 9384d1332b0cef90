/**
 * What `fsbucket serve` says and does while it starts: the start-up lines
 * name the HTTP gateway's port and the S3 API's; a busy S3 port is
 * reported before any line says the other port listens; a data directory
 * that cannot be made fails at once (`/proc/nope` used to spin for ever);
 * and a signal during start-up ends the process within the drain timeout.
 */
import t from 'tap'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import path from 'node:path'
import pino from 'pino'
import { openRegistry } from '../../src/index.js'
import { ensureFirstBucket, listenFailure } from '../../src/server/startup.js'
import { testdir } from '../testdir.js'
import { freePort, run, within } from './serve-process.js'

const quiet = ['--fsync', 'off', '--log-level', 'info']

async function occupied (): Promise<{ server: Server, port: number }> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as { port: number }).port }
}

t.test('the start-up lines say which port is the HTTP gateway and which the S3 API', async t => {
  for (const workers of ['1', '2']) {
    const port = await freePort()
    const s3Port = await freePort()
    const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(port), '--s3-port', String(s3Port), '--workers', workers,
      '--route', 'cdn.localhost=default', '--route', '/assets/=default;listing=on', ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    const deadline = Date.now() + 60_000
    while (!served.stdout().includes('web console:') && served.child.exitCode === null && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
    const out = served.stdout()
    t.match(out, `HTTP gateway listening at http://127.0.0.1:${port}`, `--workers ${workers}: the gateway's line`)
    t.match(out, `S3 API listening at http://127.0.0.1:${s3Port}`, `--workers ${workers}: the S3 line`)
    t.notMatch(out, 'Server listening', `--workers ${workers}: no line leaves the port unnamed`)
    if (workers === '2') t.match(out, `"httpGatewayPort":${port},"s3ApiPort":${s3Port}`, 'the primary\'s line names both')
    const routeLines = out.split('\n').filter(line => line.includes('public route:'))
    t.equal(routeLines.length, 2, `--workers ${workers}: one line a route, once`)
    t.match(out, 'public route: cdn.localhost/ serves the bucket default, read-only')
    t.match(out, 'public route: /assets/ on every host name serves the bucket default, read-only')
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0)
    t.equal(served.stdout().split('\n').filter(line => line.includes('stopped: every request finished')).length, 1, `--workers ${workers}: one last line says it stopped`)
  }
})

t.test('a busy S3 port: one line naming it, and no line saying the gateway listens', async t => {
  const { server, port: s3Port } = await occupied()
  t.teardown(() => { server.close() })
  for (const workers of ['1', '2']) {
    const port = await freePort()
    const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(port), '--s3-port', String(s3Port), '--workers', workers, ...quiet])
    t.equal(await within(served.exited, 60_000, 'exit'), 1, `--workers ${workers}: exit 1`)
    const lines = served.stderr().trim().split('\n')
    t.equal(lines.length, 1, `--workers ${workers}: one line`)
    t.equal(lines[0], `cannot listen: port ${s3Port} on 127.0.0.1 is already in use (EADDRINUSE) (the S3 API port); choose another port with --s3-port (FSBUCKET_S3_PORT; 0 turns the S3 port off)`)
    t.notMatch(served.stdout(), /listening|serving/i, `--workers ${workers}: no line said a port was listening`)
  }
})

t.test('listening errors name the port\'s role; 8787 busy mentions wrangler dev', async t => {
  const busy = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' })
  const cases: Array<[number, 'HTTP gateway' | 'S3 API' | undefined, string]> = [
    [8787, 'HTTP gateway', 'cannot listen: port 8787 on 127.0.0.1 is already in use (EADDRINUSE) (the HTTP gateway port); 8787 is also the default port of `wrangler dev`, which may be running: stop it or choose another port with --port (FSBUCKET_PORT)'],
    [8788, 'S3 API', 'cannot listen: port 8788 on 127.0.0.1 is already in use (EADDRINUSE) (the S3 API port); choose another port with --s3-port (FSBUCKET_S3_PORT; 0 turns the S3 port off)'],
    [9000, undefined, 'cannot listen: port 9000 on 127.0.0.1 is already in use (EADDRINUSE)']
  ]
  for (const [port, role, message] of cases) t.equal(listenFailure(busy, '127.0.0.1', port, role).message, message)
  const denied = Object.assign(new Error('listen EACCES'), { code: 'EACCES' })
  t.equal(listenFailure(denied, '0.0.0.0', 80, 'HTTP gateway').message, 'cannot listen: no permission to use port 80 on 0.0.0.0 (EACCES) (the HTTP gateway port)')
})

t.test('a data directory that cannot be made (/proc/nope): a clear error at once, exit 1', async t => {
  for (const workers of ['1', '2']) {
    const served = run(['serve', '--data', '/proc/nope', '--port', String(await freePort()), '--s3-port', '0', '--workers', workers, ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    t.equal(await within(served.exited, 30_000, `--workers ${workers}: exit`), 1)
    t.equal(served.stderr().trim(), 'cannot create the data directory /proc/nope: does not exist (ENOENT)')
  }
})

t.test('SIGTERM during start-up: the process exits within the drain timeout, with or without workers', async t => {
  for (const workers of ['1', '2']) {
    // A catalog that accepts connections and never answers: start-up waits on it for ever.
    const sockets: Socket[] = []
    const silent = createServer(socket => { sockets.push(socket) })
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { for (const s of sockets) s.destroy(); silent.close() })
    const catalogPort = (silent.address() as { port: number }).port
    const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--catalog', `postgres://fsbucket@127.0.0.1:${catalogPort}/fsbucket`,
      '--port', String(await freePort()), '--s3-port', '0', '--workers', workers, '--drain-timeout', '1', ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    const deadline = Date.now() + 60_000
    while (sockets.length === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
    t.ok(sockets.length > 0, 'start-up is waiting on the catalog')
    served.child.kill('SIGTERM')
    // One second of drain timeout, and room for a loaded machine; without the bound it never exits.
    t.equal(await within(served.exited, 15_000, 'exit after SIGTERM'), 1, `--workers ${workers}: exit 1`)
    t.match(served.stderr(), 'stopped during start-up: it did not finish within the drain timeout (1 s)')
  }
})

t.test('a worker that dies just as the primary answers it: the lost message does not crash the primary', async t => {
  // Ctrl-C signals the whole group: a worker may die of it just after asking for its options, and the primary's
  // answer then fails (EPIPE) as an 'error' on its Worker, which crashed the primary and, through it, the other
  // workers. Made certain here: the primary is stopped while the second worker asks and dies, then resumed.
  // At debug level, the primary says when a message to a worker was lost: the test knows the race was run.
  const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(await freePort()), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'debug'])
  t.teardown(() => { served.child.kill('SIGKILL') })
  const primary = served.child.pid ?? 0
  const stat = (pid: number): string[] => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  const workers = (): number[] => readdirSync('/proc').filter(entry => /^\d+$/.test(entry))
    .filter(pid => { try { return stat(Number(pid))[1] === String(primary) } catch { return false } })
    .map(Number)
  // The first worker listens, then the primary forks the second.
  await within((async () => { while (workers().length < 2) await new Promise(resolve => setTimeout(resolve, 20)) })(), 60_000, 'the second worker')
  process.kill(primary, 'SIGSTOP')
  const [second] = workers().sort((a, b) => b - a)
  // With the primary deaf, the second worker loads and asks for its options, then waits: its CPU time stops moving.
  const cpu = (): number => Number(stat(second)[11]) + Number(stat(second)[12])
  await within((async () => {
    for (let last = -1, still = 0; still < 3; await new Promise(resolve => setTimeout(resolve, 200))) {
      const now = cpu()
      still = now === last ? still + 1 : 0
      last = now
    }
  })(), 60_000, 'the second worker waits for its options')
  process.kill(second, 'SIGKILL')
  await new Promise(resolve => setTimeout(resolve, 200))
  process.kill(primary, 'SIGCONT')
  await within((async () => { while (!served.stdout().includes('a message to a worker was lost')) await new Promise(resolve => setTimeout(resolve, 50)) })(), 30_000, 'the lost message')
  t.notMatch(served.stderr(), /Unhandled 'error' event|EPIPE/, 'no crash on stderr')
  t.equal(served.child.exitCode, null, 'the primary still runs')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')
})

t.test('--sweep-interval stops at the longest delay Node\'s timers keep (24.8 days): a longer one would sweep every millisecond', async t => {
  for (const [args, env] of [[['--sweep-interval', '2147484'], {}], [[], { FSBUCKET_SWEEP_INTERVAL: '2678400' }]] as Array<[string[], Record<string, string>]>) {
    const served = run(['serve', '--memory', '--port', String(await freePort()), '--s3-port', '0', '--workers', '1', ...args, ...quiet], { env })
    t.teardown(() => { served.child.kill('SIGKILL') })
    t.equal(await within(served.exited, 30_000, 'exit'), 1)
    t.match(served.stderr(), "option '--sweep-interval <seconds>'", 'the flag is named')
    t.match(served.stderr(), 'expected an integer from 0 to 2147483')
  }
})

t.test('a bucket whose settings are damaged does not stop the start: the others are served, and no first bucket is made beside it', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false, warn: () => {} })
  t.teardown(async () => { await registry.close() })
  for (const name of ['photos', 'site']) await registry.create(name)
  writeFileSync(path.join(dir, 'photos', '.fsbucket', 'settings.json'), '{"format":1, broken')
  await ensureFirstBucket(registry, 'default', pino({ level: 'silent' }))
  t.same((await registry.list()).map(b => b.name), ['site'], 'the other bucket is served, and no `default` was made')

  const empty = await openRegistry(testdir(t), { fsync: false })
  t.teardown(async () => { await empty.close() })
  await ensureFirstBucket(empty, 'default', pino({ level: 'silent' }))
  t.same((await empty.list()).map(b => b.name), ['default'], 'an empty directory gets its first bucket')
})
