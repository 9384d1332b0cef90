/**
 * Bodies announced over what a route takes are refused before they are
 * asked for (no 100 Continue, nothing read): the management API's object
 * PUT over the largest put (100100), as the HTTP routes and the S3 port
 * refuse it, the management API's JSON bodies over Fastify's 1 MiB (1199),
 * and the HTTP routes' JSON bodies over their limit (41300).
 */
import t from 'tap'
import { answeredUntilClosed, open, received, statuses } from '../raw-socket.js'
import { gateway, token } from './gateway-fixture.js'
import { accountId } from '../mgmt/helpers.js'

t.test('an object PUT announcing more than the largest put is refused before its body', async t => {
  const { app, registry } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  for (const [length, expect] of [['5363466241', true], ['9007199254740993', true], ['9007199254740993', false]] as const) {
    const head = `PUT /client/v4/accounts/${accountId}/r2/buckets/photos/objects/huge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Length: ${length}\r\n${expect ? 'Expect: 100-continue\r\n' : ''}\r\n`
    const { text, closed } = await answeredUntilClosed(port, head, 5000)
    t.same(statuses(text), [400], `${length}${expect ? '' : ', no Expect'}: refused at once, without a 100 Continue`)
    t.match(text, /"code":100100/, `${length}: EntityTooLarge`)
    t.ok(closed, `${length}${expect ? '' : ', no Expect'}: and the connection closed, its body unread`)
  }
  t.equal(await (await registry.open('photos'))!.head('huge'), null, 'nothing stored')
})

t.test('a JSON body of the HTTP routes announced over their limit is refused before it is asked for', async t => {
  const { app } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  for (const [length, expect] of [['2097153', true], ['9007199254740993', true], ['9007199254740993', false]] as const) {
    const head = `POST /photos?delete HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\n${expect ? 'Expect: 100-continue\r\n' : ''}\r\n`
    const { text, closed } = await answeredUntilClosed(port, head, 5000)
    t.same(statuses(text), [413], `${length}${expect ? '' : ', no Expect'}: refused at once, without a 100 Continue`)
    t.match(text, /"code":41300/, `${length}: BodyTooLarge`)
    t.ok(closed, `${length}${expect ? '' : ', no Expect'}: and the connection closed, its body unread`)
  }
})

t.test('a JSON body of the management API announced over its limit is refused before it is asked for; one within it is asked for', async t => {
  const { app, registry } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  const post = (length: number | string, expect: boolean): string => `POST /client/v4/accounts/${accountId}/r2/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${expect ? 'Expect: 100-continue\r\n' : ''}\r\n`
  for (const [length, expect] of [['1048577', true], ['9007199254740993', true], ['9007199254740993', false]] as const) {
    const { text, closed } = await answeredUntilClosed(port, post(length, expect), 5000)
    t.same(statuses(text), [400], `${length}${expect ? '' : ', no Expect'}: refused at once, without a 100 Continue`)
    t.match(text, /"code":1199/, `${length}: the body is too large`)
    t.ok(closed, `${length}${expect ? '' : ', no Expect'}: and the connection closed, its body unread`)
  }
  const body = JSON.stringify({ name: 'asked-for' })
  const socket = await open(port)
  t.teardown(() => socket.destroy())
  socket.write(post(Buffer.byteLength(body), true))
  t.match((await received(socket, text => text.includes('\r\n\r\n'))).text, /^HTTP\/1\.1 100 /, 'within the limit, the body is asked for')
  socket.write(body)
  t.match((await received(socket, text => text.includes('"success"'))).text, /HTTP\/1\.1 200 /, 'and the bucket made')
  t.not(await registry.info('asked-for'), null)
  // An S3 framing header means nothing here: the Content-Length is the body's size.
  const small = JSON.stringify({ name: 'framed' })
  const framed = await open(port)
  t.teardown(() => framed.destroy())
  framed.write(post(Buffer.byteLength(small), false).replace('\r\n\r\n', '\r\nx-amz-decoded-content-length: 9999999\r\n\r\n') + small)
  t.match((await received(framed, text => text.includes('"success"'))).text, /HTTP\/1\.1 200 /, 'a small body with an S3 framing header is taken')
})

t.test('an object PUT of the HTTP routes refused before its body closes the connection (its body unread)', async t => {
  const { app } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  for (const [what, head] of [
    ['over the largest put', `PUT /photos/huge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 5363466241\r\n\r\n`],
    ['without credentials', 'PUT /photos/huge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n']
  ] as const) {
    const { text, closed } = await answeredUntilClosed(port, head, 5000)
    t.equal(statuses(text).length, 1, `${what}: answered once`)
    t.match(text, /\r\nconnection: close\r\n/i, `${what}: the answer says the connection closes`)
    t.ok(closed, `${what}: and it closes, rather than wait for a body it will not read`)
  }
})

t.test('a refused PUT whose small body came with it keeps its connection; an S3 framing header is no size here', async t => {
  const { app, registry } = await gateway(t)
  await (await registry.open('photos'))!.put('taken', 'x')
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  const socket = await open(port)
  t.teardown(() => socket.destroy())
  // Create-only on a key that exists: 412, the 5 bytes read and dropped, and the next request answered on the same connection.
  socket.write(`PUT /photos/taken HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nIf-None-Match: *\r\nContent-Length: 5\r\n\r\nhello`)
  const refused = await received(socket, text => /\r\n\r\n\{[^]*\}$/.test(text))
  t.match(refused.text, /^HTTP\/1\.1 412 /, 'refused')
  t.notMatch(refused.text, /connection: close/i, 'without closing')
  socket.write(`PUT /photos/framed HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nx-amz-decoded-content-length: 99999999999\r\nContent-Length: 5\r\n\r\nhello`)
  const stored = await received(socket, text => /\r\n\r\n\{[^]*\}$/.test(text))
  t.match(stored.text, /^HTTP\/1\.1 200 /, 'the next request answered on it: stored, its framing header no size')
  t.equal(stored.closed, false)
})

t.test('a management API request refused before its body is read closes the connection (its body unread, however long)', async t => {
  const { app } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  const path = `/client/v4/accounts/${accountId}/r2/buckets`
  for (const [what, head, status] of [
    ['a wrong token', `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nContent-Length: 209715200\r\n\r\n`, 403],
    ['no credentials, chunked', `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n`, 400],
    ['a route that is none', `DELETE /client/v4/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 209715200\r\n\r\n`, 400]
  ] as const) {
    const { text, closed } = await answeredUntilClosed(port, head, 5000)
    t.same(statuses(text), [status], `${what}: refused`)
    t.match(text, /\r\nconnection: close\r\n/i, `${what}: the answer says the connection closes`)
    t.ok(closed, `${what}: and it closes, rather than read a body it will not use`)
  }
})
