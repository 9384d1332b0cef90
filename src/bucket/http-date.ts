/**
 * HTTP-dates as RFC 9110 (section 5.6.7) defines them, and nothing else: the
 * IMF-fixdate every sender should use (`Sun, 06 Nov 1994 08:49:37 GMT`)
 * and the two obsolete forms a recipient must still read, RFC 850
 * (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37
 * 1994`). `Date.parse` would also take `2099`, `0` or an ISO date, which a
 * conditional request must ignore and a stored Expires must not become.
 */
const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const time = '(\\d{2}):(\\d{2}):(\\d{2})'
const imfFixdate = new RegExp(`^(?:mon|tue|wed|thu|fri|sat|sun), (\\d{2}) ([a-z]{3}) (\\d{4}) ${time} gmt$`, 'i')
const rfc850 = new RegExp(`^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday), (\\d{2})-([a-z]{3})-(\\d{2}) ${time} gmt$`, 'i')
const asctime = new RegExp(`^(?:mon|tue|wed|thu|fri|sat|sun) ([a-z]{3}) ( \\d|\\d{2}) ${time} (\\d{4})$`, 'i')

function utc (year: number, month: string, day: string, hours: string, minutes: string, seconds: string): Date | undefined {
  const m = months.indexOf(month.toLowerCase())
  if (m === -1) return undefined
  const date = new Date(Date.UTC(2000, m, Number(day), Number(hours), Number(minutes), Number(seconds)))
  // Set apart: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const ms = date.setUTCFullYear(year, m, Number(day))
  // Out-of-range fields (31 Feb, 25:00) would roll over: refuse them.
  if (Number.isNaN(ms) || date.getUTCMonth() !== m || date.getUTCDate() !== Number(day) || date.getUTCHours() !== Number(hours) ||
      date.getUTCMinutes() !== Number(minutes) || date.getUTCSeconds() !== Number(seconds)) return undefined
  return date
}

/** An HTTP-date as a Date, or undefined when `value` is not one. */
export function parseHttpDate (value: string): Date | undefined {
  const text = value.trim()
  let m = imfFixdate.exec(text)
  if (m !== null) return utc(Number(m[3]), m[2], m[1], m[4], m[5], m[6])
  m = rfc850.exec(text)
  if (m !== null) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110).
    const now = new Date().getUTCFullYear()
    let year = Math.floor(now / 100) * 100 + Number(m[3])
    if (year > now + 50) year -= 100
    return utc(year, m[2], m[1], m[4], m[5], m[6])
  }
  m = asctime.exec(text)
  if (m !== null) return utc(Number(m[6]), m[1], m[2].trim(), m[3], m[4], m[5])
  return undefined
}
