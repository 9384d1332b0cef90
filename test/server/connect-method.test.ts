/**
 * A CONNECT (a proxy's method) on either port: Node hands it to no request
 * listener and would drop the connection without a word. It is answered 405
 * with `Allow`, in the door's own error (the envelope's 40500, S3's
 * MethodNotAllowed), after the answers pipelined before it, and counted.
 */
import t from 'tap'
import { startServer } from '../../src/index.js'
import { answeredUntilClosed, open, statuses } from '../raw-socket.js'
import { testdir } from '../testdir.js'

t.test('CONNECT is 405 with Allow on the HTTP routes and the S3 port, after what was pipelined before it', async t => {
  const server = await startServer({ memory: true, port: 0, s3Port: 0 })
  t.teardown(async () => { await server.close() })
  const port = Number(new URL(server.url).port)
  const s3Port = Number(new URL(server.s3.endpoint).port)

  const routes = await answeredUntilClosed(port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n')
  t.equal(statuses(routes.text)[0], 405)
  t.match(routes.text, /\r\nallow: GET, HEAD, PUT, POST, DELETE, OPTIONS\r\n/i)
  t.match(routes.text, /"code":40500/)
  t.ok(routes.closed, 'the connection is closed')

  const s3 = await answeredUntilClosed(s3Port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n')
  t.equal(statuses(s3.text)[0], 405)
  t.match(s3.text, /\r\nallow: GET, HEAD, PUT, POST, DELETE\r\n/i)
  t.match(s3.text, /<Code>MethodNotAllowed<\/Code>/)
  t.match(s3.text, /x-amz-request-id: [0-9A-F]+/i)

  const pipelined = await answeredUntilClosed(port, 'GET /_health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nCONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n')
  t.same(statuses(pipelined.text), [200, 405], 'the request before it is answered first')

  const metrics = await (await fetch(`${server.url}/_metrics`)).text()
  t.match(metrics, /status="405"/, 'counted')
})

t.test('a CONNECT waiting behind a large answer: a reset meanwhile ends the connection, not the process; a stalled reader does not hold the close', async t => {
  const server = await startServer({ dataDir: testdir(t), fsync: false, port: 0, s3Port: 0, idleTimeout: 2 })
  let closed = false
  t.teardown(async () => { if (!closed) await server.close() })
  const port = Number(new URL(server.url).port)
  t.equal((await fetch(`${server.url}/default/big.bin`, { method: 'PUT', body: Buffer.alloc(64 * 1024 * 1024, 7) })).status, 200)
  const head = 'GET /default/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nCONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n'

  const reset = await open(port)
  reset.pause() // nothing read: the answer ahead of the CONNECT stays in flight
  reset.write(head)
  await new Promise(resolve => setTimeout(resolve, 300))
  reset.resetAndDestroy()
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal((await fetch(`${server.url}/_health/live`)).status, 200, 'the server still answers after the reset')

  // A client that reads: the whole answer ahead of the CONNECT, then the 405.
  const reader = await open(port)
  reader.write(head)
  const read = await new Promise<Buffer>(resolve => {
    const chunks: Buffer[] = []
    reader.on('data', chunk => chunks.push(chunk))
    reader.once('close', () => resolve(Buffer.concat(chunks)))
    setTimeout(() => { reader.destroy() }, 10_000)
  })
  const text = read.toString('latin1')
  t.ok(read.length > 64 * 1024 * 1024, `the whole 64 MiB came before the close (${read.length} bytes)`)
  t.same(statuses(text.slice(0, 200) + text.slice(-400)), [200, 405], 'then the 405')

  const stalled = await open(port)
  t.teardown(() => { stalled.destroy() })
  stalled.pause()
  stalled.write(head)
  await new Promise(resolve => setTimeout(resolve, 3000))
  const started = Date.now()
  await Promise.race([server.close(), new Promise(resolve => setTimeout(resolve, 10_000))])
  closed = true
  t.ok(Date.now() - started < 5000, `close() ended the stalled connection (${Date.now() - started} ms), as for any request`)
})
