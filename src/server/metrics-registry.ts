/**
 * prom-client over a process's counts (metrics.ts): the registry a scrape
 * reads, made by the first scrape, and the sum of several processes'.
 *
 * Every metric is read from the plain numbers when scraped (`collect`, or
 * `get` for the histograms): observing through prom-client on every request
 * or commit would cost microseconds, and would load prom-client in a
 * process that is never scraped.
 */
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { ABORTED, durationBuckets, type PortName, type RequestMeter } from '../doors/request-meter.js'
import { poolUse, type CatalogKind } from '../stores/meter.js'
import { registerProcessMetrics } from './process-metrics.js'

export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>
type HistogramValues = Awaited<ReturnType<Histogram['get']>>

/** A histogram kept in plain numbers (metrics.ts's `Tally`). */
interface Counts { buckets: readonly number[], counts: ArrayLike<number>, sum: number }

/** What a process counts between scrapes (metrics.ts's `ProcessMetrics`). */
interface ProcessCounts {
  requests: RequestMeter
  commits: Record<CatalogKind, Counts>
  batches: Counts
  sweeps: { ok: number, failed: number, abortedUploads: number, removedLeftovers: number, expiredObjects: number, transitionedObjects: number, seconds: Counts }
}

/** One series of a histogram: its labels, its counts by bucket (not cumulative, one past the last bound) and their sum. */
interface HistogramSeries { labels: Record<string, string>, counts: ArrayLike<number>, sum: number }

/** A histogram whose values are read from plain counts when scraped, never observed through prom-client. */
class CountedHistogram extends Histogram<string> {
  readonly #read: () => Iterable<HistogramSeries>
  readonly #name: string
  readonly #help: string
  readonly #bounds: readonly number[]
  readonly #leFirst: boolean

  /**
   * `leFirst`: the bucket's `le` before the other labels, where prom-client
   * observed the histogram before and wrote it so; the request durations,
   * read from the meter from the start, have it last. Kept as each was.
   */
  constructor (spec: { name: string, help: string, labelNames?: string[], buckets: readonly number[], leFirst?: boolean }, read: () => Iterable<HistogramSeries>) {
    // Made with `registers: []`: registered by the caller, nothing reaches prom-client's global registry.
    super({ name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], buckets: [...spec.buckets], registers: [] })
    this.#read = read
    this.#name = spec.name
    this.#help = spec.help
    this.#bounds = spec.buckets
    this.#leFirst = spec.leFirst === true
  }

  override async get (): Promise<HistogramValues> {
    const values: HistogramValues['values'] = []
    const name = this.#name
    const bucket = (labels: Record<string, string>, le: number | string): Record<string, string | number> => this.#leFirst ? { le, ...labels } : { ...labels, le }
    for (const { labels, counts, sum } of this.#read()) {
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += counts[i]
        values.push({ metricName: `${name}_bucket`, labels: bucket(labels, bound), value: cumulative })
      })
      const count = cumulative + counts[this.#bounds.length]
      values.push({ metricName: `${name}_bucket`, labels: bucket(labels, '+Inf'), value: count })
      values.push({ metricName: `${name}_sum`, labels, value: sum })
      values.push({ metricName: `${name}_count`, labels, value: count })
    }
    return { name, help: this.#help, type: 'histogram', values, aggregator: 'sum' } as unknown as HistogramValues
  }

  /** prom-client's text output reads this rather than `get` for histograms. */
  async getForPromString (): Promise<HistogramValues> {
    return await this.get()
  }
}

