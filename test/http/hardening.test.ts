/**
 * Holes of the HTTP door, closed: cross-site writes and DNS rebinding in the
 * credential-free loopback mode, the management API's prefix, huge range
 * numbers, body parser errors, aws-chunked bodies, and preflights that must
 * not tell private buckets from missing ones.
 */
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { auth, gateway, token } from './gateway-fixture.js'
import { parseRouteList } from '../../src/http/target.js'
import { open, received, statuses } from '../raw-socket.js'

function errorCode (res: { json: () => unknown }): number | undefined {
  return (res.json() as { errors?: Array<{ code: number }> }).errors?.[0]?.code
}

const host = '127.0.0.1:8787'

t.test('huge range numbers: an offset past the end is 416, an end past the end is clamped', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/ten', headers: auth, payload: '0123456789' })
  const huge = '9'.repeat(400)
  const get = async (range: string): Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }> =>
    await app.inject({ method: 'GET', url: '/photos/ten', headers: { ...auth, range } })

  const past = await get(`bytes=${huge}-`)
  t.equal(past.statusCode, 416, 'offset of 400 digits')
  t.equal(past.headers['content-range'], 'bytes */10')
  t.equal((await get(`bytes=${huge}-${huge}`)).statusCode, 416, 'offset and end of 400 digits')
  t.equal((await get('bytes=10-99999999999999999999')).statusCode, 416, 'offset just past the end, end beyond 2^53')

  const clamped = await get(`bytes=2-${huge}`)
  t.equal(clamped.statusCode, 206)
  t.equal(clamped.headers['content-range'], 'bytes 2-9/10')
  t.equal(clamped.body, '23456789')

  const suffix = await get(`bytes=-${huge}`)
  t.equal(suffix.statusCode, 206, 'a suffix longer than the object is the whole object')
  t.equal(suffix.headers['content-range'], 'bytes 0-9/10')

  const backwards = await get(`bytes=${huge}9-${huge}`)
  t.equal(backwards.statusCode, 200, 'an end before the offset is not a valid range: whole object')
})

t.test('everything under /client/v4 is the management API', async t => {
  const { app, registry } = await gateway(t)
  await registry.create('client')
  for (const [method, url] of [['PUT', '/client/v4/obj'], ['GET', '/client/v4/obj'], ['DELETE', '/client/v4/x/y'], ['POST', '/client/v4'], ['GET', '/client/v4/'], ['PATCH', '/client/v4/accounts/a/r2/buckets']] as const) {
    const res = await app.inject({ method, url, headers: auth, payload: method === 'PUT' ? 'planted' : undefined })
    t.equal(res.statusCode, 400, `${method} ${url}`)
    t.same(res.json(), { success: false, errors: [{ code: 7000, message: 'No route for that URI' }], messages: [], result: null })
  }
  const listed = await app.inject({ method: 'GET', url: '/client', headers: auth })
  t.equal(listed.statusCode, 200, 'the bucket named client stays reachable on its own path')
  t.same((listed.json() as { result: unknown[] }).result, [], 'and received nothing')
  t.equal((await app.inject({ method: 'PUT', url: '/client/x', headers: auth, payload: 'ok' })).statusCode, 200, 'other keys of it work')
})

t.test('a management API path spelled so that its router does not take it is still no key of a bucket named client', async t => {
  const { app, registry } = await gateway(t)
  await registry.create('client')
  // Stored by another door (the binding, the S3 port): the routes still never answer it.
  await (await registry.open('client'))!.put('v4/held', 'stored elsewhere')
  const spellings = ['//client/v4/obj', '/client/v4%2Fobj', '///client/v4', '//client/v4/held', '/client/v4%2Fheld']
  for (const method of ['PUT', 'GET', 'DELETE'] as const) {
    for (const url of spellings) {
      const res = await app.inject({ method, url, headers: auth, payload: method === 'PUT' ? 'planted' : undefined })
      t.equal(res.statusCode, 400, `${method} ${url}`)
      t.same(res.json(), { success: false, errors: [{ code: 7000, message: 'No route for that URI' }], messages: [], result: null })
    }
  }
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  for (const url of ['//client/v4/held', '/client/v4%2Fheld']) {
    // A plain GET over a socket, which the reads beside the router would answer.
    const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: auth })
    t.equal(res.status, 400, `GET ${url} over a socket`)
    t.notMatch(await res.text(), /stored elsewhere/)
  }
  const listed = await app.inject({ method: 'GET', url: '/client', headers: auth })
  t.same((listed.json() as { result: Array<{ key: string }> }).result.map(o => o.key), ['v4/held'], 'nothing planted')
})

t.test('preflights answer the same for a missing bucket and a private one', async t => {
  const { app } = await gateway(t)
  const preflight = async (url: string): Promise<{ statusCode: number, body: string }> => await app.inject({
    method: 'OPTIONS', url, headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' }
  })
  for (const [a, b] of [['/photos/k', '/nosuch/k'], ['/photos', '/nosuch']]) {
    const real = await preflight(a)
    const missing = await preflight(b)
    t.equal(real.statusCode, 403)
    t.equal(missing.statusCode, real.statusCode, `${a} vs ${b}: status`)
    t.equal(missing.body, real.body, `${a} vs ${b}: body`)
  }
})

