/**
 * `fsbucket serve` with several workers forks the first of them as the
 * command starts, before it loads its option parser and its commands: that
 * worker then spends this time (about a tenth of a second here) booting
 * Node and loading its doors instead of waiting for the primary to get
 * there. The others start once it listens (serve.ts): started beside it,
 * they took the cores its start needed, and the server answered its first
 * request 100-120 ms later on two cores (docs/benchmarks.md).
 * bin/fsbucket.js calls `forkEarly` for `serve`; nothing else does.
 *
 * The command line still decides. Whether it wants workers is only a guess
 * here, from the same flags and variable (`workersAskedFor`, which declines
 * whenever it is unsure), and the worker does nothing until the primary
 * sends it the options it parsed and checked (serve.ts). The primary
 * adopts the worker (`takeEarlyWorkers`) and replays what it said or did
 * before the primary listened. A server of one process kills it
 * (`dismissEarlyWorkers`), and a command line that fails exits with it
 * killed.
 */
import cluster, { type ClusterSettings, type Worker } from 'node:cluster'
import os from 'node:os'
import { fileURLToPath } from 'node:url'

/**
 * How the cluster starts a worker: the module it runs (worker.ts, beside
 * this one in tsc's output and in the bundle alike), with `serve` for its
 * only argument. Without `args`, Node hands each worker the primary's own
 * arguments, which may hold secrets (`--token`, `--api-key`, a `--catalog`
 * URL's password) for `ps` to show every local user once per worker; a
 * worker reads none of them (it is sent the parsed options), and `serve`
 * is there only so that `ps` tells a worker apart (docs/deployment.md).
 */
export const workerSettings: ClusterSettings = { exec: fileURLToPath(new URL('./worker.js', import.meta.url)), args: ['serve'] }

/** What a worker said or did before the primary listened. */
export type EarlyEvent =
  | { kind: 'message', worker: Worker, message: unknown }
  | { kind: 'exit', worker: Worker, code: number, signal: string | null }

export interface EarlyWorkers {
  workers: Worker[]
  /** In the order they happened. */
  events: EarlyEvent[]
}

/** Most workers `serve` accepts (its `--workers` flag, main.ts). */
export const maxWorkers = 256
/** The variable `--workers` falls back to. */
export const workersVariable = 'FSBUCKET_WORKERS'
/** Workers when neither says: one per core. */
export const defaultWorkers = (): number => os.availableParallelism()
/**
 * Arguments after which the command line does something else than serve
 * with workers (`--memory`: one process). `serve`'s flags without a value
 * are all here: every other flag takes one (test/server/early-fork.test.ts
 * checks).
 */
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
    else if (/^-w[^-]/.test(arg)) given = arg.slice(2)
    // Any other flag alone (`--port`, `-p`) takes the next argument as its value, even one that looks like a flag, as
    // the parser does; a flag with its value attached (`--port=1`, `-p1`) takes none.
    else if (/^--[^=]+$/.test(arg) || /^-[^-]$/.test(arg)) i++
  }
  const text = given ?? env[workersVariable] ?? String(defaultWorkers())
  if (!/^\d+$/.test(text)) return null
  const count = Number(text)
  return count >= 2 && count <= maxWorkers ? count : null
}

/**
 * What a worker's environment changes from the primary's: nothing, or an
 * empty NODE_EXTRA_CA_CERTS. Node 20 reads and parses the certificates that
 * variable names as every process starts, before any of its code runs
 * (80-90 ms of CPU and 2 MiB of memory each for a system's bundle here);
 * Node 22 and later only when a TLS client first needs them. A worker's
 * only TLS client is its connection to a PostgreSQL catalog
 * (`--catalog`): without one, a worker on Node 20 starts without them. The
 * primary keeps them (queue-push.ts posts with fetch).
 */
export function workerEnv (catalog: boolean, env: NodeJS.ProcessEnv = process.env, node: string = process.versions.node): Record<string, string> | undefined {
  const extra = env.NODE_EXTRA_CA_CERTS
  if (catalog || extra === undefined || extra === '' || Number(node.split('.')[0]) >= 22) return undefined
  return { NODE_EXTRA_CA_CERTS: '' }
}

/** Whether `serve <args>` may use a PostgreSQL catalog, read as the command line reads it (`--catalog`, else FSBUCKET_CATALOG; an empty one is none). */
export function catalogAskedFor (args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return args.some(arg => arg === '--catalog' || arg.startsWith('--catalog=')) || (env.FSBUCKET_CATALOG ?? '') !== ''
}

let early: (EarlyWorkers & { stop: () => void }) | null = null

/**
 * The signals `serve` answers (serve.ts), held from the command's first
 * moments until its handlers take them over: Node's default for each is to
 * die at once (143, 130, 129), which the half second of loading the command
 * line would otherwise leave open.
 */
const heldKinds = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
const held: NodeJS.Signals[] = []
const holdSignal = (signal: NodeJS.Signals): void => { held.push(signal) }
let holding = false

/** The signals that came while they were held, in order; the holding stops. */
export function takeHeldSignals (): NodeJS.Signals[] {
  for (const kind of heldKinds) process.off(kind, holdSignal)
  holding = false
  return held.splice(0)
}

/**
 * As `serve` starts: holds its signals (above), and forks the first worker
 * of `serve <args>` when it plainly wants several; a fork that fails leaves
 * it to the primary.
 */
export function forkEarly (args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  if (args[0] === 'serve' && cluster.isPrimary && !holding) {
    holding = true
    for (const kind of heldKinds) process.on(kind, holdSignal)
  }
  if (workersAskedFor(args, env) === null || !cluster.isPrimary || early !== null) return
  const workers: Worker[] = []
  const events: EarlyEvent[] = []
  const onMessage = (worker: Worker, message: unknown): void => { events.push({ kind: 'message', worker, message }) }
  const onExit = (worker: Worker, code: number, signal: string | null): void => { events.push({ kind: 'exit', worker, code, signal }) }
  // Not adopted (the command line failed): the workers go with this process.
  const onProcessExit = (): void => { killAll(workers) }
  const stop = (): void => {
    cluster.off('message', onMessage)
    cluster.off('exit', onExit)
    process.off('exit', onProcessExit)
  }
  cluster.on('message', onMessage)
  cluster.on('exit', onExit)
  process.on('exit', onProcessExit)
  try {
    cluster.setupPrimary(workerSettings)
    workers.push(cluster.fork(workerEnv(catalogAskedFor(args, env), env)))
  } catch {
    // The primary forks them itself, as it would have without this.
    stop()
    killAll(workers)
    return
  }
  early = { workers, events, stop }
}

function killAll (workers: readonly Worker[]): void {
  for (const worker of workers) worker.process.kill('SIGKILL')
}

/** The worker forked early (in a list), with what happened to it so far, once; null when there was none. */
export function takeEarlyWorkers (): EarlyWorkers | null {
  if (early === null) return null
  const { workers, events, stop } = early
  early = null
  stop()
  return { workers, events }
}

/** Kills the worker forked early, for a server that runs as one process after all. */
export function dismissEarlyWorkers (): void {
  killAll(takeEarlyWorkers()?.workers ?? [])
}
