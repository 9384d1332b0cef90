/**
 * Which served objects are sandboxed: `isPassiveContentType` read as a
 * browser reads Content-Type (a comma-separated list whose last parseable
 * type wins), and the headers `sandboxObjectHeaders` adds.
 */
import t from 'tap'
import { isPassiveContentType, sandboxObjectHeaders } from '../../src/doors/request-metadata.js'

t.test('exactly one passive media type is passive; anything else is not', async t => {
  const passive = [
    'text/plain', 'TEXT/PLAIN', 'text/plain; charset=utf-8', 'text/plain;charset="utf-8"', ' text/plain', 'text/plain\t',
    'image/png', 'image/jpeg', 'image/webp', 'audio/mpeg', 'video/mp4', 'font/woff2', 'application/json', 'application/pdf',
    'application/octet-stream', 'text/css', 'text/csv', 'text/javascript', 'application/wasm',
    'text/plain; a=b; c="d;e"', 'text/plain; q="a\\"b"'
  ]
  for (const type of passive) t.ok(isPassiveContentType(type), `${JSON.stringify(type)} is passive`)

  const active = [
    undefined, '', ' ', ';;;', 'a/b/c', 'text', 'text/',
    'text/html', 'TEXT/HTML', ' text/html', '\ttext/html', 'text/html; charset=utf-8',
    // A list: the browser renders the last type it can parse.
    'text/plain;,text/html', 'text/plain, text/html', 'image/png,text/html', 'text/plain; charset=utf-8, text/html',
    'text/plain; a="x,text/html"', 'text/plain,', ',text/plain',
    'image/svg+xml', 'application/xhtml+xml', 'text/xml', 'application/xml', 'application/rss+xml', 'text/xsl',
    '*/*', 'multipart/x-mixed-replace; boundary=b', 'application/x-shockwave-flash', 'image/unknown', 'text/vtt',
    // Parameters that are not name=value, or a value with a control character.
    'text/plain; charset', 'text/plain;=utf-8', 'text/plain; a=b c', 'text/plain; a="b\nc"', 'text/plain x', 'text/plain/x'
  ]
  for (const type of active) t.notOk(isPassiveContentType(type), `${JSON.stringify(type)} is not passive`)
})

t.test('every served object is nosniff; a sandbox unless passive; a stricter policy kept', async t => {
  t.same(sandboxObjectHeaders({ 'content-type': 'image/png' }), { 'content-type': 'image/png', 'x-content-type-options': 'nosniff' })
  const page = sandboxObjectHeaders({ 'content-type': 'text/plain;,text/html' })
  t.equal(page['x-content-type-options'], 'nosniff')
  t.match(page['content-security-policy'], /^sandbox allow-scripts /)
  t.notMatch(page['content-security-policy'], /allow-same-origin/)
  t.match(sandboxObjectHeaders({})['content-security-policy'], /^sandbox /, 'no type at all is sandboxed')
  const listing = sandboxObjectHeaders({ 'content-type': 'text/html', 'content-security-policy': "default-src 'none'" })
  t.equal(listing['content-security-policy'], "default-src 'none'")
})