t.test('aws-chunked bodies are refused, never stored with their framing', async t => {
  const { app } = await gateway(t)
  const framed = '5;chunk-signature=abc\r\nhello\r\n0;chunk-signature=def\r\n\r\n'
  for (const headers of [{ 'content-encoding': 'aws-chunked' }, { 'content-encoding': 'gzip, AWS-Chunked' }, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' }]) {
    const res = await app.inject({ method: 'PUT', url: '/photos/chunked', headers: { ...auth, ...headers }, payload: framed })
    t.equal(res.statusCode, 415, JSON.stringify(headers))
    t.equal(errorCode(res), 41501)
  }
  t.equal((await app.inject({ method: 'GET', url: '/photos/chunked', headers: auth })).statusCode, 404, 'nothing stored')

  const create = await app.inject({ method: 'POST', url: '/photos/big?action=mpu-create', headers: auth })
  const { uploadId } = (create.json() as { result: { uploadId: string } }).result
  const part = await app.inject({ method: 'PUT', url: `/photos/big?action=mpu-uploadpart&uploadId=${encodeURIComponent(uploadId)}&partNumber=1`, headers: { ...auth, 'content-encoding': 'aws-chunked' }, payload: framed })
  t.equal(errorCode(part), 41501, 'a part too')
  const plain = await app.inject({ method: 'PUT', url: '/photos/gz', headers: { ...auth, 'content-encoding': 'gzip' }, payload: 'x' })
  t.equal(plain.statusCode, 200, 'other encodings are stored as metadata, as before')
})

t.test('body parser errors answer in the envelope with a code', async t => {
  const { app, registry } = await gateway(t)
  const notJson = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'text/plain' }, payload: '{"keys": ["a"]}' })
  t.equal(notJson.statusCode, 415)
  t.equal(errorCode(notJson), 41500, 'a JSON body must say application/json')
  const complete = await app.inject({ method: 'POST', url: '/photos/k?action=mpu-complete&uploadId=x', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: '{"parts": []}' })
  t.equal(errorCode(complete), 41500, 'mpu-complete too')
  const badJson = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'application/json; charset=utf-8' }, payload: '{"keys": [' })
  t.equal(errorCode(badJson), 40002)
  const deepJson = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'application/json' }, payload: `{"keys": ${'['.repeat(100_000)}${']'.repeat(100_000)}}` })
  t.equal(deepJson.statusCode, 400)
  t.equal(errorCode(deepJson), 40002, 'JSON nested deeper than any body needs is refused as malformed')
  const badForm = await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=zz' }, payload: '--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated' })
  t.equal(badForm.statusCode, 400)
  t.equal(errorCode(badForm), 40005)
  for (const disposition of ['filename="\xe9\xff.txt"', "filename*=UTF-8''%FF%FE.txt"]) {
    const latin1 = await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=zz' }, payload: Buffer.from(`--zz\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\n\r\nbytes\r\n--zz--\r\n`, 'latin1') })
    t.equal(errorCode(latin1), 40005, `a file name that is not UTF-8 makes no key: ${disposition}`)
  }
  t.same((await (await registry.open('photos'))!.list()).objects.map(o => o.key), [], 'nothing stored under a replaced name')
  const noBoundary = await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data' }, payload: 'x' })
  t.equal(noBoundary.statusCode, 400)
  t.equal(errorCode(noBoundary), 40005)
  const mgmtBadJson = await app.inject({ method: 'POST', url: '/client/v4/accounts/a/r2/buckets', headers: { ...auth, 'content-type': 'application/json' }, payload: '{' })
  t.equal(mgmtBadJson.statusCode, 400)
  t.equal(errorCode(mgmtBadJson), 6007, 'the management API answers its own code')
})

t.test('a JSON body or a form\'s key that is not UTF-8 is refused, never read with its bytes replaced', async t => {
  const { app, registry } = await gateway(t)
  const photos = (await registry.open('photos'))!
  // The key a Latin-1 `café` would become if its byte were replaced (U+FFFD).
  await photos.put('caf\uFFFD', 'another object')
  await photos.put('caf\uFFFD/keep.txt', 'kept')
  const json = { ...auth, 'content-type': 'application/json' }
  const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1')

  const deleted = await app.inject({ method: 'POST', url: '/photos?delete', headers: json, payload: latin1('{"keys": ["caf\xe9"]}') })
  t.equal(deleted.statusCode, 400)
  t.equal(errorCode(deleted), 40002, 'a batch delete')
  t.equal((await app.inject({ method: 'GET', url: '/photos/caf%EF%BF%BD', headers: auth })).body, 'another object', 'nothing deleted')

  const rule = { rules: [{ id: 'r', enabled: true, conditions: { prefix: 'caf\xe9/' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 1 } } }] }
  const lifecycle = await app.inject({ method: 'PUT', url: '/client/v4/accounts/a/r2/buckets/photos/lifecycle', headers: json, payload: latin1(JSON.stringify(rule)) })
  t.equal(lifecycle.statusCode, 400)
  t.equal(errorCode(lifecycle), 6007, 'a lifecycle rule through the management API')
  const rules = await app.inject({ method: 'GET', url: '/client/v4/accounts/a/r2/buckets/photos/lifecycle', headers: auth })
  t.same((rules.json() as { result: { rules: Array<{ id: string }> } }).result.rules.filter(r => r.id === 'r'), [], 'no rule stored')
  const utf8 = await app.inject({ method: 'PUT', url: '/client/v4/accounts/a/r2/buckets/photos/lifecycle', headers: json, payload: Buffer.from(JSON.stringify(rule), 'utf8') })
  t.equal(utf8.statusCode, 200, 'the same rule in UTF-8 is taken')

  for (const field of ['key', 'prefix']) {
    const form = latin1(`--zz\r\nContent-Disposition: form-data; name="${field}"\r\n\r\nform\xff\xfe\r\n--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nbytes\r\n--zz--\r\n`)
    const res = await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=zz' }, payload: form })
    t.equal(res.statusCode, 400, field)
    t.equal(errorCode(res), 40005, `a "${field}" field that is not UTF-8 makes no key`)
  }
  t.same((await photos.list()).objects.map(o => o.key).sort(), ['caf\uFFFD', 'caf\uFFFD/keep.txt'], 'nothing stored under a replaced key')
})

