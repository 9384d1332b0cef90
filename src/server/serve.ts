/**
 * `fsbucket serve`: one server process, or a cluster primary and its
 * workers, from start-up checks to shutdown. What one process serves is
 * built by gateway.ts (as for `startServer`); this module adds what a
 * server process owns alone: signals, workers, restarts, exit codes.
 *
 * `--memory` is one process by nature (workers could not share it), so
 * the command line refuses it with `--workers` above 1, `--data` or
 * `--catalog` (cli.ts).
 *
 * Start-up fails fast, with one line naming what is wrong: an unwritable
 * data directory or bucket (preflight.ts), a port in use or an address that
 * cannot be listened on. With `--workers N` a worker that cannot listen
 * tells the primary, which stops everything at once instead of starting
 * workers that can never listen either.
 *
 * A worker that dies is replaced after a back-off (100 ms, doubling up to
 * 10 s, counted over the last minute); more than five deaths within a
 * minute is a crash loop, and the primary stops the server with a message
 * saying so (exit code 1).
 *
 * Shutdown (shutdown.ts): the first SIGINT or SIGTERM drains. The server stops accepting
 * connections, lets requests in flight finish for at most the drain timeout
 * (`--drain-timeout`, default 10 s) and exits 0, or 1 when the timeout cut
 * requests short. A second signal exits at once (1), after releasing a batch
 * being pushed to a queue's app (a second at most). Every commit the server
 * acknowledged is durable either way; an upload cut short is discarded.
 * Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process
 * group; the primary decides) and are told to drain over the cluster's IPC
 * channel, so one Ctrl-C never counts as two. A worker sent a SIGTERM of
 * its own (to replace it) says so to the primary, which starts another at
 * once (a stop asked for, not a death: no back-off, not counted towards a
 * crash loop, logged at info), serves on until that one listens (the
 * primary says `replaced`; shutdown.ts bounds the wait), so the port never
 * refuses a connection meanwhile, then drains the same way, hands the
 * primary its final metrics (metrics.ts) and exits; one sent it before it
 * serves (loading, or waiting for its options: worker.ts) says so and exits.
 *
 * SIGHUP (`systemctl reload`) never stops the server: with `--tls-cert` the
 * certificate files are read again (tls.ts; with workers, by the primary,
 * which hands them the pair it accepted, as it hands it to each new one);
 * without, a line says there is nothing to reload. The handlers are set as
 * the command starts (early-fork.ts holds a signal until these take over),
 * so a signal during start-up is never Node's default (death).
 */
import cluster, { type Worker } from 'node:cluster'
import type { BucketRegistry } from '../bucket/index.js'
import { shareChecksWithinTurns } from '../stores/turn.js'
import { dismissEarlyWorkers, takeEarlyWorkers, takeHeldSignals, workerEnv, workerSettings } from './early-fork.js'
import { createLogger } from './logger.js'
import type { GatewayOptions, PrimaryRead } from './gateway.js'
import type { StopQueuePush } from './queue-push.js'
import type { TlsPair } from './tls.js'
import { handleShutdown } from './shutdown.js'
import { afterChannel } from './worker-channel.js'
import { answerListenersClosed, isMessage, type Drain, type ReloadTls, type Replaced, type StoppingAlone } from './worker-messages.js'

export interface ServeOptions extends Omit<GatewayOptions, 's3Port'> {
  workers: number
  /** Seconds the first signal lets requests in flight finish. */
  drainTimeout: number
  /** Port of the S3-compatible API (src/s3/), in the same processes; 0 = off. */
  s3Port: number
}

/** Worker deaths within `crashWindowMs` that make a crash loop. */
const maxDeaths = 5
const crashWindowMs = 60_000
const firstRestartDelayMs = 100
const maxRestartDelayMs = 10_000

interface ListenFailed { fsbucket: 'listen-failed', message: string }
/** A worker listens on every port it serves: these (the system's pick for a port 0). */
interface Listening { fsbucket: 'listening', port: number, s3Port: number | null }
interface OptionsAsked { fsbucket: 'options-asked' }
interface Start { fsbucket: 'start', options: ServeOptions }

