/**
 * `nodejs_eventloop_utilization` on a process's first scrape
 * (src/server/process-metrics.ts): the share of the time since the process
 * started, not of the scrape alone (which read 1 whatever the load).
 */
import t from 'tap'
import { ProcessMetrics } from '../../src/server/metrics.js'

t.test('the first scrape of an idle process reads its loop mostly idle', async t => {
  await new Promise(resolve => setTimeout(resolve, 1500))
  const text = await new ProcessMetrics().text()
  const match = /^nodejs_eventloop_utilization (\S+)$/m.exec(text)
  t.ok(match !== null, 'read')
  const utilization = Number(match?.[1])
  t.ok(utilization > 0 && utilization < 0.9, `since the process started, idle 1.5 s of it (${utilization})`)
})