t.test('a form giving its key or prefix twice is refused (40005), nothing stored under either', async t => {
  const { app, registry } = await gateway(t)
  const photos = (await registry.open('photos'))!
  for (const field of ['key', 'prefix']) {
    const form = `--zz\r\nContent-Disposition: form-data; name="${field}"\r\n\r\none/\r\n--zz\r\nContent-Disposition: form-data; name="${field}"\r\n\r\ntwo/\r\n` +
      '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nbytes\r\n--zz--\r\n'
    const res = await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=zz' }, payload: form })
    t.equal(res.statusCode, 400, field)
    t.equal(errorCode(res), 40005, `two "${field}" fields`)
    t.match((res.json() as { errors: Array<{ message: string }> }).errors[0].message, `"${field}" field more than once`)
  }
  t.same((await photos.list()).objects, [], 'nothing stored')
})

t.test('a transfer coding other than chunked is refused (501, 50101), its coded bytes never stored', async t => {
  const { app, registry } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const put = async (key: string, codings: string): Promise<string> => {
    const socket = await open((app.server.address() as AddressInfo).port)
    socket.end(`PUT /photos/${key} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth.authorization}\r\nTransfer-Encoding: ${codings}\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
    return (await received(socket, () => false)).text
  }
  for (const codings of ['gzip, chunked', 'identity, Chunked', 'gzip\r\nTransfer-Encoding: chunked']) {
    const answer = await put('coded', codings)
    t.same(statuses(answer), [501], codings)
    t.match(answer, '"code":50101')
  }
  const photos = (await registry.open('photos'))!
  t.equal(await photos.head('coded'), null, 'nothing stored')
  t.same(statuses(await put('plain', 'Chunked')), [200], 'chunked alone, in any case, is framing')
  t.equal((await app.inject({ method: 'GET', url: '/photos/plain', headers: auth })).body, 'hello')
})

t.test('no token on loopback: cross-site writes are refused, same-origin ones work', async t => {
  const { app } = await gateway(t, { token: null })
  await app.inject({ method: 'PUT', url: '/photos/keep', headers: { host }, payload: 'precious' })
  const attacks = [
    { method: 'POST', url: '/photos?delete', headers: { host, origin: 'https://evil.example', 'content-type': 'text/plain' }, payload: '{"keys": ["keep"]}' },
    { method: 'POST', url: '/photos?delete', headers: { host, origin: 'http://localhost:3000', 'content-type': 'application/json' }, payload: '{"keys": ["keep"]}' },
    { method: 'POST', url: '/photos?delete', headers: { host, origin: 'null', 'content-type': 'application/json' }, payload: '{"keys": ["keep"]}' },
    { method: 'DELETE', url: '/photos/keep', headers: { host, 'sec-fetch-site': 'cross-site' } },
    { method: 'DELETE', url: '/photos/keep', headers: { host, 'sec-fetch-site': 'same-site', origin: `http://${host}` } },
    { method: 'PUT', url: '/photos/keep', headers: { host, origin: 'https://evil.example' }, payload: 'planted' },
    {
      method: 'POST',
      url: '/photos',
      headers: { host, origin: 'https://evil.example', 'content-type': 'multipart/form-data; boundary=b' },
      payload: '--b\r\nContent-Disposition: form-data; name="key"\r\n\r\nkeep\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nplanted\r\n--b--\r\n'
    }
  ] as const
  for (const attack of attacks) {
    const res = await app.inject(attack)
    t.equal(res.statusCode, 403, `${attack.method} ${JSON.stringify(attack.headers)}`)
    t.equal(errorCode(res), 40303)
  }
  t.equal((await app.inject({ method: 'GET', url: '/photos/keep', headers: { host } })).body, 'precious', 'the object survived every attempt')

  const sameOrigin = await app.inject({ method: 'PUT', url: '/photos/new', headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }, payload: 'from the console' })
  t.equal(sameOrigin.statusCode, 200, 'a page of the server itself may write')
  const typed = await app.inject({ method: 'DELETE', url: '/photos/new', headers: { host: 'localhost:80', origin: 'http://localhost', 'sec-fetch-site': 'none' } })
  t.equal(typed.statusCode, 204, 'the default port is the same origin')
  const cli = await app.inject({ method: 'POST', url: '/photos?delete', headers: { host, 'content-type': 'application/json' }, payload: '{"keys": ["keep"]}' })
  t.equal(cli.statusCode, 200, 'clients that are not browsers send no Origin and pass')
  const embedded = await app.inject({ method: 'GET', url: '/photos', headers: { host, 'sec-fetch-site': 'cross-site' } })
  t.equal(embedded.statusCode, 200, 'a read without Origin (an image, a link) passes: its body stays opaque to the page')
})

