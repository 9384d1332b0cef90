/**
 * afterChannel: what must see a worker's last messages runs once its
 * channel is closed, and at most a second after its exit when Node never
 * says so (a worker that died holding a connection it had not taken).
 */
import t from 'tap'
import { EventEmitter } from 'node:events'
import type { Worker } from 'node:cluster'
import { afterChannel, CHANNEL_WAIT_MS } from '../../src/server/worker-channel.js'

/** A worker as afterChannel sees it: its channel's state and its 'disconnect'. */
function fakeWorker (connected: boolean): Worker & { connected: boolean } {
  const worker = Object.assign(new EventEmitter(), { connected, isConnected (): boolean { return worker.connected } })
  return worker as unknown as Worker & { connected: boolean }
}

t.test('a worker whose channel is closed already: at once', async t => {
  let runs = 0
  afterChannel(fakeWorker(false), () => { runs++ })
  t.equal(runs, 1)
})

t.test('a connected worker: on its disconnect, once, and the wait does not run it again', async t => {
  const worker = fakeWorker(true)
  let runs = 0
  afterChannel(worker, () => { runs++ })
  t.equal(runs, 0, 'not before the channel closes')
  worker.connected = false
  worker.emit('disconnect')
  t.equal(runs, 1)
  await new Promise(resolve => setTimeout(resolve, CHANNEL_WAIT_MS + 200))
  t.equal(runs, 1, 'once')
  t.equal(worker.listenerCount('disconnect'), 0, 'no listener left')
})

t.test('a worker whose disconnect never comes: after the wait, once', async t => {
  const worker = fakeWorker(true)
  const began = Date.now()
  let ranAfter = -1
  let runs = 0
  afterChannel(worker, () => { runs++; ranAfter = Date.now() - began })
  await new Promise(resolve => setTimeout(resolve, CHANNEL_WAIT_MS / 2))
  t.equal(runs, 0, 'not before the wait ends')
  await new Promise(resolve => setTimeout(resolve, CHANNEL_WAIT_MS))
  t.equal(runs, 1)
  t.ok(ranAfter >= CHANNEL_WAIT_MS - 20, `ran after ${ranAfter} ms`)
  t.equal(worker.listenerCount('disconnect'), 0, 'no listener left')
  worker.emit('disconnect')
  t.equal(runs, 1, 'a disconnect after the wait does not run it again')
})
