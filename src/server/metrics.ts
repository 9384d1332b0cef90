/**
 * The metrics of a server, in the Prometheus text format through
 * prom-client (`GET /_metrics`; docs/operations.md names each one).
 *
 * Each process keeps its own: its requests (counted by the doors,
 * doors/request-meter.ts), its catalog commits and pool (stores/meter.ts),
 * its sweeps, and Node's process metrics (process-metrics.ts, read when
 * scraped). With `--workers N` the answer covers the whole server: the
 * worker asked tells the primary, which asks every worker for its metrics
 * over the cluster's IPC channel, adds its own (the sweeper runs there) and
 * adds them all up (prom-client's `AggregatorRegistry.aggregate`: counters
 * and histograms summed, the event loop's lag averaged, ...). A worker that
 * does not answer within `gatherTimeoutMs` is counted at its last report,
 * so a stuck worker can neither stall the scrape nor make a counter go
 * down, and a worker gone keeps its counters in the sum.
 *
 * A worker that stops on its own while the server goes on (a SIGTERM of its
 * own, drained; the primary starts another) sends its final counts as it
 * goes, once its requests are done (`metrics-final`): else all it counted
 * since its last report, everything when it was never asked, would leave
 * with it. One killed (SIGKILL, a crash) still takes that part along.
 *
 * What is counted between scrapes is kept here in plain numbers (`Tally`,
 * the meter's series); prom-client, which turns them into its metrics, is
 * loaded by the first scrape (metrics-registry.ts). A process that is never
 * scraped never loads it: a tenth of a second and a few MiB a worker.
 */
import cluster, { type Worker } from 'node:cluster'
import type { SweepReport } from '../bucket/index.js'
import { RequestMeter } from '../doors/request-meter.js'
import { observeStores, type CatalogKind } from '../stores/meter.js'
import type { MetricsJson } from './metrics-registry.js'
import { afterChannel } from './worker-channel.js'
import { isMessage } from './worker-messages.js'

/** How long the primary waits for the workers' metrics. */
const gatherTimeoutMs = 2000
/** How long a worker waits for the primary's answer. */
const answerTimeoutMs = 5000

/** A histogram's observations by bucket (`le` bounds, then one past the last; not cumulative) and their sum. */
export class Tally {
  readonly counts: Float64Array
  sum = 0

  constructor (readonly buckets: readonly number[]) {
    this.counts = new Float64Array(buckets.length + 1)
  }

  observe (value: number): void {
    let bucket = 0
    while (bucket < this.buckets.length && value > this.buckets[bucket]) bucket++
    this.counts[bucket]++
    this.sum += value
  }
}

