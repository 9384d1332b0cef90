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
 * Shutdown: the first SIGINT or SIGTERM drains. The server stops accepting
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
 * crash loop, logged at info), drains the same way, hands the primary its
 * final metrics (metrics.ts) and exits; one sent it before it serves
 * (loading, or waiting for its options: worker.ts) says so and exits.
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
import type { Logger } from 'pino'
import { createLogger } from './logger.js'
import type { Gateway, GatewayOptions, PrimaryRead } from './gateway.js'
import type { StopQueuePush } from './queue-push.js'
import type { TlsPair } from './tls.js'
import { afterChannel } from './worker-channel.js'

export interface ServeOptions extends Omit<GatewayOptions, 's3Port'> {
  workers: number
  /** Seconds the first signal lets requests in flight finish. */
  drainTimeout: number
  /** Port of the S3-compatible API (src/s3/), in the same processes; 0 = off. */
  s3Port: number
}

/**
 * How long a connection idle as `serve` drains may still bring a request,
 * which is answered (saying `Connection: close`) before the connection
 * closes. A client's request may be on its way, or arrived and not yet
 * read, as the server closes (a worker replaced under load: closed at once,
 * a few requests of each restart met a reset); a client that sends later
 * meets a closed connection, as kept-alive clients must expect (RFC 9112
 * 9.3.1: an idempotent request is sent again). An embedded server's
 * `close()` gives none: a test suite's server closes at once.
 */
const IDLE_GRACE_MS = 250

/** Worker deaths within `crashWindowMs` that make a crash loop. */
const maxDeaths = 5
const crashWindowMs = 60_000
const firstRestartDelayMs = 100
const maxRestartDelayMs = 10_000

interface ListenFailed { fsbucket: 'listen-failed', message: string }
/** A worker listens on every port it serves: these (the system's pick for a port 0). */
interface Listening { fsbucket: 'listening', port: number, s3Port: number | null }
interface Drain { fsbucket: 'drain' }
interface ReloadTls { fsbucket: 'reload-tls', pair?: TlsPair }
interface OptionsAsked { fsbucket: 'options-asked' }
/** A worker drains on a signal of its own: its exit is a stop asked for, not a death (the primary serves on and starts another). */
interface StoppingAlone { fsbucket: 'stopping-alone', signal: string }
interface Start { fsbucket: 'start', options: ServeOptions }

/** In a worker: tells the primary it stops on a signal of its own (its exit is no death); `sent` once the word is written, or could not be. */
export function sayStoppingAlone (signal: string, sent: () => void = () => {}): void {
  if (process.send?.({ fsbucket: 'stopping-alone', signal } satisfies StoppingAlone, undefined, {}, () => { sent() }) === undefined) sent()
}

function isMessage<T extends { fsbucket: string }> (message: unknown, kind: T['fsbucket']): message is T {
  return typeof message === 'object' && message !== null && (message as { fsbucket?: unknown }).fsbucket === kind
}

/** A worker's stop reason when the primary said to drain (the whole server stops). */
const drainAsked = 'asked by the primary'

/**
 * Drain on the first signal (or the primary's word), exit at once on the
 * second. Installed before the app is built, so a signal during start-up
 * counts too; the drain itself starts once the app exists. So does a TLS
 * reload (SIGHUP alone, the primary's word in a worker): one asked before
 * the gateway is handed over is done once it is, since the gateway may have
 * read the certificate files before they were replaced.
 */
