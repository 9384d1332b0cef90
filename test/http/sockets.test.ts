/**
 * What only a real socket shows: pipelined requests take effect in order,
 * a stalled body answers 408 and stores nothing, headers have a deadline.
 */
import t from 'tap'
import { answeredUntilClosed, open, received, statuses } from '../raw-socket.js'
import type { FastifyInstance } from 'fastify'
import { auth, gateway, token } from './gateway-fixture.js'
import { ABORTED, RequestMeter } from '../../src/doors/request-meter.js'

async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

const authLine = `Authorization: Bearer ${token}\r\n`

t.test('pipelined PUT then DELETE of one key: the object ends deleted', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  for (let round = 0; round < 20; round++) {
    const socket = await open(port)
    const body = `body of round ${round}`.repeat(200)
    socket.write(
      `PUT /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: ${body.length}\r\n\r\n${body}` +
      `DELETE /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}\r\n` +
      `GET /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Connection: close\r\n\r\n`)
    const { text } = await received(socket, s => statuses(s).length === 3 && s.endsWith('}'))
    socket.destroy()
    t.same(statuses(text), [200, 204, 404], `round ${round}: answers in order, and the GET after the DELETE finds nothing`)
    const after = await app.inject({ method: 'GET', url: '/photos/k', headers: auth })
    if (after.statusCode !== 404) t.fail(`round ${round}: the object survived its DELETE`)
  }
})

t.test('a malformed request pipelined behind a PUT is refused after the PUT is answered', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  for (let round = 0; round < 10; round++) {
    const socket = await open(port)
    socket.write(`PUT /photos/p${round} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 5\r\n\r\nhello` + 'GARBAGE\r\n\r\n')
    const { text } = await received(socket, () => false)
    t.same(statuses(text), [200, 400], `round ${round}: the PUT's own answer, then the refusal`)
    const stored = await app.inject({ method: 'GET', url: `/photos/p${round}`, headers: auth })
    t.equal(stored.body, 'hello', `round ${round}: stored, as its answer said`)
  }
})

t.test('a body that stops arriving answers 408 after the idle timeout, and nothing is stored', async t => {
  const { app } = await gateway(t, { idleTimeout: 1 })
  const port = await listening(app)
  const socket = await open(port)
  const started = Date.now()
  socket.write(`PUT /photos/stalled HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 1000\r\n\r\n` + 'x'.repeat(100))
  const { text, closed } = await received(socket, () => false, 8000)
  const elapsed = Date.now() - started
  t.match(text, /^HTTP\/1\.1 408 /, 'answered 408')
  t.match(text, /"code":40800/, 'in the envelope')
  t.ok(closed, 'and the connection closed')
  t.ok(elapsed >= 900 && elapsed < 6000, `after about a second (${elapsed} ms)`)
  t.equal((await app.inject({ method: 'GET', url: '/photos/stalled', headers: auth })).statusCode, 404, 'nothing stored')
  t.equal((await app.inject({ method: 'PUT', url: '/photos/later', headers: auth, payload: 'fine' })).statusCode, 200, 'later writes work')
})

