/**
 * Plain object reads are answered in front of Fastify (src/http/fast-read.ts).
 * What a client sees must not tell: each read is compared, over a real
 * socket, with the same read made with an empty query (`/b/k?`, the same
 * object and no parameter), which always goes through Fastify's route.
 * And the connection's order holds across the two: a read taken in front
 * and one handed to Fastify keep their place among pipelined writes.
 */
import { request as httpRequest } from 'node:http'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { RequestMeter } from '../../src/doors/request-meter.js'
import { open, received, statuses } from '../raw-socket.js'
import { auth, gateway, token } from './gateway-fixture.js'

async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

interface Answer { status: number, headers: Record<string, unknown>, body: string }

async function get (port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers, agent: false }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const { date: _date, ...rest } = res.headers
        resolve({ status: res.statusCode ?? 0, headers: rest, body: Buffer.concat(chunks).toString('latin1') })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** Counts the requests Fastify's hooks see, by URL. */
function fastifySees (app: FastifyInstance): string[] {
  const seen: string[] = []
  app.addHook('onRequest', (request, _reply, done) => { seen.push(request.url); done() })
  return seen
}

t.test('a plain read answers exactly as the route does, without Fastify', async t => {
  const { app, registry } = await gateway(t, { publicBuckets: ['open'] })
  await registry.create('open')
  const seen = fastifySees(app)
  const port = await listening(app)
  const photos = await registry.open('photos')
  const body = Buffer.from('x'.repeat(3000))
  const stored = await photos?.put('a b/ü.txt', body, { httpMetadata: { contentType: 'text/plain', cacheControl: 'max-age=60' }, customMetadata: { City: 'Zürich' } })
  await photos?.put('page.html', '<script>alert(1)</script>', { httpMetadata: { contentType: 'text/html' } })
  await photos?.put('big.bin', Buffer.alloc(3 * 1024 * 1024, 7))
  await (await registry.open('site'))?.put('pub.txt', 'public')
  await (await registry.open('open'))?.put('o.txt', 'open by flag')
  const etag = stored?.httpEtag ?? ''
  const key = '/photos/a%20b/%C3%BC.txt'
  const cases: Array<[string, string, Record<string, string>, string?]> = [
    ['GET with the token', key, auth],
    ['HEAD with the token', key, auth, 'HEAD'],
    ['If-None-Match that matches: 304', key, { ...auth, 'if-none-match': etag }],
    ['If-Match that does not: 412', key, { ...auth, 'if-match': '"nope"' }],
    ['a range: 206', key, { ...auth, range: 'bytes=10-19' }],
    ['a range past the end: 416', key, { ...auth, range: 'bytes=5000-' }],
    ['a large body, streamed', '/photos/big.bin', auth],
    ['a range of the large body', '/photos/big.bin', { ...auth, range: 'bytes=1048570-2097160' }],
    ['an HTML object: sandboxed', '/photos/page.html', auth],
    ['HEAD of an HTML object: sandboxed as its GET', '/photos/page.html', auth, 'HEAD'],
    ['no token on a private bucket: 401', key, {}],
    ['a wrong token: 403', key, { authorization: 'Bearer wrong' }],
    ['a missing key: 404', '/photos/none', auth],
    ['a missing bucket: 404', '/nobucket/k', auth],
    ['a public bucket, no token', '/site/pub.txt', {}],
    ['a bucket public by --public', '/open/o.txt', {}],
    ['Host localhost', key, { ...auth, host: `localhost:${port}` }],
    ['a foreign Host', key, { ...auth, host: 'example.com' }]
  ]
  for (const [name, path, headers, method] of cases) {
    const before = seen.length
    const fast = await get(port, path, headers, method)
    const routed = await get(port, `${path}?`, headers, method)
    t.same(fast, routed, name)
    // A read that answers its object is answered in front; any other is handed to the route, which answers it.
    const handed = [200, 206, 304].includes(fast.status) ? 0 : 1
    t.equal(seen.length - before, 1 + handed, `${name}: ${handed === 0 ? 'answered in front of Fastify' : 'handed to the route'}`)
  }
  // The plain, successful reads never met Fastify.
  const before = seen.length
  const plain = await get(port, key, auth)
  t.equal(plain.status, 200)
  t.equal(plain.body, body.toString('latin1'))
  t.equal(seen.length, before, 'a plain GET is answered in front of Fastify')
  await get(port, '/photos/none', auth)
  t.same(seen.slice(before), ['/photos/none'], 'a read that fails is the route\'s to answer')
  const html = await get(port, '/photos/page.html', auth, 'HEAD')
  t.match(html.headers['content-security-policy'], /^sandbox /, 'a HEAD in front of Fastify is sandboxed as its GET')
  t.equal(html.headers['x-content-type-options'], 'nosniff')
})

