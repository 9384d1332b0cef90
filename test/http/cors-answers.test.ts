/**
 * CORS answers of the HTTP routes (src/http/cors.ts): `Vary: Origin` on
 * every answer of a bucket whose rules echo an origin (path style, public
 * route, custom domain, and the plain reads answered beside Fastify), none
 * where the answer cannot vary; an empty stored list is no rules; allowed
 * headers are matched as on the S3 port (`x-amz-*`); a read-only route's
 * preflight lists only what it serves.
 */
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import { readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { auth, gateway } from './gateway-fixture.js'

const allowed = 'https://app.example'
const echoing = [{ allowedOrigins: [allowed], allowedMethods: ['GET', 'HEAD', 'PUT'], allowedHeaders: ['x-amz-*', 'content-type'] }]

async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

/** The headers of a request over a socket of its own (a plain read is answered beside Fastify there). */
async function headersOver (port: number, method: string, url: string, headers: Record<string, string> = {}): Promise<IncomingHttpHeaders> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: url, headers, agent: false }, res => {
      res.resume()
      res.on('end', () => resolve(res.headers))
    })
    req.on('error', reject)
    req.end()
  })
}

/** A GET over a socket of its own (a plain read is answered beside Fastify there). */
async function get (port: number, url: string, headers: Record<string, string> = {}): Promise<{ status: number, vary: unknown }> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: url, headers, agent: false }, res => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, vary: res.headers.vary }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('rules that echo an origin: every answer varies by Origin, on every way in', async t => {
  const { app, registry } = await gateway(t, { routes: [{ host: null, pathPrefix: '/pub/', bucket: 'site' }, { host: 'files.test', pathPrefix: '/', bucket: 'site' }] })
  await (await registry.open('site'))!.put('a.txt', 'A')
  await (await registry.open('photos'))!.put('a.txt', 'P')
  await registry.updateSettings('site', { cors: echoing })
  await registry.updateSettings('photos', { cors: echoing })
  await registry.updateSettings('site', { domains: ['cdn.test'] })
  const ways: Array<[string, string, Record<string, string>]> = [
    ['path style, public bucket', '/site/a.txt', {}],
    ['path style, private bucket', '/photos/a.txt', auth],
    ['public route', '/pub/a.txt', {}],
    ['host route', '/a.txt', { host: 'files.test' }],
    ['custom domain', '/a.txt', { host: 'cdn.test' }]
  ]
  for (const [what, url, headers] of ways) {
    for (const origin of [undefined, 'https://other.example', allowed]) {
      const res = await app.inject({ method: 'GET', url, headers: origin === undefined ? headers : { ...headers, origin } })
      t.equal(res.statusCode, 200, `${what}, Origin ${origin ?? 'none'}`)
      t.match(String(res.headers.vary), /\bOrigin\b/, `${what}, Origin ${origin ?? 'none'}: Vary: Origin`)
      t.equal(res.headers['access-control-allow-origin'], origin === allowed ? allowed : undefined)
    }
  }
  // A refusal varies too: the same URL answers an allowed origin otherwise.
  const missing = await app.inject({ method: 'GET', url: '/site/nothing.txt' })
  t.same([missing.statusCode, missing.headers.vary], [404, 'Origin'], 'a 404 of such a bucket varies too')
  // Refusals made before the bucket is entered vary too: a method or an override a route does not take, a route root's redirect.
  const refusals: Array<[string, string, string, Record<string, string>, number]> = [
    ['an override on a public route', 'GET', '/pub/a.txt?response-content-type=text/html', {}, 400],
    ['a write on a public route', 'POST', '/pub/a.txt', {}, 405],
    ['the public route\'s root without its slash', 'GET', '/pub', {}, 302],
    ['an override on a host route', 'GET', '/a.txt?response-content-type=x', { host: 'files.test' }, 400],
    ['a write on a host route', 'DELETE', '/a.txt', { host: 'files.test' }, 405],
    ['a method no object takes', 'PATCH', '/photos/a.txt', auth, 405]
  ]
  for (const [what, method, url, headers, status] of refusals) {
    const res = await app.inject({ method: method as 'GET', url, headers })
    t.same([res.statusCode, res.headers.vary], [status, 'Origin'], what)
  }

  // The plain reads answered beside Fastify say the same as the route.
  const port = await listening(app)
  t.same(await get(port, '/site/a.txt'), { status: 200, vary: 'Origin' }, 'a plain read of a public bucket, beside Fastify')
  t.same(await get(port, '/photos/a.txt', auth), { status: 200, vary: 'Origin' }, 'a plain read with the token, beside Fastify')
})

