/**
 * A server without credentials on loopback (src/http/site-guard.ts): a CORS
 * preflight is judged as the request it asks for, so a path route such as
 * `/pub/` never grants another site's page a read (or a write) that the
 * read (or the write) itself is refused; and the refusal says where other
 * sites read: host routes and custom domains.
 */
import t from 'tap'
import { gateway } from './gateway-fixture.js'

const host = '127.0.0.1:8787'

function errorOf (res: { json: () => unknown }): { code?: number, message?: string } {
  return (res.json() as { errors: Array<{ code: number, message: string }> }).errors[0] ?? {}
}

t.test('a path route of an open server: preflight and read agree', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: null, pathPrefix: '/pub/', bucket: 'site' }] })
  await (await registry.open('site'))!.put('a.txt', 'A')
  const other = 'https://other.example'
  const read = await app.inject({ method: 'GET', url: '/pub/a.txt', headers: { host, origin: other } })
  t.same([read.statusCode, errorOf(read).code], [403, 40304], 'the read from another site is refused')
  t.match(errorOf(read).message, /host routes and its buckets' custom domains/, 'the message names where other sites read')
  t.notMatch(errorOf(read).message, /only on its routes and custom domains/)
  const preflight = await app.inject({ method: 'OPTIONS', url: '/pub/a.txt', headers: { host, origin: other, 'access-control-request-method': 'GET' } })
  t.same([preflight.statusCode, errorOf(preflight).code, preflight.headers['access-control-allow-origin']], [403, 40304, undefined], 'its preflight is refused as the read is')
  const write = await app.inject({ method: 'OPTIONS', url: '/photos/a.txt', headers: { host, origin: other, 'access-control-request-method': 'PUT' } })
  t.same([write.statusCode, errorOf(write).code], [403, 40303], 'a preflight for a write is refused as the write is')
  const localWrite = await app.inject({ method: 'OPTIONS', url: '/nowhere/a.txt', headers: { host, origin: 'http://localhost:3000', 'access-control-request-method': 'PUT' } })
  t.same([localWrite.statusCode, errorOf(localWrite).code], [403, 40303], 'a local page\'s preflight for a write too')
  for (const refused of [preflight, write, localWrite]) {
    t.equal(refused.headers.vary, 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method', 'each with the preflight\'s Vary, as every refused preflight')
  }

  const local = 'http://localhost:3000'
  const localPreflight = await app.inject({ method: 'OPTIONS', url: '/pub/a.txt', headers: { host, origin: local, 'access-control-request-method': 'GET' } })
  t.same([localPreflight.statusCode, localPreflight.headers['access-control-allow-origin']], [204, '*'], 'a local page\'s preflight is answered')
  t.equal((await app.inject({ method: 'GET', url: '/pub/a.txt', headers: { host, origin: local } })).statusCode, 200, 'and so is its read')
  const plain = await app.inject({ method: 'OPTIONS', url: '/pub/a.txt', headers: { host } })
  t.equal(plain.statusCode, 204, 'an OPTIONS that is no preflight passes')
})

t.test('a host route of an open server still serves other sites', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: [{ host: 'files.localhost', pathPrefix: '/', bucket: 'site' }] })
  await (await registry.open('site'))!.put('a.txt', 'A')
  const headers = { host: 'files.localhost:8787', origin: 'https://other.example' }
  const preflight = await app.inject({ method: 'OPTIONS', url: '/a.txt', headers: { ...headers, 'access-control-request-method': 'GET' } })
  t.same([preflight.statusCode, preflight.headers['access-control-allow-origin']], [204, '*'])
  const read = await app.inject({ method: 'GET', url: '/a.txt', headers })
  t.same([read.statusCode, read.body], [200, 'A'])
})
