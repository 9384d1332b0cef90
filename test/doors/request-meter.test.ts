/**
 * src/doors/request-meter.ts, as the HTTP port counts its requests:
 * answers given before any route (Node's parser refusals, an `Expect` the
 * server cannot meet) are counted under `other`
 * with their bytes, and the console's requests no route has are one
 * `Unsupported` series of the console door, whatever the method.
 */
import t from 'tap'
import { answeredUntilClosed, open, received, statuses } from '../raw-socket.js'
import { gateway } from '../http/gateway-fixture.js'
import { s3Server } from '../s3/fixture.js'
import { idleConnectionListener, inConnectionOrder, receivingBody, whenAnswered } from '../../src/server/connection.js'
import { RequestMeter } from '../../src/doors/request-meter.js'

t.test('refusals made before any route are counted under other, with their bytes', async t => {
  const meter = new RequestMeter()
  const { app } = await gateway(t, { meter })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  const other = (): { statuses: Map<number, number>, received: number, sent: number } => meter.series('http', 'other')
  for (const [what, head, status] of [
    ['a malformed request line', 'GARBAGE /x\r\n\r\n', 400],
    ['headers over 16 KiB', `GET /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ['an Expect other than 100-continue', 'PUT /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nExpect: teapot\r\n\r\n', 417]
  ] as const) {
    const before = { count: other().statuses.get(status) ?? 0, received: other().received, sent: other().sent }
    const { text } = await answeredUntilClosed(port, head, 5000)
    t.same(statuses(text), [status], `${what}: answered ${status}`)
    for (let waited = 0; (other().statuses.get(status) ?? 0) === before.count && waited < 2000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20))
    t.equal(other().statuses.get(status), before.count + 1, `${what}: counted once, under other`)
    t.ok(other().received - before.received > 0, `${what}: the bytes received counted`)
    t.equal(other().sent - before.sent, Buffer.byteLength(text, 'latin1'), `${what}: the bytes sent counted, all of them`)
  }
  t.equal(meter.inFlight.http, 0, 'nothing left in flight')
})

t.test('a request of the console that no route has is one Unsupported series of the console door', async t => {
  const meter = new RequestMeter()
  const { app } = await gateway(t, { meter })
  for (const method of ['DELETE', 'PUT', 'POST', 'PATCH', 'PROPFIND']) {
    const answer = await app.inject({ method: method as 'GET', url: '/_console/a/b', headers: { 'content-length': '0' } })
    t.ok(answer.statusCode === 404 || answer.statusCode === 405, `${method}: refused (${answer.statusCode})`)
  }
  // Fastify's types know no PROPFIND; its router does.
  await app.inject({ method: 'PROPFIND' as 'GET', url: '/_console/' })
  const series = [...meter.all()].map(s => `${s.door} ${s.operation}`)
  t.same(series.filter(name => name.startsWith('console')), ['console Unsupported'], 'one series, whatever the method')
  t.notOk(series.includes('http Unsupported'), 'none counted under the routes\' door')
  const counted = [...meter.series('console', 'Unsupported').statuses.values()].reduce((a, b) => a + b, 0)
  t.equal(counted, 6, 'every one of them')
})

t.test('headers that stop arriving are counted under other when the idle timeout answers them (408)', async t => {
  const meter = new RequestMeter()
  const { app } = await gateway(t, { meter, idleTimeout: 1 })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { text } = await answeredUntilClosed((app.server.address() as { port: number }).port, 'GET /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n', 8000)
  t.same(statuses(text), [408])
  t.equal(meter.series('http', 'other').statuses.get(408), 1, 'counted once, under other')
  t.equal(meter.series('http', 'other').sent, Buffer.byteLength(text, 'latin1'), 'with the bytes sent')
})

t.test('the S3 port counts its refusals made before any route under its own other', async t => {
  const meter = new RequestMeter()
  const connections = { idleTimeoutMs: 1000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered, receivingBody }
  const server = await s3Server(t, { meter, connections })
  const port = Number(new URL(server.endpoint).port)
  for (const [what, head, status] of [
    ['a malformed request line', 'GARBAGE /x\r\n\r\n', 400],
    ['an Expect other than 100-continue', 'PUT /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nExpect: teapot\r\n\r\n', 417],
    ['headers that stop arriving', 'GET /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n', 400]
  ] as const) {
    const before = meter.series('s3', 'other').statuses.get(status) ?? 0
    const { text } = await answeredUntilClosed(port, head, 8000)
    t.same(statuses(text), [status], `${what}: answered ${status}`)
    for (let waited = 0; (meter.series('s3', 'other').statuses.get(status) ?? 0) === before && waited < 2000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20))
    t.equal(meter.series('s3', 'other').statuses.get(status), before + 1, `${what}: counted once, under other`)
  }
})

t.test('a client ending its side mid-body on either port gets no parser refusal after its request, and none is counted', async t => {
  const meter = new RequestMeter()
  const connections = { idleTimeoutMs: 1000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered, receivingBody }
  const s3 = await s3Server(t, { meter, connections })
  const { app } = await gateway(t, { meter })
  await app.listen({ host: '127.0.0.1', port: 0 })
  for (const [door, port] of [['s3', Number(new URL(s3.endpoint).port)], ['http', (app.server.address() as { port: number }).port]] as const) {
    const socket = await open(port)
    socket.write(`PUT /photos/cut HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(10)}`)
    await new Promise(resolve => setTimeout(resolve, 200))
    socket.end()
    const { text } = await received(socket, () => false, 3000)
    t.notOk(statuses(text).includes(400), `${door}: no 400 after the request the client gave up (got ${JSON.stringify(statuses(text))})`)
    t.equal(meter.series(door, 'other').statuses.get(400) ?? 0, 0, `${door}: nothing counted as a malformed request`)
  }
})
