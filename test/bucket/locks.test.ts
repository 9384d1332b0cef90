import t from 'tap'
import { parseLockRules, retainedUntil, retainingRule, type LockRule } from '../../src/bucket/locks.js'

const DAY = 86_400_000
const uploaded = Date.parse('2026-01-01T00:00:00Z')

t.test('retainingRule: which rule keeps an object at an instant', async t => {
  const age: LockRule = { id: 'age', enabled: true, prefix: 'logs/', condition: { type: 'Age', maxAgeSeconds: 86_400 } }
  const date: LockRule = { id: 'date', enabled: true, prefix: 'tax/', condition: { type: 'Date', date: '2026-06-01T00:00:00.000Z' } }
  const forever: LockRule = { id: 'forever', enabled: true, prefix: 'legal/', condition: { type: 'Indefinite' } }
  const off: LockRule = { id: 'off', enabled: false, condition: { type: 'Indefinite' } }
  const all: LockRule = { id: 'all', enabled: true, condition: { type: 'Age', maxAgeSeconds: 60 } }
  const rules = [age, date, forever, off]
  const table: Array<[string, LockRule[], string, number, string | null]> = [
    ['age: inside the period', rules, 'logs/a', uploaded + DAY - 1, 'age'],
    ['age: at the instant it runs out', rules, 'logs/a', uploaded + DAY, null],
    ['age: after', rules, 'logs/a', uploaded + 2 * DAY, null],
    ['age: other prefix', rules, 'log/a', uploaded, null],
    ['age: the prefix itself is a key it covers', rules, 'logs/', uploaded, 'age'],
    ['date: before the date', rules, 'tax/2025', Date.parse('2026-05-31T23:59:59.999Z'), 'date'],
    ['date: at the date', rules, 'tax/2025', Date.parse('2026-06-01T00:00:00Z'), null],
    ['date: uploaded after the date', rules, 'tax/2027', Date.parse('2027-01-01T00:00:00Z'), null],
    ['indefinite: years later', rules, 'legal/x', uploaded + 10_000 * DAY, 'forever'],
    ['a disabled rule retains nothing', [off], 'anything', uploaded, null],
    ['no prefix covers every key', [all], '\u{1F600}/x', uploaded + 59_999, 'all'],
    ['the first rule that retains answers', [all, forever], 'legal/x', uploaded, 'all'],
    ['a later rule retains when an earlier ran out', [all, forever], 'legal/x', uploaded + DAY, 'forever'],
    ['no rules', [], 'k', uploaded, null],
    ['prefixes compare exactly (case)', rules, 'LOGS/a', uploaded, null]
  ]
  for (const [name, list, id, at, expected] of table) t.equal(retainingRule(list, id, uploaded, at)?.id ?? null, expected, name)
  t.equal(retainedUntil({ type: 'Indefinite' }, uploaded), Number.POSITIVE_INFINITY)
})

t.test('parseLockRules: normalised rules, or the first mistake', async t => {
  t.same(parseLockRules([]), [])
  t.same(parseLockRules([
    { id: 'a', enabled: true, prefix: '', condition: { type: 'Age', maxAgeSeconds: 86400 } },
    { id: 'b', enabled: false, prefix: 'Cafe\u0301/', condition: { type: 'Date', date: '2026-03-01' } },
    { id: 'c', enabled: true, condition: { type: 'Indefinite', extra: 1 } }
  ]), [
    { id: 'a', enabled: true, condition: { type: 'Age', maxAgeSeconds: 86400 } },
    { id: 'b', enabled: false, prefix: 'Caf\u00e9/', condition: { type: 'Date', date: '2026-03-01T00:00:00.000Z' } },
    { id: 'c', enabled: true, condition: { type: 'Indefinite' } }
  ], 'an empty prefix is none, dates are ISO 8601 UTC, prefixes NFC, unknown fields dropped')
  const rule = { id: 'r', enabled: true, condition: { type: 'Indefinite' } }
  const bad: Array<[unknown, RegExp]> = [
    [null, /rules must be an array/],
    [{ rules: [] }, /rules must be an array/],
    [[null], /rules\[0\] must be an object/],
    [[{ ...rule, id: '' }], /rules\[0\]\.id must be a non-empty string/],
    [[{ ...rule, id: 3 }], /rules\[0\]\.id/],
    [[{ ...rule, id: 'a\u0001' }], /rules\[0\]\.id must be at most 255 characters of well-formed Unicode, none of them a control character/],
    [[{ ...rule, id: 'x'.repeat(256) }], /rules\[0\]\.id must be at most 255 characters/],
    [[{ ...rule, prefix: 'a\u0000' }], /prefix must be a string of well-formed Unicode without control characters/],
    [[rule, rule], /rules\[1\]\.id "r" is used by another rule/],
    [[{ ...rule, enabled: 'yes' }], /enabled must be true or false/],
    [[{ ...rule, prefix: 7 }], /prefix must be a string/],
    [[{ ...rule, prefix: '\uD800' }], /prefix must be a string/],
    [[{ ...rule, condition: undefined }], /condition must be an object/],
    [[{ ...rule, condition: { type: 'Forever' } }], /type must be Age, Date or Indefinite/],
    [[{ ...rule, condition: { type: 'Age' } }], /maxAgeSeconds must be a whole number/],
    [[{ ...rule, condition: { type: 'Age', maxAgeSeconds: 0 } }], /maxAgeSeconds/],
    [[{ ...rule, condition: { type: 'Age', maxAgeSeconds: 1.5 } }], /maxAgeSeconds/],
    [[{ ...rule, condition: { type: 'Age', maxAgeSeconds: '86400' } }], /maxAgeSeconds/],
    [[{ ...rule, condition: { type: 'Age', maxAgeSeconds: 1e12 } }], /maxAgeSeconds/],
    [[{ ...rule, condition: { type: 'Date', date: 'tomorrow' } }], /date must be a date/],
    [[{ ...rule, condition: { type: 'Date', date: '2026-02-30T00:00:00Z' } }], /date must be a date/],
    [[{ ...rule, condition: { type: 'Date' } }], /date must be a date/],
    [Array.from({ length: 1001 }, (_, i) => ({ ...rule, id: `r${i}` })), /at most 1000 lock rules/]
  ]
  for (const [value, message] of bad) {
    t.throws(() => parseLockRules(value), message, JSON.stringify(value)?.slice(0, 80))
  }
})