t.test('no Vary where the bucket has no rules', async t => {
  const { app, registry } = await gateway(t)
  await (await registry.open('photos'))!.put('a.txt', 'P')
  const port = await listening(app)
  t.equal((await app.inject({ method: 'GET', url: '/photos/a.txt', headers: { ...auth, origin: allowed } })).headers.vary, undefined, 'private bucket without rules')
  t.equal((await get(port, '/photos/a.txt', auth)).vary, undefined, 'and beside Fastify')
})

t.test('rules of `*` only (the default\'s too): CORS headers for an Origin alone, and every answer varies by Origin', async t => {
  const { app, registry } = await gateway(t)
  await (await registry.open('site'))!.put('a.txt', 'A')
  await (await registry.open('photos'))!.put('a.txt', 'P')
  await registry.updateSettings('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'HEAD'], exposeHeaders: ['ETag'] }] })
  const port = await listening(app)
  // A cache must not hand the answer to a plain request (a navigation, an <img>), made without CORS headers, to a later fetch.
  const corsOf = (headers: IncomingHttpHeaders | OutgoingHttpHeaders): unknown => [headers['access-control-allow-origin'], headers['access-control-expose-headers'], headers.vary]
  const defaultExposed = 'ETag, Content-Range, Content-Length, Content-Type, Last-Modified, Accept-Ranges'
  const cases = [['public bucket, default rule', '/site/a.txt', {}, ['*', defaultExposed, 'Origin']], ['a `*` rule', '/photos/a.txt', auth, ['*', 'ETag', 'Origin']]] as const
  for (const [what, url, headers, expected] of cases) {
    for (const method of ['GET', 'HEAD'] as const) {
      t.same(corsOf((await app.inject({ method, url, headers: { ...headers, origin: allowed } })).headers), expected, `${what}, ${method} from an origin`)
      t.same(corsOf((await app.inject({ method, url, headers })).headers), [undefined, undefined, 'Origin'], `${what}, ${method} without an Origin: none`)
      t.same(corsOf(await headersOver(port, method, url, headers)), [undefined, undefined, 'Origin'], `${what}, ${method} without an Origin, beside Fastify`)
    }
  }
  const missing = await app.inject({ method: 'GET', url: '/photos/none.txt', headers: { ...auth, origin: allowed } })
  t.same([missing.statusCode, corsOf(missing.headers)], [404, ['*', 'ETag', 'Origin']], 'a 404 answers alike')
  const put = await app.inject({ method: 'PUT', url: '/photos/b.txt', headers: { ...auth, origin: allowed }, payload: 'B' })
  t.same([put.statusCode, corsOf(put.headers)], [200, [undefined, undefined, 'Origin']], 'a method no rule allows: no CORS headers')
})

t.test('a server without credentials: a foreign page\'s read without an Origin (let through, opaque to it) gets no CORS header to read it by', async t => {
  // The site guard lets a foreign page's reads through only without an Origin (their bodies opaque to the page); an
  // answer with Access-Control-Allow-Origin, cached by the browser, would make the page's later CORS fetch readable.
  const { app, registry } = await gateway(t, { token: null, loopbackOnly: true })
  await (await registry.open('photos'))!.put('secret.txt', 'S')
  await registry.updateSettings('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'HEAD'] }] })
  const port = await listening(app)
  for (const headers of [{}, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }] as Array<Record<string, string>>) {
    const over = await headersOver(port, 'GET', '/photos/secret.txt', headers)
    t.same([over['access-control-allow-origin'], over.vary], [undefined, 'Origin'], `beside Fastify ${JSON.stringify(headers)}`)
    const routed = await app.inject({ method: 'GET', url: '/photos/secret.txt', headers })
    t.same([routed.statusCode, routed.headers['access-control-allow-origin'], routed.headers.vary], [200, undefined, 'Origin'], `through the route ${JSON.stringify(headers)}`)
  }
  const foreign = await app.inject({ method: 'GET', url: '/photos/secret.txt', headers: { origin: 'https://evil.example' } })
  t.equal(foreign.statusCode, 403, 'with its Origin, the read is refused')
})

t.test('a stored empty list of rules is no rules: a public bucket gets the default', async t => {
  const { app, registry, dataDir } = await gateway(t)
  await (await registry.open('site'))!.put('a.txt', 'A')
  // Written by hand (or by an older version): `updateSettings` stores null for [].
  const file = path.join(dataDir, 'site', '.fsbucket', 'settings.json')
  const document = JSON.parse(await readFile(file, 'utf8'))
  document.settings.cors = []
  await writeFile(`${file}.new`, JSON.stringify(document))
  await rename(`${file}.new`, file)
  t.same(JSON.parse(await readFile(file, 'utf8')).settings.cors, [], 'the file holds an empty list')
  t.equal((await registry.info('site'))!.settings.cors, null, 'read back as a write normalises it: no rules')
  const get = await app.inject({ method: 'GET', url: '/site/a.txt', headers: { origin: allowed } })
  t.equal(get.headers['access-control-allow-origin'], '*', 'the default rule answers')
  const preflight = await app.inject({ method: 'OPTIONS', url: '/site/a.txt', headers: { origin: allowed, 'access-control-request-method': 'GET' } })
  t.same([preflight.statusCode, preflight.headers['access-control-allow-origin']], [204, '*'])
})

t.test('allowed headers match as on the S3 port: one * is a wildcard anywhere', async t => {
  const { app, registry } = await gateway(t)
  await registry.updateSettings('photos', { cors: echoing })
  const preflight = async (requested: string): Promise<number> => (await app.inject({
    method: 'OPTIONS', url: '/photos/a.txt', headers: { origin: allowed, 'access-control-request-method': 'PUT', 'access-control-request-headers': requested }
  })).statusCode
  t.equal(await preflight('x-amz-meta-a'), 204, 'x-amz-* covers x-amz-meta-a')
  t.equal(await preflight('X-Amz-Date, Content-Type'), 204, 'case-insensitively, every requested header covered')
  t.equal(await preflight('x-amz-meta-a, authorization'), 403, 'a header no pattern covers')
  // The first rule that covers the headers decides, as S3 judges: a narrower rule before it does not refuse.
  await registry.updateSettings('photos', { cors: [{ allowedOrigins: [allowed], allowedMethods: ['PUT'] }, ...echoing] })
  t.equal(await preflight('x-amz-meta-a'), 204, 'a later rule that covers the headers')
})

t.test('a read-only route\'s preflight lists only GET and HEAD', async t => {
  const { app, registry } = await gateway(t, { routes: [{ host: null, pathPrefix: '/pub/', bucket: 'photos' }] })
  await registry.updateSettings('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'PUT', 'DELETE', 'HEAD'] }] })
  const routed = await app.inject({ method: 'OPTIONS', url: '/pub/a.txt', headers: { origin: allowed, 'access-control-request-method': 'GET' } })
  t.same([routed.statusCode, routed.headers['access-control-allow-methods']], [204, 'GET, HEAD'], 'the route serves reads only')
  const pathStyle = await app.inject({ method: 'OPTIONS', url: '/photos/a.txt', headers: { origin: allowed, 'access-control-request-method': 'GET' } })
  t.equal(pathStyle.headers['access-control-allow-methods'], 'GET, PUT, DELETE, HEAD', 'the bucket\'s own path lists what the rule allows')
})

t.test('a refused preflight varies as an allowed one, whatever the bucket (missing, ruled or not)', async t => {
  const { app, registry } = await gateway(t)
  await registry.updateSettings('photos', { cors: echoing })
  const vary = 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method'
  const ask = async (url: string, origin: string): Promise<[number, unknown]> => {
    const res = await app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'GET' } })
    return [res.statusCode, res.headers.vary]
  }
  t.same(await ask('/photos/a.txt', allowed), [204, vary], 'allowed')
  t.same(await ask('/photos/a.txt', 'https://other.example'), [403, vary], 'refused by the rules')
  t.same(await ask('/nothing/a.txt', 'https://other.example'), [403, vary], 'a missing bucket: the same refusal')
  await registry.updateSettings('photos', { cors: null })
  t.same(await ask('/photos/a.txt', 'https://other.example'), [403, vary], 'a private bucket without rules: the same refusal')
})