t.test('a kept-alive connection silent after its answer is closed after the idle timeout, as its Keep-Alive says', async t => {
  const { app } = await gateway(t, { idleTimeout: 1 })
  const port = await listening(app)
  const { text, closed, elapsed } = await answeredUntilClosed(port, 'GET /_health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  t.match(text, /^HTTP\/1\.1 200 /)
  t.match(text, /keep-alive: timeout=1\r\n/i, 'the answer says how long the connection is kept')
  t.ok(closed, 'the connection closed')
  t.ok(elapsed >= 900 && elapsed < 4000, `after about a second (${elapsed} ms)`)
})

t.test('a slow body that keeps sending is not cut', async t => {
  const { app } = await gateway(t, { idleTimeout: 1 })
  const port = await listening(app)
  const socket = await open(port)
  socket.write(`PUT /photos/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 6\r\nConnection: close\r\n\r\n`)
  for (let i = 0; i < 6; i++) {
    await new Promise(resolve => setTimeout(resolve, 400))
    socket.write('s')
  }
  const { text } = await received(socket, () => false)
  t.same(statuses(text), [200], '2.4 s of trickle, never 1 s of silence')
})

t.test('headers must arrive within the idle timeout, even when they trickle', async t => {
  const { app } = await gateway(t, { idleTimeout: 1 })
  const port = await listening(app)
  const silent = await open(port)
  silent.write('GET /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n')
  const quiet = await received(silent, () => false, 8000)
  t.ok(quiet.closed, 'a connection that stops mid-headers is closed')
  t.match(quiet.text, /^HTTP\/1\.1 408 /, 'after a 408, as docs/http.md promises')
  t.match(quiet.text, /"code":40800/)

  const kept = await open(port)
  kept.write(`GET /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}\r\n`)
  const idle = await received(kept, () => false, 8000)
  t.same(statuses(idle.text), [200], 'an idle kept-alive connection after its answer is closed quietly')

  const slowloris = await open(port)
  let sent = 0
  const header = `GET /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n${'X-Pad: 1\r\n'.repeat(100)}`
  const drip = setInterval(() => { if (sent < header.length && !slowloris.destroyed) slowloris.write(header[sent++]) }, 100)
  const started = Date.now()
  const dripped = await received(slowloris, () => false, 10_000)
  clearInterval(drip)
  t.ok(dripped.closed, 'headers sent one byte every 100 ms are cut off')
  t.match(dripped.text, /^HTTP\/1\.1 408 /, 'with 408')
  t.ok(Date.now() - started < 4000, `within the deadline and a check period (${Date.now() - started} ms)`)
})

t.test('a request target in absolute form (RFC 9112 3.2.2) names the same object', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  await app.inject({ method: 'PUT', url: '/photos/abs.txt', headers: auth, payload: 'absolute' })
  const socket = await open(port)
  socket.write(`GET http://127.0.0.1:${port}/photos/abs.txt HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${authLine}Connection: close\r\n\r\n`)
  const { text } = await received(socket, () => false)
  t.same(statuses(text), [200])
  t.match(text, /absolute$/)
})

t.test('Expect: 100-continue is answered once access and size are judged: a refused request never gets the 100', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  const ask = async (head: string): Promise<string> => {
    const socket = await open(port)
    socket.write(head)
    const { text } = await received(socket, s => /^HTTP\/1\.1 [2-5]\d\d /m.test(s), 5000)
    socket.destroy()
    return text
  }
  const noToken = await ask('PUT /photos/c HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n')
  t.match(noToken, /^HTTP\/1\.1 401 /, 'no token: the final answer at once')
  t.notMatch(noToken, /100 Continue/)
  const tooLarge = await ask(`PUT /photos/c HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: 100-continue\r\nContent-Length: ${6 * 1024 ** 3}\r\n\r\n`)
  t.match(tooLarge, /^HTTP\/1\.1 400 /, 'over the size limit: refused before the body')
  t.match(tooLarge, /"code":100100/)
  t.notMatch(tooLarge, /100 Continue/)

  const noUpload = await ask(`PUT /photos/c?action=mpu-uploadpart&uploadId=nope&partNumber=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: 100-continue\r\nContent-Length: 2000000\r\n\r\n`)
  t.match(noUpload, /^HTTP\/1\.1 404 /, 'a part of an upload that does not exist: refused before the body')
  t.match(noUpload, /"code":10024/)
  t.notMatch(noUpload, /100 Continue/)
  const created = await app.inject({ method: 'POST', url: '/photos/parted?action=mpu-create', headers: auth })
  const uploadId: string = created.json().result.uploadId
  const partSocket = await open(port)
  partSocket.write(`PUT /photos/parted?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: 100-continue\r\nContent-Length: 4\r\nConnection: close\r\n\r\n`)
  t.match((await received(partSocket, s => s.includes('100 Continue'), 5000)).text, /^HTTP\/1\.1 100 Continue/, 'a part of an upload that exists gets the 100')
  partSocket.write('part')
  t.match((await received(partSocket, () => false)).text, /HTTP\/1\.1 200 /, 'and is stored')

  const socket = await open(port)
  socket.write(`PUT /photos/c HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n`)
  const first = await received(socket, s => s.includes('100 Continue'), 5000)
  t.match(first.text, /^HTTP\/1\.1 100 Continue/, 'an accepted PUT gets the 100')
  socket.write('hello')
  const { text } = await received(socket, () => false)
  t.match(text, /HTTP\/1\.1 200 /, 'and stores the body')
  t.equal((await app.inject({ method: 'GET', url: '/photos/c', headers: auth })).body, 'hello')
})

