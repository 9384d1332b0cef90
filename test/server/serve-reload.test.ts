/**
 * A TLS reload asked before a server process's gateway is handed over (the
 * primary's `reload-tls` word in a worker, SIGHUP to a server alone) is not
 * lost: the gateway may have read its certificate files before they were
 * replaced, so it reloads them once handed over; several asked meanwhile
 * count as one. In-process, through `handleShutdown`'s handlers: the word
 * is emitted as the cluster's channel emits it, and the gateway is a fake
 * counting its reloads. A process test could not time a word between the
 * files' read and the hand-over.
 *
 * Also the exit of a forced stop (the drain timeout), whose status must say
 * 1 even when the last request finishes while a pushed batch is released.
 */
import type { EventEmitter } from 'node:events'
import t, { type Test } from 'tap'
import type { Gateway } from '../../src/server/gateway.js'
import type { ServeOptions } from '../../src/server/serve.js'
import { handleShutdown } from '../../src/server/shutdown.js'

const events = ['message', 'SIGHUP', 'SIGTERM', 'SIGINT']
/** The process as the emitter it is, whatever the event's name. */
const emitter: EventEmitter = process

/** The handlers of a process that serves, taken out again at the test's end (they would outlive it in this process). */
function serving (t: Test, inWorker: boolean, drainTimeout = 10): (gateway: Gateway) => boolean {
  const before = new Map(events.map(event => [event, emitter.listeners(event)]))
  const handOver = handleShutdown({ drainTimeout, logLevel: 'silent' } as unknown as ServeOptions, inWorker)
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

t.test('a drain cut by its timeout exits 1, though the last request finishes while the pushed batch is released', async t => {
  const codes: number[] = []
  const exit = process.exit
  process.exit = ((code?: number) => { codes.push(code ?? 0) }) as typeof process.exit
  t.teardown(() => { process.exit = exit })
  const handOver = serving(t, false, 0.2)
  const silent = { info () {}, warn () {}, error () {} }
  let finish = (): void => {}
  const fake = {
    app: { log: silent },
    // The request in flight ends after the drain timeout (0.2 s), while the push's batch is still being released.
    close: async () => { await new Promise<void>(resolve => { finish = resolve }) },
    cutPush: async () => { await new Promise(resolve => setTimeout(resolve, 300)) }
  }
  t.equal(handOver(fake as unknown as Gateway), true)
  process.emit('SIGTERM', 'SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 300))
  finish()
  // Past the forced stop's last second, so that none of its exits runs after the real one is back.
  await new Promise(resolve => setTimeout(resolve, 1200))
  t.ok(codes.length > 0, 'it exits')
  t.equal(codes[0], 1, 'with 1: the timeout cut it')
})
