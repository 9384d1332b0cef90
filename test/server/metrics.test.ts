/**
 * The sweeper's counters of src/server/metrics.ts: what a sweep report says
 * (lifecycle expiries and transitions included) is added to them.
 */
import t from 'tap'
import { ProcessMetrics } from '../../src/server/metrics.js'

t.test('a sweep report is counted, lifecycle actions included', async t => {
  const metrics = new ProcessMetrics()
  metrics.swept({ abortedUploads: 1, removedLeftovers: 2, expiredObjects: 3, transitionedObjects: 4 }, 10)
  metrics.swept({ abortedUploads: 0, removedLeftovers: 0 }, 10)
  const text = await metrics.text()
  t.match(text, /^fsbucket_sweeps_total\{outcome="ok"\} 2$/m)
  t.match(text, /^fsbucket_sweep_aborted_uploads_total 1$/m)
  t.match(text, /^fsbucket_sweep_removed_leftovers_total 2$/m)
  t.match(text, /^fsbucket_sweep_expired_objects_total 3$/m)
  t.match(text, /^fsbucket_sweep_transitioned_objects_total 4$/m)
})
