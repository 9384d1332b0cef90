/**
 * CORS for anonymous readers of a public bucket, on both doors that serve
 * one: a bucket's CORS rules answer a preflight and a simple GET with an
 * Origin, with no signature or token. Without rules the S3 port sends no CORS
 * headers and refuses the preflight (S3 has no default rule; the hosted
 * service asks a public bucket for a CORS policy), while the HTTP routes
 * answer reads from any origin (docs/http.md, CORS).
 */
import t from 'tap'
import { raw, s3Server } from './fixture.js'
import { gateway } from '../http/gateway-fixture.js'
import { s3AccessPolicy } from '../../src/s3/index.js'

const origin = 'https://app.example'
const rules = [{ allowedOrigins: [origin], allowedMethods: ['GET', 'HEAD'], allowedHeaders: ['range'], exposeHeaders: ['ETag'], maxAgeSeconds: 300 }]

t.test('S3 port: anonymous preflight and GET on a public bucket follow its rules; none without rules', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy({ accessKeyId: 'key', secretAccessKey: 'secret' }, null, true) })
  for (const name of ['bare', 'ruled']) {
    await server.registry.create(name, { public: true })
    await (await server.registry.open(name))!.put('a.txt', 'A')
  }
  await server.registry.updateSettings('ruled', { cors: rules })

  const preflight = await raw(server, 'OPTIONS', '/ruled/a.txt', { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' })
  t.equal(preflight.status, 200)
  t.match(preflight.headers, { 'access-control-allow-origin': origin, 'access-control-allow-methods': 'GET, HEAD', 'access-control-allow-headers': 'range', 'access-control-max-age': '300' })
  const get = await raw(server, 'GET', '/ruled/a.txt', { origin })
  t.same([get.status, get.body, get.headers['access-control-allow-origin'], get.headers['access-control-expose-headers']], [200, 'A', origin, 'ETag'], 'an anonymous GET, answered with CORS headers')
  const other = await raw(server, 'GET', '/ruled/a.txt', { origin: 'https://other.test' })
  t.same([other.status, other.headers['access-control-allow-origin']], [200, undefined], 'another origin reads, without CORS headers')
  t.equal(get.headers.vary, 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method', 'the allowed origin\'s answer varies by origin')
  t.equal(other.headers.vary, get.headers.vary, 'and so does the other origin\'s: a cache keeps them apart')
  t.equal((await raw(server, 'GET', '/ruled/a.txt', {})).headers.vary, undefined, 'no Origin: no Vary, as S3 sends none')
  // A `*` rule after one that echoes: the answers still differ by origin (the first origin's exposes ETag).
  await server.registry.updateSettings('ruled', { cors: [...rules, { allowedOrigins: ['*'], allowedMethods: ['GET'] }] })
  const starred = await raw(server, 'GET', '/ruled/a.txt', { origin: 'https://other.test' })
  t.same([starred.headers['access-control-allow-origin'], starred.headers.vary], ['*', get.headers.vary], 'the `*` rule\'s answer varies by origin too')
  const starredPreflight = await raw(server, 'OPTIONS', '/ruled/a.txt', { origin: 'https://other.test', 'access-control-request-method': 'GET' })
  t.same([starredPreflight.status, starredPreflight.headers.vary], [200, get.headers.vary], 'and so does its preflight')
  await server.registry.updateSettings('ruled', { cors: rules })
  t.equal((await raw(server, 'OPTIONS', '/ruled/a.txt', { origin, 'access-control-request-method': 'PUT' })).status, 403, 'a method no rule allows')

  const bare = await raw(server, 'GET', '/bare/a.txt', { origin })
  t.same([bare.status, bare.headers['access-control-allow-origin'], bare.headers.vary], [200, undefined, undefined], 'a public bucket without rules: readable, no CORS headers')
  const refused = await raw(server, 'OPTIONS', '/bare/a.txt', { origin, 'access-control-request-method': 'GET' })
  t.equal(refused.status, 403)
  t.match(refused.body, /<Code>AccessForbidden<\/Code>/)
})

t.test('S3 port: an answer a `*` rule matched varies by Origin, as S3 varies it; one to no Origin has no CORS headers', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy({ accessKeyId: 'key', secretAccessKey: 'secret' }, null, true) })
  await server.registry.create('open', { public: true })
  await (await server.registry.open('open'))!.put('a.txt', 'A')
  await server.registry.updateSettings('open', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'HEAD'], exposeHeaders: ['ETag'] }] })
  const vary = 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method'
  for (const method of ['GET', 'HEAD']) {
    const answer = await raw(server, method, '/open/a.txt', { origin })
    t.same([answer.status, answer.headers['access-control-allow-origin'], answer.headers.vary], [200, '*', vary], `${method} from an origin`)
    // What a cache keyed without Origin would hand to a later fetch: so the fetch's answer must say what it varies by.
    const plain = await raw(server, method, '/open/a.txt', {})
    t.same([plain.status, plain.headers['access-control-allow-origin'], plain.headers.vary], [200, undefined, undefined], `${method} without an Origin: no CORS headers, no Vary (as S3)`)
  }
  const preflight = await raw(server, 'OPTIONS', '/open/a.txt', { origin, 'access-control-request-method': 'GET' })
  t.same([preflight.status, preflight.headers['access-control-allow-origin'], preflight.headers.vary], [200, '*', vary], 'its preflight too')
})