/** The gateway's options from the command line: its S3 port 0 means none. */
function gatewayOptions (options: ServeOptions): GatewayOptions {
  return { ...options, s3Port: options.s3Port === 0 ? null : options.s3Port }
}

/** One server process: alone (`--workers 1`), or a worker of the primary below. */
export async function serveOne (options: ServeOptions, inWorker: boolean): Promise<void> {
  // Alone after all (`--workers 1` read otherwise than early-fork.ts guessed): workers forked early are not needed.
  if (!inWorker) dismissEarlyWorkers()
  const serving = handleShutdown(options, inWorker)
  // The doors are loaded here, not at the top: the cluster's primary imports this module and serves nothing.
  const { buildGateway } = await import('./gateway.js')
  const gateway = await buildGateway(gatewayOptions(options), !inWorker)
  if (!serving(gateway)) return
  // Requests arrive through the event loop here, so the stores may share their looks at the catalogs and settings within a turn (stores/turn.ts).
  shareChecksWithinTurns(() => true)
  let bound: { port: number, s3Port: number | null }
  try {
    bound = await gateway.listen()
  } catch (err) {
    if (!inWorker || process.send === undefined) throw err
    // The primary prints it, once, and stops the other workers.
    const message: ListenFailed = { fsbucket: 'listen-failed', message: (err as Error).message }
    await new Promise(resolve => process.send?.(message, undefined, {}, resolve))
    process.exit(1)
  }
  if (inWorker) process.send?.({ fsbucket: 'listening', ...bound } satisfies Listening)
}

/**
 * In a worker (worker.ts): the server's options, asked of the primary and
 * sent once its start-up checks passed; null when it was told to drain
 * first. Asked rather than awaited: a message sent before this process
 * listens for it would be lost.
 */
export async function receiveServeOptions (): Promise<ServeOptions | null> {
  return await new Promise(resolve => {
    const onMessage = (message: unknown): void => {
      const options = isMessage<Start>(message, 'start') ? message.options : isMessage<Drain>(message, 'drain') ? null : undefined
      if (options === undefined) return
      process.off('message', onMessage)
      resolve(options)
    }
    process.on('message', onMessage)
    process.send?.({ fsbucket: 'options-asked' } satisfies OptionsAsked)
  })
}

/**
 * The cluster primary: checks, first bucket, sweeper, workers, restarts,
 * shutdown. It loads no door (startup.ts), and its first worker starts
 * before its checks (most often before it parsed its command line:
 * early-fork.ts, whose worker it adopts), the others once that one listens:
 * a worker spends most of its start-up loading its doors (worker.ts), which
 * the first does while the primary checks. A worker is sent the
 * options, and builds and listens, only once every check passed, so what
 * the checks refuse (a certificate, a credentials file, a busy port) is one
 * line from the primary, before any worker listens, and the first bucket
 * exists before any request.
 */
