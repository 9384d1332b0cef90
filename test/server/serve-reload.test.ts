/**
 * A TLS reload asked before a server process's gateway is handed over (the
 * primary's `reload-tls` word in a worker, SIGHUP to a server alone) is not
 * lost: the gateway may have read its certificate files before they were
 * replaced, so it reloads them once handed over; several asked meanwhile
 * count as one. In-process, through `handleShutdown`'s handlers: the word
 * is emitted as the cluster's channel emits it, and the gateway is a fake
 * counting its reloads. A process test could not time a word between the
 * files' read and the hand-over.
 */
import type { EventEmitter } from 'node:events'
import t, { type Test } from 'tap'
import type { Gateway } from '../../src/server/gateway.js'
import { handleShutdown, type ServeOptions } from '../../src/server/serve.js'

const events = ['message', 'SIGHUP', 'SIGTERM', 'SIGINT']
/** The process as the emitter it is, whatever the event's name. */
const emitter: EventEmitter = process

/** The handlers of a process that serves, taken out again at the test's end (they would outlive it in this process). */
function serving (t: Test, inWorker: boolean): (gateway: Gateway) => boolean {
  const before = new Map(events.map(event => [event, emitter.listeners(event)]))
  const handOver = handleShutdown({ drainTimeout: 10, logLevel: 'silent' } as unknown as ServeOptions, inWorker)
  t.teardown(() => {
    for (const event of events) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)!.includes(listener)) emitter.off(event, listener as (...args: unknown[]) => void)
      }
    }
  })
  return handOver
}

/** A gateway serving TLS from files, counting its reloads. */
function gateway (): { gateway: Gateway, reloads: () => number } {
  let reloads = 0
  const silent = { info () {}, warn () {}, error () {} }
  const fake = { app: { log: silent }, close: async () => {}, reloadTls: async () => { reloads++; return true } }
  return { gateway: fake as unknown as Gateway, reloads: () => reloads }
}

const word = { fsbucket: 'reload-tls' }

t.test('a worker told to reload before its gateway is handed over reloads once it is', async t => {
  const handOver = serving(t, true)
  const served = gateway()
  process.emit('message', word, undefined)
  process.emit('message', word, undefined)
  t.equal(handOver(served.gateway), true, 'handed over, not draining')
  t.equal(served.reloads(), 1, 'the words that came before count as one reload, at the hand-over')
  process.emit('message', word, undefined)
  t.equal(served.reloads(), 2, 'and a word after it reloads at once')
})

t.test('a worker told nothing reloads nothing at the hand-over, and ignores a SIGHUP of its own', async t => {
  const handOver = serving(t, true)
  const served = gateway()
  process.emit('SIGHUP', 'SIGHUP')
  handOver(served.gateway)
  t.equal(served.reloads(), 0)
})

t.test('a server alone reloads at the hand-over for a SIGHUP during its start-up', async t => {
  const handOver = serving(t, false)
  const served = gateway()
  process.emit('SIGHUP', 'SIGHUP')
  handOver(served.gateway)
  t.equal(served.reloads(), 1)
  process.emit('SIGHUP', 'SIGHUP')
  t.equal(served.reloads(), 2)
})
