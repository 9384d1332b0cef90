/**
 * `fsbucket serve` forks its first worker before it parses its command line
 * (src/server/early-fork.ts), and the others once that one listens. The
 * guess of how many must be what the command line then decides, or nothing;
 * and whatever the guess, the server runs the workers it was asked for, and
 * a command line that fails leaves no worker.
 */
import t from 'tap'
import cluster, { type Worker } from 'node:cluster'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import type { Command } from 'commander'
import { buildCli } from '../../src/main.js'
import { catalogAskedFor, dismissEarlyWorkers, forkEarly, takeEarlyWorkers, workerEnv, workersAskedFor } from '../../src/server/early-fork.js'
import { testdir } from '../testdir.js'
import { freePort, run } from './serve-process.js'

// The checks of processes read /proc.
if (process.platform !== 'linux') t.plan(0, 'Linux only')

/** The `serve` command as the command line defines it. */
const serveCommand = (): Command => buildCli().commands.find(c => c.name() === 'serve') as Command

/** `--workers` as the command line parses `fsbucket <args>` with `env`; null when it refuses them. */
function parsedWorkers (args: string[], env: NodeJS.ProcessEnv): number | null {
  const saved = process.env
  process.env = env
  try {
    const program = buildCli().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} })
    const serve = program.commands.find(c => c.name() === 'serve') as Command
    let workers: number | null = null
    serve.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} }).action((options: { workers: number, memory?: boolean }) => { workers = options.memory === true ? 1 : options.workers })
    program.parse(['node', 'fsbucket', ...args])
    return workers
  } catch {
    return null
  } finally {
    process.env = saved
  }
}

t.test('the guess is what the command line decides, or none', async t => {
  const cores = os.availableParallelism()
  const cases: Array<[string[], NodeJS.ProcessEnv]> = [
    [['serve', '--workers', '3'], {}],
    [['serve', '-w', '4'], {}],
    [['serve', '-w5'], {}],
    [['serve', '--workers=6'], {}],
    [['serve', '--workers', '3', '--workers', '2'], {}],
    [['serve'], { FSBUCKET_WORKERS: '3' }],
    [['serve', '--workers', '2'], { FSBUCKET_WORKERS: '5' }],
    [['serve'], {}],
    [['serve', '--port', '0', '--data', './d', '--public', 'a,b'], {}],
    // A value that looks like the flag is a value.
    [['serve', '--token', '-w', '--workers', '2'], {}],
    [['serve', '--default-bucket', '--workers', '-w', '3'], {}],
    [['serve', '-t', '-w3', '--workers', '4'], {}],
    [['serve', '--workers', '1'], {}],
    [['serve', '--memory'], {}],
    [['serve', '--memory', '--workers', '3'], {}],
    [['serve', '--workers', 'two'], {}],
    [['serve', '--workers', '0'], {}],
    [['serve', '--workers', '257'], {}],
    [['serve'], { FSBUCKET_WORKERS: 'x' }],
    [['serve', '--help'], {}],
    [['serve', '--', '--workers', '3'], {}],
    // A short flag with its value attached takes nothing after it.
    [['serve', '-p8080', '--workers', '1'], {}],
    [['serve', '-p8080', '--workers', '3'], {}],
    [['serve', '-tX', '--memory'], {}],
    [['serve', '--port=8080', '--workers', '3'], {}]
  ]
  for (const [args, env] of cases) {
    const guess = workersAskedFor(args, env)
    const parsed = parsedWorkers(args, env)
    const label = `${Object.entries(env).map(([k, v]) => `${k}=${v} `).join('')}fsbucket ${args.join(' ')}`
    // A command line it refuses exits, whatever was forked (the next test); any other is guessed right, or not at all when it runs one process.
    if (parsed !== null) t.equal(guess, parsed >= 2 ? parsed : null, `${label}: ${parsed} worker(s), guessed ${guess}`)
    else t.pass(`${label}: refused (guessed ${guess})`)
  }
  t.equal(workersAskedFor(['serve'], {}), cores >= 2 ? cores : null, 'one per core by default')
  t.equal(workersAskedFor(['bucket', 'list', '--workers', '3'], {}), null, 'other commands fork nothing')
  // The guess takes every flag but these for one with a value: a flag without one must make it decline.
  for (const option of serveCommand().options.filter(o => !o.required && !o.optional)) {
    for (const flag of [option.long, option.short].filter(f => f !== undefined)) {
      t.equal(workersAskedFor(['serve', flag, '--workers', '3'], {}), null, `${flag} takes no value: no guess`)
    }
  }
  t.equal(workersAskedFor(['serve', '--workers', '3'], {}), 3)
})