t.test('an HTTP/1.1 request without Host is refused in the envelope (40007) and the connection closed', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  const socket = await open(port)
  socket.write(`PUT /photos/hostless HTTP/1.1\r\n${authLine}Content-Length: 5\r\n\r\nhello`)
  const { text, closed } = await received(socket, () => false)
  t.same(statuses(text), [400])
  t.match(text, /\r\ncontent-type: application\/json/i)
  t.match(text, /"code":40007/, 'in the envelope')
  t.match(text, /Host/, 'saying what is missing')
  t.ok(closed, 'and the connection closed')
  t.equal((await app.inject({ method: 'GET', url: '/photos/hostless', headers: auth })).statusCode, 404, 'nothing stored')

  const old = await open(port)
  old.write('GET /site HTTP/1.0\r\n\r\n')
  t.same(statuses((await received(old, () => false)).text.replace(/^HTTP\/1\.0/, 'HTTP/1.1')), [200], 'HTTP/1.0 needs no Host')
})

t.test('an expectation other than 100-continue answers 417 in the envelope and closes the connection', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  const socket = await open(port)
  socket.write(`PUT /photos/expected HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: 200-ok\r\nContent-Length: 5\r\n\r\nhello`)
  const { text, closed } = await received(socket, () => false)
  t.same(statuses(text), [417])
  t.match(text, /\r\ncontent-type: application\/json/i)
  t.match(text, /"code":41700/, 'in the envelope')
  t.ok(closed, 'and the connection closed, its body unread')
  t.equal((await app.inject({ method: 'GET', url: '/photos/expected', headers: auth })).statusCode, 404, 'nothing stored')

  const pipelined = await open(port)
  pipelined.write(`PUT /photos/first HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 5\r\n\r\nfirst` +
    `PUT /photos/second HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: something\r\nContent-Length: 6\r\n\r\nsecond`)
  t.same(statuses((await received(pipelined, () => false)).text), [200, 417], 'after the answers of the requests before it')
  t.equal((await app.inject({ method: 'GET', url: '/photos/first', headers: auth })).body, 'first')

  const go = await open(port)
  go.write(`PUT /photos/continued HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n`)
  const interim = await received(go, s => s.includes('100 Continue'))
  t.match(interim.text, /^HTTP\/1\.1 100 Continue/, '100-continue is still answered')
  go.write('hello')
  t.same(statuses((await received(go, () => false)).text), [200])
})

