/** Table tests of the HTTP door's pure parts: targets, routes, CORS, auth, headers, error table. */
import t from 'tap'
import { ADMIN, ArgumentRangeError, ArgumentTypeError, BucketError } from '../../src/bucket/index.js'
import { decodeHeaderValue, responseOverridesFrom } from '../../src/doors/request-metadata.js'
import { principalNow, principalOf, isLoopbackHost } from '../../src/http/auth.js'
import { corsHeaders, effectiveCorsRules, preflightHeaders } from '../../src/http/cors.js'
import { DoorError, errorReply } from '../../src/http/errors.js'
import {
  customMetadataFrom, encodeHeaderValue, httpMetadataFrom, putOptionsFrom
} from '../../src/http/object-headers.js'
import { matchPublicRoute, orderRoutes, parseRouteList, parseRouteSpec, pathStyleTarget, rawPath } from '../../src/http/target.js'

t.test('path-style targets', async t => {
  const cases: Array<[string, unknown]> = [
    ['/', { kind: 'root' }],
    ['/photos', { kind: 'bucket', bucket: 'photos' }],
    ['/photos/', { kind: 'bucket', bucket: 'photos' }],
    ['/photos/a.jpg', { kind: 'object', bucket: 'photos', key: 'a.jpg' }],
    ['/photos/a/b/../c', { kind: 'object', bucket: 'photos', key: 'a/b/../c' }],
    ['/photos/a//b/', { kind: 'object', bucket: 'photos', key: 'a//b/' }],
    ['/photos/a%2Fb', { kind: 'object', bucket: 'photos', key: 'a/b' }],
    ['/photos/100%25', { kind: 'object', bucket: 'photos', key: '100%' }],
    ['/photos/%2541', { kind: 'object', bucket: 'photos', key: '%41' }],
    ['/photos/caf%C3%A9%20au%20lait', { kind: 'object', bucket: 'photos', key: 'café au lait' }],
    ['/photos/nul%00byte', { kind: 'object', bucket: 'photos', key: 'nul\u0000byte' }]
  ]
  for (const [path, expected] of cases) t.same(pathStyleTarget(path), expected, path)
  t.throws(() => pathStyleTarget('/photos/%zz'), { code: 40001, status: 400 })
  t.throws(() => pathStyleTarget('/photos/%C3'), { code: 40001 })
  t.equal(rawPath('/a/b?x=1&y'), '/a/b')
  t.equal(rawPath('/a/b'), '/a/b')
})

t.test('public route specs', async t => {
  t.same(parseRouteSpec('cdn.localhost=site'), { host: 'cdn.localhost', pathPrefix: '/', bucket: 'site' })
  t.same(parseRouteSpec('/assets/=site'), { host: null, pathPrefix: '/assets/', bucket: 'site' })
  t.same(parseRouteSpec('/assets=site'), { host: null, pathPrefix: '/assets/', bucket: 'site' }, 'a prefix always ends with /')
  t.same(parseRouteSpec('CDN.Localhost:8787/img/=site'), { host: 'cdn.localhost', pathPrefix: '/img/', bucket: 'site' })
  t.same(parseRouteList('a.test=site, /x/=site  b.test=other').map(r => r.bucket), ['site', 'site', 'other'])
  for (const bad of ['site', '=site', 'cdn.localhost=', 'cdn.localhost=Bad_Name', 'bad host=site']) {
    t.throws(() => parseRouteSpec(bad), TypeError, bad)
  }
})

t.test('public route matching: host-bound first, longest prefix first', async t => {
  const routes = orderRoutes(parseRouteList('/assets/=any-host, cdn.localhost=cdn, cdn.localhost/img/=images, /assets/deep/=deep'))
  const cases: Array<[string, string, unknown]> = [
    ['cdn.localhost', '/a/b.css', { bucket: 'cdn', key: 'a/b.css', ownHost: true }],
    ['cdn.localhost', '/img/x%20y.png', { bucket: 'images', key: 'x y.png', ownHost: true }],
    ['cdn.localhost', '/assets/x', { bucket: 'cdn', key: 'assets/x', ownHost: true }],
    ['127.0.0.1', '/assets/app.js', { bucket: 'any-host', key: 'app.js', ownHost: false }],
    ['127.0.0.1', '/assets/deep/app.js', { bucket: 'deep', key: 'app.js', ownHost: false }],
    ['127.0.0.1', '/assets', { bucket: 'any-host', key: '', ownHost: false, toRoot: true }],
    ['127.0.0.1', '/assets/deep', { bucket: 'deep', key: '', ownHost: false, toRoot: true }],
    ['cdn.localhost', '/img', { bucket: 'images', key: '', ownHost: true, toRoot: true }],
    ['127.0.0.1', '/photos/a', null]
  ]
  for (const [host, path, expected] of cases) t.same(matchPublicRoute(routes, host, path), expected, `${host}${path}`)
})

