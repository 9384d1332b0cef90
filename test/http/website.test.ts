/**
 * Static sites on public routes and custom domains, over a real socket:
 * index documents, the redirect of a folder path to its `/` form, the error
 * document, HTML listings (escaped, paginated, under a script-free CSP),
 * conditionals on an index document; and the parsing of the route options.
 */
import t from 'tap'
import { request } from 'node:http'
import { gateway } from './gateway-fixture.js'
import { parseRouteList, parseRouteSpec, defaultSite } from '../../src/http/target.js'
import { escapeHtml } from '../../src/http/website.js'

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** A raw GET (or HEAD) with the path sent exactly as given. */
async function get (port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }) })
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('route site options', async t => {
  t.same(parseRouteSpec('/docs/=site;index=home.htm;error=errors/404.html;listing=on'), {
    host: null, pathPrefix: '/docs/', bucket: 'site', site: { indexDocument: 'home.htm', errorDocument: 'errors/404.html', listing: true }
  })
  t.same(parseRouteSpec('cdn.localhost=site;index=off').site, { ...defaultSite, indexDocument: null })
  t.same(parseRouteSpec('cdn.localhost=site').site, undefined, 'no options: the defaults apply when serving')
  t.same(parseRouteList('a.test=site;listing=on, /x/=other').map(r => r.site?.listing), [true, undefined])
  for (const bad of ['/d/=site;listing=yes', '/d/=site;index=a/b.html', '/d/=site;index=', '/d/=site;error=', '/d/=site;color=red', '/d/=site;listing']) {
    t.throws(() => parseRouteSpec(bad), TypeError, bad)
  }
  t.equal(escapeHtml(`<a href="x" onclick='y'>&</a>`), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
})

t.test('a public route serving a site', async t => {
  const { app, registry } = await gateway(t, {
    routes: parseRouteList('/www/=photos, /files/=photos;listing=on;error=404.html;index=off, docs.localhost=photos;error=missing.html')
  })
  const photos = await registry.open('photos')
  if (photos === null) throw new Error('no bucket')
  await photos.put('index.html', '<h1>home</h1>', { httpMetadata: { contentType: 'text/html' } })
  await photos.put('guide/index.html', '<h1>guide</h1>', { httpMetadata: { contentType: 'text/html' } })
  await photos.put('deep/guide/index.html', '<h1>deep</h1>', { httpMetadata: { contentType: 'text/html' } })
  await photos.put('404.html', '<h1>not here</h1>', { httpMetadata: { contentType: 'text/html' } })
  const tricky = ['list/<img src=x onerror=alert(1)>', 'list/a#b?c%d e.txt', 'list/ü.txt', 'list/..', 'list/sub/x.txt']
  for (const key of tricky) await photos.put(key, key)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const port = address.port

  await t.test('index documents and folder redirects', async t => {
    const root = await get(port, '/www/')
    t.equal(root.status, 200)
    t.equal(root.body, '<h1>home</h1>')
    t.equal(root.headers['content-type'], 'text/html')
    const guide = await get(port, '/www/guide/')
    t.equal(guide.body, '<h1>guide</h1>')
    const again = await get(port, '/www/guide/', { 'if-none-match': String(guide.headers.etag) })
    t.equal(again.status, 304, 'conditionals apply to the index document')
    const head = await get(port, '/www/guide/', {}, 'HEAD')
    t.equal(head.status, 200)
    t.equal(head.headers['content-length'], String('<h1>guide</h1>'.length))
    const bare = await get(port, '/www/guide')
    t.equal(bare.status, 302, 'a folder without its slash redirects')
    t.equal(bare.headers.location, './guide/', 'relative, so it stays on this site')
    t.equal((await get(port, '/www/guide?utm=1&b=%2F')).headers.location, './guide/?utm=1&b=%2F', 'the query kept, as sent')
    const encoded = await get(port, '/www/deep%2Fguide')
    t.equal(encoded.headers.location, './deep%2Fguide/', 'a folder named with an encoded slash is sent to itself, not to ./guide/')
    t.equal((await get(port, '/www/deep%2Fguide/')).body, '<h1>deep</h1>', 'where its index is')
    const direct = await get(port, '/www/guide/index.html')
    t.equal(direct.body, '<h1>guide</h1>', 'the object itself is still served')
    const missing = await get(port, '/www/nothing/')
    t.equal(missing.status, 404)
    t.equal(JSON.parse(missing.body).errors[0].code, 10007, 'no error document: the JSON 404')
    await photos.put('marker/', 'a folder marker with a body')
    t.equal((await get(port, '/www/marker/')).body, 'a folder marker with a body', 'without index or listing, the object named like the folder')
    const sneaky = await get(port, '/www//evil.example')
    t.equal(sneaky.status, 404, 'no redirect to another host')
  })

  await t.test('listing and error document', async t => {
    const listing = await get(port, '/files/list/')
    t.equal(listing.status, 200)
    t.equal(listing.headers['content-type'], 'text/html; charset=utf-8')
    t.match(String(listing.headers['content-security-policy']), /^default-src 'none'; style-src 'sha256-/)
    t.notMatch(listing.body, /<img/, 'keys are escaped')
    t.match(listing.body, '&lt;img src=x onerror=alert(1)&gt;')
    t.match(listing.body, '<a href="./%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E">')
    t.match(listing.body, '<a href="./a%23b%3Fc%25d%20e.txt">a#b?c%d e.txt</a>')
    t.match(listing.body, '<a href="./%C3%BC.txt">ü.txt</a>')
    t.match(listing.body, '<a href="./sub/">sub/</a>')
    t.match(listing.body, '<td>..</td>', 'a key no relative link can name is listed without a link')
    t.match(listing.body, '<a href="../">../</a>')
    const linked = await get(port, '/files/list/a%23b%3Fc%25d%20e.txt')
    t.equal(linked.body, 'list/a#b?c%d e.txt', 'the link reads the object')
    const bare = await get(port, '/files/list')
    t.equal(bare.status, 302)
    t.equal(bare.headers.location, './list/')
    const notFound = await get(port, '/files/list/none.txt')
    t.equal(notFound.status, 404)
    t.equal(notFound.body, '<h1>not here</h1>', 'the error document')
    t.equal(notFound.headers['content-type'], 'text/html')
    t.equal(notFound.headers.etag, undefined, 'an error page carries no validator')
    const index = await get(port, '/files/')
    t.match(index.body, '<a href="./index.html">', 'index=off lists the root instead')
    const head = await get(port, '/files/list/', {}, 'HEAD')
    t.equal(head.status, 200)
    t.equal(head.body, '')
    for (const path of ['/files/nothing/', '/files/list/nothing/', '/files/%2Fevil.example/']) {
      const empty = await get(port, path)
      t.equal(empty.status, 404, `${path}: nothing under it`)
      t.equal(empty.body, '<h1>not here</h1>', `${path}: the error document`)
    }
  })

  await t.test('a listing pages 1,000 entries at a time', async t => {
    const keys = Array.from({ length: 1005 }, (_, i) => `many/${String(i).padStart(4, '0')}`)
    for (const key of keys) await photos.put(key, '')
    const first = await get(port, '/files/many/')
    t.equal((first.body.match(/<tr><td><a href="\.\/\d{4}">/g) ?? []).length, 1000)
    const next = /<a href="(\?cursor=[^"]+)">Next page<\/a>/.exec(first.body)
    t.ok(next, 'a link to the next page')
    const cursor = (next?.[1] ?? '').replace(/&amp;/g, '&')
    const second = await get(port, `/files/many/${cursor}`)
    t.equal((second.body.match(/<tr><td><a href="\.\/\d{4}">/g) ?? []).length, 5)
    t.notMatch(second.body, /Next page/)
    const madeUp = await get(port, `/files/made/up/${cursor}`)
    t.same([madeUp.status, madeUp.body], [404, '<h1>not here</h1>'], 'a cursor on a made-up path: not found, no empty listing')
    t.equal((await get(port, '/files/made/up/?cursor=bogus')).status, 404, 'nor a 400 for a cursor it never reads')
    t.equal((await get(port, '/www/nothing/?cursor=a&cursor=b')).status, 404, 'a route without listings reads no cursor: its page whatever the query holds')
  })

  await t.test('a path route\'s own path without its slash is sent to it, never taken for a bucket', async t => {
    await registry.create('www')
    for (const [path, location] of [['/www', './www/'], ['/files?x=1', './files/?x=1']]) {
      const answer = await get(port, path)
      t.same([answer.status, answer.headers.location], [302, location], `${path}: to the route`)
    }
    const followed = await get(port, '/www/')
    t.equal(followed.body, '<h1>home</h1>', 'where the index is')
    t.equal((await get(port, '/www', {}, 'DELETE')).status, 405, 'and only read')
  })

  await t.test('a path too long to be a key is not found: the error document, not a 400', async t => {
    for (const path of [`/files/${'a/'.repeat(600)}`, `/files/${'a/'.repeat(600)}x`, `/files/${'b'.repeat(1100)}`, `/www/${'a/'.repeat(600)}`]) {
      const res = await get(port, path)
      t.equal(res.status, 404, `${path.length} characters`)
      if (path.startsWith('/files/')) t.equal(res.body, '<h1>not here</h1>', 'the route\'s error document')
    }
  })

  await t.test('a missing error document falls back to the JSON 404', async t => {
    const answer = await get(port, '/nope', { host: 'docs.localhost' })
    t.equal(answer.status, 404)
    t.equal(JSON.parse(answer.body).errors[0].code, 10007)
    const home = await get(port, '/', { host: 'docs.localhost' })
    t.equal(home.body, '<h1>home</h1>', 'a host route serves its index document')
  })

  await t.test('no response-* overrides on a public route: no link turns an object into a page of the site', async t => {
    await photos.put('upload.txt', '<script>alert(document.cookie)</script>', { httpMetadata: { contentType: 'text/plain' } })
    for (const [path, host] of [['/www/upload.txt?response-content-type=text/html', '127.0.0.1'], ['/upload.txt?response-content-type=text/html', 'docs.localhost'],
      ['/www/?response-content-disposition=inline', '127.0.0.1']]) {
      const answer = await get(port, path, { host })
      t.equal(answer.status, 400, `${host}${path}`)
      t.equal(JSON.parse(answer.body).errors[0].code, 40004)
    }
    t.equal((await get(port, '/www/upload.txt')).headers['content-type'], 'text/plain', 'the object as stored')
  })

  await t.test('custom domains serve index documents', async t => {
    await registry.updateSettings('photos', { domains: ['site.example.test'] })
    const home = await get(port, '/guide/', { host: 'site.example.test' })
    t.equal(home.status, 200)
    t.equal(home.body, '<h1>guide</h1>')
    t.equal((await get(port, '/guide', { host: 'site.example.test' })).headers.location, './guide/')
  })
})
