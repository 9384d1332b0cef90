/**
 * A token's expiry as text (`parseExpiry`): what `--expires` and the
 * management API's `expires_on` take. Dates are read as lifecycle and lock
 * dates are (rule-time.ts): a date alone is midnight UTC, a date and time
 * needs a zone, and a day the calendar lacks is refused, never moved on.
 */
import t from 'tap'
import { parseExpiry } from '../../src/bucket/index.js'

t.test('with now (--expires): a date, a date and time with a zone, or a duration, after now', async t => {
  const now = new Date('2026-06-01T12:00:00.000Z')
  const cases: Array<[string, string | null]> = [
    ['2026-12-31', '2026-12-31T00:00:00.000Z'],
    ['2026-12-31T00:00:00Z', '2026-12-31T00:00:00.000Z'],
    ['2026-12-31T05:30Z', '2026-12-31T05:30:00.000Z'],
    ['2026-12-31T00:00:00.123456Z', '2026-12-31T00:00:00.123Z'],
    ['2026-12-31T00:00:00-05:00', '2026-12-31T05:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
    [' 2026-12-31 ', '2026-12-31T00:00:00.000Z'],
    ['12h', '2026-06-02T00:00:00.000Z'],
    // A day the calendar lacks, or an hour past 23: refused, not moved into the next month or day.
    ['2027-02-30', null],
    ['2027-02-30T00:00:00Z', null],
    ['2027-02-29', null],
    ['2026-04-31', null],
    ['2026-12-31T24:00:00Z', null],
    ['2026-12-31T23:60:00Z', null],
    // A date and time without a zone would be read in the process's zone: refused.
    ['2026-12-31T00:00:00', null],
    ['2026-12-31 00:00:00Z', null],
    ['2026-12-31T00:00:00+0000', null],
    // Text that is no ISO date, which Date would read anyway.
    ['Thu, 31 Dec 2026 00:00:00 GMT', null],
    ['December 31, 2026', null],
    ['2099', null],
    ['+002026-12-31T00:00:00Z', null],
    // Not after now.
    ['2026-06-01T12:00:00Z', null],
    ['2020-02-30', null],
    ['0d', null],
    ['', null]
  ]
  for (const [text, want] of cases) t.equal(parseExpiry(text, now)?.toISOString() ?? null, want, JSON.stringify(text))
})

t.test('without now (expires_on): a date or a date and time with a zone, past or not; no duration', async t => {
  t.equal(parseExpiry('2020-01-01')?.toISOString(), '2020-01-01T00:00:00.000Z', 'in the past: read, for the caller to refuse')
  t.equal(parseExpiry('2099-01-01T00:00:00Z')?.toISOString(), '2099-01-01T00:00:00.000Z')
  // The calendar of the years 0 to 99 is their own (the year 0 is a leap year, 1900 was not).
  t.equal(parseExpiry('0000-02-29')?.toISOString(), '0000-02-29T00:00:00.000Z')
  t.equal(parseExpiry('0100-02-29'), null)
  for (const text of ['30d', '2020-02-30', '2099-02-30T00:00:00Z', '2099-01-01T00:00:00', 'Thu, 31 Dec 2026 00:00:00 GMT']) {
    t.equal(parseExpiry(text), null, JSON.stringify(text))
  }
})