t.test('no token on loopback: a page of another site cannot read a private bucket, whatever its CORS rules say', async t => {
  const { app, registry } = await gateway(t, { token: null })
  await app.inject({ method: 'PUT', url: '/photos/secret', headers: { host }, payload: 'private bytes' })
  // A rule a developer sets for a local front end, too wide.
  await registry.updateSettings('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'HEAD'] }] })
  for (const origin of ['https://evil.example', 'null', 'http://evil.example:8787', 'file://', 'http://127.0.0.1.evil.example']) {
    for (const url of ['/photos/secret', '/photos', '/']) {
      const res = await app.inject({ method: 'GET', url, headers: { host, origin } })
      t.equal(res.statusCode, 403, `GET ${url} from ${origin}`)
      t.equal(errorCode(res), 40304)
      t.notMatch(res.body, /private bytes/)
      t.equal(res.headers['access-control-allow-origin'], undefined, 'no CORS header to read the refusal with either')
    }
  }
  const head = await app.inject({ method: 'HEAD', url: '/photos/secret', headers: { host, origin: 'https://evil.example' } })
  t.equal(head.statusCode, 403)
  for (const origin of ['http://localhost:3000', 'http://127.0.0.1:5173', 'https://app.localhost', 'http://[::1]:8080', `http://${host}`]) {
    const res = await app.inject({ method: 'GET', url: '/photos/secret', headers: { host, origin } })
    t.equal(res.statusCode, 200, `a local page (${origin}) may read, as its CORS rules allow`)
    t.equal(res.body, 'private bytes')
    t.equal(res.headers['access-control-allow-origin'], '*')
  }
  // A preflight is judged as the read it asks for: refused as that read is, never granted `*` for it.
  const preflight = await app.inject({ method: 'OPTIONS', url: '/photos/secret', headers: { host, origin: 'https://evil.example', 'access-control-request-method': 'GET' } })
  t.same([preflight.statusCode, errorCode(preflight), preflight.headers['access-control-allow-origin']], [403, 40304, undefined], 'a preflight from another site is refused as its read is')
  const local = await app.inject({ method: 'OPTIONS', url: '/photos/secret', headers: { host, origin: 'http://localhost:3000', 'access-control-request-method': 'GET' } })
  t.equal(local.statusCode, 204, 'a local page\'s preflight answers by the rules')
})

t.test('no token on loopback: a route host\'s pages are not local pages', async t => {
  const { app } = await gateway(t, { token: null, routes: [{ host: 'site.localhost', pathPrefix: '/', bucket: 'site' }] })
  await app.inject({ method: 'PUT', url: '/photos/secret', headers: { host }, payload: 'private bytes' })
  const res = await app.inject({ method: 'GET', url: '/photos/secret', headers: { host, origin: 'http://site.localhost:8787' } })
  t.equal(res.statusCode, 403)
  t.equal(errorCode(res), 40304)
})

t.test('no token on loopback: a custom domain\'s pages are not local pages, even under .localhost', async t => {
  const { app, registry } = await gateway(t, { token: null })
  await app.inject({ method: 'PUT', url: '/photos/secret', headers: { host }, payload: 'private bytes' })
  await registry.updateSettings('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'HEAD'] }] })
  await registry.updateSettings('site', { domains: ['blog.localhost'] })
  await (await registry.open('site'))!.put('page.html', '<script>fetch("http://127.0.0.1:8787/photos/secret")</script>', { httpMetadata: { contentType: 'text/html' } })
  // The site's HTML is served untouched on its own origin: a page there is the site's, not the user's.
  for (const origin of ['http://blog.localhost:8787', 'http://BLOG.localhost']) {
    const res = await app.inject({ method: 'GET', url: '/photos/secret', headers: { host, origin } })
    t.equal(res.statusCode, 403, origin)
    t.equal(errorCode(res), 40304)
    t.notMatch(res.body, /private bytes/)
  }
  // Like a route host, it serves its public bucket read-only.
  const write = await app.inject({ method: 'PUT', url: '/page.html', headers: { host: 'blog.localhost:8787', origin: 'http://blog.localhost:8787' }, payload: 'planted' })
  t.equal(write.statusCode, 421)
  t.equal(errorCode(write), 42100)
  t.match((await app.inject({ method: 'GET', url: '/page.html', headers: { host: 'blog.localhost:8787' } })).body, /<script>/, 'its site is served')
  const local = await app.inject({ method: 'GET', url: '/photos/secret', headers: { host, origin: 'http://app.localhost:3000' } })
  t.equal(local.body, 'private bytes', 'another local page still may')
})

t.test('no token on loopback: a custom domain the router never serves (an IP literal) opens no path style to its Host', async t => {
  const { app, registry } = await gateway(t, { token: null })
  await app.inject({ method: 'PUT', url: '/photos/secret', headers: { host }, payload: 'private bytes' })
  await registry.updateSettings('site', { domains: ['10.1.2.3', '999.1.1.1'] })
  for (const name of ['10.1.2.3', '10.1.2.3:8787', '999.1.1.1']) {
    for (const url of ['/photos/secret', '/']) {
      const res = await app.inject({ method: 'GET', url, headers: { host: name } })
      t.equal(res.statusCode, 421, `${name} ${url}`)
      t.equal(errorCode(res), 42100)
      t.notMatch(res.body, /private bytes|photos/)
    }
  }
})

t.test('no token on loopback: a Host that is not ours is refused (DNS rebinding)', async t => {
  const { app } = await gateway(t, { token: null, routes: [{ host: 'cdn.example', pathPrefix: '/', bucket: 'site' }] })
  for (const name of ['evil.example', 'evil.example:8787', '127.0.0.1.nip.io', 'localhost.evil.example', '10.0.0.1', '[::ffff:10.0.0.1]']) {
    const res = await app.inject({ method: 'GET', url: '/photos', headers: { host: name } })
    t.equal(res.statusCode, 421, name)
    t.equal(errorCode(res), 42100)
    const mgmt = await app.inject({ method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { host: name, authorization: 'Bearer anything' } })
    t.equal(mgmt.statusCode, 421, `${name}, management API`)
  }
  for (const name of ['127.0.0.1:8787', '127.3.2.1', 'localhost:8787', 'LOCALHOST', 'app.localhost:8787', '[::1]:8787', '[::ffff:127.0.0.1]', 'cdn.example']) {
    const res = await app.inject({ method: 'GET', url: '/photos', headers: { host: name } })
    t.not(res.statusCode, 421, name)
  }
})

t.test('no token on loopback: a route host or custom domain serves its public bucket read-only, nothing else', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'cdn.example', pathPrefix: '/', bucket: 'site' }] })
  await registry.updateSettings('photos', { domains: ['files.example'] })
  await (await registry.open('photos'))!.put('keep', 'precious')
  await (await registry.open('site'))!.put('index.html', 'home')
  // Whoever controls such a name's DNS can point it at this machine: a page there is "same origin".
  for (const name of ['files.example', 'cdn.example']) {
    const origin = `http://${name}`
    const writes = [
      { method: 'PUT' as const, url: '/keep', headers: { host: name, origin }, payload: 'planted' },
      { method: 'DELETE' as const, url: '/keep', headers: { host: name, origin } },
      { method: 'PUT' as const, url: '/client/v4/accounts/a/r2/buckets/photos/domains/managed', headers: { host: name, origin, authorization: 'Bearer x', 'content-type': 'application/json' }, payload: '{"enabled": true}' },
      { method: 'GET' as const, url: '/client/v4/accounts/a/r2/buckets', headers: { host: name, authorization: 'Bearer x' } },
      { method: 'GET' as const, url: '/_console/', headers: { host: name } }
    ]
    for (const request of writes) {
      const res = await app.inject(request)
      t.equal(res.statusCode, 421, `${name}: ${request.method} ${request.url}`)
      t.equal(errorCode(res), request.url.startsWith('/keep') ? 42100 : 42101)
    }
  }
  t.equal((await app.inject({ method: 'GET', url: '/keep', headers: { host: 'files.example' } })).body, 'precious', 'the custom domain serves its bucket')
  t.equal((await app.inject({ method: 'GET', url: '/index.html', headers: { host: 'cdn.example' } })).body, 'home', 'the route serves its bucket')
  t.equal((await registry.info('photos'))?.settings.public, false, 'still private')
  t.equal(await (await (await registry.open('photos'))!.get('keep') as { text: () => Promise<string> }).text(), 'precious')
})

