/**
 * The routes' error lines: a fault of the server met after the request's
 * body was read whole is logged at error (its client is still there, waiting
 * for the 500), and a client that goes away in the middle of its upload is
 * logged at debug, never at error.
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import type { Readable } from 'node:stream'
import { buildApp } from '../../src/app.js'
import { openRegistry } from '../../src/index.js'
import { open, received } from '../raw-socket.js'
import { testdir } from '../testdir.js'

async function loggedGateway (t: Test): Promise<{ port: number, lines: Array<{ level: number, msg: string }>, registry: Awaited<ReturnType<typeof openRegistry>> }> {
  const lines: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: null, publicBuckets: [], routes: [], fsync: false, logLevel: 'debug', logDestination: stream, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { port: (app.server.address() as { port: number }).port, lines, registry }
}

t.test('a fault after the whole body was read is logged at error', async t => {
  const { port, lines, registry } = await loggedGateway(t)
  const bucket = (await registry.open('photos'))!
  bucket.put = async (_key, value) => {
    for await (const _chunk of value as Readable) { /* read to its end */ }
    throw new Error('a fault in the engine')
  }
  const answer = await fetch(`http://127.0.0.1:${port}/photos/k`, { method: 'PUT', body: 'x'.repeat(100_000) })
  t.equal(answer.status, 500)
  t.ok(lines.some(line => line.level === 50 && line.msg === 'request failed'), 'logged at error')
  t.notOk(lines.some(line => line.msg === 'client went away'), 'not taken for a client that left')
})

t.test('an upload cut short by its client logs no error', async t => {
  const { port, lines, registry } = await loggedGateway(t)
  for (let round = 0; round < 3; round++) {
    const socket = await open(port)
    socket.write('PUT /photos/gone HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n')
    t.match((await received(socket, text => text.includes('\r\n\r\n'))).text, /^HTTP\/1\.1 100 /, 'the body is asked for')
    socket.write('x'.repeat(1000))
    await new Promise(resolve => setTimeout(resolve, 20))
    socket.destroy()
  }
  const deadline = Date.now() + 3000
  while (lines.filter(line => line.msg === 'client went away').length < 3 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  t.same(lines.filter(line => line.level >= 40).map(line => line.msg).filter(msg => !msg.startsWith('no token configured')), [], 'nothing at warn or error')
  t.equal(lines.filter(line => line.msg === 'client went away').length, 3, 'each at debug')
  t.equal(await (await registry.open('photos'))?.head('gone'), null, 'nothing stored')
})
