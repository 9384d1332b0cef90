/**
 * The S3 listener's connection promises, over real sockets, wired as the
 * server wires them: requests pipelined on one connection take effect in
 * order; a body that stops arriving is answered RequestTimeout after the
 * idle timeout, the connection closed, and nothing stored; the 100 of
 * Expect: 100-continue comes only once a write's headers are judged.
 */
import { createHash } from 'node:crypto'
import t from 'tap'
import { answeredUntilClosed, open, received, statuses } from '../raw-socket.js'
import { idleConnectionListener, inConnectionOrder, receivingBody, whenAnswered } from '../../src/server/connection.js'
import type { S3Connections } from '../../src/s3/index.js'
import { s3Server } from './fixture.js'

const connections = (seconds: number): S3Connections =>
  ({ idleTimeoutMs: seconds * 1000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered, receivingBody })

t.test('a kept-alive connection silent after its answer is closed after the idle timeout, as its Keep-Alive says', async t => {
  const { port } = await s3Server(t, { connections: connections(1) })
  const { text, closed, elapsed } = await answeredUntilClosed(port, 'HEAD /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  t.match(text, /^HTTP\/1\.1 200 /)
  t.match(text, /keep-alive: timeout=1\r\n/i, 'the answer says how long the connection is kept')
  t.ok(closed, 'the connection closed')
  t.ok(elapsed >= 900 && elapsed < 4000, `after about a second (${elapsed} ms)`)
})

t.test('pipelined PutObject then DeleteObject of one key: the object ends deleted', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  for (let round = 0; round < 20; round++) {
    const socket = await open(port)
    const body = `body of round ${round}`.repeat(200)
    socket.write(
      `PUT /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
      'DELETE /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' +
      'HEAD /photos/k HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
    const { text } = await received(socket, s => statuses(s).length === 3)
    socket.destroy()
    t.same(statuses(text), [200, 204, 404], `round ${round}: answers in order, and the HEAD after the DELETE finds nothing`)
    if (await bucket.head('k') !== null) t.fail(`round ${round}: the object survived its DELETE`)
  }
})

t.test('a malformed request pipelined behind a PutObject is refused after the PutObject is answered', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  for (let round = 0; round < 10; round++) {
    const socket = await open(port)
    socket.write(`PUT /photos/p${round} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello` + 'GARBAGE\r\n\r\n')
    const { text } = await received(socket, () => false)
    t.same(statuses(text), [200, 400], `round ${round}: the PutObject's own answer, then the refusal`)
    t.match(text, /<Code>InvalidRequest<\/Code>/)
    t.not(await bucket.head(`p${round}`), null, `round ${round}: stored, as its answer said`)
  }
})

t.test('a request Node\'s parser refuses is InvalidRequest naming what is wrong: Content-Length twice, as rclone\'s --s3-use-presigned-request sends it', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  const socket = await open(port)
  socket.write('PUT /photos/twice HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\nhello')
  const { text } = await received(socket, () => false)
  t.same(statuses(text), [400])
  t.match(text, /<Code>InvalidRequest<\/Code><Message>The request is not valid HTTP\/1\.1: Duplicate Content-Length\.<\/Message>/)
  t.match(text, /<RequestId>[0-9A-F]{16}<\/RequestId>/)
  t.equal(await bucket.head('twice'), null, 'nothing stored')
})

t.test('a body that stops arriving is answered RequestTimeout after the idle timeout; nothing stored', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(1) })
  const bucket = (await registry.open('photos'))!
  const socket = await open(port)
  const started = Date.now()
  socket.write('PUT /photos/stalled HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(100))
  const { text, closed } = await received(socket, () => false, 8000)
  const elapsed = Date.now() - started
  t.match(text, /^HTTP\/1\.1 400 /, 'answered 400, as S3')
  t.match(text, /<Code>RequestTimeout<\/Code>/, 'with the S3 error RequestTimeout')
  t.match(text, /content-type: application\/xml/i)
  t.ok(closed, 'and the connection closed')
  t.ok(elapsed >= 900 && elapsed < 6000, `after about a second (${elapsed} ms)`)
  t.equal(await bucket.head('stalled'), null, 'nothing stored')
  const later = await open(port)
  later.write('PUT /photos/later HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nConnection: close\r\n\r\nfine')
  t.same(statuses((await received(later, () => false)).text), [200], 'later writes work')
})

t.test('the RequestTimeout of a stalled body carries the request id of its request', async t => {
  const { port } = await s3Server(t, { connections: connections(1) })
  const socket = await open(port)
  socket.write('PUT /photos/stalled HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nxx')
  const { text } = await received(socket, () => false, 8000)
  const id = /x-amz-request-id: ([0-9A-F]{16})\r\n/i.exec(text)?.[1]
  t.ok(id, 'an x-amz-request-id header')
  t.match(text, `<RequestId>${id ?? 'none'}</RequestId>`, 'the same id in the error document')
})

