/**
 * The S3 port's plain GetObject and HeadObject are answered beside Fastify
 * (src/s3/fast-read.ts). What a client sees must not tell: each read is
 * compared, over a real socket, with the same signed read sent with an
 * empty query (`/b/k?`: the same canonical request, no parameter), which
 * always goes through the route; and the connection's order holds.
 */
import t from 'tap'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { beginAlone, idleConnectionListener, inConnectionOrder, receivingBody, whenAnswered } from '../../src/server/connection.js'
import { s3AccessPolicy, type S3Connections } from '../../src/s3/index.js'
import { open, received, statuses } from '../raw-socket.js'
import { devSigner, raw, s3Server, type RawAnswer, type S3Server } from './fixture.js'

/** The server's connection promises, with the URLs of the requests Fastify's hooks saw. */
function counted (): { connections: S3Connections, seen: string[] } {
  const seen: string[] = []
  const connections: S3Connections = {
    idleTimeoutMs: 60_000,
    inConnectionOrder: (request: FastifyRequest, reply: FastifyReply, done: () => void) => { seen.push(request.url); inConnectionOrder(request, reply, done) },
    idleListener: idleConnectionListener,
    whenAnswered,
    receivingBody
  }
  return { connections, seen }
}

/** A read signed by the development pair (header signature), sent to `path` + `suffix`. */
async function signedRead (server: S3Server, method: string, path: string, headers: Record<string, string>, suffix = '', host = `127.0.0.1:${server.port}`): Promise<RawAnswer> {
  const signed = await devSigner().sign({ method, protocol: 'http:', hostname: host.split(':')[0], port: server.port, path, query: {}, headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers } })
  const answer = await raw(server, method, `${path}${suffix}`, signed.headers as Record<string, string>)
  const { date: _date, 'x-amz-request-id': id, 'x-amz-id-2': id2, ...rest } = answer.headers
  // Request ids are random: each answer's must be one, the same in both headers and in an error's body.
  const wellFormed = id === id2 && typeof id === 'string' && /^[0-9A-F]{16}$/.test(id) && !/<RequestId>/.test(answer.body.replace(`<RequestId>${String(id)}</RequestId>`, ''))
  return { status: answer.status, headers: { ...rest, 'request-id': String(wellFormed) }, body: answer.body.replace(/<RequestId>[0-9A-F]{16}<\/RequestId>/, '<RequestId/>') }
}

