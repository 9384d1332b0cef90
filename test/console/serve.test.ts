/**
 * Serving the console's files (in process, app.inject): caching headers,
 * the CSP on every answer, `/_console` never reaching the bucket routes,
 * the redirect of a browser's `GET /`, and the URL the start-up log prints.
 */
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { auth, gateway } from '../http/gateway-fixture.js'
import { consolePolicy, consoleRoot, consoleUrl } from '../../src/console/serve.js'

t.test('the console URL printed at start-up', async t => {
  t.equal(consoleUrl('127.0.0.1', 8787), 'http://127.0.0.1:8787/_console/')
  t.equal(consoleUrl('0.0.0.0', 80), 'http://127.0.0.1:80/_console/')
  t.equal(consoleUrl('::', 8787), 'http://[::1]:8787/_console/')
  t.equal(consoleUrl('::1', 8787), 'http://[::1]:8787/_console/')
  t.equal(consoleUrl('localhost', 1), 'http://localhost:1/_console/')
})

t.test('static files under /_console/', async t => {
  const { app } = await gateway(t)
  const files = await readdir(consoleRoot)
  const script = files.find(name => /^console-[A-Z0-9]+\.js$/.test(name))
  const style = files.find(name => /^console-[A-Z0-9]+\.css$/.test(name))
  t.ok(script, 'the build made a hashed script')
  t.ok(style, 'and a hashed stylesheet')

  const page = await app.inject({ method: 'GET', url: '/_console/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.equal(page.headers['cache-control'], 'no-cache', 'the page is revalidated')
  t.equal(page.headers['content-security-policy'], consolePolicy)
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.ok(page.headers.etag)
  t.match(page.body, `<script type="module" src="${String(script)}"></script>`)
  t.match(page.body, `<link rel="stylesheet" href="${String(style)}">`)
  t.notMatch(page.body, /<script>|<style>|style="/, 'no inline script or style')
  t.equal((await app.inject({ method: 'GET', url: '/_console/', headers: { 'if-none-match': String(page.headers.etag) } })).statusCode, 304)

  const bundle = await app.inject({ method: 'GET', url: `/_console/${String(script)}` })
  t.equal(bundle.statusCode, 200)
  t.match(bundle.headers['content-type'], /javascript/)
  t.equal(bundle.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.equal(bundle.headers['content-security-policy'], consolePolicy)
  t.equal((await app.inject({ method: 'HEAD', url: `/_console/${String(style)}` })).statusCode, 200)

  const bare = await app.inject({ method: 'GET', url: '/_console' })
  t.equal(bare.statusCode, 301)
  t.equal(bare.headers.location, '/_console/')
  for (const [method, url] of [['GET', '/_console/missing.js'], ['PUT', '/_console/x'], ['DELETE', '/_console/index.html'], ['POST', '/_console/']] as const) {
    const answer = await app.inject({ method, url, headers: auth })
    t.equal(answer.statusCode, 404, `${method} ${url}`)
    t.equal(answer.json().errors[0].code, 40400, 'the gateway\'s "no route", never a bucket error')
  }
  const escape = await app.inject({ method: 'GET', url: '/_console/..%2f..%2fpackage.json' })
  t.equal(escape.statusCode, 404, 'no file outside the console\'s directory')
})

t.test('GET / redirects browsers to the console; other clients get the bucket list', async t => {
  const { app } = await gateway(t)
  const browser = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } })
  t.equal(browser.statusCode, 302)
  t.equal(browser.headers.location, '/_console/')
  t.equal(browser.headers.vary, 'Accept')
  const client = await app.inject({ method: 'GET', url: '/', headers: { ...auth, accept: 'application/json' } })
  t.equal(client.statusCode, 200)
  t.same(client.json().result.map((b: { name: string }) => b.name), ['photos', 'site'])
  t.equal((await app.inject({ method: 'GET', url: '/', headers: { accept: '*/*' } })).statusCode, 401, 'curl still needs the token')
})

t.test('the console\'s source: its own modules only, and no HTML parsing', async t => {
  const ui = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src/console/ui')
  for (const file of (await readdir(ui)).filter(name => name.endsWith('.ts'))) {
    const text = await readFile(path.join(ui, file), 'utf8')
    for (const [, specifier] of text.matchAll(/^\s*import\b[^'"]*'([^']+)'/gm)) {
      t.ok(/^\.\/[a-z-]+\.(js|css)$/.test(specifier), `${file} imports ${specifier}: only the console's own modules (nothing of the server)`)
    }
    t.notMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/, `${file} never turns text into markup or code`)
  }
})
