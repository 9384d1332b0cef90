import t from 'tap'
import { compareIds, keyArguments, keyId, lookupId, pastPrefix, stringArgument } from '../../src/bucket/keys.js'
import { parseChecksumOption, parseCustomMetadata, parseHttpMetadata, parseStorageClass } from '../../src/bucket/metadata.js'
import { customMetadataOfHeaders, decodeHeaderValue, httpMetadataOfHeaders } from '../../src/doors/request-metadata.js'

t.test('keyId', async t => {
  t.equal(keyId('put', 'a/b'), 'a/b')
  t.equal(keyId('put', 'x'.repeat(1024)), 'x'.repeat(1024), '1,024 bytes is the limit')
  t.equal(keyId('put', 'e\u0301'), '\u00e9', 'NFC')
  t.equal(keyId('put', '../..'), '../..', 'dot segments are plain keys')
  const invalid = ['', 'x'.repeat(1025), 'é'.repeat(513), '\uD800']
  for (const key of invalid) t.throws(() => keyId('put', key), { code: 10020, message: /^put: .*\(10020\)$/ }, JSON.stringify(key.slice(0, 8)))
  t.throws(() => keyId('put', 42), TypeError)
  t.throws(() => keyId('put', 'a\u0000'), { code: 10020 }, 'U+0000 cannot name an object')
  t.throws(() => keyId('copy', '\u0000'), { code: 10020, message: /^copy: / })
})

t.test('lookupId takes U+0000 and refuses what keyId refuses otherwise', async t => {
  t.equal(lookupId('get', 'a\u0000b'), 'a\u0000b')
  t.equal(lookupId('delete', 'e\u0301\u0000'), '\u00e9\u0000', 'NFC')
  for (const key of ['', 'x'.repeat(1025), '\uDC00']) t.throws(() => lookupId('head', key), { code: 10020, message: /^head: / }, JSON.stringify(key.slice(0, 8)))
  t.throws(() => lookupId('head', null), TypeError)
})

t.test('stringArgument and keyArguments convert as workerd converts a kj::String parameter (ToString)', async t => {
  const cases: Array<[unknown, string]> = [
    ['as is', 'as is'], [123, '123'], [-0, '0'], [1e21, '1e+21'], [NaN, 'NaN'], [10n, '10'], [null, 'null'], [undefined, 'undefined'],
    [false, 'false'], [[1, [2, 3]], '1,2,3'], [{}, '[object Object]'], [{ toString: () => 'own' }, 'own'], [new Date(0), new Date(0).toString()]
  ]
  for (const [value, expected] of cases) t.equal(stringArgument('put', value), expected, `${typeof value} ${expected}`)
  t.throws(() => stringArgument('put', Symbol('s')), { name: 'TypeError', message: /^put: Cannot convert a Symbol/ })
  t.same(keyArguments('delete', [1, 'b', null]), ['1', 'b', 'null'], 'an array: each element')
  t.same(keyArguments('delete', 7), ['7'], 'anything else: one key')
  t.same(keyArguments('delete', new Set(['a'])), ['[object Set]'], 'an iterable that is no array is one key, as in workerd')
  t.throws(() => keyArguments('delete', ['a', Symbol('s')]), TypeError)
})

t.test('compareIds orders by UTF-8 bytes', async t => {
  const sorted = ['\u{1F600}', 'a', '\uFFFD', 'B', 'a/', 'a/b', ''].sort(compareIds)
  t.same(sorted, ['', 'B', 'a', 'a/', 'a/b', '\uFFFD', '\u{1F600}'])
  t.ok(Buffer.compare(Buffer.from('a\u{10FFFF}zzz'), pastPrefix('a')) < 0, 'pastPrefix is above every key with the prefix')
})

t.test('custom metadata', async t => {
  t.same(parseCustomMetadata('put', { n: 1, b: true }), { n: '1', b: 'true' }, 'values are stringified')
  t.same(parseCustomMetadata('put', { k: 'v'.repeat(2047) }), { k: 'v'.repeat(2047) }, '2,048 bytes with the key')
  t.throws(() => parseCustomMetadata('put', { k: 'v'.repeat(2048) }), { code: 10012 })
  t.throws(() => parseCustomMetadata('put', { ké: 'v'.repeat(2046) }), { code: 10012 }, 'counted in bytes')
})