t.test('S3 port: an answer that echoes the origin allows credentials, preflight and GET, as S3\'s do; one of `*` does not', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy({ accessKeyId: 'key', secretAccessKey: 'secret' }, null, true) })
  await server.registry.create('ruled', { public: true })
  await (await server.registry.open('ruled'))!.put('a.txt', 'A')
  await server.registry.updateSettings('ruled', { cors: [...rules, { allowedOrigins: ['*'], allowedMethods: ['GET'] }] })
  const preflight = await raw(server, 'OPTIONS', '/ruled/a.txt', { origin, 'access-control-request-method': 'GET' })
  const get = await raw(server, 'GET', '/ruled/a.txt', { origin })
  for (const [what, answer] of [['preflight', preflight], ['GET', get]] as const) {
    t.same([answer.status, answer.headers['access-control-allow-origin'], answer.headers['access-control-allow-credentials']], [200, origin, 'true'], what)
  }
  // Fetch refuses credentials with `*`, and S3 sends none with it.
  const starredPreflight = await raw(server, 'OPTIONS', '/ruled/a.txt', { origin: 'https://other.test', 'access-control-request-method': 'GET' })
  const starred = await raw(server, 'GET', '/ruled/a.txt', { origin: 'https://other.test' })
  for (const [what, answer] of [['preflight', starredPreflight], ['GET', starred]] as const) {
    t.same([answer.status, answer.headers['access-control-allow-origin'], answer.headers['access-control-allow-credentials']], [200, '*', undefined], `${what} of a \`*\` rule`)
  }
  const unmatched = await raw(server, 'HEAD', '/ruled/a.txt', { origin: 'https://other.test' })
  t.equal(unmatched.headers['access-control-allow-credentials'], undefined, 'a method no rule allows for that origin: no CORS headers')
})

t.test('S3 port: an answer a rule matched lists its methods and max age, as its preflight does and as S3\'s do', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy({ accessKeyId: 'key', secretAccessKey: 'secret' }, null, true) })
  await server.registry.create('ruled', { public: true })
  await (await server.registry.open('ruled'))!.put('a.txt', 'A')
  const uploader = 'https://upload.example'
  await server.registry.updateSettings('ruled', {
    cors: [...rules, { allowedOrigins: ['https://*.other.test'], allowedMethods: ['GET'] }, { allowedOrigins: [uploader], allowedMethods: ['PUT', 'GET'], maxAgeSeconds: 60 }]
  })
  const cors = (answer: Awaited<ReturnType<typeof raw>>): unknown[] => [answer.status, answer.headers['access-control-allow-origin'],
    answer.headers['access-control-allow-methods'], answer.headers['access-control-max-age'], answer.headers['access-control-expose-headers']]
  for (const method of ['GET', 'HEAD']) {
    t.same(cors(await raw(server, method, '/ruled/a.txt', { origin })), [200, origin, 'GET, HEAD', '300', 'ETag'], `${method}: the matched rule's methods and max age`)
    // S3 decides the CORS headers before the request is judged: an error answer carries them too.
    t.same(cors(await raw(server, method, '/ruled/missing.txt', { origin })), [404, origin, 'GET, HEAD', '300', 'ETag'], `${method} of a missing key: the 404 carries them`)
  }
  const preflight = await raw(server, 'OPTIONS', '/ruled/a.txt', { origin, 'access-control-request-method': 'GET' })
  t.same(cors(preflight), [200, origin, 'GET, HEAD', '300', 'ETag'], 'the preflight says the same')
  t.same(cors(await raw(server, 'GET', '/ruled/a.txt', { origin: 'https://a.other.test' })), [200, 'https://a.other.test', 'GET', undefined, undefined], 'a rule without MaxAgeSeconds: no max age')
  const refused = await raw(server, 'PUT', '/ruled/b.txt', { origin: uploader, 'content-length': '1' }, 'B')
  t.same(cors(refused), [403, uploader, 'PUT, GET', '60', undefined], 'an unsigned PUT refused: the 403 carries the PUT rule\'s headers, methods in the rule\'s order')
  t.match(refused.body, /<Code>AccessDenied<\/Code>/)
  for (const [what, answer] of [
    ['an origin no rule names', await raw(server, 'GET', '/ruled/a.txt', { origin: 'https://stranger.test' })],
    ['its 404', await raw(server, 'GET', '/ruled/missing.txt', { origin: 'https://stranger.test' })],
    ['a method the origin\'s rule does not allow', await raw(server, 'PUT', '/ruled/b.txt', { origin: 'https://a.other.test', 'content-length': '1' }, 'B')]
  ] as const) {
    t.same(cors(answer).slice(1), [undefined, undefined, undefined, undefined], `${what}: no CORS headers`)
    t.equal(answer.headers['access-control-allow-credentials'], undefined, `${what}: no credentials`)
  }
})

t.test('HTTP routes: anonymous preflight and GET on a public bucket follow its rules', async t => {
  const { app, registry } = await gateway(t)
  await (await registry.open('site'))!.put('a.txt', 'A')
  await registry.updateSettings('site', { cors: rules })
  const preflight = await app.inject({ method: 'OPTIONS', url: '/site/a.txt', headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' } })
  t.equal(preflight.statusCode, 204)
  t.match(preflight.headers, { 'access-control-allow-origin': origin, 'access-control-max-age': '300' })
  const get = await app.inject({ method: 'GET', url: '/site/a.txt', headers: { origin } })
  t.same([get.statusCode, get.body, get.headers['access-control-allow-origin']], [200, 'A', origin])
  t.equal((await app.inject({ method: 'GET', url: '/site/a.txt', headers: { origin: 'https://other.test' } })).headers['access-control-allow-origin'], undefined, 'the rules replace the default: another origin gets no CORS headers')
  t.equal((await app.inject({ method: 'OPTIONS', url: '/site/a.txt', headers: { origin: 'https://other.test', 'access-control-request-method': 'GET' } })).statusCode, 403)
})