/** The metrics of one process, counted in plain numbers until a scrape reads them. */
export class ProcessMetrics {
  readonly requests = new RequestMeter()
  /** Catalog commit durations by catalog. */
  readonly commits: Record<CatalogKind, Tally>
  /** Writes carried by one group commit. */
  readonly batches = new Tally([1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
  readonly sweeps = { ok: 0, failed: 0, abortedUploads: 0, removedLeftovers: 0, expiredObjects: 0, transitionedObjects: 0, seconds: new Tally([0.01, 0.1, 1, 10, 60, 600]) }
  #registry: Promise<{ text: () => Promise<string>, json: () => Promise<MetricsJson> }> | null = null
  /** Stops counting the process's catalog commits (the server closed). */
  readonly stopObserving: () => void

  constructor () {
    const commitBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    this.commits = { sqlite: new Tally(commitBuckets), postgresql: new Tally(commitBuckets) }
    this.stopObserving = observeStores({
      committed: (catalog, seconds, batch) => {
        this.commits[catalog].observe(seconds)
        if (batch !== null) this.batches.observe(batch)
      }
    })
  }

  /** A sweep finished: what it removed and how long it took. */
  swept (report: SweepReport, ms: number): void {
    this.sweeps.ok++
    this.sweeps.abortedUploads += report.abortedUploads
    this.sweeps.removedLeftovers += report.removedLeftovers
    this.sweeps.expiredObjects += report.expiredObjects ?? 0
    this.sweeps.transitionedObjects += report.transitionedObjects ?? 0
    this.sweeps.seconds.observe(ms / 1000)
  }

  sweepFailed (): void {
    this.sweeps.failed++
  }

  /** prom-client's registry over these numbers, made by the first scrape. */
  async #exposition (): Promise<{ text: () => Promise<string>, json: () => Promise<MetricsJson> }> {
    this.#registry ??= import('./metrics-registry.js').then(({ metricsRegistry }) => metricsRegistry(this))
    return await this.#registry
  }

  /** This process's metrics alone, in the text format. */
  async text (): Promise<string> {
    return await (await this.#exposition()).text()
  }

  async json (): Promise<MetricsJson> {
    return await (await this.#exposition()).json()
  }
}

interface MetricsAsked { fsbucket: 'metrics-asked', id: number }
interface MetricsCollect { fsbucket: 'metrics-collect', id: number }
interface MetricsPart { fsbucket: 'metrics-part', id: number, metrics: MetricsJson }
interface MetricsText { fsbucket: 'metrics-text', id: number, text: string }
/** A worker can answer gathers from now on (it has counted nothing before: it is not yet serving). */
interface MetricsReady { fsbucket: 'metrics-ready' }
/** A worker's last report, unasked, as it stops: no report of it follows. */
interface MetricsFinal { fsbucket: 'metrics-final', metrics: MetricsJson }


/** A worker's side of the server's metrics. */
export interface WorkerMetrics {
  /** What `/_metrics` answers from: the whole server's, through the primary. */
  scrape: () => Promise<string>
  /**
   * Sends the primary this process's counts as its last report, once its
   * requests are done and before it exits. Resolves once they are written
   * to the channel (the primary reads them before it sees the channel
   * close), or could not be; never rejects: a stop goes on regardless.
   */
  sendFinal: () => Promise<void>
}

/**
 * In a worker: answers the primary's requests for this process's metrics,
 * says its final counts as it stops, and answers `/_metrics` from the
 * whole server's, through the primary.
 */
export function workerMetrics (metrics: ProcessMetrics): WorkerMetrics {
  let next = 0
  const waiting = new Map<number, (text: string) => void>()
  /**
   * The counts sent as the last report. A gather's answer read before them
   * but sent after would replace them with fewer in the primary: it says
   * these instead.
   */
  let final: MetricsJson | null = null
  process.on('message', message => {
    if (isMessage<MetricsCollect>(message, 'metrics-collect')) {
      void metrics.json().then(json => { process.send?.({ fsbucket: 'metrics-part', id: message.id, metrics: final ?? json } satisfies MetricsPart) })
    } else if (isMessage<MetricsText>(message, 'metrics-text')) {
      waiting.get(message.id)?.(message.text)
    }
  })
  const sendFinal = async (): Promise<void> => {
    try {
      // A worker never scraped loads prom-client here, once, as it stops (a tenth of a second).
      final = await metrics.json()
      const report: MetricsFinal = { fsbucket: 'metrics-final', metrics: final }
      // The callback comes once the message is written (or could not be: the channel closed); exiting then loses nothing.
      await new Promise<void>(resolve => { if (process.send?.(report, undefined, {}, () => { resolve() }) === undefined) resolve() })
    } catch {}
  }
  process.send?.({ fsbucket: 'metrics-ready' } satisfies MetricsReady)
  const scrape = async (): Promise<string> => {
    const id = next++
    let timer: NodeJS.Timeout | undefined
    try {
      return await new Promise<string>((resolve, reject) => {
        waiting.set(id, resolve)
        timer = setTimeout(() => { reject(new Error(`the primary did not send the metrics within ${answerTimeoutMs} ms`)) }, answerTimeoutMs)
        process.send?.({ fsbucket: 'metrics-asked', id } satisfies MetricsAsked)
      })
    } finally {
      clearTimeout(timer)
      waiting.delete(id)
    }
  }
  return { scrape, sendFinal }
}

/**
 * In the primary: gathers every worker's metrics and its own when a worker
 * asks, and answers it with their sum.
 *
 * The sum's counters and histograms must never go down, or Prometheus reads
 * a reset and `rate()` jumps. So the primary keeps what each worker last
 * reported (any report, even one that came after its gather gave up): a
 * worker that misses a gather (stopped, busy past `gatherTimeoutMs`) is
 * counted at its last report, and the counters and histograms of a worker
 * that is gone (exited, replaced) are added to `gone`, which only grows. A
 * gone worker's gauges leave with it: its memory and requests in flight are
 * no longer the server's.
 *
 * A worker is gone when its channel closes ('disconnect'), not when its
 * process ends ('exit'): its final report (`metrics-final`) is taken as its
 * last only if it is read first. (Where Node never says 'disconnect', the
 * exit counts, a second later: worker-channel.ts.) Node emits a worker's messages, then its
 * 'disconnect', in the order its channel is read (each on the next tick; the
 * disconnect once the read reaches the channel's end, after every byte the
 * worker wrote before it exited). The 'exit' comes from the process's end
 * (SIGCHLD), which may be handled before the channel's last bytes are read:
 * folded then, a final report read after would be counted twice.
 */
export function answerWorkersMetrics (metrics: ProcessMetrics): void {
  let next = 0
  const gathering = new Map<number, (worker: Worker) => void>()
  /** The workers that said they answer gathers (`metrics-ready`). */
  const ready = new WeakSet<Worker>()
  /** The last report of each worker still there, by worker id. */
  const reports = new Map<number, MetricsJson>()
  /** The counters and histograms of the workers gone, summed; replaced (never changed) as one more leaves. */
  let gone: Promise<MetricsJson> = Promise.resolve([])

  async function gather (): Promise<string> {
    const id = next++
    const own = await metrics.json()
    // Listed after that wait (the first scrape loads prom-client), and in the turn that starts listening for their answers;
    // a worker still starting is not waited for (it has counted nothing).
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected() && ready.has(w))
    const answered = new Set<Worker>()
    await new Promise<void>(resolve => {
      const timer = setTimeout(resolve, gatherTimeoutMs)
      const done = (): void => { clearTimeout(timer); resolve() }
      // A worker answers once, or leaves (its channel closed: its last report is in `gone`); either ends its wait.
      gathering.set(id, worker => {
        if (answered.has(worker) || !workers.includes(worker)) return
        answered.add(worker)
        if (answered.size === workers.length) done()
      })
      for (const worker of workers) worker.send({ fsbucket: 'metrics-collect', id } satisfies MetricsCollect)
      if (workers.length === 0) done()
    })
    gathering.delete(id)
    // Read together, in one turn: a worker that left meanwhile is in `gone` or in `reports`, never in both or neither.
    const parts = [own, ...reports.values()]
    const left = gone
    parts.push(await left)
    return await (await import('./metrics-registry.js')).aggregateText(parts)
  }

  cluster.on('message', (worker, message) => {
    if (isMessage<MetricsReady>(message, 'metrics-ready')) ready.add(worker)
    else if (folded.has(worker)) {
      // Gone already: counted in `gone` as of its last report.
    } else if (isMessage<MetricsPart>(message, 'metrics-part')) {
      ready.add(worker)
      reports.set(worker.id, message.metrics)
      gathering.get(message.id)?.(worker)
    } else if (isMessage<MetricsFinal>(message, 'metrics-final')) {
      reports.set(worker.id, message.metrics)
    } else if (isMessage<MetricsAsked>(message, 'metrics-asked')) {
      // A gather that failed sends nothing: the worker answers its scrape with its own timeout's error.
      gather().then(text => {
        if (worker.isConnected()) worker.send({ fsbucket: 'metrics-text', id: message.id, text } satisfies MetricsText)
      }, () => {})
    }
  })
  /** The workers folded: a report of theirs read after (the fold's fallback came first: worker-channel.ts) is dropped, never counted twice. */
  const folded = new WeakSet<Worker>()
  /** Folds a worker whose channel closed into `gone` (its last report, if any, is final). */
  const fold = (worker: Worker): void => {
    folded.add(worker)
    const last = reports.get(worker.id)
    if (last === undefined) return
    reports.delete(worker.id)
    const before = gone
    // Summing cannot fail on prom-client's own output; were it to, the sum keeps what it had rather than failing every scrape after.
    gone = (async () => await (await import('./metrics-registry.js')).countersSum([await before, last]))().catch(async () => await before)
  }
  // A worker that left answers no gather: waiting for it ends (counted at its last report, or in `gone`).
  const left = (worker: Worker): void => { for (const answered of gathering.values()) answered(worker) }
  cluster.on('disconnect', worker => {
    left(worker)
    fold(worker)
  })
  // Node may never say 'disconnect' (worker-channel.ts): then the exit, once its channel is read or given up on.
  cluster.on('exit', worker => {
    left(worker)
    afterChannel(worker, () => { fold(worker) })
  })
}