t.test('CORS rules', async t => {
  t.equal(effectiveCorsRules(null, false), null, 'private bucket without rules: no CORS')
  const defaults = effectiveCorsRules(null, true)
  t.same(corsHeaders(defaults, 'https://app.test', 'GET'), {
    vary: 'Origin',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'ETag, Content-Range, Content-Length, Content-Type, Last-Modified, Accept-Ranges'
  })
  t.same(corsHeaders(defaults, undefined, 'GET'), { vary: 'Origin' }, 'no Origin, no CORS headers; the answer varies by Origin')
  t.same(corsHeaders(defaults, 'https://app.test', 'PUT'), { vary: 'Origin' }, 'the default allows reads only')
  t.same(corsHeaders(null, 'https://app.test', 'GET'), {}, 'no rules: nothing, not even Vary')
  t.match(preflightHeaders(defaults, 'https://app.test', 'GET', 'Range, If-None-Match'), {
    'access-control-allow-origin': '*', 'access-control-allow-headers': 'range, if-none-match', 'access-control-max-age': '86400'
  })

  const rules = [{ allowedOrigins: ['https://*.example.test'], allowedMethods: ['GET', 'PUT'], allowedHeaders: ['content-type'], exposeHeaders: ['ETag'], maxAgeSeconds: 60 }]
  t.same(corsHeaders(rules, 'https://app.example.test', 'PUT'), {
    'access-control-allow-origin': 'https://app.example.test', vary: 'Origin', 'access-control-expose-headers': 'ETag'
  })
  // Rules that echo an origin vary every answer by it, one to an origin they refuse or to none too.
  t.same(corsHeaders(rules, 'https://evil.test', 'GET'), { vary: 'Origin' })
  t.same(corsHeaders(rules, undefined, 'GET'), { vary: 'Origin' })
  t.same(corsHeaders([], 'https://app.example.test', 'GET'), {}, 'an empty list answers no origin and cannot vary')
  t.same(preflightHeaders(rules, 'https://app.example.test', 'PUT', 'Content-Type'), {
    'access-control-allow-origin': 'https://app.example.test',
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
    'access-control-allow-methods': 'GET, PUT',
    'access-control-allow-headers': 'content-type',
    'access-control-max-age': '60'
  })
  t.equal(preflightHeaders(rules, 'https://app.example.test', 'DELETE', undefined), null, 'method not allowed')
  t.equal(preflightHeaders(rules, 'https://app.example.test', 'PUT', 'x-meta-a'), null, 'header not allowed')
  t.equal(preflightHeaders(rules, 'https://example.test', 'GET', undefined), null, 'the wildcard needs a subdomain')
})

t.test('credentials', async t => {
  const policy: { token: string | null, loopbackOnly: boolean } = { token: 'right', loopbackOnly: false }
  t.same(await principalOf(policy, 'Bearer right'), { kind: 'admin', id: null, permission: 'admin-read-write', buckets: null })
  await t.resolves(principalOf(policy, 'bearer right'), 'scheme is case-insensitive')
  await t.rejects(principalOf(policy, undefined), { status: 401, code: 40100, headers: { 'www-authenticate': 'Bearer' } })
  await t.rejects(principalOf(policy, 'Basic dXNlcjpwYXNz'), { status: 401, code: 40100 })
  await t.rejects(principalOf(policy, 'Bearer wrong'), { status: 403, code: 40300 })
  await t.rejects(principalOf(policy, 'Bearer righ'), { status: 403, code: 40300 }, 'a prefix of the token is wrong')
  await t.resolves(principalOf({ token: null, loopbackOnly: true }, undefined), 'no token on loopback: open')
  await t.rejects(principalOf({ token: null, loopbackOnly: false }, 'Bearer anything'), { status: 403, code: 40301 })
  // The configured token's digest is kept per policy; a token replaced in the policy is the one that holds.
  policy.token = 'rotated'
  await t.rejects(principalOf(policy, 'Bearer right'), { status: 403, code: 40300 }, 'the replaced token no longer holds')
  await t.resolves(principalOf(policy, 'Bearer rotated'), 'the new one does')
  // principalNow answers the same at once, or nothing when the scoped tokens must be asked.
  t.same(principalNow(policy, 'Bearer rotated'), ADMIN)
  t.throws(() => principalNow(policy, undefined), { status: 401, code: 40100 })
  t.throws(() => principalNow(policy, 'Bearer wrong'), { status: 403, code: 40300 })
  const scoped = { token: 'rotated', loopbackOnly: false, tokens: { byValue: async () => null } }
  t.same(principalNow(scoped, 'Bearer rotated'), ADMIN, 'the configured token needs no look in the scoped tokens')
  t.equal(principalNow(scoped, 'Bearer other'), undefined, 'another bearer may be a scoped token: not at once')
  await t.rejects(principalOf(scoped, 'Bearer other'), { status: 403, code: 40300 }, 'which principalOf looks for')
  for (const [host, loopback] of [['127.0.0.1', true], ['127.1.2.3', true], ['localhost', true], ['::1', true], ['0.0.0.0', false], ['::', false], ['192.168.1.2', false], ['[::1]', true], ['::ffff:127.0.0.1', true], ['::ffff:7f00:2', true], ['0:0:0:0:0:0:0:1', true], ['::ffff:10.0.0.1', false], ['127.0.0.1.nip.io', false], ['127.0.0.256', false], ['sub.localhost', true]] as const) {
    t.equal(isLoopbackHost(host), loopback, host)
  }
})