/** The registry of one process's metrics, read from `metrics` at each scrape. */
export function metricsRegistry (metrics: ProcessCounts): { text: () => Promise<string>, json: () => Promise<MetricsJson> } {
  const registry = new Registry()
  const registers: Registry[] = []
  const meter = metrics.requests
  const sweeps = metrics.sweeps
  registerProcessMetrics(registry)

  registry.registerMetric(new Counter({
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
  registry.registerMetric(new CountedHistogram({
    name: 'fsbucket_request_duration_seconds',
    help: 'Time from a request\'s arrival to the end of its answer, by door and operation.',
    labelNames: ['door', 'operation'],
    buckets: durationBuckets
  }, function * () {
    for (const series of meter.all()) yield { labels: { door: series.door, operation: series.operation }, counts: series.durations, sum: series.durationSum }
  }))
  for (const [name, help, field] of [
    ['fsbucket_received_bytes_total', 'Bytes read from connections (headers included), by door and operation.', 'received'],
    ['fsbucket_sent_bytes_total', 'Bytes written to connections (headers included), by door and operation.', 'sent']
  ] as const) {
    registry.registerMetric(new Counter<'door' | 'operation'>({
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
  registry.registerMetric(new Gauge<'port'>({
    name: 'fsbucket_requests_in_flight',
    help: 'Requests read and not yet answered, by port (http: the routes, the management API and the console; s3).',
    labelNames: ['port'],
    registers,
    collect () {
      for (const port of ['http', 's3'] as PortName[]) this.set({ port }, meter.inFlight[port])
    }
  }))

  registry.registerMetric(new CountedHistogram({
    name: 'fsbucket_catalog_commit_duration_seconds',
    help: 'Time from the start of a catalog write transaction until it is durable, by catalog (sqlite, postgresql).',
    labelNames: ['catalog'],
    buckets: metrics.commits.sqlite.buckets,
    leFirst: true
  }, function * () {
    // A catalog that never committed has no series, as prom-client shows a label set never observed.
    for (const [catalog, tally] of Object.entries(metrics.commits)) {
      if (Array.from(tally.counts).some(count => count > 0)) yield { labels: { catalog }, counts: tally.counts, sum: tally.sum }
    }
  }))
  registry.registerMetric(new CountedHistogram({
    name: 'fsbucket_catalog_commit_batch_size',
    help: 'Writes carried by one group commit of a SQLite catalog.',
    buckets: metrics.batches.buckets
  }, function * () { yield { labels: {}, counts: metrics.batches.counts, sum: metrics.batches.sum } }))
  registry.registerMetric(new Gauge<'state'>({
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
  registry.registerMetric(new Gauge({
    name: 'fsbucket_catalog_connections_max',
    help: 'Most connections the PostgreSQL catalog\'s pool may open (--catalog-connections).',
    registers,
    collect () { this.set(poolUse().max) }
  }))
  registry.registerMetric(new Gauge({
    name: 'fsbucket_catalog_connection_waits',
    help: 'Requests waiting for a connection of the PostgreSQL catalog\'s pool.',
    registers,
    collect () { this.set(poolUse().waiting) }
  }))

  registry.registerMetric(new Counter({
    name: 'fsbucket_sweeps_total',
    help: 'Sweeps of every bucket, by outcome (ok, failed).',
    labelNames: ['outcome'],
    registers,
    collect () {
      this.reset()
      this.inc({ outcome: 'ok' }, sweeps.ok)
      this.inc({ outcome: 'failed' }, sweeps.failed)
    }
  }))
  for (const [name, help, field] of [
    ['fsbucket_sweep_aborted_uploads_total', 'Multipart uploads the sweeper aborted because they outlived their lifetime.', 'abortedUploads'],
    ['fsbucket_sweep_removed_leftovers_total', 'Leftovers of interrupted writes the sweeper removed.', 'removedLeftovers'],
    ['fsbucket_sweep_expired_objects_total', 'Objects the sweeper deleted because a lifecycle rule expired them.', 'expiredObjects'],
    ['fsbucket_sweep_transitioned_objects_total', 'Objects a lifecycle rule moved to InfrequentAccess.', 'transitionedObjects']
  ] as const) {
    registry.registerMetric(new Counter({ name, help, registers, collect () { this.reset(); this.inc(sweeps[field]) } }))
  }
  registry.registerMetric(new CountedHistogram({
    name: 'fsbucket_sweep_duration_seconds',
    help: 'Time a sweep of every bucket took.',
    buckets: sweeps.seconds.buckets
  }, function * () { yield { labels: {}, counts: sweeps.seconds.counts, sum: sweeps.seconds.sum } }))

  return { text: async () => await registry.metrics(), json: async () => await registry.getMetricsAsJSON() }
}

/**
 * The counters and histograms of several processes' metrics, summed (their
 * gauges left out): what a worker gone leaves in the server's sum.
 */
export async function countersSum (parts: MetricsJson[]): Promise<MetricsJson> {
  // prom-client's types call `type` an enum; what it holds is the text format's name of the type.
  const counts = (metric: MetricsJson[number]): boolean => ['counter', 'histogram'].includes(metric.type as unknown as string)
  const counting = parts.map(part => part.filter(counts))
  return await AggregatorRegistry.aggregate(counting).getMetricsAsJSON()
}

/** The sum of several processes' metrics (counters and histograms summed, ...), in the text format. */
export async function aggregateText (parts: MetricsJson[]): Promise<string> {
  return await AggregatorRegistry.aggregate(parts).metrics()
}
