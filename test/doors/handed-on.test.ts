/**
 * A part of an app built at its first request (src/doors/handed-on.ts), as
 * the management API is: built once, whole requests handed to it with
 * their bodies unread and their ids, a failed build answered and tried
 * again, closed with the app; and, on the gateway's app, one log line and
 * one count per management request, under the route the API matched.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { HandedLog, handedId, handOn } from '../../src/doors/handed-on.js'
import { RequestMeter } from '../../src/doors/request-meter.js'
import { gateway, token } from '../http/gateway-fixture.js'

interface Port { app: FastifyInstance, builds: () => number, closed: () => number }

function port (t: Test, failures = 0): Port {
  let builds = 0
  let closed = 0
  let ids = 0
  const app = Fastify({ genReqId: () => `port-${++ids}` })
  handOn(app, '/api', async () => {
    builds++
    if (builds <= failures) throw new Error('no inner app this time')
    const inner = Fastify({ genReqId: handedId, logController: new HandedLog() })
    inner.post('/api/echo', async request => ({ id: request.id, body: request.body }))
    inner.get('/api/*', async request => ({ id: request.id, url: request.url }))
    inner.addHook('onClose', async () => { closed++ })
    return inner
  }, (reply, err) => { void reply.code(503).send({ failed: (err as Error).message }) })
  app.get('/other', async () => 'other')
  t.teardown(async () => { await app.close() })
  return { app, builds: () => builds, closed: () => closed }
}

t.test('built at the first request under its prefix, once, and closed with the app', async t => {
  const { app, builds, closed } = port(t)
  t.equal((await app.inject('/other')).body, 'other')
  t.equal(builds(), 0, 'a request elsewhere builds nothing')
  const answers = await Promise.all([app.inject('/api/a'), app.inject('/api/b?x=1'), app.inject('/api')])
  t.same(answers.map(a => a.statusCode), [200, 200, 404], 'the inner app routes what it gets, and answers what it does not know')
  t.same(answers[1].json(), { id: 'port-3', url: '/api/b?x=1' }, 'with the request id the port gave it, and its URL whole')
  t.equal(builds(), 1, 'three requests at once, one build')
  await app.inject('/api/c')
  t.equal(builds(), 1)
  await app.close()
  t.equal(closed(), 1, 'closed with the app')
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
  t.equal((await listed.json()).success, true)
  const refused = await fetch(url)
  t.equal(refused.status, 400, 'no credentials: the API\'s own refusal')
  t.equal((await refused.json()).errors[0].code, 9106)
  const unknown = await fetch(`http://127.0.0.1:${port}/client/v4/nowhere`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(unknown.status, 404)
  const requestLines = lines.filter(line => line.reqId !== undefined)
  t.same(requestLines.map(line => [line.msg, line.method, line.url, line.status]), [
    ['request', 'GET', '/client/v4/accounts/a/r2/buckets', 200],
    ['request', 'GET', '/client/v4/accounts/a/r2/buckets', 400],
    ['request', 'GET', '/client/v4/nowhere', 404]
  ], 'one line each, and no other line about them')
  t.equal(new Set(requestLines.map(line => line.reqId)).size, 3)
  const counted = meter.series('mgmt', 'GET /client/v4/accounts/:accountId/r2/buckets').statuses
  t.same([counted.get(200), counted.get(400)], [1, 1], 'counted under the route the API matched')
  t.equal(meter.series('mgmt', 'GET /client/v4/*').statuses.get(404), 1, 'an unknown path under the API\'s catch-all')
  t.equal(meter.inFlight.http, 0, 'nothing left in flight')
})
