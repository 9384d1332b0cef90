/**
 * `/_health/ready` while the server closes (http/probes.ts): a probe on a
 * connection kept alive through the drain answers 503, `shutting-down`,
 * while `/_health/live` still answers 200.
 */
import t from 'tap'
import { open, received, statuses } from '../raw-socket.js'
import { auth, gateway } from '../http/gateway-fixture.js'
import { s3Server } from '../s3/fixture.js'
import { idleConnectionListener, inConnectionOrder, receivingBody, whenAnswered } from '../../src/server/connection.js'

t.test('ready answers 503 on a connection kept alive through the close, live 200', async t => {
  const { app } = await gateway(t)
  const big = Buffer.alloc(16 * 1024 * 1024, 'x')
  t.equal((await app.inject({ method: 'PUT', url: '/photos/big', headers: auth, payload: big })).statusCode, 200)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = await open((app.server.address() as { port: number }).port)
  t.teardown(() => { socket.destroy() })
  const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\n\r\n`
  socket.write(get('/_health/ready'))
  t.same(statuses((await received(socket, text => text.endsWith('}'))).text), [200], 'ready before the close')
  // A large read the client does not read yet keeps the connection busy while the server closes.
  socket.pause()
  socket.write(get('/photos/big') + get('/_health/live') + get('/_health/ready'))
  await new Promise(resolve => setTimeout(resolve, 200))
  const closed = app.close()
  await new Promise(resolve => setTimeout(resolve, 200))
  // The refusal is the last answer: looking for it in what came last keeps the 16 MiB read from being scanned on every chunk.
  const answers = received(socket, last => / 503 /.test(last) && last.endsWith('}'), 20_000, 64 * 1024)
  socket.resume()
  const { text } = await answers
  t.same(statuses(text), [200, 200, 503], 'the read, live, then ready refused')
  t.match(text.slice(text.lastIndexOf('\r\n\r\n') + 4), /^\{"status":"unavailable","failed":\["shutting-down"\]\}$/, 'naming why')
  socket.destroy()
  await closed
})

t.test('the S3 port\'s ready answers 503 on a connection kept alive through the close', async t => {
  // As the gateway wires it: the connection's requests in order, so the probe runs after the read, once the close began.
  const connections = { idleTimeoutMs: 60_000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered, receivingBody }
  const server = await s3Server(t, { operator: { ready: async () => [], metrics: null }, connections })
  const port = Number(new URL(server.endpoint).port)
  const bucket = (await server.registry.open('photos'))!
  await bucket.put('big', Buffer.alloc(16 * 1024 * 1024, 'x'))
  const socket = await open(port)
  t.teardown(() => { socket.destroy() })
  const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
  socket.write(get('/_health/ready'))
  t.same(statuses((await received(socket, text => text.endsWith('}'))).text), [200], 'ready before the close')
  socket.pause()
  // A large read the client does not read yet keeps the connection busy while the server closes (a loopback server
  // without credentials reads anonymously).
  socket.write(get('/photos/big') + get('/_health/live') + get('/_health/ready'))
  await new Promise(resolve => setTimeout(resolve, 200))
  const closed = server.app.close()
  await new Promise(resolve => setTimeout(resolve, 200))
  // The refusal is the last answer: looking for it in what came last keeps the 16 MiB read from being scanned on every chunk.
  const answers = received(socket, last => / 503 /.test(last) && last.endsWith('}'), 20_000, 64 * 1024)
  socket.resume()
  const { text } = await answers
  t.same(statuses(text), [200, 200, 503], 'the read, live, then ready refused')
  t.match(text, /"failed":\["shutting-down"\]/, 'naming why')
  socket.destroy()
  await closed
})