/** The pids of the processes whose parent is `pid`. */
function childrenOf (pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(s => s !== '').map(Number)
  } catch {
    return []
  }
}

/** Whether process `pid` runs: exists and is not a zombie (which a container's first process may never reap). */
function isRunning (pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'
  } catch {
    return false
  }
}

t.test('a refused command line leaves no early worker behind', async t => {
  const dataDir = testdir(t)
  // The guess says three workers; the command line refuses the unknown flag after forking them.
  const served = run(['serve', '--data', dataDir, '--workers', '3', '--no-such-flag'])
  const pid = served.child.pid!
  const seen = new Set<number>()
  const watch = setInterval(() => { for (const child of childrenOf(pid)) seen.add(child) }, 5)
  const code = await served.exited
  clearInterval(watch)
  t.equal(code, 1)
  t.match(served.stderr(), /unknown option '--no-such-flag'/)
  t.equal(seen.size, 1, 'the first worker was forked early, alone')
  // Killed as the command exits, not left to notice their channel closed later.
  const deadline = Date.now() + 20
  while (Date.now() < deadline && [...seen].some(isRunning)) await new Promise(resolve => setTimeout(resolve, 2))
  t.same([...seen].filter(isRunning), [], 'none outlives the command')
})

/** `forkEarly` from this process, without tap's hooks (they stall a cluster worker's channel). */
function forkHere (args: string[]): void {
  const options = process.env.NODE_OPTIONS
  delete process.env.NODE_OPTIONS
  try {
    forkEarly(args)
  } finally {
    if (options !== undefined) process.env.NODE_OPTIONS = options
  }
}

