/**
 * `serve`'s signals in its first moments (before its handlers exist) are
 * held, not fatal: Node's default would end the process at once (129, 143).
 * Here in-process: a SIGHUP and a SIGTERM sent after `forkEarly` are kept,
 * in order, until `takeHeldSignals` hands them over; this test's process
 * would otherwise have died of them.
 */
import t from 'tap'
import { forkEarly, takeHeldSignals } from '../../src/server/early-fork.js'

t.test('signals that come as serve starts are held until its handlers take them', async t => {
  const listening = (): number[] => ['SIGHUP', 'SIGTERM', 'SIGINT'].map(kind => process.listenerCount(kind))
  const before = listening()
  forkEarly(['serve', '--workers', '1'])
  process.kill(process.pid, 'SIGHUP')
  await new Promise(resolve => setTimeout(resolve, 100))
  process.kill(process.pid, 'SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 100))
  t.same(takeHeldSignals(), ['SIGHUP', 'SIGTERM'], 'both held, in order')
  t.same(listening(), before, 'and the holding ends with the hand-over')
  t.same(takeHeldSignals(), [], 'each handed over once')
})

t.test('another command holds nothing', async t => {
  const before = process.listenerCount('SIGHUP')
  forkEarly(['ls'])
  t.equal(process.listenerCount('SIGHUP'), before)
})
