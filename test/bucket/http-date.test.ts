/**
 * HTTP-dates read strictly (RFC 9110 5.6.7): the three forms, nothing else,
 * and what that means for conditional requests and a stored Expires.
 */
import t from 'tap'
import { parseHttpDate } from '../../src/bucket/http-date.js'
import { openBucket } from '../../src/index.js'
import { httpMetadataOfHeaders } from '../../src/doors/request-metadata.js'
import { testdir } from '../testdir.js'

t.test('the three forms of RFC 9110, and nothing else', async t => {
  const when = Date.UTC(1994, 10, 6, 8, 49, 37)
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')?.getTime(), when, 'IMF-fixdate')
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT')?.getTime(), when, 'RFC 850')
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994')?.getTime(), when, 'asctime')
  t.equal(parseHttpDate('  sun, 06 nov 1994 08:49:37 gmt ')?.getTime(), when, 'case and surrounding space aside')
  // Date.UTC would read these years as 1999 and 1900.
  t.equal(parseHttpDate('Thu, 01 Jan 0099 00:00:00 GMT')?.toISOString(), '0099-01-01T00:00:00.000Z', 'a year below 100 stays itself')
  t.equal(parseHttpDate('Sat, 01 Jan 0000 00:00:00 GMT')?.toISOString(), '0000-01-01T00:00:00.000Z')
  t.equal(parseHttpDate('Sat Jan  1 00:00:00 0050')?.getUTCFullYear(), 50)
  t.equal(parseHttpDate('Tue, 29 Feb 2000 00:00:00 GMT')?.toISOString(), '2000-02-29T00:00:00.000Z', 'a leap day')
  t.equal(parseHttpDate('Thu, 29 Feb 2001 00:00:00 GMT'), undefined, 'no leap day in 2001')
  t.equal(parseHttpDate('Mon, 29 Feb 0099 00:00:00 GMT'), undefined, 'nor in 99')
  for (const bad of ['2099', '0', '1', '2026-01-01', '2026-01-01T00:00:00Z', 'Sun, 31 Feb 2026 00:00:00 GMT', 'Sun, 06 Nov 1994 25:00:00 GMT',
    'Sun, 06 Nov 1994 08:49:37 PST', 'Sun, 06 Foo 1994 08:49:37 GMT', 'yesterday', '']) {
    t.equal(parseHttpDate(bad), undefined, JSON.stringify(bad))
  }
})

t.test('a conditional date that is not an HTTP-date is ignored; an Expires that is not one is refused', async t => {
  const bucket = await openBucket(testdir(t), { fsync: false })
  await bucket.put('k', 'v')
  for (const [name, value] of [['if-modified-since', '2099'], ['if-modified-since', '2999-01-01T00:00:00Z'], ['if-unmodified-since', '1970-01-01'], ['if-unmodified-since', '2026']]) {
    const object = await bucket.get('k', { onlyIf: new Headers({ [name]: value }) })
    t.ok(object !== null && 'body' in object, `${name}: ${value} is ignored: the body is served`)
  }
  const notModified = await bucket.get('k', { onlyIf: new Headers({ 'if-modified-since': 'Fri, 01 Jan 2100 00:00:00 GMT' }) })
  t.ok(notModified !== null && !('body' in notModified), 'an HTTP-date still counts')
  t.equal(httpMetadataOfHeaders({ expires: '0' }).invalidExpires, '0')
  t.equal(httpMetadataOfHeaders({ expires: '1' }).invalidExpires, '1')
  t.same(httpMetadataOfHeaders({ expires: 'Thu, 01 Jan 2099 00:00:00 GMT' }).metadata.cacheExpiry, new Date('2099-01-01T00:00:00Z'))
})
