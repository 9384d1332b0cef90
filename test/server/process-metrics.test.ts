/**
 * src/server/process-metrics.ts: the process's metrics are read when
 * scraped, with nothing watching the process between scrapes (no observer
 * of garbage collections, no event-loop delay timer), and add up across
 * the processes of a server as docs/operations.md says.
 */
import perfHooks from 'node:perf_hooks'
import t from 'tap'
import { AggregatorRegistry } from 'prom-client'
import { ProcessMetrics } from '../../src/server/metrics.js'

/** The value of a sample without labels, or of the first one whose labels start as given. */
function sample (text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)
  if (match === null) throw new Error(`no ${name} in:\n${text}`)
  return Number(match[1])
}

t.test('making the metrics of a process starts no watcher: no GC observer, no event-loop delay monitor', async t => {
  const observed: string[] = []
  const observe = perfHooks.PerformanceObserver.prototype.observe
  const monitor = perfHooks.monitorEventLoopDelay
  t.teardown(() => {
    perfHooks.PerformanceObserver.prototype.observe = observe
    perfHooks.monitorEventLoopDelay = monitor
  })
  perfHooks.PerformanceObserver.prototype.observe = function (this: perfHooks.PerformanceObserver, options) {
    observed.push(JSON.stringify(options))
    observe.call(this, options)
  }
  perfHooks.monitorEventLoopDelay = options => { observed.push('monitorEventLoopDelay'); return monitor(options) }
  const metrics = new ProcessMetrics()
  await metrics.text()
  t.same(observed, [], 'nothing observed between scrapes')
})

t.test('a scrape reads CPU, memory, descriptors and the event loop then', async t => {
  const metrics = new ProcessMetrics()
  const first = await metrics.text()
  const busy = process.cpuUsage()
  while (process.cpuUsage(busy).user < 50_000) { /* 50 ms of CPU */ }
  const second = await metrics.text()
  t.ok(sample(second, 'process_cpu_seconds_total') - sample(first, 'process_cpu_seconds_total') >= 0.05, 'the CPU used since the first scrape')
  t.ok(sample(second, 'process_resident_memory_bytes') > 1e6)
  t.ok(sample(second, 'nodejs_heap_size_used_bytes') > 0)
  t.ok(sample(second, 'process_open_fds') > 2, 'stdin, stdout, stderr at least')
  t.ok(sample(second, 'nodejs_eventloop_lag_seconds') >= 0)
  const utilization = sample(second, 'nodejs_eventloop_utilization')
  t.ok(utilization > 0.5 && utilization <= 1, `the loop was busy since the first scrape (${utilization})`)
  t.match(second, new RegExp(`^nodejs_version_info\\{version="${process.version}",`, 'm'))
  t.notMatch(second, /nodejs_gc_duration_seconds|nodejs_eventloop_lag_p99_seconds/, 'what only a watcher could know is left out')
})

t.test('over several processes: CPU and memory summed, the lag averaged, the earliest start', async t => {
  const a = await new ProcessMetrics().json()
  const b = await new ProcessMetrics().json()
  const value = (json: typeof a, name: string): number => Number(json.find(m => m.name === name)?.values[0]?.value)
  const text = await AggregatorRegistry.aggregate([a, b]).metrics()
  t.equal(sample(text, 'process_resident_memory_bytes'), value(a, 'process_resident_memory_bytes') + value(b, 'process_resident_memory_bytes'))
  t.equal(sample(text, 'nodejs_eventloop_lag_seconds'), (value(a, 'nodejs_eventloop_lag_seconds') + value(b, 'nodejs_eventloop_lag_seconds')) / 2)
  t.equal(sample(text, 'process_start_time_seconds'), value(a, 'process_start_time_seconds'), 'one process: the same start')
  t.match(text, /^nodejs_version_info\{[^}]*\} 1$/m, 'the version once, not added up')
})