t.test('the connection\'s order holds between reads answered in front of Fastify and writes through it', async t => {
  const { app, registry } = await gateway(t)
  // Every look at a bucket's settings takes a while, as on a busy disk: a read still running when the next request arrives.
  const info = registry.info.bind(registry)
  registry.info = async name => { await new Promise(resolve => setTimeout(resolve, 5)); return await info(name) }
  const port = await listening(app)
  const authLine = `Authorization: Bearer ${token}\r\n`
  const put = (key: string, body: string): string => `PUT /photos/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: ${body.length}\r\n\r\n${body}`
  const read = (key: string, last = false): string => `GET /photos/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}${last ? 'Connection: close\r\n' : ''}\r\n`
  const photos = await registry.open('photos')
  for (let round = 0; round < 10; round++) {
    await photos?.put(`k${round}`, 'zero')
    // A read taken in front of Fastify first: the PUT behind it waits for its answer.
    let socket = await open(port)
    socket.write(read(`k${round}`) + put(`k${round}`, 'one') + read(`k${round}`, true))
    let { text } = await received(socket, () => false)
    socket.destroy()
    t.same(statuses(text), [200, 200, 200], `round ${round}: every answer, in order`)
    t.same([...text.matchAll(/\r\n\r\n(zero|one)(?=HTTP|$)/g)].map(m => m[1]), ['zero', 'one'], `round ${round}: the first read did not see the write sent after it`)
    // A read of a missing key begins in front and is handed to Fastify: it keeps its place before the PUT.
    socket = await open(port)
    socket.write(read(`new${round}`) + put(`new${round}`, 'late') + read(`new${round}`, true))
    ;({ text } = await received(socket, () => false))
    socket.destroy()
    t.same(statuses(text), [404, 200, 200], `round ${round}: the handed-over read answered before the PUT behind it took effect`)
  }
})

t.test('reads in front of Fastify are logged and counted as the route\'s are', async t => {
  const lines: Array<Record<string, unknown>> = []
  const destination = { write: (line: string) => { lines.push(JSON.parse(line)) } }
  const meter = new RequestMeter()
  const { app, registry } = await gateway(t, { logLevel: 'info', logDestination: destination, meter })
  const port = await listening(app)
  await (await registry.open('photos'))?.put('k', 'hello')
  await get(port, '/photos/k', auth)
  await get(port, '/photos/k?', auth)
  await get(port, '/photos/k', auth, 'HEAD')
  const requestLines = lines.filter(l => l.msg === 'request').map(({ time: _t, pid: _p, hostname: _h, reqId, ms, ...rest }) => {
    t.type(reqId, 'string', 'each line has its request id')
    t.type(ms, 'number')
    return rest
  })
  t.same(requestLines, [
    { level: 30, method: 'GET', bucket: 'photos', key: 'k', status: 200, bytes: 5, msg: 'request' },
    { level: 30, method: 'GET', bucket: 'photos', key: 'k', status: 200, bytes: 5, msg: 'request' },
    { level: 30, method: 'HEAD', bucket: 'photos', key: 'k', status: 200, bytes: 0, msg: 'request' }
  ], 'the same line either way')
  t.equal(meter.series('http', 'GetObject').statuses.get(200), 2, 'both GETs counted')
  t.equal(meter.series('http', 'HeadObject').statuses.get(200), 1, 'the HEAD counted')
  t.equal(meter.inFlight.http, 0, 'nothing left in flight')
})

