/**
 * A client that goes away in the middle of an upload is no fault of the
 * server: logged at debug, never at error, on the HTTP routes and the
 * management API's object PUT (the S3 port's is in test/s3/), and nothing
 * is stored. A fault of the server met after the body was read whole is
 * another matter: its client is still there, waiting for the 500, and the
 * line is at error.
 */
import t, { type Test } from 'tap'
import { Writable, type Readable } from 'node:stream'
import { buildApp } from '../../src/app.js'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { uploadsCutShort } from '../raw-socket.js'
import { testdir } from '../testdir.js'
import { accountId } from '../mgmt/helpers.js'

interface Logged { port: number, registry: BucketRegistry, lines: Array<{ level: number, msg: string }> }

/** A gateway on loopback without a token, with bucket `photos`, logging at debug into `lines`. */
async function loggedGateway (t: Test): Promise<Logged> {
  const lines: Logged['lines'] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: null, publicBuckets: [], routes: [], fsync: false, logLevel: 'debug', logDestination: stream, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { port: (app.server.address() as { port: number }).port, registry, lines }
}

/** Cuts `rounds` uploads of `path` short and checks what was logged and stored. */
async function cutShort (t: Test, path: string, rounds: number): Promise<void> {
  const { port, registry, lines } = await loggedGateway(t)
  // With Expect: 100-continue, the 100 says the route has begun to read the body: then the client goes.
  const heads = await uploadsCutShort(port, `PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n`, rounds)
  for (const head of heads) t.match(head, /^HTTP\/1\.1 100 /, 'the body is asked for')
  const deadline = Date.now() + 3000
  while (lines.filter(line => line.msg === 'client went away').length < rounds && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  t.same(lines.filter(line => line.level >= 40).map(line => line.msg).filter(msg => !msg.startsWith('no token configured')), [], 'nothing at warn or error')
  t.equal(lines.filter(line => line.msg === 'client went away').length, rounds, 'each at debug')
  t.equal(await (await registry.open('photos'))?.head('gone'), null, 'nothing stored')
}

t.test('an upload to the management API cut short by its client logs no error', async t => {
  await cutShort(t, `/client/v4/accounts/${accountId}/r2/buckets/photos/objects/gone`, 5)
})

t.test('an upload to the routes cut short by its client logs no error', async t => {
  await cutShort(t, '/photos/gone', 3)
})

t.test('a fault after the routes read the whole body is logged at error', async t => {
  const { port, registry, lines } = await loggedGateway(t)
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
