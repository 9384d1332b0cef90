import t from 'tap'
import { evaluateConditional, httpRequestConditions, parseConditional } from '../../src/bucket/conditional.js'

const object = { etag: 'abc', uploaded: new Date('2026-01-01T00:00:10.500Z') }

t.test('parseConditional rejects quoted etags and bad dates in a BucketConditional', async t => {
  t.throws(() => parseConditional({ etagMatches: '"abc"' }), TypeError)
  t.same(parseConditional({ etagDoesNotMatch: 'W/"abc"' }).etagDoesNotMatch, [{ etag: 'W/"abc"', weak: false }], 'W/ is compared literally')
  t.throws(() => parseConditional({ uploadedBefore: '2026-01-01T00:00:00Z' }), TypeError)
  t.same(parseConditional({ uploadedAfter: 1_700_000_000_000 }).uploadedAfter, new Date(1_700_000_000_000), 'a number is milliseconds since the epoch')
  t.ok(Number.isNaN(parseConditional({ uploadedBefore: NaN }).uploadedBefore?.getTime()), 'NaN is an invalid date (its condition fails)')
  t.throws(() => parseConditional('etag'), TypeError)
  t.same(parseConditional({ etagMatches: '*' }).etagMatches, '*')
  t.throws(() => parseConditional({ secondsGranularity: 'yes' }), TypeError, 'secondsGranularity is a boolean')
})

t.test('an If-Match / If-None-Match without a quoted etag is an Error', async t => {
  for (const [header, value] of [['if-match', 'abc'], ['if-none-match', 'abc, def'], ['if-match', ''], ['if-none-match', '"unclosed']]) {
    t.throws(() => parseConditional(new Headers({ [header]: value })), { name: 'Error', message: `Invalid ETag in ${header} header` }, `${header}: ${value}`)
  }
})