t.test('no token on loopback: a route host bound to a path prefix serves that prefix only, no bucket path style beside it', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'www.example', pathPrefix: '/assets/', bucket: 'site' }, { host: null, pathPrefix: '/static/', bucket: 'site' }] })
  await (await registry.open('photos'))!.put('secret', 'private bytes')
  await (await registry.open('site'))!.put('a.html', 'site page')
  // A rebound www.example must not reach the private buckets through the paths its route leaves free.
  for (const url of ['/photos/secret', '/photos', '/', '/site/a.html', '/%70hotos/secret']) {
    for (const method of ['GET', 'HEAD', 'OPTIONS'] as const) {
      const res = await app.inject({ method, url, headers: { host: 'www.example', origin: 'http://www.example', 'access-control-request-method': 'GET' } })
      t.equal(res.statusCode, 421, `${method} ${url}`)
      t.notMatch(res.body, /private bytes|photos/)
    }
  }
  const own = await app.inject({ method: 'GET', url: '/assets', headers: { host: 'www.example' } })
  t.same([own.statusCode, own.headers.location], [302, './assets/'], 'the route\'s own path without its slash is sent to the route')
  t.equal((await app.inject({ method: 'GET', url: '/assets/a.html', headers: { host: 'www.example' } })).body, 'site page', 'its route serves')
  t.equal((await app.inject({ method: 'GET', url: '/static/a.html', headers: { host: 'www.example' } })).body, 'site page', 'so does a route bound to no host')
  t.equal((await app.inject({ method: 'GET', url: '/photos/secret', headers: { host } })).body, 'private bytes', 'the loopback names keep path style')
})

