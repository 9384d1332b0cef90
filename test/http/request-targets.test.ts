/**
 * What a request names when its URL is not a plain one: a query that does
 * not percent-decode, a bucket segment that is no bucket name (`UPPER`, `a`,
 * `default%2Fr`), a bucket that does not exist; and a HEAD's answer to them,
 * which announces the length of the body its GET sends.
 */
import t from 'tap'
import { auth, gateway } from './gateway-fixture.js'
import { open, received, statuses } from '../raw-socket.js'
import { requireDecodableQuery } from '../../src/http/target.js'

interface Answer { statusCode: number, body: string, headers: Record<string, unknown> }

function errorOf (answer: Answer): { code: number, message: string } | undefined {
  return (JSON.parse(answer.body) as { errors: Array<{ code: number, message: string }> }).errors[0]
}

t.test('a query that does not percent-decode to UTF-8 is refused by its parameter name (table)', async t => {
  for (const url of ['/p', '/p?', '/p?prefix=a%2Fb', '/p?prefix=%25FF', '/p?prefix=a+b&delimiter=%2F', '/p?x', '/p?=&&', '/p?prefix=caf%C3%A9']) {
    t.doesNotThrow(() => { requireDecodableQuery(url) }, url)
  }
  for (const [url, name] of [['/p?prefix=%FF', 'prefix'], ['/p?a=1&delimiter=%E0%A4%A', 'delimiter'], ['/p?cursor=%zz', 'cursor'], ['/p?x%FF=1', 'x%FF'], ['/p?limit=10%', 'limit']]) {
    t.throws(() => { requireDecodableQuery(url) }, { code: 40001, status: 400, message: new RegExp(`"${name}"`) }, url)
  }
})

t.test('a list whose prefix, delimiter or cursor does not decode answers 400 (40001), never a list', async t => {
  const { app } = await gateway(t)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/%25FFa', headers: auth, payload: 'x' })).statusCode, 200, 'the key "%FFa"')
  for (const query of ['prefix=%FF', 'delimiter=%FF', 'cursor=%FF', 'prefix=%E0%A4%A', 'start-after=%FF', 'prefix=a&include=%C3']) {
    for (const method of ['GET', 'HEAD'] as const) {
      const answer = await app.inject({ method, url: `/photos?${query}`, headers: auth })
      t.equal(answer.statusCode, 400, `${method} ?${query}`)
      if (method === 'GET') t.equal(errorOf(answer)?.code, 40001, `?${query}: the code of a URL that does not decode`)
    }
  }
  const escaped = await app.inject({ method: 'GET', url: '/photos?prefix=%25FF', headers: auth })
  t.equal(escaped.statusCode, 200, 'the same three characters, escaped, are a prefix like any other')
  t.same((escaped.json() as { result: Array<{ key: string }> }).result.map(o => o.key), ['%FFa'])
  const read = await app.inject({ method: 'GET', url: '/photos/%25FFa?x=%FF', headers: auth })
  t.equal(read.statusCode, 400, 'on an object too, in a parameter the route does not read')
  t.equal(errorOf(read)?.code, 40001)
})

t.test('a public site\'s query and a preflight\'s are not the API\'s: pages answer whatever their query holds', async t => {
  const { app, registry } = await gateway(t, { routes: [{ host: 'cdn.example', pathPrefix: '/', bucket: 'site' }] })
  await (await registry.open('site'))!.put('page.html', '<p>hi</p>', { httpMetadata: { contentType: 'text/html' } })
  for (const query of ['ref=50%off', 'q=caf%E9']) {
    const page = await app.inject({ method: 'GET', url: `/page.html?${query}`, headers: { host: 'cdn.example' } })
    t.equal(page.statusCode, 200, `a page with ?${query}`)
    t.equal(page.body, '<p>hi</p>')
  }
  const preflight = await app.inject({ method: 'OPTIONS', url: '/photos/a?x=%FF', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } })
  t.not(preflight.statusCode, 400, 'a preflight is not refused for its query')
  t.equal((await app.inject({ method: 'GET', url: '/photos/a?x=%FF', headers: auth })).statusCode, 400, 'the API still refuses it')
})

t.test('HEAD of a missing bucket announces the length of the body its GET sends, and sends none', async t => {
  const { app } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  for (const url of ['/nosuch/k', '/nosuch', '/nosuch/', '/UPPER/k', '/default%2Fr', '/photos/missing']) {
    const get = await app.inject({ method: 'GET', url, headers: auth })
    // Over a socket: app.inject hands back a HEAD's body, which Node's server never sends.
    const socket = await open(port)
    socket.write(`HEAD ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\nConnection: close\r\n\r\n`)
    const { text } = await received(socket, () => false)
    const [head, body] = text.split('\r\n\r\n')
    t.same(statuses(text), [get.statusCode], `${url}: the same status`)
    t.match(head, new RegExp(`\r\ncontent-length: ${Buffer.byteLength(get.body)}\r\n`, 'i'), `${url}: the GET's length`)
    t.equal(body, '', `${url}: no body`)
  }
})

t.test('a bucket segment that is no bucket name answers 404 (no such bucket) whatever the method', async t => {
  const { app } = await gateway(t)
  for (const url of ['/UPPER/key', '/a/key', '/-x-/key', '/default%2Fr/key', '/UPPER', '/a', '/-x-/', '/default%2Fr', '/photos%2Fr']) {
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'POST', 'PATCH'] as const) {
      const answer = await app.inject({ method, url, headers: { ...auth, 'content-type': 'text/plain' }, payload: method === 'GET' || method === 'HEAD' ? undefined : 'x' })
      t.equal(answer.statusCode, 404, `${method} ${url}`)
      if (method !== 'HEAD') t.equal(errorOf(answer)?.code, 10006, `${method} ${url}: NoSuchBucket`)
    }
    const anonymous = await app.inject({ method: 'DELETE', url })
    t.equal(anonymous.statusCode, 401, `DELETE ${url} without the token: refused as any write is`)
  }
  // A bucket name that could exist keeps the methods of its kind of path.
  t.equal((await app.inject({ method: 'DELETE', url: '/photos', headers: auth })).statusCode, 405)
  t.equal((await app.inject({ method: 'DELETE', url: '/nosuch', headers: auth })).statusCode, 405)
  t.equal((await app.inject({ method: 'PATCH', url: '/photos/key', headers: auth })).statusCode, 405)
})
