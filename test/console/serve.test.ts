/**
 * Serving the console's files (in process, app.inject): caching headers,
 * the CSP on every answer, `/_console` never reaching the bucket routes,
 * the redirect of a browser's `GET /`, and the URL the start-up log prints.
 */
import t from 'tap'
import Fastify from 'fastify'
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { auth, gateway } from '../http/gateway-fixture.js'
import { open, received, statuses } from '../raw-socket.js'
import { consolePagePolicy, consolePolicy, consoleRoot, consoleUrl, webConsole, type ConsoleRefusal } from '../../src/console/serve.js'
import { testdir } from '../testdir.js'

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
  t.equal(page.headers['cache-control'], 'no-store', 'the page, with its nonce, is never stored')
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  const nonce = /'nonce-([A-Za-z0-9+/]{22}==)'/.exec(String(page.headers['content-security-policy']))?.[1] ?? ''
  t.equal(page.headers['content-security-policy'], consolePagePolicy(nonce), 'the page policy, with a 128-bit nonce')
  const directives = String(page.headers['content-security-policy']).split('; ')
  t.ok(directives.includes(`script-src 'nonce-${nonce}'`) && directives.includes(`style-src 'nonce-${nonce}'`), 'scripts and styles by the nonce alone, not by origin')
  t.match(page.body, `<script type="module" src="${String(script)}" nonce="${nonce}"></script>`)
  t.match(page.body, `<link rel="stylesheet" href="${String(style)}" nonce="${nonce}">`)
  t.notMatch(page.body, /<script>|<style>|style="|\{\{/, 'no inline script or style, no placeholder left')
  const again = await app.inject({ method: 'GET', url: '/_console/index.html' })
  t.equal(again.statusCode, 200)
  t.notMatch(String(again.headers['content-security-policy']), nonce, 'each answer draws its own nonce')
  t.equal((await app.inject({ method: 'HEAD', url: '/_console/' })).statusCode, 200)

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

t.test('what is no console file answers the gateway\'s 404 in the envelope, whatever the path or the body', async t => {
  const { app } = await gateway(t)
  const notFound = (what: string, answer: { statusCode: number, body: string, headers: Record<string, unknown> }): void => {
    t.equal(answer.statusCode, 404, what)
    t.match(answer.headers['content-type'], /^application\/json/, `${what}: JSON`)
    t.same(JSON.parse(answer.body), { success: false, errors: [{ code: 40400, message: 'No route for this URL.' }], messages: [], result: null }, `${what}: the envelope`)
    t.equal(answer.headers['content-security-policy'], consolePolicy, `${what}: with the console's headers`)
  }
  for (const url of ['/_console/%00', '/_console//', '/_console/a%00.js', '/_console/.env', '/_console/index.html/', '/_console/%5c..%5c..%5cpackage.json']) {
    notFound(`GET ${url}`, await app.inject({ method: 'GET', url }))
  }
  for (const [method, type, payload] of [
    ['PUT', 'text/plain', 'hello'], ['POST', 'application/json', '{'], ['POST', 'application/json', '{}'], ['PATCH', 'application/xml', '<x/>'],
    ['DELETE', 'application/json', 'nope'], ['OPTIONS', 'text/plain', 'x'], ['POST', 'multipart/form-data; boundary=b', '--b\r\n'], ['QUERY', 'text/plain', 'x'], ['TRACE', undefined, undefined]
  ] as const) {
    const headers = type === undefined ? auth : { ...auth, 'content-type': type }
    notFound(`${method} with ${type ?? 'no body'}`, await app.inject({ method: method as 'GET', url: '/_console/index.html', headers, payload }))
  }
  for (const method of ['PUT', 'POST', 'DELETE'] as const) {
    notFound(`${method} /_console`, await app.inject({ method, url: '/_console', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' }))
  }

  // app.inject resolves dot segments (`..`, `%2e%2e`) before the router sees them; a socket does not.
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port
  for (const target of ['/_console/../x', '/_console/../../package.json', '/_console/%2e%2e/x', '/_console/a/%2E%2E/%2e%2e/package.json', '/_console/%00', '/_console//', '/_console/..\\x']) {
    const socket = await open(port)
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    const { text } = await received(socket, () => false)
    t.same(statuses(text), [404], `GET ${target} over a socket`)
    t.match(text, /\{"success":false,"errors":\[\{"code":40400,/, `GET ${target}: the envelope`)
  }
})

t.test('console files: a failed condition or a bad range answers in the envelope', async t => {
  const { app } = await gateway(t)
  const files = await readdir(consoleRoot)
  const style = `/_console/${String(files.find(name => name.endsWith('.css')))}`
  const failed = await app.inject({ method: 'GET', url: style, headers: { 'if-match': '"nope"' } })
  t.equal(failed.statusCode, 412)
  t.equal(failed.json().errors[0].code, 41200)
  const range = await app.inject({ method: 'GET', url: style, headers: { range: 'bytes=99999999-' } })
  t.equal(range.statusCode, 416)
  t.equal(range.json().errors[0].code, 10039)
  t.match(range.headers['content-range'], /^bytes \*\/\d+$/)
  const whole = (await app.inject({ method: 'GET', url: style })).body
  t.equal((await app.inject({ method: 'GET', url: style, headers: { range: 'bytes=0-3' } })).body, whole.slice(0, 4), 'a good range still works')
})

t.test('console files: If-Match and If-Range compare strongly (RFC 9110), so the weak ETag never matches them', async t => {
  const { app } = await gateway(t)
  const files = await readdir(consoleRoot)
  const style = `/_console/${String(files.find(name => name.endsWith('.css')))}`
  const whole = await app.inject({ method: 'GET', url: style })
  const etag = String(whole.headers.etag)
  const lastModified = String(whole.headers['last-modified'])
  t.match(etag, /^W\//, 'send\'s ETags are weak')
  for (const ifMatch of [etag, etag.slice(2), `"nope", ${etag}`]) {
    const answer = await app.inject({ method: 'GET', url: style, headers: { 'if-match': ifMatch } })
    t.equal(answer.statusCode, 412, `If-Match: ${ifMatch}`)
    t.equal(answer.json().errors[0].code, 41200)
    t.equal((await app.inject({ method: 'GET', url: style, headers: { 'if-match': ifMatch, 'if-none-match': etag } })).statusCode, 412, 'before If-None-Match\'s 304')
  }
  t.equal((await app.inject({ method: 'GET', url: style, headers: { 'if-match': '*' } })).statusCode, 200, 'If-Match: * holds for a file')
  t.equal((await app.inject({ method: 'GET', url: style, headers: { 'if-match': '*', 'if-none-match': etag } })).statusCode, 304, 'and If-None-Match is judged after it')
  for (const ifRange of [etag, etag.slice(2), 'Mon, 01 Jan 2001 00:00:00 GMT', 'garbage']) {
    const answer = await app.inject({ method: 'GET', url: style, headers: { range: 'bytes=0-3', 'if-range': ifRange } })
    t.equal(answer.statusCode, 200, `If-Range: ${ifRange} does not hold: the whole file`)
    t.equal(answer.body, whole.body)
    t.equal(answer.headers['content-range'], undefined)
  }
  const partial = await app.inject({ method: 'GET', url: style, headers: { range: 'bytes=0-3', 'if-range': lastModified } })
  t.equal(partial.statusCode, 206, 'If-Range with the file\'s Last-Modified: the range')
  t.equal(partial.body, whole.body.slice(0, 4))
  const head = await app.inject({ method: 'HEAD', url: style, headers: { range: 'bytes=0-3', 'if-range': etag } })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-length'], whole.headers['content-length'], 'HEAD: the whole file\'s length')
  t.equal((await app.inject({ method: 'GET', url: '/_console/missing.css', headers: { 'if-match': '*' } })).statusCode, 404, 'no file: 404 before any condition')
})

t.test('console files: validators, and a 304 for a copy the browser already holds', async t => {
  const { app } = await gateway(t)
  const files = await readdir(consoleRoot)
  const script = `/_console/${String(files.find(name => name.endsWith('.js')))}`
  const first = await app.inject({ method: 'GET', url: script })
  t.equal(first.statusCode, 200)
  t.equal(first.headers['content-length'], String(first.rawPayload.length))
  t.equal(first.headers['accept-ranges'], 'bytes')
  t.ok(first.headers.etag, 'an ETag')
  t.ok(first.headers['last-modified'], 'a Last-Modified')
  const again = await app.inject({ method: 'GET', url: script, headers: { 'if-none-match': String(first.headers.etag) } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  const head = await app.inject({ method: 'HEAD', url: script })
  t.equal(head.headers['content-length'], first.headers['content-length'], 'HEAD: the length a GET answers')
  t.equal(head.body, '')
})

t.test('only the files the build wrote are answered: none added later, no link, no directory', async t => {
  const base = testdir(t)
  const root = path.join(base, 'console')
  await mkdir(root)
  await writeFile(path.join(root, 'index.html'), '<title>{{nonce}}</title>')
  await writeFile(path.join(root, 'app-ABCDEFGH.js'), 'export {}\n')
  await writeFile(path.join(root, '.hidden.js'), 'secret')
  await writeFile(path.join(root, 'gone-ABCDEFGH.css'), 'x')
  await mkdir(path.join(root, 'dir'))
  await writeFile(path.join(root, 'dir', 'x.js'), 'x')
  const outside = path.join(base, 'secret.txt')
  await writeFile(outside, 'secret')
  await symlink(outside, path.join(root, 'link.js'))
  const refusals: Array<ConsoleRefusal | { fault: unknown }> = []
  const app = Fastify()
  await app.register(webConsole, {
    root,
    refuse: async (reply, refusal) => { refusals.push(refusal); await reply.code(404).send('refused') }
  })
  t.teardown(async () => { await app.close() })
  await writeFile(path.join(root, 'late.js'), 'written after the start')
  // A listed file that became a directory since: no redirect to its `/`, no listing.
  await rm(path.join(root, 'gone-ABCDEFGH.css'))
  await mkdir(path.join(root, 'gone-ABCDEFGH.css'))
  const served = await app.inject({ method: 'GET', url: '/_console/app-ABCDEFGH.js' })
  t.equal(served.statusCode, 200)
  t.equal(served.body, 'export {}\n')
  t.equal(served.headers['cache-control'], 'public, max-age=31536000, immutable')
  for (const name of ['gone-ABCDEFGH.css', 'late.js', 'link.js', '.hidden.js', 'dir', 'dir/x.js', 'dir%2fx.js', 'index.html%00', 'APP-ABCDEFGH.js']) {
    const answer = await app.inject({ method: 'GET', url: `/_console/${name}` })
    t.equal(answer.statusCode, 404, name)
    t.equal(answer.headers.location, undefined, `${name}: no redirect`)
    t.notMatch(answer.body, /secret|written after/, `${name}: nothing of the file`)
  }
  t.ok(refusals.every(refusal => refusal === 'NoSuchFile'), 'each one a NoSuchFile, no fault')
})

t.test('GET / with text/html at q=0 is not a browser', async t => {
  const { app } = await gateway(t)
  for (const accept of ['text/html;q=0, application/json', 'application/json, text/html; q=0.0', 'TEXT/HTML;Q=0,*/*', 'application/json;q=0.9, text/html;q=0.5', 'text/*, application/json', 'text/htmlx']) {
    const res = await app.inject({ method: 'GET', url: '/', headers: { ...auth, accept } })
    t.equal(res.statusCode, 200, `Accept: ${accept}`)
    t.equal(res.headers.vary, 'Accept', 'the answer depends on Accept')
  }
  for (const accept of ['text/html', 'text/html;q=0.5, */*;q=0.1', 'application/json;q=0.9, text/html', 'text/html;level=1;q=0.001', 'application/xhtml+xml, text/html ; q=1']) {
    const res = await app.inject({ method: 'GET', url: '/', headers: { accept } })
    t.equal(res.statusCode, 302, `Accept: ${accept}`)
  }
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