t.test('no token on loopback: a host both a route host and a custom domain serves what the router serves there, nothing more', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'www.example', pathPrefix: '/assets/', bucket: 'site' }] })
  await registry.create('blog')
  await registry.updateSettings('blog', { domains: ['www.example'] })
  await (await registry.open('site'))!.put('a.css', 'route bytes')
  await (await registry.open('blog'))!.put('post.html', 'domain bytes')
  await (await registry.open('photos'))!.put('secret', 'private bytes')
  const get = async (url: string, method: 'GET' | 'PUT' = 'GET'): Promise<{ statusCode: number, body: string }> =>
    await app.inject({ method, url, headers: { host: 'www.example' }, ...(method === 'PUT' ? { payload: 'planted' } : {}) })
  t.equal((await get('/assets/a.css')).body, 'route bytes', 'the route first')
  const post = await get('/post.html')
  t.equal(post.statusCode, 200, 'the domain\'s other paths, as the router serves them')
  t.equal(post.body, 'domain bytes')
  t.equal((await get('/photos/secret')).statusCode, 404, 'a path of the domain\'s bucket, never path style')
  t.notMatch((await get('/photos/secret')).body, /private bytes/)
  t.equal((await get('/post.html', 'PUT')).statusCode, 421, 'read-only')
  t.equal((await get('/_console/')).statusCode, 421)
})

t.test('a browser on a route host is not sent to the console, which is not served there', async t => {
  const { app } = await gateway(t, { routes: [{ host: 'www.example', pathPrefix: '/assets/', bucket: 'site' }] })
  const res = await app.inject({ method: 'GET', url: '/', headers: { host: 'www.example', accept: 'text/html' } })
  t.not(res.statusCode, 302)
  t.equal(res.headers.location, undefined)
  t.equal((await app.inject({ method: 'GET', url: '/', headers: { host, accept: 'text/html' } })).headers.location, '/_console/', 'on the gateway\'s own name it is')
})

t.test('with a token too, a route host or custom domain never serves the management API or the console', async t => {
  const { app, registry } = await gateway(t, { routes: [{ host: 'cdn.example', pathPrefix: '/', bucket: 'site' }, { host: 'www.example', pathPrefix: '/assets/', bucket: 'site' }] })
  await registry.updateSettings('photos', { domains: ['files.example'] })
  await (await registry.open('site'))!.put('page.html', '<p>site</p>')
  const { authorization } = auth
  // A site's HTML would share its origin with a console opened there, and read the token from the tab.
  for (const name of ['cdn.example', 'www.example', 'files.example', 'FILES.example:8787']) {
    for (const url of ['/_console/', '/_console/app.js', '/client/v4/accounts/a/r2/buckets', '/%63lient/v4/accounts/a/r2/buckets', '/client/v4/user/tokens/verify']) {
      const res = await app.inject({ method: 'GET', url, headers: { host: name, authorization } })
      t.equal(res.statusCode, 421, `${name} ${url}`)
      t.equal(errorCode(res), 42101, `${name} ${url}`)
      t.notMatch(res.body, /photos/)
    }
    const create = await app.inject({ method: 'POST', url: '/client/v4/accounts/a/r2/buckets', headers: { host: name, authorization, 'content-type': 'application/json' }, payload: '{"name": "planted"}' })
    t.equal(create.statusCode, 421)
  }
  t.equal(await registry.info('planted'), null, 'nothing created')
  t.equal((await app.inject({ method: 'GET', url: '/assets/page.html', headers: { host: 'www.example' } })).body, '<p>site</p>', 'the site itself is served')
  // The gateway's own names keep both.
  for (const name of [host, 'gateway.example']) {
    const list = await app.inject({ method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { host: name, authorization } })
    t.equal(list.statusCode, 200, name)
    t.not((await app.inject({ method: 'GET', url: '/_console/', headers: { host: name } })).statusCode, 421, name)
  }
})

t.test('the management API, open on loopback, refuses cross-site writes too', async t => {
  const { app } = await gateway(t, { token: null })
  const headers = { host, authorization: 'Bearer anything', 'content-type': 'application/json' }
  const attack = await app.inject({ method: 'POST', url: '/client/v4/accounts/a/r2/buckets', headers: { ...headers, origin: 'https://evil.example' }, payload: '{"name": "planted"}' })
  t.equal(attack.statusCode, 403)
  t.equal(errorCode(attack), 40303)
  const own = await app.inject({ method: 'POST', url: '/client/v4/accounts/a/r2/buckets', headers, payload: '{"name": "wanted"}' })
  t.equal(own.statusCode, 200)
})

t.test('with a token, the guard stays out of the way', async t => {
  const { app } = await gateway(t)
  const res = await app.inject({ method: 'PUT', url: '/photos/x', headers: { ...auth, host: 'files.example.com', origin: 'https://app.example.com' }, payload: 'ok' })
  t.equal(res.statusCode, 200)
  t.equal(token.length > 0, true)
})