t.test('metadata no header can carry (written through the binding) is left out and counted in x-missing-meta, on both paths', async t => {
  const { app, registry } = await gateway(t)
  const port = await listening(app)
  const photos = (await registry.open('photos'))!
  await photos.put('k', 'x', { customMetadata: { 'a b': '1', ü: '2', 'a:b': '3', Ok: '4', ok: '5', fine: '6', note: 'a\nb' } })
  await photos.put('all', 'x', { customMetadata: { fine: '6' } })
  for (const method of ['GET', 'HEAD']) {
    for (const path of ['/photos/k', '/photos/k?']) {
      const answer = await get(port, path, auth, method)
      t.equal(answer.status, 200, `${method} ${path}: answered`)
      t.equal(answer.headers['x-missing-meta'], '5', `${method} ${path}: three names that are not header names, one that differs from another only in case, a value no header carries`)
      t.equal(answer.headers['x-meta-fine'], '6')
      t.equal(answer.headers['x-meta-ok'], '4', 'the first of two names differing in case is answered')
    }
    t.equal((await get(port, '/photos/all', auth, method)).headers['x-missing-meta'], undefined, `${method}: none when nothing is missing`)
  }
})

t.test('every stored hash but the MD5 is answered as x-checksum-*, and a stored type no header can carry falls back to the key\'s', async t => {
  const { app, registry } = await gateway(t)
  const port = await listening(app)
  const photos = (await registry.open('photos'))!
  await photos.put('crc', 'x', { crc32: '8cdc1683' } as never)
  const crc32 = '8cdc1683'
  await photos.put('page.html', 'x', { httpMetadata: { contentType: 'text/html\r\nx-injected: 1' } })
  for (const path of ['/photos/crc', '/photos/crc?']) {
    const answer = await get(port, path, auth)
    t.equal(answer.headers['x-checksum-crc32'], crc32, `${path}: the stored CRC32, in hex`)
    t.equal(answer.headers['x-checksum-md5'], undefined, 'the MD5 is the ETag\'s')
  }
  for (const path of ['/photos/page.html', '/photos/page.html?']) {
    const answer = await get(port, path, auth)
    t.equal(answer.status, 200, `${path}: answered`)
    t.equal(answer.headers['content-type'], 'text/html', 'typed by its key')
    t.equal(answer.headers['x-injected'], undefined)
  }
})

t.test('If-Range: a range of another version is never answered; the whole object is, with 200, on both paths', async t => {
  const { app, registry } = await gateway(t)
  const port = await listening(app)
  const photos = (await registry.open('photos'))!
  const first = (await photos.put('movie', '0123456789'))!
  const resume = { ...auth, range: 'bytes=5-' }
  for (const path of ['/photos/movie', '/photos/movie?']) {
    const same = await get(port, path, { ...resume, 'if-range': first.httpEtag })
    t.same([same.status, same.body, same.headers['content-range']], [206, '56789', 'bytes 5-9/10'], `${path}: the ETag of the stored version: the range`)
    const dated = await get(port, path, { ...resume, 'if-range': first.uploaded.toUTCString() })
    t.same([dated.status, dated.body], [200, '0123456789'], `${path}: its Last-Modified, which another version of the same second shares: the whole`)
  }
  await photos.put('movie', 'abcdefghijklmnop')
  for (const path of ['/photos/movie', '/photos/movie?']) {
    for (const validator of [first.httpEtag, first.uploaded.toUTCString()]) {
      const moved = await get(port, path, { ...resume, 'if-range': validator })
      t.same([moved.status, moved.body, moved.headers['content-range']], [200, 'abcdefghijklmnop', undefined], `${path}, ${validator}: the new version whole, not its rest spliced onto the old`)
    }
  }
})