t.test('header lines past the count Node keeps: refused 431, never acted on without them', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/kept', headers: auth, payload: 'original' })).statusCode, 200)
  const filler = Array.from({ length: 2000 }, (_, i) => `a${i}: b\r\n`).join('')
  const cases: Array<[string, string]> = [
    ['a failing If-Match after them', `PUT /photos/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}${filler}If-Match: "nope"\r\nContent-Length: 11\r\n\r\noverwritten`],
    ['a wrong Content-MD5 after them', `PUT /photos/other HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 3\r\n${filler}Content-MD5: AAAAAAAAAAAAAAAAAAAAAA==\r\n\r\nabc`],
    ['a read', `GET /photos/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}${filler}\r\n`]
  ]
  for (const [what, request] of cases) {
    const socket = await open(port)
    // A PUT in front on the same connection: it is whole, so it is answered first and takes effect.
    socket.write(`PUT /photos/first HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 5\r\n\r\nfirst` + request)
    const { text, closed } = await received(socket, () => false)
    t.same(statuses(text), [200, 431], `${what}: the PUT before it answered, then 431`)
    t.match(text, /"code":43100/, `${what}: in the envelope`)
    t.ok(closed, `${what}: and the connection closed`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/photos/kept', headers: auth })).body, 'original', 'the object is as it was')
  t.equal((await app.inject({ method: 'GET', url: '/photos/other', headers: auth })).statusCode, 404, 'nothing stored without its checksum')
  // What is pipelined behind a refused request is not carried out, and the refusal still goes out.
  const behind = await open(port)
  behind.write(`PUT /photos/first HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 5\r\n\r\nfirst` +
    `GET /photos/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}${filler}\r\n` +
    `DELETE /photos/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}\r\n`)
  const after = await received(behind, () => false, 5000)
  t.same(statuses(after.text), [200, 431], 'the PUT before it answered, then 431, and nothing for the DELETE behind it')
  t.ok(after.closed, 'the connection closed')
  t.equal((await app.inject({ method: 'GET', url: '/photos/kept', headers: auth })).body, 'original', 'the DELETE behind the refusal was not carried out')
  const fewer = Array.from({ length: 1990 }, (_, i) => `a${i}: b\r\n`).join('')
  const socket = await open(port)
  socket.write(`PUT /photos/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}${fewer}If-Match: "nope"\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`)
  const { text } = await received(socket, () => false)
  t.same(statuses(text), [412], 'below the count every line is read: the condition holds the write back')
})

t.test('a Host given twice or no host, and a target in absolute form, are judged as HTTP/1.1 says', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  const ask = async (head: string): Promise<{ text: string, closed: boolean }> => {
    const socket = await open(port)
    socket.write(head)
    const answer = await received(socket, s => s.includes('Connection: close') && s.endsWith('}'), 3000)
    socket.destroy()
    return answer
  }
  for (const [what, hosts] of [['two Host lines', 'Host: 127.0.0.1\r\nHost: evil.example\r\n'], ['a Host with a port that is no number', 'Host: localhost:abc\r\n'], ['a Host with a path', 'Host: a/b\r\n'], ['an empty Host', 'Host: \r\n'], ['a Host with a port and no name', `Host: :${port}\r\n`]]) {
    const { text } = await ask(`PUT /photos/twice HTTP/1.1\r\n${hosts}${authLine}Content-Length: 1\r\nConnection: close\r\n\r\nx`)
    t.same(statuses(text), [400], what)
    t.match(text, /"code":40007/, `${what}: in the envelope`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/photos/twice', headers: auth })).statusCode, 404, 'nothing stored')
  const absolute = await ask(`PUT http://127.0.0.1:${port}/photos/absolute?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 5\r\nConnection: close\r\n\r\nhello`)
  t.same(statuses(absolute.text), [200], 'a target in absolute form is its path')
  t.equal((await app.inject({ method: 'GET', url: '/photos/absolute', headers: auth })).body, 'hello')
  for (const target of ['ftp://127.0.0.1/photos/x', 'http://user@127.0.0.1/photos/x', 'photos/x', 'http:///photos/x', '*']) {
    const { text } = await ask(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Connection: close\r\n\r\n`)
    t.same(statuses(text), [400], target)
  }
})

t.test('nothing pipelined behind a refused Expect (417) is carried out', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  const socket = await open(port)
  socket.write(`PUT /photos/e1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Expect: something-else\r\nContent-Length: 2\r\n\r\nhi` +
    `PUT /photos/e2 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 2\r\n\r\nhi`)
  const { text } = await received(socket, () => false, 3000)
  socket.destroy()
  t.same(statuses(text), [417], 'the refusal alone')
  await new Promise(resolve => setTimeout(resolve, 200))
  t.equal((await app.inject({ method: 'GET', url: '/photos/e2', headers: auth })).statusCode, 404, 'the PUT behind it stored nothing')
})

t.test('without credentials, a target in absolute form names the host the site guard judges', async t => {
  const { app } = await gateway(t, { token: null })
  const port = await listening(app)
  const socket = await open(port)
  socket.write(`PUT http://evil.example/photos/rebound HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`)
  const { text } = await received(socket, () => false, 3000)
  socket.destroy()
  t.same(statuses(text), [421], 'the authority of the target is the host: a foreign one is refused')
  t.equal((await app.inject({ method: 'GET', url: '/photos/rebound', headers: { host: '127.0.0.1' } })).statusCode, 404, 'nothing stored')
})

t.test('nothing pipelined behind an answer that closes the connection is carried out (RFC 9112 9.6)', async t => {
  const { app } = await gateway(t)
  const port = await listening(app)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/keep-me', headers: auth, payload: 'kept' })).statusCode, 200)
  for (const [what, first] of [
    ['a request without Host (400, 40007)', 'GET /photos/x HTTP/1.1\r\n\r\n'],
    ['a refused request whose body went unread (401)', 'PUT /photos/y HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello']
  ]) {
    const socket = await open(port)
    socket.write(first + `DELETE /photos/keep-me HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}\r\n` +
      `PUT /photos/after-close HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: 2\r\n\r\nhi`)
    const { text, closed } = await received(socket, () => false, 3000)
    t.equal(statuses(text).length, 1, `${what}: its answer alone`)
    t.match(text, /\r\nconnection: close\r\n/i)
    t.ok(closed)
    await new Promise(resolve => setTimeout(resolve, 100))
    t.equal((await app.inject({ method: 'GET', url: '/photos/keep-me', headers: auth })).body, 'kept', `${what}: the DELETE behind it did nothing`)
    t.equal((await app.inject({ method: 'GET', url: '/photos/after-close', headers: auth })).statusCode, 404, `${what}: nor the PUT`)
  }
})

t.test('requests dropped behind an answer that closes the connection leave the in-flight gauge, counted as cut short', async t => {
  for (const [what, first, refusal, second] of [
    ['behind a request without Host (queued while it ran)', 'GET /photos/x HTTP/1.1\r\n\r\n', 400],
    ['a URL refused before any hook, behind a request without Host', 'GET /photos/x HTTP/1.1\r\n\r\n', 400, 'GET /photos/%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['behind a refusal whose body went unread (parsed after it)', 'PUT /photos/y HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello', 401]
  ] as const) {
    const meter = new RequestMeter()
    const { app } = await gateway(t, { meter })
    const port = await listening(app)
    const socket = await open(port)
    socket.write(first + (second ?? `DELETE /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}\r\n`) +
      `GET /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}\r\n`)
    const { text, closed } = await received(socket, () => false, 3000)
    t.same(statuses(text), [refusal], `${what}: the first answer alone`)
    t.ok(closed)
    const count = (status: number): number => [...meter.all()].reduce((sum, series) => sum + (series.statuses.get(status) ?? 0), 0)
    for (let waited = 0; count(ABORTED) < 2 && waited < 2000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20))
    await new Promise(resolve => setTimeout(resolve, 100))
    t.equal(meter.inFlight.http, 0, `${what}: nothing stays in flight`)
    t.equal(count(ABORTED), 2, `${what}: the two dropped requests, counted once each as cut short`)
    t.equal(count(refusal), 1, `${what}: the refusal, counted as answered`)
  }
})
