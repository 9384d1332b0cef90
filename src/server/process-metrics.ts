/**
 * Node's and the process's metrics, read when scraped and at no other time
 * (docs/operations.md lists them).
 *
 * prom-client's `collectDefaultMetrics` watches the process between scrapes:
 * a PerformanceObserver hears every garbage collection (with the 1 MiB young
 * generation it was measured with, a scavenge every few
 * hundred small requests, each one an entry object, a queued callback and a
 * labelled histogram update) and `monitorEventLoopDelay` wakes a timer every
 * 10 ms. The metrics benchmark put that at about a tenth of a small GET's
 * CPU time (1.25x the CPU per request of `--metrics off` with them, 1.10x
 * without). Here every value is taken from what Node and Linux keep anyway,
 * when the scrape asks:
 *
 * - CPU time (`process.cpuUsage`), memory (`process.memoryUsage`, and
 *   `/proc/self/status` for the virtual size), open and allowed file
 *   descriptors (`/proc/self/fd`, `/proc/self/limits`; absent elsewhere).
 * - The event loop's lag: how long a `setImmediate` queued by the scrape
 *   waits (what prom-client reports too), and its utilization since the
 *   previous scrape, or since the process started for the first
 *   (`performance.eventLoopUtilization`, kept by libuv).
 * - What it deliberately leaves out: the lag's percentiles and the
 *   durations of garbage collections, which only a watcher running all the
 *   time can know.
 *
 * The names are prom-client's, so dashboards made for its defaults keep
 * working for what is still there. Summed over the processes of a server
 * like every metric (aggregator `sum`), except the lag and the utilization
 * (averaged), the start time (the earliest) and the version (the first).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import { Counter, Gauge, type Registry } from 'prom-client'

type Aggregator = 'sum' | 'first' | 'min' | 'max' | 'average' | 'omit'

/** What one scrape reads, for a gauge's `collect`. */
interface GaugeSpec { name: string, help: string, aggregator?: Aggregator, labelNames?: string[], read: (gauge: Gauge<string>) => void | Promise<void> }

/** A number of a `/proc` file's line `Name: value ...`, or null where there is none (not Linux). */
function procField (file: string, pattern: RegExp): number | null {
  try {
    const match = pattern.exec(readFileSync(file, 'utf8'))
    return match === null ? null : Number(match[1])
  } catch {
    return null
  }
}

function openFds (): number | null {
  try {
    return readdirSync('/proc/self/fd').length
  } catch {
    return null
  }
}

/** Seconds a callback queued now waits for the event loop to come round. */
async function loopLag (): Promise<number> {
  const start = process.hrtime.bigint()
  await new Promise(resolve => setImmediate(resolve))
  return Number(process.hrtime.bigint() - start) / 1e9
}

const startSeconds = Math.round(Date.now() / 1000 - process.uptime())

/** Registers the process metrics on `registry`, each read when it is scraped. */
export function registerProcessMetrics (registry: Registry): void {
  // Registered through `registerMetric`: made with `registers: []`, nothing reaches prom-client's global registry.
  const registers: Registry[] = []
  for (const [name, help, field] of [
    ['process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', 'user'],
    ['process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', 'system'],
    ['process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', 'both']
  ] as const) {
    registry.registerMetric(new Counter({
      name,
      help,
      registers,
      collect () {
        const used = process.cpuUsage()
        const micros = field === 'both' ? used.user + used.system : used[field]
        this.reset()
        this.inc(micros / 1e6)
      }
    }))
  }
  // The loop's times as of this registry's previous scrape; null before its first, which reads them since the loop
  // started (libuv keeps them from there): taken here, the first scrape (which makes the registry) would measure itself (1).
  let utilization: EventLoopUtilization | null = null
  const gauges: GaugeSpec[] = [
    { name: 'process_start_time_seconds', help: 'Start time of the process since unix epoch in seconds.', aggregator: 'min', read: g => { g.set(startSeconds) } },
    { name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', read: g => { g.set(process.memoryUsage.rss()) } },
    {
      name: 'process_virtual_memory_bytes',
      help: 'Virtual memory size in bytes.',
      read: g => { const kib = procField('/proc/self/status', /^VmSize:\s+(\d+)/m); if (kib !== null) g.set(kib * 1024) }
    },
    { name: 'process_open_fds', help: 'Number of open file descriptors.', read: g => { const fds = openFds(); if (fds !== null) g.set(fds) } },
    {
      name: 'process_max_fds',
      help: 'Maximum number of open file descriptors.',
      read: g => { const max = procField('/proc/self/limits', /^Max open files\s+(\d+)/m); if (max !== null) g.set(max) }
    },
    {
      name: 'nodejs_heap_size_total_bytes',
      help: 'Process heap size from Node.js in bytes.',
      read: g => { g.set(process.memoryUsage().heapTotal) }
    },
    { name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.', read: g => { g.set(process.memoryUsage().heapUsed) } },
    { name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.', read: g => { g.set(process.memoryUsage().external) } },
    {
      name: 'nodejs_active_resources_total',
      help: 'Number of active resources that are currently keeping the event loop alive.',
      read: g => { g.set(process.getActiveResourcesInfo().length) }
    },
    { name: 'nodejs_eventloop_lag_seconds', help: 'Lag of event loop in seconds.', aggregator: 'average', read: async g => { g.set(await loopLag()) } },
    {
      name: 'nodejs_eventloop_utilization',
      help: 'Share of the time since the previous scrape the event loop spent running code (0 to 1).',
      aggregator: 'average',
      read: g => {
        const now = performance.eventLoopUtilization()
        g.set(utilization === null ? now.utilization : performance.eventLoopUtilization(now, utilization).utilization)
        utilization = now
      }
    },
    {
      name: 'nodejs_version_info',
      help: 'Node.js version info.',
      aggregator: 'first',
      labelNames: ['version', 'major', 'minor', 'patch'],
      read: g => {
        const [major, minor, patch] = process.versions.node.split('.')
        g.set({ version: process.version, major, minor, patch }, 1)
      }
    }
  ]
  for (const spec of gauges) {
    registry.registerMetric(new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames ?? [],
      aggregator: spec.aggregator ?? 'sum',
      registers,
      async collect () { await spec.read(this) }
    }))
  }
}
