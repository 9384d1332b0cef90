/**
 * The times bucket rules are written in (lifecycle rules: lifecycle.ts,
 * locks: locks.ts): an age in seconds, bounded so that an object's upload
 * instant plus the age stays an exact instant a date can show, and a
 * calendar date read strictly (a bucket's creation date too:
 * settings-document.ts).
 */

/** Longest age a rule may give: 100 years in seconds (`uploaded + age` stays an exact number of ms, well inside a Date's range). */
export const MAX_RULE_AGE_SECONDS = 100 * 365 * 86400

/** Whether `value` is an age a rule may give: a whole number of seconds from 1 to MAX_RULE_AGE_SECONDS. */
export function isRuleAge (value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_RULE_AGE_SECONDS
}

/**
 * `YYYY-MM-DD` (midnight UTC) or an ISO 8601 date and time with a zone →
 * ms since the epoch; NaN otherwise. A day the calendar lacks (February
 * 30) or an hour past 23, which `Date.parse` moves into the next month or
 * day, is NaN.
 */
export function parseRuleDate (text: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})(T(?:[01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/.exec(text)
  if (match === null) return Number.NaN
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const calendar = new Date(0)
  calendar.setUTCFullYear(year, month - 1, day) // not Date.UTC, which reads the years 0 to 99 as 1900 to 1999
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return Number.NaN
  return Date.parse(match[4] === undefined ? `${match[1]}-${match[2]}-${match[3]}T00:00:00Z` : text)
}
