/**
 * A part of an app built at its first request (src/doors/handed-on.ts), as
 * the management API is: built once, whole requests handed to it with
 * their bodies unread and their ids, whatever their method, a failed
 * build answered and tried again, closed with the app; and, on the
 * gateway's app, one log line (with its answer's bytes) and one count per
 * management request, under the route the API matched.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { handedId, handOn } from '../../src/doors/handed-on.js'
import { RequestLog } from '../../src/doors/request-log.js'
import { RequestMeter } from '../../src/doors/request-meter.js'
import { connect } from 'node:net'
import { gateway, token } from '../http/gateway-fixture.js'

/** What the server answers to `head` sent as it is, until it closes the connection. */
async function rawRequest (port: number, head: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    let text = ''
    const socket = connect(port, '127.0.0.1', () => { socket.write(head) })
    socket.on('data', chunk => { text += String(chunk) })
    socket.on('end', () => { resolve(text) })
    socket.on('error', reject)
  })
}

interface Port { app: FastifyInstance, builds: () => number, closed: () => number, hooked: () => number }

function port (t: Test, failures = 0): Port {
  let builds = 0
  let closed = 0
  let ids = 0
  const app = Fastify({ genReqId: () => `port-${++ids}` })
  void handOn(app, '/api', async () => {
    builds++
    if (builds <= failures) throw new Error('no inner app this time')
    const inner = Fastify({ genReqId: handedId })
    inner.post('/api/echo', async request => ({ id: request.id, body: request.body }))
    inner.get('/api/*', async request => ({ id: request.id, url: request.url }))
    inner.setNotFoundHandler(async (request, reply) => await reply.code(404).send({ inner: `${request.method} ${request.url}` }))
    inner.addHook('onClose', async () => { closed++ })
    return inner
  }, (reply, err) => { void reply.code(503).send({ failed: (err as Error).message }) })
  app.get('/other', async () => 'other')
  // A hook the port's app is given afterwards runs for handed requests too.
  let hooked = 0
  app.addHook('onRequest', async () => { hooked++ })
  t.teardown(async () => { await app.close() })
  return { app, builds: () => builds, closed: () => closed, hooked: () => hooked }
}

t.test('built at the first request under its prefix, once, and closed with the app', async t => {
  const { app, builds, closed, hooked } = port(t)
  t.equal((await app.inject('/other')).body, 'other')
  t.equal(builds(), 0, 'a request elsewhere builds nothing')
  const answers = await Promise.all([app.inject('/api/a'), app.inject('/api/b?x=1'), app.inject('/api')])
  t.same(answers.map(a => a.statusCode), [200, 200, 404], 'the inner app routes what it gets, and answers what it does not know')
  t.same(answers[1].json(), { id: 'port-3', url: '/api/b?x=1' }, 'with the request id the port gave it, and its URL whole')
  t.equal(builds(), 1, 'three requests at once, one build')
  await app.inject('/api/c')
  t.equal(builds(), 1)
  t.equal(hooked(), 5, 'the port\'s own hooks ran for every request, handed or not')
  await app.close()
  t.equal(closed(), 1, 'closed with the app')
})

t.test('every method under the prefix, those the router does not know included, reaches the inner app', async t => {
  const { app } = port(t)
  for (const method of ['PROPFIND', 'MKCOL', 'DELETE']) {
    const answer = await app.inject({ method: method as 'GET', url: '/api/x' })
    t.equal(answer.statusCode, 404, method)
    t.same(answer.json(), { inner: `${method} /api/x` }, `${method}: the inner app's answer`)
  }
})

