/**
 * The metrics of a server, in the Prometheus text format through
 * prom-client (`GET /_metrics`; docs/operations.md names each one).
 *
 * Each process keeps its own registry: its requests (counted by the doors,
 * doors/request-meter.ts, and read from there when scraped), its catalog
 * commits and pool (stores/meter.ts), its sweeps, and Node's process
 * metrics (process-metrics.ts, read when scraped). With `--workers N` the answer covers the whole server: the
 * worker asked tells the primary, which asks every worker for its metrics
 * over the cluster's IPC channel, adds its own (the sweeper runs there) and
 * adds them all up (prom-client's `AggregatorRegistry.aggregate`: counters
 * and histograms summed, the event loop's lag averaged, ...). A worker that
 * does not answer within `gatherTimeoutMs` is left out of that answer, so a
 * stuck worker cannot stall the scrape.
 */
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { SweepReport } from '../bucket/index.js'
import { ABORTED, durationBuckets, RequestMeter, type PortName } from '../doors/request-meter.js'
import { observeStores, poolUse } from '../stores/meter.js'
import { registerProcessMetrics } from './process-metrics.js'

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>
type HistogramValues = Awaited<ReturnType<Histogram['get']>>

/** How long the primary waits for the workers' metrics. */
const gatherTimeoutMs = 2000
/** How long a worker waits for the primary's answer. */
const answerTimeoutMs = 5000

const durationHelp = 'Time from a request\'s arrival to the end of its answer, by door and operation.'

/**
 * The request duration histogram, read from the meter's series when scraped
 * (observing through prom-client on every request would cost microseconds).
 */
class RequestDurations extends Histogram<'door' | 'operation'> {
  readonly #meter: RequestMeter

  constructor (meter: RequestMeter, registers: Registry[]) {
    super({
      name: 'fsbucket_request_duration_seconds',
      help: durationHelp,
      labelNames: ['door', 'operation'],
      buckets: [...durationBuckets],
      registers
    })
    this.#meter = meter
  }

  override async get (): Promise<HistogramValues> {
    const values: HistogramValues['values'] = []
    const name = 'fsbucket_request_duration_seconds'
    for (const series of this.#meter.all()) {
      const labels = { door: series.door, operation: series.operation }
      let cumulative = 0
      durationBuckets.forEach((bound, i) => {
        cumulative += series.durations[i]
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bound }, value: cumulative })
      })
      const count = cumulative + series.durations[durationBuckets.length]
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count })
      values.push({ metricName: `${name}_sum`, labels, value: series.durationSum })
      values.push({ metricName: `${name}_count`, labels, value: count })
    }
    return { name, help: durationHelp, type: 'histogram', values, aggregator: 'sum' } as unknown as HistogramValues
  }

  /** prom-client's text output reads this rather than `get` for histograms. */
  async getForPromString (): Promise<HistogramValues> {
    return await this.get()
  }
}

/** The metrics of one process. */
export class ProcessMetrics {
  readonly registry = new Registry()
  readonly requests = new RequestMeter()
  readonly #sweeps: Counter<'outcome'>
  readonly #sweepAborted: Counter
  readonly #sweepRemoved: Counter
  readonly #sweepExpired: Counter
  readonly #sweepTransitioned: Counter
  readonly #sweepSeconds: Histogram