t.test('request headers → put options', async t => {
  const options = putOptionsFrom({
    'content-type': 'image/png',
    'content-language': 'de',
    'content-disposition': 'attachment; filename="a.png"',
    'content-encoding': 'gzip',
    'cache-control': 'max-age=60',
    expires: 'Wed, 21 Oct 2026 07:28:00 GMT',
    'x-meta-author': 'Ada',
    'x-meta-city': Buffer.from('Zürich', 'utf8').toString('latin1'),
    'content-md5': 'XUFAKrxLKna5cZ2REBfFkg==',
    'x-checksum-sha256': 'ABCDEF',
    'x-storage-class': 'InfrequentAccess',
    'if-match': '"abc"',
    'if-unmodified-since': 'Wed, 21 Oct 2026 07:28:00 GMT',
    range: 'bytes=0-1'
  }, 'Standard')
  t.same(options.httpMetadata, {
    contentType: 'image/png',
    contentLanguage: 'de',
    contentDisposition: 'attachment; filename="a.png"',
    contentEncoding: 'gzip',
    cacheControl: 'max-age=60',
    cacheExpiry: new Date('2026-10-21T07:28:00Z')
  })
  t.same(options.customMetadata, { author: 'Ada', city: 'Zürich' })
  t.equal(Buffer.from(options.md5 as ArrayBuffer).toString('hex'), '5d41402abc4b2a76b9719d911017c592')
  t.equal(options.sha256, 'abcdef')
  t.equal(options.storageClass, 'InfrequentAccess')
  const onlyIf = options.onlyIf as Headers
  t.equal(onlyIf.get('if-match'), '"abc"')
  t.equal(onlyIf.get('if-unmodified-since'), 'Wed, 21 Oct 2026 07:28:00 GMT')
  t.equal(onlyIf.get('range'), null, 'Range is not a condition')

  t.equal(putOptionsFrom({}, 'InfrequentAccess').storageClass, 'InfrequentAccess', 'the bucket default applies')
  t.equal(putOptionsFrom({}, 'Standard').onlyIf, undefined)
  t.throws(() => putOptionsFrom({ 'x-storage-class': 'Glacier' }, 'Standard'), { code: 40003 })
  t.throws(() => putOptionsFrom({ 'content-md5': 'not base64!' }, 'Standard'), { code: 40003 })
  t.throws(() => putOptionsFrom({ 'content-md5': 'AAAA' }, 'Standard'), { code: 40003 }, 'too short for an MD5')
  t.throws(() => httpMetadataFrom({ expires: 'tomorrow' }), { code: 40003 })
  t.same(customMetadataFrom({ 'x-meta-': 'nameless', 'x-metadata': 'no' }), {})
  t.same(responseOverridesFrom({ 'response-content-type': 'text/plain', 'response-expires': 'x', other: 'y', 'response-cache-control': ['a', 'b'] }), {
    'content-type': 'text/plain', expires: 'x'
  })
})

t.test('header values travel as UTF-8', async t => {
  t.equal(decodeHeaderValue('plain'), 'plain')
  t.equal(decodeHeaderValue(Buffer.from('日本', 'utf8').toString('latin1')), '日本')
  t.equal(decodeHeaderValue('caf\u00e9'), 'caf\u00e9', 'Latin-1 that is not UTF-8 stays as sent')
  t.equal(encodeHeaderValue('日本'), Buffer.from('日本', 'utf8').toString('latin1'))
  t.equal(encodeHeaderValue('line\nbreak'), null)
  t.equal(encodeHeaderValue('tab\there'), 'tab\there')
})

t.test('the error table', async t => {
  t.match(errorReply(new BucketError('NoSuchUpload', 'uploadPart')), { status: 404, code: 10024 })
  t.match(errorReply(new BucketError('InvalidObjectName', 'put')), { status: 400, code: 10020, message: 'put: The specified object name is not valid. (10020)' })
  t.match(errorReply(new DoorError('MethodNotAllowed', undefined, { allow: 'GET' })), { status: 405, code: 40500, headers: { allow: 'GET' } })
  t.match(errorReply(new ArgumentTypeError('two hashes')), { status: 400, code: 40000, message: 'two hashes' })
  t.match(errorReply(new ArgumentRangeError('part number')), { status: 400, code: 40000 })
  t.match(errorReply(new TypeError('x is not a function')), { status: 500, code: 10001 }, 'a TypeError the engine did not mark is a bug')
  t.match(errorReply(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' })), { status: 415, code: 41500 })
  t.match(errorReply(Object.assign(new Error('x'), { code: 'FST_REQ_FILE_TOO_LARGE' })), { status: 413, code: 41300 })
  t.match(errorReply(new Error('disk on fire')), { status: 500, code: 10001, message: 'We encountered an internal error. Please try again.' }, 'internals are not leaked')
})