t.test('the inner app writes the one line, timed from when the port took the request', async t => {
  const lines: Array<Record<string, unknown>> = []
  const logger = { level: 'info', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } }
  const app = Fastify({ logger, logController: new RequestLog() })
  t.teardown(async () => { await app.close() })
  await handOn(app, '/api', async () => {
    await new Promise(resolve => setTimeout(resolve, 150))
    const inner = Fastify({ loggerInstance: app.log, genReqId: handedId, logController: new RequestLog() })
    inner.get('/api/slow-to-build', async () => 'built')
    return inner
  }, () => {})
  const answer = await app.inject('/api/slow-to-build')
  t.equal(answer.body, 'built')
  const requestLines = lines.filter(line => line.msg === 'request')
  t.equal(requestLines.length, 1, 'one line')
  t.ok(Number(requestLines[0].ms) >= 140, `its time includes the build (${String(requestLines[0].ms)} ms)`)
  t.equal(requestLines[0].bytes, 5)
})

t.test('the body reaches the inner app unread', async t => {
  const { app } = port(t)
  const answer = await app.inject({ method: 'POST', url: '/api/echo', payload: { a: [1, 2] } })
  t.equal(answer.statusCode, 200)
  t.same(answer.json().body, { a: [1, 2] })
})

t.test('a build that fails is answered, and tried again at the next request', async t => {
  const { app, builds } = port(t, 1)
  const first = await app.inject('/api/a')
  t.equal(first.statusCode, 503)
  t.same(first.json(), { failed: 'no inner app this time' })
  t.equal((await app.inject('/api/a')).statusCode, 200)
  t.equal(builds(), 2)
})

t.test('the management API: one log line and one count per request, named by its own route', async t => {
  const lines: Array<Record<string, unknown>> = []
  const destination = { write: (line: string) => { lines.push(JSON.parse(line)) } }
  const meter = new RequestMeter()
  const { app } = await gateway(t, { logLevel: 'info', logDestination: destination, meter })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const url = `http://127.0.0.1:${port}/client/v4/accounts/a/r2/buckets`
  const listed = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  t.equal(listed.status, 200)
  const listedBody = await listed.text()
  t.equal(JSON.parse(listedBody).success, true)
  const refused = await fetch(url)
  t.equal(refused.status, 400, 'no credentials: the API\'s own refusal')
  const refusedBody = await refused.text()
  t.equal(JSON.parse(refusedBody).errors[0].code, 9106)
  const unknown = await fetch(`http://127.0.0.1:${port}/client/v4/nowhere`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(unknown.status, 400)
  const unknownBody = await unknown.text()
  const propfind = await rawRequest(port, `PROPFIND /client/v4/x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`)
  t.match(propfind, /^HTTP\/1\.1 400 /, 'a method the router does not know: the API\'s not found')
  t.match(propfind, /"code":7000/)
  t.match(propfind, /cache-control: no-store/i)
  const requestLines = lines.filter(line => line.reqId !== undefined)
  t.same(requestLines.map(line => [line.msg, line.method, line.url, line.status, line.bytes]), [
    ['request', 'GET', '/client/v4/accounts/a/r2/buckets', 200, Buffer.byteLength(listedBody)],
    ['request', 'GET', '/client/v4/accounts/a/r2/buckets', 400, Buffer.byteLength(refusedBody)],
    ['request', 'GET', '/client/v4/nowhere', 400, Buffer.byteLength(unknownBody)],
    ['request', 'PROPFIND', '/client/v4/x', 400, Number(/content-length: (\d+)/i.exec(propfind)?.[1])]
  ], 'one line each, with the bytes of its answer, and no other line about them')
  t.equal(new Set(requestLines.map(line => line.reqId)).size, 4)
  const counted = meter.series('mgmt', 'GET /client/v4/accounts/:accountId/r2/buckets').statuses
  t.same([counted.get(200), counted.get(400)], [1, 1], 'counted under the route the API matched')
  t.equal(meter.series('mgmt', 'Unsupported').statuses.get(400), 2, 'an unknown path and an unknown method: one series, whatever the method or path')
  t.notOk([...meter.all()].some(series => series.operation.includes('/client/v4/*')), 'no series named after the API\'s catch-all')
  t.equal(meter.inFlight.http, 0, 'nothing left in flight')
})