t.test('http metadata from an object and from Headers', async t => {
  const expiry = new Date('2030-01-01T00:00:00Z')
  t.same(parseHttpMetadata('put', { contentType: 'text/plain', cacheExpiry: expiry }), { contentType: 'text/plain', cacheExpiry: expiry.getTime() })
  t.same(parseHttpMetadata('put', new Headers({
    'content-type': 'image/png',
    'content-language': 'en',
    'content-disposition': 'inline',
    'content-encoding': 'gzip',
    'cache-control': 'no-cache',
    expires: expiry.toUTCString(),
    'x-other': 'ignored'
  })), {
    contentType: 'image/png', contentLanguage: 'en', contentDisposition: 'inline', contentEncoding: 'gzip', cacheControl: 'no-cache', cacheExpiry: expiry.getTime()
  })
})

t.test('storage class and checksums', async t => {
  t.equal(parseStorageClass('put', undefined), 'Standard')
  t.equal(parseStorageClass('put', 'InfrequentAccess'), 'InfrequentAccess')
  t.throws(() => parseStorageClass('put', 'Glacier'), TypeError)
  t.equal(parseChecksumOption('put', {}), null)
  t.same(parseChecksumOption('put', { sha1: 'A'.repeat(40) }), { algorithm: 'sha1', hex: 'a'.repeat(40) })
  t.same(parseChecksumOption('put', { md5: new Uint8Array(16).buffer }), { algorithm: 'md5', hex: '0'.repeat(32) })
  t.throws(() => parseChecksumOption('put', { md5: 'a'.repeat(32), sha1: 'a'.repeat(40) }), TypeError, 'one algorithm per put')
  t.throws(() => parseChecksumOption('put', { sha256: 'abcd' }), TypeError, 'wrong length')
  t.throws(() => parseChecksumOption('put', { sha256: 'z'.repeat(64) }), TypeError, 'not hex')
})

t.test('the binding reads a Headers\' Expires as an HTTP-date or an ISO 8601 date (wrangler passes one on)', async t => {
  const expiry = (value: string): number | undefined => parseHttpMetadata('put', new Headers({ expires: value })).cacheExpiry
  t.equal(expiry('2030-01-01T00:00:00Z'), Date.UTC(2030, 0, 1), 'an ISO date (wrangler r2 object put --expires)')
  t.equal(expiry('Wed, 21 Oct 2015 07:28:00 GMT'), Date.UTC(2015, 9, 21, 7, 28))
  t.equal(expiry('Sun Nov  6 08:49:37 1994'), Date.UTC(1994, 10, 6, 8, 49, 37), 'asctime is GMT, whatever the local zone')
  t.equal(expiry('soon'), 0, 'one Date cannot read: the epoch')
})

t.test('request headers → metadata, the mapping every door shares', async t => {
  const latin1 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1')
  const { metadata, invalidExpires } = httpMetadataOfHeaders({
    'content-type': 'text/plain',
    'content-language': latin1('français'),
    'content-disposition': 'attachment',
    'content-encoding': 'gzip',
    'cache-control': ['no-cache', 'private'],
    expires: 'Wed, 21 Oct 2015 07:28:00 GMT',
    'x-other': 'ignored'
  })
  t.same(metadata, {
    contentType: 'text/plain',
    contentLanguage: 'français',
    contentDisposition: 'attachment',
    contentEncoding: 'gzip',
    cacheControl: 'no-cache, private',
    cacheExpiry: new Date('2015-10-21T07:28:00Z')
  })
  t.equal(invalidExpires, undefined)
  t.same(httpMetadataOfHeaders({ expires: 'soon' }), { metadata: {}, invalidExpires: 'soon' }, 'an Expires that is not a date is reported, not stored')
  t.same(httpMetadataOfHeaders({}), { metadata: {} })
  t.same(customMetadataOfHeaders({ 'x-meta-city': latin1('Zürich'), 'x-meta-': 'no name', 'x-amz-meta-a': 'b', other: 'c' }, 'x-meta-'), { city: 'Zürich' })
  t.same(customMetadataOfHeaders({ 'x-amz-meta-a': 'b', 'x-meta-c': 'd' }, 'x-amz-meta-'), { a: 'b' })
  t.equal(decodeHeaderValue('caf\u00e9'), 'caf\u00e9', 'Latin-1 that is not UTF-8 stays as sent')
})