t.test('evaluateConditional', async t => {
  const h = (init: Record<string, string>): Headers => new Headers(init)
  const door = (init: Record<string, string>): Headers => httpRequestConditions(init)
  const table: Array<[string, unknown, typeof object | null, string]> = [
    ['no condition', {}, object, 'pass'],
    ['etagMatches equal', { etagMatches: 'abc' }, object, 'pass'],
    ['etagMatches other', { etagMatches: 'xyz' }, object, 'precondition-failed'],
    ['etagMatches *', { etagMatches: '*' }, object, 'pass'],
    ['etagDoesNotMatch equal', { etagDoesNotMatch: 'abc' }, object, 'not-modified'],
    ['etagDoesNotMatch *', { etagDoesNotMatch: '*' }, object, 'not-modified'],
    ['etagDoesNotMatch other', { etagDoesNotMatch: 'xyz' }, object, 'pass'],
    ['uploadedBefore later', { uploadedBefore: new Date('2026-01-01T00:00:11Z') }, object, 'pass'],
    ['uploadedBefore equal is strict', { uploadedBefore: object.uploaded }, object, 'precondition-failed'],
    ['uploadedAfter earlier', { uploadedAfter: new Date('2026-01-01T00:00:10Z') }, object, 'pass'],
    ['uploadedAfter equal is strict', { uploadedAfter: object.uploaded }, object, 'not-modified'],
    ['passing etagMatches makes uploadedBefore irrelevant', { etagMatches: 'abc', uploadedBefore: new Date(0) }, object, 'pass'],
    ['passing etagDoesNotMatch makes uploadedAfter irrelevant', { etagDoesNotMatch: 'x', uploadedAfter: new Date('2030-01-01') }, object, 'pass'],
    ['missing: etagMatches fails', { etagMatches: 'abc' }, null, 'precondition-failed'],
    ['missing: uploadedAfter fails', { uploadedAfter: new Date(0) }, null, 'not-modified'],
    ['missing: etagDoesNotMatch * passes (create only)', { etagDoesNotMatch: '*' }, null, 'pass'],
    ['missing: uploadedBefore passes', { uploadedBefore: new Date(0) }, null, 'pass'],
    ['If-Match list', h({ 'if-match': '"x", "abc"' }), object, 'pass'],
    ['If-Match weak never matches strongly', h({ 'if-match': 'W/"abc"' }), object, 'precondition-failed'],
    ['If-None-Match weak matches weakly', h({ 'if-none-match': 'W/"abc"' }), object, 'not-modified'],
    ['If-Unmodified-Since equal to Last-Modified fails (seconds)', h({ 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:10 GMT' }), object, 'precondition-failed'],
    ['If-Unmodified-Since one second later passes', h({ 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:11 GMT' }), object, 'pass'],
    ['If-Modified-Since equal to Last-Modified is not modified', h({ 'if-modified-since': 'Thu, 01 Jan 2026 00:00:10 GMT' }), object, 'not-modified'],
    ['If-Modified-Since earlier passes', h({ 'if-modified-since': 'Thu, 01 Jan 2026 00:00:09 GMT' }), object, 'pass'],
    ['a door\'s If-Unmodified-Since equal to Last-Modified passes (RFC 9110)', door({ 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:10 GMT' }), object, 'pass'],
    ['a door\'s If-Unmodified-Since one second earlier fails', door({ 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:09 GMT' }), object, 'precondition-failed'],
    ['a door\'s If-Modified-Since equal to Last-Modified is not modified', door({ 'if-modified-since': 'Thu, 01 Jan 2026 00:00:10 GMT' }), object, 'not-modified'],
    ['a door\'s If-Modified-Since one second earlier passes', door({ 'if-modified-since': 'Thu, 01 Jan 2026 00:00:09 GMT' }), object, 'pass'],
    ['a door\'s dates: a missing object passes If-Unmodified-Since', door({ 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:10 GMT' }), null, 'pass'],
    ['a door\'s dates: a missing object is not modified since any date', door({ 'if-modified-since': 'Thu, 01 Jan 2026 00:00:10 GMT' }), null, 'not-modified'],
    ['invalid date header is ignored', h({ 'if-modified-since': 'yesterday-ish' }), object, 'pass'],
    ['If-Range is ignored', h({ 'if-range': '"nope"' }), object, 'pass'],
    ['invalid uploadedBefore fails', { uploadedBefore: new Date('nope') }, object, 'precondition-failed'],
    ['invalid uploadedAfter fails', { uploadedAfter: new Date('nope') }, object, 'not-modified'],
    ['etagMatches W/ is literal', { etagMatches: 'W/"abc"' }, object, 'precondition-failed'],
    ['secondsGranularity: uploadedAfter in the same second is not modified', { uploadedAfter: new Date('2026-01-01T00:00:10.000Z'), secondsGranularity: true }, object, 'not-modified'],
    ['without it, the same uploadedAfter passes', { uploadedAfter: new Date('2026-01-01T00:00:10.000Z') }, object, 'pass'],
    ['secondsGranularity: uploadedBefore in the same second fails', { uploadedBefore: new Date('2026-01-01T00:00:10.900Z'), secondsGranularity: true }, object, 'precondition-failed'],
    ['without it, the same uploadedBefore passes', { uploadedBefore: new Date('2026-01-01T00:00:10.900Z') }, object, 'pass'],
    ['secondsGranularity: uploadedBefore the next second passes', { uploadedBefore: new Date('2026-01-01T00:00:11.000Z'), secondsGranularity: true }, object, 'pass'],
    ['secondsGranularity false is the default', { uploadedAfter: new Date('2026-01-01T00:00:10.000Z'), secondsGranularity: false }, object, 'pass'],
    ['If-Match: unquoted elements of a list are ignored', h({ 'if-match': 'xyz, "abc"' }), object, 'pass'],
    ['If-None-Match: * outside quotes wins', h({ 'if-none-match': '"x", *' }), object, 'not-modified'],
    ['If-Match: * inside quotes is an etag', h({ 'if-match': '"a*"' }), object, 'precondition-failed']
  ]
  for (const [name, onlyIf, current, expected] of table) {
    t.equal(evaluateConditional(parseConditional(onlyIf), current), expected, name)
  }
})
