/**
 * The object commands run as users run them: `node bin/fsbucket.js ...` in
 * a child process, over either transport. `localCli` works on a data
 * directory (`--data`); `httpCli` on a gateway built with buildApp, listening
 * on an ephemeral port in this process (`--endpoint`, `--token`). Both give
 * a scratch directory for local files, apart from the data directory.
 */
import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { closeSync, openSync, promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../../src/app.js'
import { testdir } from '../testdir.js'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const bin = path.join(root, 'bin', 'fsbucket.js')
export const token = 'cli-test-token-42'

export interface Result {
  code: number | null
  stdout: Buffer
  stderr: string
  /** stdout as text. */
  out: string
}

export interface Cli {
  transport: 'local' | 'http'
  dataDir: string
  /** A scratch directory for local files; the working directory of every run. */
  work: string
  /** The transport's flags (--data, or --endpoint and --token). */
  flags: string[]
  run: (args: string[], options?: { input?: Buffer, stdinPath?: string, env?: Record<string, string> }) => Promise<Result>
}

/** The environment of a child: this one without any FSBUCKET_ variable. */
export function cleanEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('FSBUCKET_')) env[name] = value
  return { ...env, ...extra }
}

/** `input`: what stdin gives, through a pipe; `stdinPath`: a file (or a directory) opened as stdin instead, as `< path` does. */
export async function runBin (args: string[], options: { cwd: string, input?: Buffer, stdinPath?: string, env?: Record<string, string> }): Promise<Result> {
  const stdinFd = options.stdinPath === undefined ? null : openSync(options.stdinPath, 'r')
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env: cleanEnv(options.env), stdio: [stdinFd ?? 'pipe', 'pipe', 'pipe'] })
  if (stdinFd !== null) closeSync(stdinFd)
  const stdout: Buffer[] = []
  const stderr: Buffer[] = []
  child.stdout?.on('data', chunk => stdout.push(chunk))
  child.stderr?.on('data', chunk => stderr.push(chunk))
  child.stdin?.on('error', () => {})
  child.stdin?.end(options.input)
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  const out = Buffer.concat(stdout)
  return { code, stdout: out, out: out.toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }
}

async function scratch (t: Test, dataDir: string): Promise<string> {
  const work = path.join(dataDir, '..', `${path.basename(dataDir)}-work`)
  await fsp.mkdir(work, { recursive: true })
  t.teardown(async () => { await fsp.rm(work, { recursive: true, force: true }) })
  return work
}

export async function localCli (t: Test): Promise<Cli> {
  const dataDir = testdir(t)
  const work = await scratch(t, dataDir)
  const flags = ['--data', dataDir]
  return { transport: 'local', dataDir, work, flags, run: async (args, options) => await runBin([...args, ...flags], { cwd: work, ...options }) }
}

export async function httpCli (t: Test): Promise<Cli> {
  const dataDir = testdir(t)
  const work = await scratch(t, dataDir)
  const app = await buildApp({ dataDir, host: '127.0.0.1', token, publicBuckets: [], routes: [], fsync: false, logLevel: false })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close() })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const flags = ['--endpoint', `http://127.0.0.1:${address.port}`, '--token', token]
  return { transport: 'http', dataDir, work, flags, run: async (args, options) => await runBin([...args, ...flags], { cwd: work, ...options }) }
}