export function handleShutdown (options: ServeOptions, inWorker: boolean): (gateway: Gateway) => boolean {
  let server: Gateway | null = null
  let reason: string | null = null
  /**
   * A forced stop: a batch being pushed to a queue's app is cut and released
   * first (visible again at once, not left leased until its visibility
   * timeout ends), within a second at most.
   */
  let forced = false
  /**
   * A worker that stops on its own (a SIGTERM of its own: the primary serves
   * on and starts another) tells the primary its final counts before it
   * exits, or what it counted since its last report would be lost with it
   * (metrics.ts). Told to drain by the primary it need not: the whole server
   * is stopping, and no scrape begun after reads the sum.
   */
  const sendFinalMetrics = async (): Promise<void> => {
    if (inWorker && reason !== drainAsked) await server?.sendFinalMetrics()
  }
  const exitNow = (): void => {
    // The drain's close may still end within that second: its exit says 1 too.
    forced = true
    setTimeout(() => process.exit(1), 1000)
    void Promise.allSettled([server?.cutPush(), sendFinalMetrics()]).finally(() => process.exit(1))
  }
  const drain = (): void => {
    if (server === null || reason === null) return
    const { app } = server
    app.log.info({ reason, drainTimeout: options.drainTimeout }, 'draining: finishing requests in flight (a second signal exits at once)')
    setTimeout(() => {
      app.log.warn({ drainTimeout: options.drainTimeout }, 'drain timeout: exiting with requests in flight')
      exitNow()
    }, options.drainTimeout * 1000).unref()
    server.close(IDLE_GRACE_MS)
      .then(() => {
        // With workers the primary says it, once, for all of them.
        if (!inWorker && !forced) app.log.info('stopped: every request finished')
        return 0
      }, err => { app.log.error({ err }, 'close failed'); return 1 })
      // Once every request is answered: the last report counts them all.
      .then(async code => { await sendFinalMetrics(); process.exit(forced ? 1 : code) }, () => process.exit(1))
  }
  /** A signal before the gateway exists: start-up goes on (then drains at once), bounded by the drain timeout like a drain. */
  const boundStartup = (): void => {
    setTimeout(() => {
      console.error(`stopped during start-up: it did not finish within the drain timeout (${options.drainTimeout} s)`)
      process.exit(1)
    }, options.drainTimeout * 1000).unref()
  }
  const onSignal = (signal: string): void => {
    // The primary's word came first, and this is the same stop reaching the whole group (systemd's): not a second signal.
    if (reason === drainAsked && signal === 'SIGTERM') return
    if (reason !== null) {
      server?.app.log.warn({ signal }, 'second signal: exiting now')
      exitNow()
      return
    }
    reason = signal
    if (inWorker) sayStoppingAlone(signal)
    if (server === null) boundStartup()
    drain()
  }
  let startupLog: Logger | null = null
  const log = (): Logger => server !== null ? server.app.log as unknown as Logger : (startupLog ??= createLogger({ level: options.logLevel }))
  /** A reload asked before the gateway is handed over (several count as one, the last pair given wins): done at the hand-over. */
  let reloadAsked: { pair?: TlsPair } | null = null
  const reload = (pair?: TlsPair): void => {
    if (server === null) reloadAsked = { pair: pair ?? reloadAsked?.pair }
    else if (server.reloadTls !== null) void server.reloadTls(pair)
    else if (!inWorker) log().info({ signal: 'SIGHUP' }, 'SIGHUP: nothing to reload (no --tls-cert); still serving')
  }
  const onHangup = (): void => {
    // A worker reloads on the primary's word only: a SIGHUP to the whole group reaches both, and would reload twice.
    if (!inWorker) reload()
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGHUP', onHangup)
  if (inWorker) {
    process.on('SIGINT', () => {})
    process.on('message', message => {
      if (isMessage<ReloadTls>(message, 'reload-tls')) { reload(message.pair); return }
      if (!isMessage<Drain>(message, 'drain') || reason !== null) return
      reason = drainAsked
      if (server === null) boundStartup()
      drain()
    })
  } else {
    process.on('SIGINT', onSignal)
  }
  // What came before these handlers (as the command started) counts as if it came now.
  for (const signal of takeHeldSignals()) {
    if (signal === 'SIGHUP') onHangup()
    else if (!inWorker || signal === 'SIGTERM') onSignal(signal)
  }
  /** Hands over the gateway; false when a signal came first (the drain has begun: do not listen). */
  return gateway => {
    server = gateway
    if (reloadAsked !== null) {
      const { pair } = reloadAsked
      reloadAsked = null
      if (gateway.reloadTls !== null) void gateway.reloadTls(pair)
      else if (!inWorker) log().info({ signal: 'SIGHUP' }, 'SIGHUP during start-up: nothing to reload')
    }
    drain()
    return reason === null
  }
}

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
  const onStoppingAlone = (worker: Worker, signal: string): void => {
    if (stopping || stoppingAlone.has(worker)) return
    // A stop asked for (a SIGTERM sent to it alone, to replace it): its replacement starts now, while it drains; no death, no back-off.
    stoppingAlone.set(worker, signal)
    log.info({ worker: worker.process.pid, signal }, 'worker stopping on a signal of its own; starting another')
    cluster.fork(env)
  }
  // Set once the checks' module is loaded, which is before any worker is let listen.
  let logServing: ((bound: Listening) => void) | null = null
  /** The workers that said they listen (by id), until every one wanted has: then the `serving` line. */
  const listened = new Set<number>()
  // The first worker starts alone, the others once it listens: beside it, they would take the cores its start needs.
  let othersForked = false
  const onListening = (worker: Worker, bound: Listening): void => {
    if (stopping) return
    if (!othersForked) {
      othersForked = true
      for (let i = 1; i < options.workers; i++) cluster.fork(env)
    }
    if (listened.size < options.workers && listened.add(worker.id).size === options.workers) logServing?.(bound)
  }

  const onMessage = (worker: Worker, message: unknown): void => {
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
      // Its replacement runs already. Killed while it drained (a second SIGTERM exits, 1, on its own): its requests in flight were cut.
      if (signal === null) log.info({ worker: worker.process.pid, code, asked }, 'worker stopped')
      else log.warn({ worker: worker.process.pid, code, signal, asked }, 'worker killed while it drained: requests in flight were cut')
      return
    }
    if (signal === 'SIGTERM') {
      // Ended by a SIGTERM before it could take one (still loading): a stop asked for all the same, not a death.
      log.info({ worker: worker.process.pid, signal }, 'worker stopped on a signal of its own before it served; starting another')
      cluster.fork(env)
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
    setTimeout(() => { if (!stopping) cluster.fork(env) }, delay)
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