export async function servePrimary (options: ServeOptions): Promise<void> {
  const log = createLogger({ level: options.logLevel })
  const env = workerEnv((options.catalog ?? '') !== '')
  let registry: BucketRegistry | null = null
  let stopPush: StopQueuePush | null = null
  /** The certificate and key the primary last accepted: every worker serves them, one started later too. */
  let tlsPair: TlsPair | null = null
  /** The routes and credentials the primary read (PrimaryRead): what every worker serves, one started later too. */
  let primaryRead: PrimaryRead | undefined
  let checked = false
  let stopping = false
  let exitCode = 0
  const deaths: number[] = []
  const workers = (): Worker[] => Object.values(cluster.workers ?? {}).filter(w => w !== undefined)
  let pushStopped: Promise<void> | undefined
  /** Stops the push once: at the first signal, beside the workers' drain, so its grace runs within the drain timeout. */
  const stopPushing = async (): Promise<void> => { await (pushStopped ??= stopPush?.()) }
  const closeRegistry = async (): Promise<void> => {
    await stopPushing()
    await registry?.close()
  }
  const exitNow = (code: number): void => {
    // The code of this exit, should a close already under way (the last worker gone) end first.
    if (code !== 0) exitCode = code
    for (const worker of workers()) worker.process.kill('SIGKILL')
    // A batch being pushed is cut at once, a grace running too, and released before the registry closes (not left leased).
    void stopPush?.(true)
    // At once: the registry gets a second to close (a sweep in progress would hold its close for as long as it runs).
    setTimeout(() => process.exit(code), 1000)
    void closeRegistry().finally(() => process.exit(code))
  }
  /** Stops the server because it cannot run: one line on stderr, exit 1. */
  const fail = (message: string): void => {
    if (stopping) return
    stopping = true
    console.error(message)
    exitNow(1)
  }
  const start = (worker: Worker): void => {
    if (!stopping && worker.isConnected()) worker.send({ fsbucket: 'start', options: Object.assign({}, options, tlsPair === null ? {} : { tls: tlsPair }, { primaryRead }) } satisfies Start)
  }
  const asking = new Set<Worker>()
  /** Workers that said they drain on a signal of their own (`stopping-alone`), with that signal: each has its replacement already. */
  const stoppingAlone = new Map<Worker, string>()
  /** Workers whose exit was handled (`onGone`): a word of theirs read after it (a primary too busy to read it within CHANNEL_WAIT_MS) is too late. */
  const gone = new WeakSet<Worker>()
  const onStoppingAlone = (worker: Worker, signal: string): void => {
    if (stopping || stoppingAlone.has(worker) || gone.has(worker)) return
    // A stop asked for (a SIGTERM sent to it alone, to replace it): its replacement starts now, while it drains; no death, no back-off.
    stoppingAlone.set(worker, signal)
    log.info({ worker: worker.process.pid, signal }, 'worker stopping on a signal of its own; starting another')
    replacing.set(cluster.fork(env), worker)
  }
  /** Replacements not yet listening → the worker each replaces, which serves on until then (shutdown.ts). */
  const replacing = new WeakMap<Worker, Worker>()
  /** Forks a worker for one gone; a replacement that never listened hands its waiting worker on to the new one. */
  const forkInPlaceOf = (gone: Worker): void => {
    const waiting = replacing.get(gone)
    const fresh = cluster.fork(env)
    if (waiting !== undefined) replacing.set(fresh, waiting)
  }
  // Set once the checks' module is loaded, which is before any worker is let listen.
  let logServing: ((bound: Listening) => void) | null = null
  /** The workers that said they listen (by id), until every one wanted has: then the `serving` line. */
  const listened = new Set<number>()
  // The first worker starts alone, the others once it listens: beside it, they would take the cores its start needs.
  let othersForked = false
  const onListening = (worker: Worker, bound: Listening): void => {
    if (stopping) return
    const replaced = replacing.get(worker)
    if (replaced !== undefined) {
      replacing.delete(worker)
      if (replaced.isConnected()) replaced.send({ fsbucket: 'replaced' } satisfies Replaced)
    }
    if (!othersForked) {
      othersForked = true
      for (let i = 1; i < options.workers; i++) cluster.fork(env)
    }
    if (listened.size < options.workers && listened.add(worker.id).size === options.workers) logServing?.(bound)
  }

  const onMessage = (worker: Worker, message: unknown): void => {
    if (answerListenersClosed(worker, message)) return
    if (isMessage<ListenFailed>(message, 'listen-failed')) fail(message.message)
    else if (isMessage<Listening>(message, 'listening')) onListening(worker, message)
    else if (isMessage<StoppingAlone>(message, 'stopping-alone')) onStoppingAlone(worker, message.signal)
    else if (isMessage<OptionsAsked>(message, 'options-asked')) {
      // A worker still loading when the drain was sent missed the word: it hears it now.
      if (stopping && worker.isConnected()) worker.send({ fsbucket: 'drain' } satisfies Drain)
      else if (checked) start(worker)
      else asking.add(worker)
    }
  }
  const onExit = (worker: Worker, code: number, signal: string | null): void => {
    // Its last words (`stopping-alone`) may still be unread: 'exit' can come first.
    afterChannel(worker, () => { onGone(worker, code, signal) })
  }
  const onGone = (worker: Worker, code: number, signal: string | null): void => {
    gone.add(worker)
    asking.delete(worker)
    // Until every worker listens, one that died is not one listening.
    if (listened.size < options.workers) listened.delete(worker.id)
    if (stopping) {
      // A worker ended by a SIGTERM had not yet taken one (still loading): it served nothing, so it cut nothing.
      if (code !== 0 && signal !== 'SIGTERM') exitCode = 1
      // During start-up, the checks finish first (below).
      if (workers().length === 0 && checked) {
        void closeRegistry().finally(() => {
          if (exitCode === 0) log.info('stopped: every request finished')
          process.exit(exitCode)
        })
      }
      return
    }
    const asked = stoppingAlone.get(worker)
    if (asked !== undefined) {
      stoppingAlone.delete(worker)
      // Its replacement runs already. Killed while it drained, or exiting 1 (a second SIGTERM, its drain timeout): requests in flight were cut.
      if (signal === null && code === 0) log.info({ worker: worker.process.pid, code, asked }, 'worker stopped')
      else log.warn({ worker: worker.process.pid, code, signal, asked }, 'worker stopped before it drained: requests in flight were cut')
      return
    }
    if (signal === 'SIGTERM') {
      // Ended by a SIGTERM before it could take one (still loading): a stop asked for all the same, not a death.
      log.info({ worker: worker.process.pid, signal }, 'worker stopped on a signal of its own before it served; starting another')
      forkInPlaceOf(worker)
      return
    }
    const now = Date.now()
    deaths.push(now)
    while (deaths[0] < now - crashWindowMs) deaths.shift()
    if (deaths.length > maxDeaths) {
      fail(`workers keep dying (${deaths.length} exits within ${crashWindowMs / 1000} s, the last with ${signal ?? `code ${code}`}): stopping the server`)
      return
    }
    const delay = Math.min(firstRestartDelayMs * 2 ** (deaths.length - 1), maxRestartDelayMs)
    log.error({ worker: worker.process.pid, code, signal, restartInMs: delay }, 'worker died; starting another')
    setTimeout(() => { if (!stopping) forkInPlaceOf(worker) }, delay)
  }

  const stop = (signal: string): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now')
      exitNow(1)
      return
    }
    stopping = true
    log.info({ signal, workers: workers().length, drainTimeout: options.drainTimeout }, 'draining workers (a second signal exits at once)')
    // A worker still waiting for its options exits at once (worker.ts).
    const drain: Drain = { fsbucket: 'drain' }
    for (const worker of workers()) if (worker.isConnected()) worker.send(drain)
    void stopPushing()
    if (!checked) {
      // As one process does (handleShutdown): start-up goes on, then the drain, bounded by the drain timeout.
      setTimeout(() => {
        console.error(`stopped during start-up: it did not finish within the drain timeout (${options.drainTimeout} s)`)
        exitNow(1)
      }, options.drainTimeout * 1000).unref()
      return
    }
    // The workers time out on their own; this only catches one that cannot.
    setTimeout(() => { exitCode = 1; exitNow(1) }, options.drainTimeout * 1000 + 2000).unref()
    if (workers().length === 0) exitNow(0)
  }
  /** Once the checks passed: reads the certificate again (null: no --tls-cert). */
  let reloadTls: (() => Promise<TlsPair | null>) | null | undefined
  /** A SIGHUP before the checks passed: the files may have changed since the checks read them, so they are read again after. */
  let hangupHeld = false
  const hangup = (): void => {
    if (reloadTls === undefined) hangupHeld = true
    else if (reloadTls !== null) {
      // Read and checked here once; each worker logs that it took the pair. A pair refused is logged here, and nothing changes.
      void reloadTls().then(pair => {
        if (pair === null) return
        tlsPair = pair
        log.info({ workers: workers().length }, 'SIGHUP: workers reload the TLS certificate')
        for (const worker of workers()) if (worker.isConnected()) worker.send({ fsbucket: 'reload-tls', pair } satisfies ReloadTls)
      })
    } else log.info({ signal: 'SIGHUP' }, 'SIGHUP: nothing to reload (no --tls-cert); still serving')
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  process.on('SIGHUP', hangup)
  // What came before these handlers (as the command started) counts as if it came now.
  for (const signal of takeHeldSignals()) {
    if (signal === 'SIGHUP') hangup()
    else stop(signal)
  }

  cluster.on('listening', worker => {
    // A worker that started after the signal missed the word.
    if (stopping) worker.send({ fsbucket: 'drain' } satisfies Drain)
  })

  // Adopts the workers forked as the command started, and what they did before now (all in this one turn: nothing is missed).
  const early = takeEarlyWorkers()
  cluster.on('message', onMessage)
  cluster.on('exit', onExit)
  cluster.setupPrimary(workerSettings)
  // The first worker: the one forked as the command started, else one forked now (one that died is a death to replace).
  const adopted = early?.workers ?? []
  // A message to a worker that has just died (a signal to the whole group, Ctrl-C, as workers start) fails as an
  // 'error' on its Worker, which unheard would end this process: the worker's exit, onExit's, is what counts.
  const onWorkerError = (err: Error): void => { log.debug({ err }, 'a message to a worker was lost') }
  cluster.on('fork', worker => { worker.on('error', onWorkerError) })
  for (const worker of adopted) worker.on('error', onWorkerError)
  // A signal held as the command started may have begun the stop already: no worker to start, then.
  if (adopted.length === 0 && !stopping) cluster.fork(env)
  for (const event of early?.events ?? []) {
    if (event.kind === 'message') onMessage(event.worker, event.message)
    else onExit(event.worker, event.code, event.signal)
  }
  try {
    // Loaded after the fork: the stores, the SQLite driver and the credentials load here while the workers load their doors.
    const loaded = await import('./primary-checks.js')
    const passed = await loaded.primaryChecks(options, log, opened => { registry = opened })
    const { loopbackOnly } = passed
    tlsPair = passed.tls
    primaryRead = passed.primaryRead
    // The ports the workers listen on (they share them: any worker's say): the system's pick for a port 0.
    logServing = bound => { loaded.logServing({ ...options, port: bound.port, s3Port: bound.s3Port ?? 0 }, loopbackOnly, log) }
    reloadTls = passed.reloadTls
    if (hangupHeld) hangup()
  } catch (err) {
    // Refused before any worker was sent its options: the workers go quietly, and the command line prints the one line (exit 1).
    stopping = true
    for (const worker of workers()) worker.process.kill('SIGKILL')
    await closeRegistry()
    throw err
  }
  checked = true
  if (stopping) {
    // Stopped during start-up: the workers, told to drain, have gone or are going (onExit closes once the last has).
    if (workers().length === 0) void closeRegistry().finally(() => process.exit(exitCode))
    return
  }
  for (const worker of asking) start(worker)
  asking.clear()
  // The queues pushed to a local app are pulled by this process alone, as it alone sweeps (a worker never pushes).
  const pushes = options.queuePush ?? []
  if (registry !== null && pushes.length > 0 && !stopping) {
    const { pushFailureLogger, pushStopGraceMs, startQueuePush } = await import('./queue-push.js')
    // A signal during the import has stopped (or skipped) the push already.
    if (!stopping) stopPush = startQueuePush(registry, pushes, { onFailure: pushFailureLogger(log), stopGraceMs: pushStopGraceMs(options.drainTimeout) })
  }
}
