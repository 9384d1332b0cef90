/**
 * How one process of `fsbucket serve` stops (alone, or as a worker of the
 * primary in serve.ts): drain on the first signal or the primary's word,
 * exit at once on a second, and the TLS reloads asked meanwhile. A worker
 * stopping on a signal of its own first serves on until the replacement the
 * primary starts listens (the primary's `replaced`, REPLACEMENT_WAIT_MS at
 * most); a second signal or the primary's drain during that wait drains it
 * at once, and only a signal after that exits, unless the primary's word
 * to drain comes within GROUP_STOP_WAIT_MS (the whole group's stop).
 */
import type { Logger } from 'pino'
import { takeHeldSignals } from './early-fork.js'
import type { Gateway } from './gateway.js'
import { createLogger } from './logger.js'
import type { TlsPair } from './tls.js'
import { isMessage, sayStoppingAlone, settleHandoffs, type Drain, type ReloadTls, type Replaced } from './worker-messages.js'

/** What of `serve`'s options a stop reads. */
export interface ShutdownOptions {
  /** Seconds the first signal lets requests in flight finish. */
  drainTimeout: number
  logLevel: string
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

/**
 * How long a worker stopping on a signal of its own serves on while its
 * replacement starts (the primary says when that one listens): closing its
 * listener at once would leave the port refusing connections until then
 * when it was the only worker, or every worker was sent one. Past this, it
 * drains all the same.
 */
const REPLACEMENT_WAIT_MS = 15_000

/**
 * How long a worker already draining on a signal of its own, sent another
 * SIGTERM, waits for the primary's word to drain before taking it for a
 * second signal: a stop of the whole process group (systemd's) reaches the
 * primary at the same moment, and its word follows within milliseconds.
 */
const GROUP_STOP_WAIT_MS = 1000

/** A worker's stop reason when the primary said to drain (the whole server stops). */
const drainAsked = 'asked by the primary'

/**
 * Drain on the first signal (or the primary's word), exit at once on the
 * second (a worker's wait for its replacement aside, and a worker draining
 * alone, which waits GROUP_STOP_WAIT_MS for the primary's word first: above). Installed before the app is built, so a signal during start-up
 * counts too; the drain itself starts once the app exists. So does a TLS
 * reload (SIGHUP alone, the primary's word in a worker): one asked before
 * the gateway is handed over is done once it is, since the gateway may have
 * read the certificate files before they were replaced.
 */
export function handleShutdown (options: ShutdownOptions, inWorker: boolean): (gateway: Gateway) => boolean {
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
  /** What a worker does before it exits, its listeners closed: its final counts, and no connection left unread (settleHandoffs). */
  const lastWords = async (): Promise<void> => {
    if (inWorker) await Promise.allSettled([sendFinalMetrics(), settleHandoffs()])
  }
  const exitNow = (): void => {
    // The drain's close may still end within that second: its exit says 1 too.
    forced = true
    setTimeout(() => process.exit(1), 1000)
    void Promise.allSettled([server?.cutPush(), lastWords()]).finally(() => process.exit(1))
  }
  /** While a worker stopping alone serves on until its replacement listens: what ends the wait. */
  let replacementWait: NodeJS.Timeout | null = null
  /** While a worker draining alone, sent another SIGTERM, waits for the primary's word: its exit. */
  let groupStopWait: NodeJS.Timeout | null = null
  const secondSignal = (signal: string): void => {
    if (groupStopWait !== null) clearTimeout(groupStopWait)
    groupStopWait = null
    server?.app.log.warn({ signal }, 'second signal: exiting now')
    exitNow()
  }
  const drain = (): void => {
    if (server === null || reason === null || replacementWait !== null) return
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
      .then(async code => { await lastWords(); process.exit(forced ? 1 : code) }, () => process.exit(1))
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
    // A worker still serving while its replacement starts has cut nothing yet: a second signal (the whole group's stop,
    // say, come before the primary's word) drains it now; a third exits.
    if (replacementWait !== null) {
      server?.app.log.info({ signal }, 'second signal: draining now, before the replacement listens')
      endReplacementWait()
      return
    }
    if (reason !== null) {
      // Draining alone: the whole group's stop, come before the primary's word, is no second signal; the word ends the wait.
      if (inWorker && groupStopWait === null) groupStopWait = setTimeout(() => { secondSignal(signal) }, GROUP_STOP_WAIT_MS)
      else secondSignal(signal)
      return
    }
    reason = signal
    if (inWorker) {
      sayStoppingAlone(signal)
      // Serving already: it keeps its listener until the replacement the primary starts now listens.
      if (server !== null) {
        server.app.log.info({ reason, waitMs: REPLACEMENT_WAIT_MS }, 'serving on until its replacement listens')
        replacementWait = setTimeout(endReplacementWait, REPLACEMENT_WAIT_MS)
        return
      }
    }
    if (server === null) boundStartup()
    drain()
  }
  const endReplacementWait = (): void => {
    if (replacementWait === null) return
    clearTimeout(replacementWait)
    replacementWait = null
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
      if (isMessage<Replaced>(message, 'replaced')) { endReplacementWait(); return }
      if (!isMessage<Drain>(message, 'drain')) return
      if (reason !== null) {
        // Stopping alone, it goes on as the whole server's stop: a group SIGTERM come before this word or after is that stop.
        reason = drainAsked
        if (groupStopWait !== null) clearTimeout(groupStopWait)
        groupStopWait = null
        // Waiting for a replacement that the whole server's stop will not start (or will stop at once).
        endReplacementWait()
        return
      }
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