  constructor () {
    // Registered through `add`: made with `registers: []`, nothing reaches prom-client's global registry.
    const registers: Registry[] = []
    const add = <M extends Counter<any> | Gauge<any> | Histogram<any>>(metric: M): M => { this.registry.registerMetric(metric); return metric }
    const meter = this.requests
    registerProcessMetrics(this.registry)

    add(new Counter({
      name: 'fsbucket_requests_total',
      help: 'Requests answered, by door, operation and status (aborted: the connection closed before the answer was whole).',
      labelNames: ['door', 'operation', 'status'],
      registers,
      collect () {
        this.reset()
        for (const series of meter.all()) {
          for (const [status, count] of series.statuses) {
            this.inc({ door: series.door, operation: series.operation, status: status === ABORTED ? 'aborted' : String(status) }, count)
          }
        }
      }
    }))
    add(new RequestDurations(meter, registers))
    for (const [name, help, field] of [
      ['fsbucket_received_bytes_total', 'Bytes read from connections (headers included), by door and operation.', 'received'],
      ['fsbucket_sent_bytes_total', 'Bytes written to connections (headers included), by door and operation.', 'sent']
    ] as const) {
      add(new Counter<'door' | 'operation'>({
        name,
        help,
        labelNames: ['door', 'operation'],
        registers,
        collect () {
          this.reset()
          for (const series of meter.all()) this.inc({ door: series.door, operation: series.operation }, series[field])
        }
      }))
    }
    add(new Gauge<'port'>({
      name: 'fsbucket_requests_in_flight',
      help: 'Requests read and not yet answered, by port (http: the routes, the management API and the console; s3).',
      labelNames: ['port'],
      registers,
      collect () {
        for (const port of ['http', 's3'] as PortName[]) this.set({ port }, meter.inFlight[port])
      }
    }))

    const commits = add(new Histogram<'catalog'>({
      name: 'fsbucket_catalog_commit_duration_seconds',
      help: 'Time from the start of a catalog write transaction until it is durable, by catalog (sqlite, postgresql).',
      labelNames: ['catalog'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers
    }))
    const batches = add(new Histogram({
      name: 'fsbucket_catalog_commit_batch_size',
      help: 'Writes carried by one group commit of a SQLite catalog.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers
    }))
    observeStores({
      committed: (catalog, seconds, batch) => {
        commits.observe({ catalog }, seconds)
        if (batch !== null) batches.observe(batch)
      }
    })
    add(new Gauge<'state'>({
      name: 'fsbucket_catalog_connections',
      help: 'Connections of the PostgreSQL catalog\'s pool, by state (busy, idle).',
      labelNames: ['state'],
      registers,
      collect () {
        const use = poolUse()
        this.set({ state: 'busy' }, use.total - use.idle)
        this.set({ state: 'idle' }, use.idle)
      }
    }))
    add(new Gauge({
      name: 'fsbucket_catalog_connections_max',
      help: 'Most connections the PostgreSQL catalog\'s pool may open (--catalog-connections).',
      registers,
      collect () { this.set(poolUse().max) }
    }))
    add(new Gauge({
      name: 'fsbucket_catalog_connection_waits',
      help: 'Requests waiting for a connection of the PostgreSQL catalog\'s pool.',
      registers,
      collect () { this.set(poolUse().waiting) }
    }))

    this.#sweeps = add(new Counter({ name: 'fsbucket_sweeps_total', help: 'Sweeps of every bucket, by outcome (ok, failed).', labelNames: ['outcome'], registers }))
    this.#sweepAborted = add(new Counter({ name: 'fsbucket_sweep_aborted_uploads_total', help: 'Multipart uploads the sweeper aborted because they outlived their lifetime.', registers }))
    this.#sweepRemoved = add(new Counter({ name: 'fsbucket_sweep_removed_leftovers_total', help: 'Leftovers of interrupted writes the sweeper removed.', registers }))
    this.#sweepExpired = add(new Counter({ name: 'fsbucket_sweep_expired_objects_total', help: 'Objects the sweeper deleted because a lifecycle rule expired them.', registers }))
    this.#sweepTransitioned = add(new Counter({ name: 'fsbucket_sweep_transitioned_objects_total', help: 'Objects a lifecycle rule moved to InfrequentAccess.', registers }))
    this.#sweepSeconds = add(new Histogram({
      name: 'fsbucket_sweep_duration_seconds',
      help: 'Time a sweep of every bucket took.',
      buckets: [0.01, 0.1, 1, 10, 60, 600],
      registers
    }))
    this.#sweeps.inc({ outcome: 'ok' }, 0)
    this.#sweeps.inc({ outcome: 'failed' }, 0)
  }

  /** A sweep finished: what it removed and how long it took. */
  swept (report: SweepReport, ms: number): void {
    this.#sweeps.inc({ outcome: 'ok' })
    this.#sweepAborted.inc(report.abortedUploads)
    this.#sweepRemoved.inc(report.removedLeftovers)
    this.#sweepExpired.inc(report.expiredObjects ?? 0)
    this.#sweepTransitioned.inc(report.transitionedObjects ?? 0)
    this.#sweepSeconds.observe(ms / 1000)
  }

  sweepFailed (): void {
    this.#sweeps.inc({ outcome: 'failed' })
  }

  /** This process's metrics alone, in the text format. */
  async text (): Promise<string> {
    return await this.registry.metrics()
  }

  async json (): Promise<MetricsJson> {
    return await this.registry.getMetricsAsJSON()
  }
}

interface MetricsAsked { fsbucket: 'metrics-asked', id: number }
interface MetricsCollect { fsbucket: 'metrics-collect', id: number }
interface MetricsPart { fsbucket: 'metrics-part', id: number, metrics: MetricsJson }
interface MetricsText { fsbucket: 'metrics-text', id: number, text: string }

function isMessage<T extends { fsbucket: string }> (message: unknown, kind: T['fsbucket']): message is T {
  return typeof message === 'object' && message !== null && (message as { fsbucket?: unknown }).fsbucket === kind
}

/**
 * In a worker: answers the primary's requests for this process's metrics,
 * and returns what `/_metrics` answers from (the whole server's, through
 * the primary).
 */
export function workerMetrics (metrics: ProcessMetrics): () => Promise<string> {
  let next = 0
  const waiting = new Map<number, (text: string) => void>()
  process.on('message', message => {
    if (isMessage<MetricsCollect>(message, 'metrics-collect')) {
      void metrics.json().then(json => { process.send?.({ fsbucket: 'metrics-part', id: message.id, metrics: json } satisfies MetricsPart) })
    } else if (isMessage<MetricsText>(message, 'metrics-text')) {
      waiting.get(message.id)?.(message.text)
    }
  })
  return async () => {
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
}

/** In the primary: gathers every worker's metrics and its own when a worker asks, and answers it with their sum. */
export function answerWorkersMetrics (metrics: ProcessMetrics): void {
  let next = 0
  const gathering = new Map<number, (worker: Worker, part: MetricsJson) => void>()

  async function gather (): Promise<string> {
    const id = next++
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected())
    const parts: MetricsJson[] = [await metrics.json()]
    const answered = new Set<Worker>()
    await new Promise<void>(resolve => {
      const timer = setTimeout(resolve, gatherTimeoutMs)
      const done = (): void => { clearTimeout(timer); resolve() }
      gathering.set(id, (worker, part) => {
        if (answered.has(worker)) return
        answered.add(worker)
        parts.push(part)
        if (answered.size === workers.length) done()
      })
      for (const worker of workers) worker.send({ fsbucket: 'metrics-collect', id } satisfies MetricsCollect)
      if (workers.length === 0) done()
    })
    gathering.delete(id)
    return await AggregatorRegistry.aggregate(parts).metrics()
  }

  cluster.on('message', (worker, message) => {
    if (isMessage<MetricsPart>(message, 'metrics-part')) {
      gathering.get(message.id)?.(worker, message.metrics)
    } else if (isMessage<MetricsAsked>(message, 'metrics-asked')) {
      void gather().then(text => {
        if (worker.isConnected()) worker.send({ fsbucket: 'metrics-text', id: message.id, text } satisfies MetricsText)
      })
    }
  })
}
