/**
 * The headers of whole reads are made once per object version and copied
 * for each answer (src/http/read.ts): what one answer adds (the sandbox of
 * the console's host, a `response-*` override) must never reach another,
 * and a new version of the key must be answered with its own headers.
 */
import t from 'tap'
import { auth, gateway } from './gateway-fixture.js'
import { parseRouteList } from '../../src/http/target.js'

const host = '127.0.0.1:8787'

t.test('an answer\'s own headers stay its own, and a new version is answered with its headers', async t => {
  const { app, registry } = await gateway(t, { token: null, routes: parseRouteList('cdn.example=photos') })
  const photos = (await registry.open('photos'))!
  await photos.put('page.html', '<h1>one</h1>', { httpMetadata: { contentType: 'text/html' }, customMetadata: { n: '1' } })
  const read = async (url: string, name = host): Promise<Record<string, unknown>> =>
    (await app.inject({ method: 'GET', url, headers: { host: name } })).headers

  for (let i = 0; i < 2; i++) {
    const own = await read('/photos/page.html')
    t.match(own['content-security-policy'], /^sandbox /, `path style, read ${i + 1}: sandboxed`)
    t.equal(own['x-meta-n'], '1')
    const routed = await read('/page.html', 'cdn.example')
    t.equal(routed['content-security-policy'], undefined, `host route, read ${i + 1}: the sandbox of another answer is not carried over`)
    t.equal(routed['x-content-type-options'], undefined)
    t.equal(routed['content-type'], 'text/html')
  }
  const overridden = await app.inject({ method: 'GET', url: '/photos/page.html?response-content-type=text%2Fplain', headers: { ...auth, host } })
  t.equal(overridden.headers['content-type'], 'text/plain', 'an override applies')
  t.equal((await read('/page.html', 'cdn.example'))['content-type'], 'text/html', 'and stays in its answer')

  await photos.put('page.html', 'two', { httpMetadata: { contentType: 'text/plain' }, customMetadata: { n: '2' } })
  const next = await read('/page.html', 'cdn.example')
  t.equal(next['content-type'], 'text/plain', 'the new version\'s type')
  t.equal(next['x-meta-n'], '2', 'and metadata')
  t.equal(next['content-length'], '3')
})

t.test('an object stored without a type is typed by its key\'s extension, and a key without one is application/octet-stream', async t => {
  const { app, registry } = await gateway(t, { token: null })
  const photos = (await registry.open('photos'))!
  for (const key of ['page.html', 'html', 'dir/svg', 'x.html/']) await photos.put(key, '<b>x</b>')
  const typeOf = async (key: string): Promise<unknown> => (await app.inject({ method: 'GET', url: `/photos/${key}`, headers: { host } })).headers['content-type']
  t.equal(await typeOf('page.html'), 'text/html')
  for (const key of ['html', 'dir/svg', 'x.html/']) t.equal(await typeOf(key), 'application/octet-stream', key)
})