t.test('headers that stop arriving are answered RequestTimeout with a request id', async t => {
  const { port } = await s3Server(t, { connections: connections(1) })
  const socket = await open(port)
  socket.write('GET /photos/k HTTP/1.1\r\nHost: 127.0')
  const { text, closed } = await received(socket, () => false, 8000)
  t.match(text, /^HTTP\/1\.1 400 /)
  t.match(text, /<Code>RequestTimeout<\/Code><Message>[^<]+<\/Message><RequestId>[0-9A-F]{16}<\/RequestId>/)
  t.match(text, /x-amz-request-id: [0-9A-F]{16}\r\n/i)
  t.ok(closed)
})

t.test('an HTTP/1.1 request without Host is InvalidRequest in XML, and its connection closed', async t => {
  const { port } = await s3Server(t, { connections: connections(60) })
  const socket = await open(port)
  socket.write('GET /photos/k HTTP/1.1\r\n\r\n')
  const { text, closed } = await received(socket, () => false)
  t.match(text, /^HTTP\/1\.1 400 /)
  t.match(text, /<Code>InvalidRequest<\/Code><Message>An HTTP\/1\.1 request must have a Host header\.<\/Message>/)
  t.match(text, /x-amz-request-id: [0-9A-F]{16}\r\n/i)
  t.ok(closed, 'the connection is closed')
  const old = await open(port)
  old.write('GET /photos/k HTTP/1.0\r\n\r\n')
  t.match((await received(old, () => false)).text, /^HTTP\/1\.1 404 [^]*<Code>NoSuchKey<\/Code>/, 'HTTP/1.0 needs no Host')
})

t.test('an Expect other than 100-continue is ExpectationFailed (417) in XML, the body unread, nothing stored', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const socket = await open(port)
  socket.write('PUT /photos/expect HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nContent-Length: 5\r\n\r\n')
  const { text, closed } = await received(socket, () => false)
  t.match(text, /^HTTP\/1\.1 417 /)
  t.match(text, /<Code>ExpectationFailed<\/Code>[^]*<RequestId>[0-9A-F]{16}<\/RequestId>/)
  t.match(text, /x-amz-request-id: [0-9A-F]{16}\r\n/i)
  t.ok(closed)
  t.equal(await (await registry.open('photos'))!.head('expect'), null, 'nothing stored')
})

t.test('Expect: 100-continue is answered once the write\'s headers are judged: a PutObject they refuse never gets the 100', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const ask = async (headers: string): Promise<string> => {
    const socket = await open(port)
    socket.write(`PUT /photos/continued HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n${headers}\r\n`)
    const { text } = await received(socket, s => /^HTTP\/1\.1 [2-5]\d\d /m.test(s), 5000)
    socket.destroy()
    return text
  }
  for (const [header, code] of [['x-amz-storage-class: GLACIER', 'InvalidStorageClass'], ['Content-MD5: AAAA', 'InvalidDigest'], ['x-amz-content-sha256: nonsense', 'InvalidArgument']]) {
    const text = await ask(`${header}\r\n`)
    t.match(text, /^HTTP\/1\.1 400 /, `${header}: the final answer at once`)
    t.match(text, `<Code>${code}</Code>`)
    t.notMatch(text, /100 Continue/, `${header}: no 100`)
  }
  const socket = await open(port)
  socket.write('PUT /photos/continued HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n')
  const first = await received(socket, s => s.includes('100 Continue'), 5000)
  t.match(first.text, /^HTTP\/1\.1 100 Continue/, 'an accepted PutObject gets the 100')
  socket.write('hello')
  t.match((await received(socket, () => false)).text, /HTTP\/1\.1 200 /, 'and stores the body')
  t.equal((await (await registry.open('photos'))!.head('continued'))?.size, 5, 'stored')
})

t.test('Expect: 100-continue on UploadPart waits for the upload to be found: a part of no upload never gets the 100', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  const upload = await bucket.createMultipartUpload('big')
  const sha = createHash('sha256').update('hello').digest('hex')
  // Without a payload hash the engine reads the request itself; with one, through the door's verifier.
  for (const extra of ['', `x-amz-content-sha256: ${sha}\r\n`]) {
    const socket = await open(port)
    socket.write(`PUT /photos/big?partNumber=1&uploadId=nope HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n${extra}\r\n`)
    const { text } = await received(socket, s => /^HTTP\/1\.1 [2-5]\d\d /m.test(s), 5000)
    socket.destroy()
    t.match(text, /^HTTP\/1\.1 404 /, `${extra.trim() || 'no hash'}: the final answer at once`)
    t.match(text, /<Code>NoSuchUpload<\/Code>/)
    t.notMatch(text, /100 Continue/, 'no 100')
    const socket2 = await open(port)
    socket2.write(`PUT /photos/big?partNumber=1&uploadId=${upload.uploadId} HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n${extra}\r\n`)
    const first = await received(socket2, s => s.includes('100 Continue'), 5000)
    t.match(first.text, /^HTTP\/1\.1 100 Continue/, 'a part of an upload that exists gets the 100')
    socket2.write('hello')
    t.match((await received(socket2, () => false)).text, /HTTP\/1\.1 200 /, 'and is stored')
  }
  const parts = await upload.listParts()
  t.equal(parts.parts[0]?.size, 5, 'the part holds the body')
})

