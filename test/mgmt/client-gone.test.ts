/**
 * A client that goes away in the middle of an upload to the management
 * API's object PUT is no fault of the server: logged at debug, as on the
 * HTTP routes and the S3 port, never at error, and nothing is stored.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../../src/app.js'
import { openRegistry } from '../../src/index.js'
import { open, received } from '../raw-socket.js'
import { testdir } from '../testdir.js'
import { accountId } from './helpers.js'

t.test('an upload cut short by its client logs no error', async t => {
  const lines: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: null, publicBuckets: [], routes: [], fsync: false, logLevel: 'debug', logDestination: stream, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  for (let round = 0; round < 5; round++) {
    const socket = await open(port)
    // With Expect: 100-continue, the 100 says the route has begun to read the body: then the client goes.
    socket.write(`PUT /client/v4/accounts/${accountId}/r2/buckets/photos/objects/gone HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n`)
    t.match((await received(socket, text => text.includes('\r\n\r\n'))).text, /^HTTP\/1\.1 100 /, 'the body is asked for')
    socket.write('x'.repeat(1000))
    await new Promise(resolve => setTimeout(resolve, 20))
    socket.destroy()
  }
  const deadline = Date.now() + 3000
  while (lines.filter(line => line.msg === 'client went away').length < 5 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  t.same(lines.filter(line => line.level >= 40).map(line => line.msg).filter(msg => !msg.startsWith('no token configured')), [], 'nothing at warn or error')
  t.equal(lines.filter(line => line.msg === 'client went away').length, 5, 'each at debug')
  t.equal(await (await registry.open('photos'))?.head('gone'), null, 'nothing stored')
})
