/**
 * `fsbucket serve` forks its workers before it parses its command line
 * (src/server/early-fork.ts). The guess of how many must be what the command
 * line then decides, or nothing; and whatever the guess, the server runs the
 * workers it was asked for, and a command line that fails leaves no worker.
 */
import t from 'tap'
import { spawn, execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import type { Command } from 'commander'
import { buildCli } from '../../src/main.js'
import { workersAskedFor } from '../../src/server/early-fork.js'
import { testdir } from '../testdir.js'
import { bin, freePort } from './serve-process.js'

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
    [['serve', '--', '--workers', '3'], {}]
  ]
  for (const [args, env] of cases) {
    const guess = workersAskedFor(args, env)
    const parsed = parsedWorkers(args, env)
    const label = `${Object.entries(env).map(([k, v]) => `${k}=${v} `).join('')}fsbucket ${args.join(' ')}`
    if (guess === null) t.ok(parsed === null || parsed < 2 || args.includes('--'), `${label}: no guess (parsed ${parsed})`)
    else t.equal(guess, parsed, `${label}: ${guess} workers`)
  }
  t.equal(workersAskedFor(['serve'], {}), cores >= 2 ? cores : null, 'one per core by default')
  t.equal(workersAskedFor(['bucket', 'list', '--workers', '3'], {}), null, 'other commands fork nothing')
  t.equal(workersAskedFor(['serve', '--workers', '3'], {}), 3)
})

/** The pids of the processes whose parent is `pid`. */
function childrenOf (pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(s => s !== '').map(Number)
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
  const server = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--workers', '3', '--no-such-flag'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  server.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const seen = new Set<number>()
  const watch = setInterval(() => { for (const pid of childrenOf(server.pid!)) seen.add(pid) }, 5)
  const code = await new Promise<number | null>(resolve => server.once('exit', resolve))
  clearInterval(watch)
  t.equal(code, 1)
  t.match(stderr, /unknown option '--no-such-flag'/)
  t.ok(seen.size >= 1, `the workers were forked early (${seen.size} seen)`)
  // Killed as the command exits, not left to notice it later.
  await new Promise(resolve => setTimeout(resolve, 20))
  const alive = [...seen].filter(isRunning)
  t.same(alive, [], 'none outlives the command')
})

t.test('the workers forked early are the server\'s workers, not more', async t => {
  const dataDir = testdir(t)
  const port = await freePort()
  const server = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', String(port), '--workers', '3', '--s3-port', '0', '--log-level', 'info'], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  let out = ''
  await new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); if (/"msg":"serving/.test(out)) resolve() })
    server.once('exit', code => reject(new Error(`exited ${code}: ${out}`)))
  })
  t.equal(childrenOf(server.pid!).length, 3, 'three workers: those forked early were adopted, none forked twice')
  const res = await fetch(`http://127.0.0.1:${port}/`)
  t.equal(res.status, 200)
  const exited = new Promise<number | null>(resolve => server.once('exit', resolve))
  server.kill('SIGTERM')
  t.equal(await exited, 0)
})
