/**
 * `fsbucket serve` with several workers forks them as the command starts,
 * before it loads its option parser and its commands: a worker then spends
 * that time (about a tenth of a second here) booting Node and loading its
 * doors instead of waiting for the primary to get there. bin/fsbucket.js
 * calls `forkEarly` for `serve` only; nothing else loads this module.
 *
 * The command line still decides. The count read here is only a guess from
 * the same flags and variable (`workersAskedFor`, which declines whenever it
 * is unsure), and a worker does nothing until the primary sends it the
 * options it parsed and checked (serve.ts). The primary adopts these
 * workers (`takeEarlyWorkers`): it keeps as many as it wants, kills any
 * extra, forks what is missing, and replays what they said or did before it
 * listened. A command line that fails before that exits, and its early
 * workers are killed with it.
 */
import cluster, { type Worker } from 'node:cluster'
import os from 'node:os'
import { fileURLToPath } from 'node:url'

/** The module a worker runs (worker.ts), beside this one in tsc's output and in the bundle alike. */
export const workerEntry = fileURLToPath(new URL('./worker.js', import.meta.url))

/** What a worker said or did before the primary listened. */
export type EarlyEvent =
  | { kind: 'message', worker: Worker, message: unknown }
  | { kind: 'exit', worker: Worker, code: number, signal: string | null }

export interface EarlyWorkers {
  workers: Worker[]
  /** In the order they happened. */
  events: EarlyEvent[]
}

/** Workers `serve` accepts (main.ts's `--workers` parser). */
const maxWorkers = 256
/** The serve flags that take no value; every other flag of `serve` takes one. */
const valueless = new Set(['--memory'])
/** Arguments after which the command line does something else than serve with workers. */
const declines = new Set(['-h', '--help', '-V', '--version', '--memory', '--'])

/**
 * How many workers `fsbucket serve <args>` will run, read as the command
 * line reads them (the last `--workers`/`-w`, else FSBUCKET_WORKERS, else
 * one per core); null when that is fewer than two or the arguments are not
 * plainly a server's (help, `--memory`, a malformed count).
 */
export function workersAskedFor (args: readonly string[], env: NodeJS.ProcessEnv): number | null {
  if (args[0] !== 'serve') return null
  let given: string | undefined
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]
    if (declines.has(arg)) return null
    if (arg === '--workers' || arg === '-w') given = args[++i]
    else if (arg.startsWith('--workers=')) given = arg.slice('--workers='.length)
    else if (arg.startsWith('-w') && !arg.startsWith('--')) given = arg.slice(2)
    // Any other flag without `=` takes the next argument as its value, even one that looks like a flag, as the parser does.
    else if (arg.startsWith('-') && !arg.includes('=') && !valueless.has(arg)) i++
  }
  const text = given ?? env.FSBUCKET_WORKERS ?? String(os.availableParallelism())
  if (!/^\d+$/.test(text)) return null
  const count = Number(text)
  return count >= 2 && count <= maxWorkers ? count : null
}

let early: (EarlyWorkers & { stop: () => void }) | null = null

/** Forks the workers `serve <args>` will want, when it plainly wants several. */
export function forkEarly (args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const count = workersAskedFor(args, env)
  if (count === null || !cluster.isPrimary || early !== null) return
  const events: EarlyEvent[] = []
  const onMessage = (worker: Worker, message: unknown): void => { events.push({ kind: 'message', worker, message }) }
  const onExit = (worker: Worker, code: number, signal: string | null): void => { events.push({ kind: 'exit', worker, code, signal }) }
  // Not adopted (the command line failed or was not a server after all): the workers go with this process.
  const onProcessExit = (): void => { for (const worker of workers) worker.process.kill('SIGKILL') }
  cluster.on('message', onMessage)
  cluster.on('exit', onExit)
  process.on('exit', onProcessExit)
  cluster.setupPrimary({ exec: workerEntry })
  const workers = Array.from({ length: count }, () => cluster.fork())
  const stop = (): void => {
    cluster.off('message', onMessage)
    cluster.off('exit', onExit)
    process.off('exit', onProcessExit)
  }
  early = { workers, events, stop }
}

/** The workers forked early, with what happened to them so far, once; null when there were none. */
export function takeEarlyWorkers (): EarlyWorkers | null {
  if (early === null) return null
  const { workers, events, stop } = early
  early = null
  stop()
  return { workers, events }
}