t.test('a DELETE with conditions is refused, nothing deleted; a part\'s Content-MD5 and x-checksum-* are verified', async t => {
  const { app, registry } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/a.txt', headers: auth, payload: 'keep me' })
  for (const [name, value] of [['if-match', '"nope"'], ['if-none-match', '*'], ['if-unmodified-since', 'Thu, 01 Jan 1970 00:00:00 GMT']]) {
    const res = await app.inject({ method: 'DELETE', url: '/photos/a.txt', headers: { ...auth, [name]: value } })
    t.equal(res.statusCode, 501, name)
    t.equal(errorCode(res), 50100, name)
  }
  t.equal((await app.inject({ method: 'GET', url: '/photos/a.txt', headers: auth })).body, 'keep me', 'nothing deleted')

  const created = await app.inject({ method: 'POST', url: '/photos/big?action=mpu-create', headers: auth })
  const uploadId = created.json().result.uploadId as string
  const part = (headers: Record<string, string>): Promise<{ statusCode: number, json: () => any }> =>
    app.inject({ method: 'PUT', url: `/photos/big?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=1`, headers: { ...auth, ...headers }, payload: 'part bytes' })
  const wrongMd5 = await part({ 'content-md5': Buffer.alloc(16).toString('base64') })
  t.equal(wrongMd5.statusCode, 400)
  t.equal(errorCode(wrongMd5), 10037)
  const malformed = await part({ 'x-checksum-sha1': '00' })
  t.equal(malformed.statusCode, 400)
  const upload = (await registry.open('photos'))!.resumeMultipartUpload('big', uploadId)
  t.same((await upload.listParts()).parts, [], 'no part stored')
  const md5 = (await import('node:crypto')).createHash('md5').update('part bytes').digest('base64')
  t.equal((await part({ 'content-md5': md5 })).statusCode, 200, 'the right digest is taken')
})

t.test('a repeated ?delete or response-* parameter is 40004; an absolute-form target is read by its path', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/a.txt', headers: auth, payload: 'kept' })
  const twice = await app.inject({ method: 'POST', url: '/photos?delete&delete', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"keys": ["a.txt"]}' })
  t.equal(twice.statusCode, 400)
  t.equal(errorCode(twice), 40004)
  const overrides = await app.inject({ method: 'GET', url: '/photos/a.txt?response-content-type=a/b&response-content-type=c/d', headers: auth })
  t.equal(overrides.statusCode, 400)
  t.equal(errorCode(overrides), 40004)
  t.equal((await app.inject({ method: 'GET', url: '/photos/a.txt', headers: auth })).body, 'kept', 'nothing deleted')
})

t.test('no token on loopback: a public host cannot reach the management API or the console through an escaped path', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'cdn.example', pathPrefix: '/', bucket: 'site' }] })
  await registry.updateSettings('photos', { domains: ['files.example'] })
  await (await registry.open('photos'))!.put('keep', 'precious')
  for (const name of ['cdn.example', 'files.example']) {
    for (const url of ['/%63lient/v4/accounts/a/r2/buckets/photos/objects/keep', '/client/v%34/accounts/a/r2/buckets', '/%63lient/v4/user/tokens/verify', '/%5f%63onsole/']) {
      const res = await app.inject({ method: 'GET', url, headers: { host: name, authorization: 'Bearer x' } })
      t.equal(res.statusCode, 421, `${name}: GET ${url}`)
      t.not(res.body, 'precious')
    }
  }
})

t.test('no token on loopback: a public host cannot reach the management API through an absolute-form target', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'cdn.example', pathPrefix: '/', bucket: 'site' }] })
  await (await registry.open('photos'))!.put('keep', 'precious')
  await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = await open((app.server.address() as AddressInfo).port)
  socket.end('GET http://cdn.example/client/v4/accounts/a/r2/buckets/photos/objects/keep HTTP/1.1\r\nHost: cdn.example\r\nAuthorization: Bearer x\r\nConnection: close\r\n\r\n')
  const { text } = await received(socket, () => false)
  t.same(statuses(text), [421])
  t.notMatch(text, 'precious')
})

t.test('no token on loopback: a route host under .localhost serves its site only, not the console or the management API', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'cdn.localhost', pathPrefix: '/', bucket: 'site' }] })
  await (await registry.open('site'))!.put('index.html', 'home')
  const name = 'cdn.localhost:8787'
  const origin = `http://${name}`
  // A page of the site is "same origin" with its own host: it must not get more than the site.
  const refused = [
    { method: 'GET' as const, url: '/_console/', headers: { host: name } },
    { method: 'GET' as const, url: '/client/v4/accounts/a/r2/buckets', headers: { host: name, authorization: 'Bearer x' } },
    { method: 'POST' as const, url: '/client/v4/accounts/a/r2/buckets', headers: { host: name, origin, authorization: 'Bearer x', 'content-type': 'application/json' }, payload: '{"name": "planted"}' }
  ]
  for (const request of refused) {
    const res = await app.inject(request)
    t.equal(res.statusCode, 421, `${request.method} ${request.url}`)
  }
  t.equal(await registry.info('planted'), null, 'no bucket was created')
  t.equal((await app.inject({ method: 'GET', url: '/', headers: { host: name } })).body, 'home', 'the route still serves its site')
  t.equal((await app.inject({ method: 'GET', url: '/_console/', headers: { host: 'localhost:8787' } })).statusCode, 200, 'the console on localhost itself')
})

