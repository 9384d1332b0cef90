/**
 * Objects opened in a real Chromium never run script as the origin that
 * serves them: the HTTP routes' own host (which also serves the console and
 * the management API, credential-free on loopback) and the S3 port (whose
 * development mode takes unsigned writes from its own origin).
 *
 * Each object is a page whose script, if it ran as the serving origin,
 * would store `pwned-<n>` with a same-origin PUT (the site guard and CORS
 * refuse the same PUT from the sandbox's opaque origin). A control page
 * served at the gateway's origin without the headers proves the probe
 * catches a script that runs.
 */
import t, { type Test } from 'tap'
import type { BrowserContext, Page } from 'playwright-core'
import type { BucketRegistry } from '../../src/bucket/index.js'
import { browser, listeningGateway } from '../console/browser.js'
import { s3Server } from '../s3/fixture.js'

const probe = (n: number): string => `fetch('/photos/pwned-${n}', { method: 'PUT', body: String(window.origin) }).then(() => { document.title = 'stored' })`
// Well-formed XHTML, so XML parsers (XHTML, text/xml) run its script too.
const page = (n: number): string => `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body><script>${probe(n)}</script></body></html>`
const svg = (n: number): string => `<svg xmlns="http://www.w3.org/2000/svg"><script>${probe(n)}</script></svg>`
const mixed = (n: number): string => `--b\r\nContent-Type: text/html\r\n\r\n${page(n)}\r\n--b--\r\n`

/** Stored types (and one override) a browser may read as a page. */
const cases: Array<{ type?: string, body: (n: number) => string, key?: string, query?: string }> = [
  { type: 'text/html', body: page },
  { type: 'TEXT/HTML', body: page },
  { type: ' text/html', body: page },
  { type: '\ttext/html', body: page },
  { type: 'text/html; charset=utf-8', body: page },
  { type: 'text/plain;,text/html', body: page },
  { type: 'text/plain, text/html', body: page },
  { type: 'image/png,text/html', body: page },
  { type: 'text/plain; charset=utf-8, text/html', body: page },
  { type: 'image/svg+xml', body: svg },
  { type: 'application/xhtml+xml', body: page },
  { type: 'text/xml', body: page },
  { type: 'application/xml', body: page },
  { type: 'text/javascript', body: page },
  { type: '*/*', body: page },
  { type: 'multipart/x-mixed-replace; boundary=b', body: mixed },
  { key: 'untyped.html', body: page },
  { type: 'text/plain', body: page, query: `response-content-type=${encodeURIComponent('text/plain;,text/html')}` },
  { type: 'text/plain', body: page, query: `response-content-type=${encodeURIComponent('image/svg+xml')}` }
]

/** Opens each case's object and returns what ran: the origins its scripts saw, if any. */
async function visitAll (t: Test, tab: Page, base: string, registry: BucketRegistry): Promise<void> {
  const photos = (await registry.open('photos'))!
  for (const [n, { type, body, key, query }] of cases.entries()) {
    const name = key ?? `case-${n}`
    await photos.put(name, body(n), type === undefined ? {} : { httpMetadata: { contentType: type } })
    const url = `${base}/photos/${name}${query === undefined ? '' : `?${query}`}`
    const what = `${JSON.stringify(type ?? name)}${query === undefined ? '' : ` ?${query}`}`
    let shown = { origin: '(not rendered)', type: '' }
    try {
      await tab.goto(url, { waitUntil: 'load', timeout: 5000 })
      await tab.waitForTimeout(100)
      // Bounded: a document still streaming (multipart/x-mixed-replace) may never answer.
      shown = await Promise.race([
        tab.evaluate(() => ({ origin: window.origin, type: document.contentType })),
        new Promise<never>((_resolve, reject) => setTimeout(() => { reject(new Error('no answer')) }, 3000))
      ])
    } catch {
      // A download, or no answer: nothing was rendered as a page there.
    }
    await tab.goto('about:blank')
    // Shown as the serving origin only as data (a text view), where no script of the object runs.
    t.ok(shown.origin !== base || /^text\/(plain|javascript)$/.test(shown.type), `${what}: rendered as ${shown.type || 'nothing'} in origin ${shown.origin}`)
  }
  // A PUT that a script started may still be on its way.
  await new Promise(resolve => setTimeout(resolve, 300))
  const stored = (await photos.list({ prefix: 'pwned-' })).objects.map(object => `${object.key}: ${JSON.stringify(cases[Number(object.key.slice(6))])}`)
  t.same(stored, [], 'no object\'s script wrote as the serving origin')
}

/**
 * A page served at `base` without the sandbox runs its probe: the probe
 * works. In a tab of its own: a tab with request interception skips CORS
 * preflights, which would let the sandboxed pages' PUTs through.
 */
async function control (t: Test, context: BrowserContext, base: string, registry: BucketRegistry): Promise<void> {
  const tab = await context.newPage()
  await tab.route(`${base}/control.html`, async route => { await route.fulfill({ status: 200, contentType: 'text/html', body: page(999) }) })
  await tab.goto(`${base}/control.html`)
  await tab.waitForFunction(() => document.title === 'stored', undefined, { timeout: 5000 })
  await tab.close()
  const photos = (await registry.open('photos'))!
  const stored = await photos.get('pwned-999')
  t.equal(stored !== null && 'text' in stored ? await stored.text() : null, base, 'the probe stores as the origin when its script runs there')
  await photos.delete('pwned-999')
}

// Each test has its browser, closed before its server (teardowns run last first): a server's close waits for the browser's kept-alive connections.
t.test('the HTTP routes\' own host: no object runs as the console\'s origin', async t => {
  const { base, registry } = await listeningGateway(t, null)
  const context = await browser(t)
  await control(t, context, base, registry)
  await visitAll(t, await context.newPage(), base, registry)
})

t.test('the S3 port in development mode: no object runs as its origin', async t => {
  const { endpoint, registry } = await s3Server(t)
  const context = await browser(t)
  await control(t, context, endpoint, registry)
  await visitAll(t, await context.newPage(), endpoint, registry)
})
