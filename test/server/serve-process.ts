/** Runs `fsbucket serve` (or another command) as a child process, for the tests about processes and signals. */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import { request } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/fsbucket.js')

export { freePort } from '../../scripts/bench/processes.js'

export interface Served {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Exit code (or the signal's name). */
  exited: Promise<number | string>
}

/** `detached`: in a process group of its own (whose id is its pid), as a service manager starts it, for signals to the whole group. */
export function run (args: string[], options: { stdout?: StdioOptions[number], uid?: number, gid?: number, env?: NodeJS.ProcessEnv, cwd?: string, detached?: boolean } = {}): Served {
  const stdio = ['ignore', options.stdout ?? 'pipe', 'pipe'] as StdioOptions
  // Without tap's hooks (added to NODE_OPTIONS of every child): they write where another user may not,
  // and they stall the IPC of cluster workers. The server runs as users run it.
  const child: ChildProcess = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, bin, ...args], {
    stdio,
    uid: options.uid,
    gid: options.gid,
    cwd: options.cwd,
    detached: options.detached,
    env: { ...process.env, ...options.env }
  })
  let out = ''
  let err = ''
  child.stdout?.on('data', chunk => { out += String(chunk) })
  child.stderr?.on('data', chunk => { err += String(chunk) })
  const exited = new Promise<number | string>(resolve => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  return { child, stdout: () => out, stderr: () => err, exited }
}

export interface Answer { status: number, body: string }

/** One request on its own connection; rejects on a connection error. */
export async function call (port: number, method: string, urlPath: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: urlPath, agent: false, headers: { connection: 'close', ...headers } }, res => {
      const chunks: Buffer[] = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Waits until the server answers HTTP (any status). */
export async function answering (port: number, served: Served, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (served.child.exitCode !== null) throw new Error(`the server exited: ${served.stderr()}`)
    try {
      await call(port, 'GET', '/')
      return
    } catch {
      if (Date.now() > deadline) throw new Error(`the server did not answer within ${ms} ms: ${served.stderr()}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
}

export async function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms) })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