t.test('an anonymous read of a public bucket takes no response-* overrides, as a public route takes none', async t => {
  const { app, registry } = await gateway(t)
  await (await registry.open('site'))!.put('note.txt', '<script>1</script>', { httpMetadata: { contentType: 'text/plain' } })
  await (await registry.open('photos'))!.put('note.txt', 'private')
  for (const url of ['/site/note.txt?response-content-type=text%2Fhtml', '/site/note.txt?response-content-disposition=inline&x=1']) {
    for (const method of ['GET', 'HEAD'] as const) {
      const refused = await app.inject({ method, url })
      t.equal(refused.statusCode, 400, `anonymous ${method} ${url}`)
      if (method === 'GET') t.equal(refused.json().errors[0].code, 40004)
    }
    const wrong = await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer wrong' } })
    t.equal(wrong.statusCode, 400, 'a wrong token is no credential either')
  }
  t.equal((await app.inject({ method: 'GET', url: '/site/note.txt' })).statusCode, 200, 'without an override it reads')
  const withToken = await app.inject({ method: 'GET', url: '/site/note.txt?response-content-type=text%2Fhtml', headers: auth })
  t.equal(withToken.statusCode, 200, 'the token holder may override')
  t.equal(withToken.headers['content-type'], 'text/html')
  t.match(withToken.headers['content-security-policy'], /^sandbox /, 'sandboxed all the same')
  t.equal((await app.inject({ method: 'GET', url: '/photos/note.txt?response-content-type=text%2Fhtml' })).statusCode, 401, 'a private bucket still asks for the token first')
})

t.test('objects read on the console\'s own host are sandboxed, so their scripts cannot act as the console', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: parseRouteList('/www/=photos;listing=on;index=off, cdn.example=photos') })
  await registry.updateSettings('site', { domains: ['files.example'] })
  const photos = (await registry.open('photos'))!
  await photos.put('page.html', '<script>fetch("/client/v4/accounts/a/r2/buckets")</script>', { httpMetadata: { contentType: 'text/html' } })
  await photos.put('note.txt', '<script>alert(1)</script>', { httpMetadata: { contentType: 'text/plain' } })
  await photos.put('paper.pdf', '%PDF-1.4', { httpMetadata: { contentType: 'application/pdf' } })
  await (await registry.open('site'))!.put('page.html', '<h1>site</h1>', { httpMetadata: { contentType: 'text/html' } })
  const read = async (url: string, name = host): Promise<Record<string, unknown>> =>
    (await app.inject({ method: 'GET', url, headers: { host: name } })).headers

  for (const url of ['/photos/page.html', '/photos/note.txt?response-content-type=text/html', '/www/page.html', '/site/page.html']) {
    const headers = await read(url)
    t.match(headers['content-security-policy'], /^sandbox( |$)/, `${url}: sandboxed`)
    t.notMatch(headers['content-security-policy'], /allow-same-origin/, `${url}: in an opaque origin`)
    t.equal(headers['x-content-type-options'], 'nosniff', `${url}: not sniffed`)
    const head = (await app.inject({ method: 'HEAD', url, headers: { host } })).headers
    t.same([head['content-security-policy'], head['x-content-type-options']], [headers['content-security-policy'], headers['x-content-type-options']], `${url}: HEAD answers the same headers`)
  }
  t.equal((await read('/photos/paper.pdf'))['content-security-policy'], undefined, 'a PDF stays viewable')
  const text = await read('/photos/note.txt')
  t.equal(text['content-security-policy'], undefined, 'a passive type (text/plain) needs no sandbox')
  t.equal(text['x-content-type-options'], 'nosniff', 'but is never sniffed')
  for (const type of ['image/svg+xml', 'application/xhtml+xml', 'text/xml', 'TEXT/HTML; charset=utf-8', 'text/html x', 'image/png, text/html', 'text/plain;,text/html', '']) {
    const headers = await read(`/photos/note.txt?response-content-type=${encodeURIComponent(type)}`)
    t.match(headers['content-security-policy'], /^sandbox /, `${JSON.stringify(type)}: sandboxed`)
  }
  const notModified = await app.inject({ method: 'GET', url: '/photos/page.html', headers: { host, 'if-none-match': '*' } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.headers['content-security-policy'], undefined, 'an answer without a body needs none')
  t.match((await read('/www/'))['content-security-policy'], /^default-src 'none'/, 'a listing keeps its own, stricter policy')
  // A host of its own is another origin than the console's: its site is served as it is.
  t.equal((await read('/page.html', 'cdn.example'))['content-security-policy'], undefined, 'host route')
  t.equal((await read('/page.html', 'files.example'))['content-security-policy'], undefined, 'custom domain')
})

t.test('a response-* override no header can carry (CR, LF) is refused (40004), never answered as something else', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/page.txt', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'text' })
  for (const [parameter, value] of [['response-content-type', 'text/html%0D%0AX-Injected:%201'], ['response-content-disposition', 'attachment%0A'], ['response-cache-control', 'no-store%00']]) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url: `/photos/page.txt?${parameter}=${value}`, headers: auth })
      t.equal(res.statusCode, 400, `${method} ${parameter}`)
      t.equal(res.headers['x-injected'], undefined)
      if (method === 'GET') {
        t.equal(errorCode(res), 40004)
        t.match((res.json() as { errors: Array<{ message: string }> }).errors[0].message, `"${parameter}" holds a control character`)
      }
    }
  }
  const tab = await app.inject({ method: 'GET', url: '/photos/page.txt?response-content-type=text/plain;%09charset=utf-8', headers: auth })
  t.equal(tab.headers['content-type'], 'text/plain;\tcharset=utf-8', 'a tab is a header\'s own white space')
})