t.test('a plain GetObject or HeadObject answers exactly as the route does, without Fastify', async t => {
  const { connections, seen } = counted()
  const server = await s3Server(t, { connections, domains: ['s3.test'], readsBeside: { beginAlone, guard: null } })
  const photos = await server.registry.open('photos')
  const stored = await photos?.put('a b/ü.txt', 'x'.repeat(3000), { httpMetadata: { contentType: 'text/plain' }, customMetadata: { city: 'Zürich' } })
  await photos?.put('big.bin', Buffer.alloc(3 * 1024 * 1024, 7))
  await photos?.put('page.html', '<script>1</script>', { httpMetadata: { contentType: 'text/html' } })
  const key = '/photos/a%20b/%C3%BC.txt'
  const cases: Array<[string, string, string, Record<string, string>, string?]> = [
    ['signed GET', 'GET', key, {}],
    ['signed HEAD', 'HEAD', key, {}],
    ['If-None-Match that matches: 304', 'GET', key, { 'if-none-match': stored?.httpEtag ?? '' }],
    ['If-Match that does not: 412', 'GET', key, { 'if-match': '"nope"' }],
    ['a range: 206', 'GET', key, { range: 'bytes=5-9' }],
    ['a range past the end: 416', 'GET', key, { range: 'bytes=9000-' }],
    ['checksums asked for', 'GET', key, { 'x-amz-checksum-mode': 'ENABLED' }],
    ['a large body, streamed', 'GET', '/photos/big.bin', {}],
    ['a range of it', 'GET', '/photos/big.bin', { range: 'bytes=1048570-2097160' }],
    ['an HTML object: sandboxed', 'GET', '/photos/page.html', {}],
    ['a missing key: 404', 'GET', '/photos/none', {}],
    ['a missing bucket: 404', 'GET', '/nobucket/k', {}],
    ['an unsupported header: 501', 'GET', key, { 'x-amz-request-payer': 'requester' }],
    ['the configured pair with a session token: not temporary credentials, refused', 'GET', key, { 'x-amz-security-token': 'bogus' }],
    ['and so for a HEAD', 'HEAD', key, { 'x-amz-security-token': 'bogus' }],
    ['a large body with a session token', 'GET', '/photos/big.bin', { 'x-amz-security-token': 'bogus' }],
    ['virtual-host style', 'GET', '/a%20b/%C3%BC.txt', {}, 'photos.s3.test']
  ]
  for (const [name, method, path, headers, host] of cases) {
    const before = seen.length
    const fast = await signedRead(server, method, path, headers, '', host)
    const routed = await signedRead(server, method, path, headers, '?', host)
    t.same(fast, routed, name)
    const handed = [200, 206, 304].includes(fast.status) ? 0 : 1
    t.equal(seen.length - before, 1 + handed, `${name}: ${handed === 0 ? 'answered beside Fastify' : 'handed to the route'}`)
  }
  // A signature that does not match is the route's to refuse, with its own answer.
  const signed = await devSigner().sign({ method: 'GET', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos/other', query: {}, headers: { host: `127.0.0.1:${server.port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } })
  const forged = await raw(server, 'GET', key, signed.headers as Record<string, string>)
  t.equal(forged.status, 403)
  t.match(forged.body, /<Code>SignatureDoesNotMatch<\/Code>/)
  // Unsigned in development mode: the admin, as the route says.
  const before = seen.length
  const unsigned = await raw(server, 'GET', key)
  t.equal(unsigned.status, 200)
  t.equal(seen.length, before, 'an unsigned read in development mode is answered beside Fastify')
  // A session token without its signature is the route's to refuse, even in development mode.
  const tokenOnly = await raw(server, 'GET', key, { 'x-amz-security-token': 'bogus' })
  const tokenOnlyRouted = await raw(server, 'GET', `${key}?`, { 'x-amz-security-token': 'bogus' })
  t.equal(tokenOnly.status, tokenOnlyRouted.status)
  t.not(tokenOnly.status, 200, 'a session token without a signature is refused')
  t.same(seen.slice(-2), [key, `${key}?`], 'by the route')
})

t.test('with a configured key pair, an unsigned read is answered only from a public bucket', async t => {
  const { connections, seen } = counted()
  const server = await s3Server(t, { connections, policy: s3AccessPolicy({ accessKeyId: 'AKID', secretAccessKey: 'secret' }, null, true, ['open']), readsBeside: { beginAlone, guard: null } })
  await server.registry.create('open')
  await (await server.registry.open('open'))?.put('k', 'public')
  await (await server.registry.open('photos'))?.put('k', 'private')
  const before = seen.length
  const open = await raw(server, 'GET', '/open/k')
  t.equal(open.status, 200)
  t.equal(open.body, 'public')
  t.equal(seen.length, before, 'answered beside Fastify')
  const closed = await raw(server, 'GET', '/photos/k')
  t.equal(closed.status, 403)
  t.match(closed.body, /<Code>AccessDenied<\/Code>/)
  t.same(seen.slice(before), ['/photos/k'], 'refused by the route')
})

t.test('the S3 port\'s reads beside Fastify keep their connection\'s order', async t => {
  const { connections } = counted()
  const server = await s3Server(t, { connections, readsBeside: { beginAlone, guard: null } })
  // Every look at a bucket's settings takes a while: a read still running when the next request arrives.
  const info = server.registry.info.bind(server.registry)
  server.registry.info = async name => { await new Promise(resolve => setTimeout(resolve, 5)); return await info(name) }
  const put = (key: string, body: string): string => `PUT /photos/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  const read = (key: string, last = false): string => `GET /photos/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\n${last ? 'Connection: close\r\n' : ''}\r\n`
  for (let round = 0; round < 5; round++) {
    const socket = await open(server.port)
    // Read of a missing key: begun beside Fastify, handed to it, and still before the PUT behind it.
    socket.write(read(`new${round}`) + put(`new${round}`, 'late') + read(`new${round}`, true))
    const { text } = await received(socket, () => false)
    socket.destroy()
    t.same(statuses(text), [404, 200, 200], `round ${round}: the handed-over read answered before the PUT behind it took effect`)
  }
})

t.test('a 304 carries the object\'s Cache-Control and Expires, beside Fastify and through the route', async t => {
  const { connections, seen } = counted()
  const server = await s3Server(t, { connections, readsBeside: { beginAlone, guard: null } })
  const photos = await server.registry.open('photos')
  const expires = new Date('2030-01-02T03:04:05Z')
  const stored = await photos?.put('cached.txt', 'x', { httpMetadata: { cacheControl: 'max-age=60, public', cacheExpiry: expires, contentType: 'text/plain' } })
  for (const [name, suffix] of [['beside Fastify', ''], ['through the route', '?']]) {
    const before = seen.length
    const answer = await signedRead(server, 'GET', '/photos/cached.txt', { 'if-none-match': stored?.httpEtag ?? '' }, suffix)
    t.equal(answer.status, 304, `${name}: 304`)
    t.equal(answer.headers['cache-control'], 'max-age=60, public', `${name}: Cache-Control`)
    t.equal(answer.headers.expires, expires.toUTCString(), `${name}: Expires`)
    t.equal(answer.headers.etag, stored?.httpEtag, `${name}: ETag`)
    t.equal(answer.headers['content-type'], undefined, `${name}: no other metadata`)
    t.equal(seen.length > before, suffix === '?', `${name}: answered ${suffix === '' ? 'without' : 'by'} Fastify`)
  }
})