t.test('header lines past the count Node keeps: refused as S3 refuses headers too large, nothing written', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  await bucket.put('kept', 'original')
  const filler = Array.from({ length: 2000 }, (_, i) => `a${i}: b\r\n`).join('')
  const socket = await open(port)
  socket.write(`PUT /photos/first HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nfirst` +
    `PUT /photos/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n${filler}If-Match: "nope"\r\nContent-Length: 11\r\n\r\noverwritten`)
  const { text, closed } = await received(socket, () => false)
  t.same(statuses(text), [200, 400], 'the PutObject before it answered, then 400 (S3 answers this error 400)')
  t.match(text, /<Code>RequestHeaderSectionTooLarge<\/Code>/)
  t.ok(closed, 'and the connection closed')
  const kept = await bucket.get('kept')
  t.equal(kept !== null && 'text' in kept ? await kept.text() : null, 'original', 'the object is as it was')
})

t.test('a Host given twice is refused as S3 refuses a malformed request; a target in absolute form is its path', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  const ask = async (head: string): Promise<string> => {
    const socket = await open(port)
    socket.write(head)
    const { text } = await received(socket, () => false, 3000)
    socket.destroy()
    return text
  }
  const twice = await ask('PUT /photos/twice HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx')
  t.same(statuses(twice), [400])
  t.match(twice, /<Code>InvalidRequest<\/Code>/)
  t.equal(await bucket.head('twice'), null, 'nothing stored')
  for (const host of ['', `:${port}`]) {
    const planted = await ask(`PUT /photos/planted HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`)
    t.same(statuses(planted), [400], `Host: ${host} is no host`)
    t.match(planted, /<Code>InvalidRequest<\/Code>/)
  }
  t.equal(await bucket.head('planted'), null, 'nothing stored')
  const expect = await ask('PUT /photos/e1 HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\nhi' +
    'PUT /photos/e2 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi')
  t.same(statuses(expect), [417], 'a refused Expect alone')
  t.equal(await bucket.head('e2'), null, 'and nothing behind it carried out')
  t.same(statuses(await ask('GET * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')), [400], 'the asterisk form is OPTIONS\'s alone')
  await bucket.put('victim', 'v')
  const behind = await ask('GET /photos/victim HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n' +
    'DELETE /photos/victim HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  t.same(statuses(behind), [400], 'a request pipelined behind a refused one gets no answer')
  t.not(await bucket.head('victim'), null, 'and is not carried out')
  const absolute = await ask(`PUT http://127.0.0.1:${port}/photos/absolute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`)
  t.same(statuses(absolute), [200])
  t.equal((await bucket.head('absolute'))?.size, 5)
})

t.test('nothing pipelined behind an answer that closes the connection is carried out (RFC 9112 9.6)', async t => {
  const { port, registry } = await s3Server(t, { connections: connections(60) })
  const bucket = (await registry.open('photos'))!
  await bucket.put('keep-me', 'kept')
  // A refusal of a small body reads and drops it: the connection stays, and the request behind it is answered.
  const small = await open(port)
  small.write('PUT /no-such-bucket/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello' +
    'GET /photos/keep-me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  const smallAnswers = await received(small, text => statuses(text).length === 2, 3000)
  t.same(statuses(smallAnswers.text), [404, 200], 'a small refused body is dropped and the next request answered')
  t.notOk(smallAnswers.closed, 'on the same connection')
  small.destroy()
  // A refusal whose large body went unread closes the connection: the DELETE and PUT behind it must not run.
  const socket = await open(port)
  socket.write(`PUT /no-such-bucket/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 70000\r\n\r\n${'h'.repeat(70_000)}` +
    'DELETE /photos/keep-me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' +
    'PUT /photos/after-close HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi')
  const { text, closed } = await received(socket, () => false, 3000)
  t.same(statuses(text), [404], 'the refusal alone')
  t.match(text, /<Code>NoSuchBucket<\/Code>/)
  t.match(text, /\r\nconnection: close\r\n/i)
  t.ok(closed)
  await new Promise(resolve => setTimeout(resolve, 100))
  const kept = await bucket.get('keep-me')
  t.equal(kept !== null && 'text' in kept ? await kept.text() : null, 'kept', 'the DELETE behind it did nothing')
  t.equal(await bucket.head('after-close'), null, 'nor the PUT')
})