t.test('the worker forked early waits for its options; the primary gets what it said before it took it', async t => {
  let asked = 0
  const onMessage = (_worker: Worker, message: { fsbucket?: string }): void => { if (message.fsbucket === 'options-asked') asked++ }
  cluster.on('message', onMessage)
  t.teardown(() => { cluster.off('message', onMessage) })
  forkHere(['serve', '--workers', '2'])
  const deadline = Date.now() + 30_000
  while (asked < 1 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
  t.equal(asked, 1, 'the worker asked for its options')
  const early = takeEarlyWorkers()
  t.equal(takeEarlyWorkers(), null, 'taken once')
  const workers = early?.workers ?? []
  t.equal(workers.length, 1, 'one worker: the others start once it listens')
  t.same(early?.events.map(e => e.kind === 'message' ? (e.message as { fsbucket?: string }).fsbucket : e.kind), ['options-asked'],
    'what it said before the primary took it is handed over')
  t.ok(workers.every(w => !w.isDead()), 'it waits, alive')
  for (const worker of workers) worker.process.kill('SIGKILL')
  await Promise.all(workers.map(async w => { if (!w.isDead()) await new Promise(resolve => w.once('exit', resolve)) }))
})

t.test('a server of one process after all kills the worker forked early', async t => {
  forkHere(['serve', '--workers', '2'])
  const pids = childrenOf(process.pid)
  t.equal(pids.length, 1, 'forked')
  dismissEarlyWorkers()
  t.equal(takeEarlyWorkers(), null, 'none left to adopt')
  const deadline = Date.now() + 5000
  while (Date.now() < deadline && pids.some(isRunning)) await new Promise(resolve => setTimeout(resolve, 10))
  t.same(pids.filter(isRunning), [], 'killed')
})

t.test('the first worker starts alone, the others once it listens; the one forked early is adopted, not one more', async t => {
  const dataDir = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', dataDir, '--port', String(port), '--workers', '3', '--s3-port', '0', '--log-level', 'info'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  const deadline = Date.now() + 60_000
  let alone = false
  while (childrenOf(served.child.pid!).length < 2) {
    if (childrenOf(served.child.pid!).length === 1) alone = true
    if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`no second worker: ${served.stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 2))
  }
  t.ok(alone, 'one worker alone first')
  t.equal((await fetch(`http://127.0.0.1:${port}/_health/live`)).status, 200, 'the port answered by the time a second worker was forked')
  while (!/"msg":"serving/.test(served.stdout())) {
    if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`no serving line: ${served.stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  t.equal(childrenOf(served.child.pid!).length, 3, 'three workers: the one forked early was adopted, none forked twice')
  const res = await fetch(`http://127.0.0.1:${port}/`)
  t.equal(res.status, 200)
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)
})

t.test('a worker on Node 20 starts without NODE_EXTRA_CA_CERTS unless it may reach a PostgreSQL catalog', async t => {
  const certificates = { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' }
  t.same(workerEnv(false, certificates, '20.20.2'), { NODE_EXTRA_CA_CERTS: '' }, 'Node 20, no catalog: without them')
  t.equal(workerEnv(true, certificates, '20.20.2'), undefined, 'a catalog: its TLS connections need them')
  t.equal(workerEnv(false, certificates, '22.12.0'), undefined, 'Node 22 reads them only when a TLS client needs them')
  t.equal(workerEnv(false, {}, '20.20.2'), undefined, 'none set: nothing to change')
  t.ok(catalogAskedFor(['serve', '--catalog', 'postgres://db/x'], {}))
  t.ok(catalogAskedFor(['serve', '--catalog=postgres://db/x'], {}))
  t.ok(catalogAskedFor(['serve'], { FSBUCKET_CATALOG: 'postgres://db/x' }))
  t.notOk(catalogAskedFor(['serve', '--catalog-connections', '3'], {}), '--catalog-connections is not --catalog')

  const dataDir = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', dataDir, '--port', String(port), '--workers', '2', '--s3-port', '0', '--log-level', 'info'], { env: certificates })
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  const deadline = Date.now() + 60_000
  while (!/"msg":"serving/.test(served.stdout())) {
    if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`no serving line: ${served.stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const variable = (pid: number): string | undefined => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find(entry => entry.startsWith('NODE_EXTRA_CA_CERTS='))
  const expected = Number(process.versions.node.split('.')[0]) >= 22 ? `NODE_EXTRA_CA_CERTS=${certificates.NODE_EXTRA_CA_CERTS}` : 'NODE_EXTRA_CA_CERTS='
  const workers = childrenOf(served.child.pid!)
  t.equal(workers.length, 2)
  for (const pid of workers) t.equal(variable(pid), expected, 'the first worker and the one forked after it alike')
  t.equal(variable(served.child.pid!), `NODE_EXTRA_CA_CERTS=${certificates.NODE_EXTRA_CA_CERTS}`, 'the primary keeps them')
  t.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 200)
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)
})

t.test('the `serving` line comes once every worker says it listens on both ports (on localhost here)', async t => {
  const dataDir = testdir(t)
  const port = await freePort()
  const s3Port = await freePort()
  const served = run(['serve', '--data', dataDir, '--host', 'localhost', '--port', String(port), '--s3-port', String(s3Port), '--workers', '2', '--log-level', 'info'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  const deadline = Date.now() + 60_000
  while (!/"msg":"serving/.test(served.stdout())) {
    if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`no serving line: ${served.stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const before = served.stdout().slice(0, served.stdout().indexOf('"msg":"serving'))
  const listened = (what: string): Set<string> => new Set([...before.matchAll(new RegExp(`"pid":(\\d+)[^\\n]*"msg":"${what} listening at`, 'g'))].map(m => m[1]))
  t.equal(listened('HTTP gateway').size, 2, 'both workers listened on the gateway port before it')
  t.equal(listened('S3 API').size, 2, 'and on the S3 port')
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)
})

t.test("a worker's command line carries none of the primary's arguments (a --token shows in ps)", async t => {
  const dataDir = testdir(t)
  const token = 'cmdline-secret-token'
  // Port 0: the system's pick, shared by the workers; the test reads processes, not answers.
  const served = run(['serve', '--data', dataDir, '--port', '0', '--s3-port', '0', '--workers', '2', '--token', token, '--log-level', 'info'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  const deadline = Date.now() + 60_000
  while (!/"msg":"serving/.test(served.stdout())) {
    if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`no serving line: ${served.stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const commandLine = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(s => s !== '')
  t.same(commandLine(served.child.pid!), ['fsbucket serve'], 'the primary shows it no more once its arguments are parsed (serve-title-secrets.test.ts)')
  const workers = childrenOf(served.child.pid!)
  t.equal(workers.length, 2, 'the first worker and the one forked after it')
  for (const pid of workers) {
    const args = commandLine(pid)
    t.notOk(args.some(arg => arg.includes(token)), `worker ${pid}: no token in ${JSON.stringify(args)}`)
    t.match(args.slice(-2), [/worker\.js$/, 'serve'], 'ps still tells it apart: worker.js serve')
  }
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)
})
