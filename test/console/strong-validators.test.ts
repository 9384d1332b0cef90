/** Table tests of the strong comparisons the console makes for If-Match and If-Range (RFC 9110 13.1.1, 13.1.5). */
import t from 'tap'
import { ifMatchHolds, ifRangeHolds } from '../../src/console/strong-validators.js'

t.test('If-Match: *, or a listed tag that strongly matches', async t => {
  const cases: Array<[string, string | undefined, boolean]> = [
    ['*', 'W/"a"', true],
    [' * ', '"a"', true],
    ['"a"', '"a"', true],
    ['"b", "a"', '"a"', true],
    ['"b","a"', '"a"', true],
    ['"a"', 'W/"a"', false],
    ['W/"a"', 'W/"a"', false],
    ['W/"a"', '"a"', false],
    ['"b"', '"a"', false],
    ['"a,b"', '"a,b"', true],
    ['"a', '"a"', false],
    ['a', '"a"', false],
    ['"a" "b"', '"a"', false],
    ['', '"a"', false],
    ['"a"', undefined, false]
  ]
  for (const [ifMatch, etag, holds] of cases) t.equal(ifMatchHolds(ifMatch, etag), holds, `If-Match: ${ifMatch} against ${String(etag)}`)
})

t.test('If-Range: a strongly matching tag, or exactly a strong Last-Modified', async t => {
  const lastModified = 'Sun, 29 Nov 2026 17:20:25 GMT'
  const later = new Date('2026-11-29T18:00:00Z')
  const cases: Array<[string, string | undefined, string | undefined, Date, boolean]> = [
    ['"a"', '"a"', lastModified, later, true],
    ['"a"', 'W/"a"', lastModified, later, false],
    ['W/"a"', 'W/"a"', lastModified, later, false],
    ['"b"', '"a"', lastModified, later, false],
    [lastModified, 'W/"a"', lastModified, later, true],
    ['Sunday, 29-Nov-26 17:20:25 GMT', 'W/"a"', lastModified, later, true],
    ['Sun, 29 Nov 2026 17:20:26 GMT', 'W/"a"', lastModified, later, false],
    ['Sun, 29 Nov 2026 17:20:24 GMT', 'W/"a"', lastModified, later, false],
    [lastModified, 'W/"a"', lastModified, new Date('2026-11-29T17:20:25.500Z'), false],
    [lastModified, 'W/"a"', undefined, later, false],
    ['yesterday', 'W/"a"', lastModified, later, false]
  ]
  for (const [ifRange, etag, modified, now, holds] of cases) {
    t.equal(ifRangeHolds(ifRange, etag, modified, now), holds, `If-Range: ${ifRange} against ${String(etag)}, ${String(modified)} at ${now.toISOString()}`)
  }
})
