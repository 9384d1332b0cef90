/**
 * The lifecycle evaluator as tables: which rule acts on a key at an
 * instant, an object's expiry and its S3 header, the prefixes a sweep walks.
 */
import t from 'tap'
import { createRegistry, MAX_LIFECYCLE_CONFIGURATION_BYTES } from '../../src/bucket/index.js'
import { MemoryRegistryStorage } from '../../src/stores/memory/registry-storage.js'
import {
  actionAt, expirationHeader, lifecycleConfigurationBytes, lifecycleRules, MAX_LIFECYCLE_RULES, objectExpirationHeader, objectExpiry, objectSweepPrefixes, parseLifecycleRules,
  uploadAbortDue, uploadSweepPrefixes
} from '../../src/bucket/lifecycle.js'

const DAY = 86_400
const uploaded = Date.UTC(2026, 0, 10, 15, 30)
const at = (days: number): number => uploaded + days * DAY * 1000

const age = (days: number): Record<string, unknown> => ({ condition: { type: 'Age', maxAge: days * DAY } })
const ia = (condition: Record<string, unknown>): Array<Record<string, unknown>> => [{ storageClass: 'InfrequentAccess', condition }]

const document = {
  rules: [
    { id: 'logs-expire-30d', enabled: true, conditions: { prefix: 'logs/' }, deleteObjectsTransition: age(30) },
    { id: 'logs-ia-7d', enabled: true, conditions: { prefix: 'logs/' }, storageClassTransitions: ia({ type: 'Age', maxAge: 7 * DAY }) },
    { id: 'tmp-expire-1d', enabled: true, conditions: { prefix: 'tmp/' }, deleteObjectsTransition: age(1), storageClassTransitions: ia({ type: 'Age', maxAge: DAY }) },
    { id: 'off', enabled: false, conditions: { prefix: '' }, deleteObjectsTransition: age(1) },
    { id: 'archive-date', enabled: true, conditions: {}, storageClassTransitions: ia({ type: 'Date', date: '2026-06-01T00:00:00.000Z' }) },
    { id: 'old-expire-date', enabled: true, conditions: { prefix: 'old/' }, deleteObjectsTransition: { condition: { type: 'Date', date: '2026-03-01T00:00:00.000Z' } } },
    { id: 'uploads-1d', enabled: true, conditions: { prefix: 'big/' }, abortMultipartUploadsTransition: age(1) }
  ]
}
const rules = lifecycleRules(document)

t.test('the action at an instant', async t => {
  const cases: Array<[string, string, number, 'Standard' | 'InfrequentAccess', ReturnType<typeof actionAt>]> = [
    ['before any condition', 'logs/a', at(1), 'Standard', null],
    ['a transition that is due', 'logs/a', at(7), 'Standard', { action: 'transition', ruleId: 'logs-ia-7d', storageClass: 'InfrequentAccess' }],
    ['never back to Standard, nor again', 'logs/a', at(8), 'InfrequentAccess', null],
    ['an expiry that is due', 'logs/a', at(30), 'Standard', { action: 'expire', ruleId: 'logs-expire-30d' }],
    ['an expiry also of an object already transitioned', 'logs/a', at(31), 'InfrequentAccess', { action: 'expire', ruleId: 'logs-expire-30d' }],
    ['expiry wins over a transition due at the same instant', 'tmp/x', at(1), 'Standard', { action: 'expire', ruleId: 'tmp-expire-1d' }],
    ['a prefix that does not match does nothing', 'logsx/a', at(40), 'Standard', null],
    ['a disabled rule does nothing', 'other', at(100), 'Standard', null],
    ['a Date rule for the whole bucket (conditions {}), before the date', 'other', Date.UTC(2026, 4, 31), 'Standard', null],
    ['a Date rule from its date on', 'other', Date.UTC(2026, 5, 1), 'Standard', { action: 'transition', ruleId: 'archive-date', storageClass: 'InfrequentAccess' }],
    ['a Date expiry, whatever the age', 'old/x', Date.UTC(2026, 2, 1), 'Standard', { action: 'expire', ruleId: 'old-expire-date' }],
    ['one millisecond before a Date expiry', 'old/x', Date.UTC(2026, 2, 1) - 1, 'Standard', null],
    ['an age is counted from uploaded, to the millisecond', 'logs/a', at(7) - 1, 'Standard', null]
  ]
  for (const [name, id, now, storageClass, expected] of cases) t.same(actionAt(rules, id, uploaded, storageClass, now), expected, name)
})

t.test('an object\'s expiry is the earliest of the matching enabled rules', async t => {
  const cases: Array<[string, unknown, string, ReturnType<typeof objectExpiry>]> = [
    ['Age rule', document, 'logs/a', { at: at(30), ruleId: 'logs-expire-30d', type: 'Age' }],
    ['no matching expiry rule', document, 'other', null],
    ['Date rule', document, 'old/a', { at: Date.UTC(2026, 2, 1), ruleId: 'old-expire-date', type: 'Date' }],
    ['earliest of two', { rules: [{ id: 'late', enabled: true, conditions: {}, deleteObjectsTransition: age(9) }, { id: 'early', enabled: true, conditions: { prefix: 'a' }, deleteObjectsTransition: age(2) }] },
      'ab', { at: at(2), ruleId: 'early', type: 'Age' }],
    ['disabled rules do not count', { rules: [{ id: 'off', enabled: false, conditions: {}, deleteObjectsTransition: age(1) }] }, 'a', null],
    ['an "enabled" that is no boolean (a document edited by hand) enables nothing', { rules: [{ id: 'text', enabled: 'false', conditions: {}, deleteObjectsTransition: age(1) }, { id: 'none', conditions: {}, deleteObjectsTransition: age(1) }] }, 'a', null],
    ['a stored document without rules', null, 'a', null],
    ['an unreadable condition acts on nothing', { rules: [{ id: 'x', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 'soon' } } }] }, 'a', null],
    ['prefixes compare in NFC form', { rules: [{ id: 'nfc', enabled: true, conditions: { prefix: 'cafe\u0301/' }, deleteObjectsTransition: age(1) }] },
      'caf\u00e9/x', { at: at(1), ruleId: 'nfc', type: 'Age' }]
  ]
  for (const [name, doc, id, expected] of cases) t.same(objectExpiry(lifecycleRules(doc), id, uploaded), expected, name)
})

t.test('x-amz-expiration: an Age date rounded up to the next midnight UTC, a Date as it is', async t => {
  const cases: Array<[string, Parameters<typeof expirationHeader>[0], string]> = [
    ['mid-day rounds up', { at: at(30), ruleId: 'r', type: 'Age' }, 'expiry-date="Tue, 10 Feb 2026 00:00:00 GMT", rule-id="r"'],
    ['midnight stays', { at: Date.UTC(2026, 1, 9), ruleId: 'r', type: 'Age' }, 'expiry-date="Mon, 09 Feb 2026 00:00:00 GMT", rule-id="r"'],
    ['a Date rule', { at: Date.UTC(2026, 2, 1), ruleId: 'd', type: 'Date' }, 'expiry-date="Sun, 01 Mar 2026 00:00:00 GMT", rule-id="d"'],
    ['quotes and backslashes escaped', { at: Date.UTC(2026, 2, 1), ruleId: 'a "b" \\c', type: 'Date' }, 'expiry-date="Sun, 01 Mar 2026 00:00:00 GMT", rule-id="a \\"b\\" \\\\c"'],
    ['what a header cannot carry is percent-encoded', { at: Date.UTC(2026, 2, 1), ruleId: 'é\n', type: 'Date' }, 'expiry-date="Sun, 01 Mar 2026 00:00:00 GMT", rule-id="%C3%A9%0A"']
  ]
  for (const [name, expiry, expected] of cases) t.equal(expirationHeader(expiry), expected, name)
  t.equal(objectExpirationHeader(document, 'logs/a', new Date(uploaded)), 'expiry-date="Tue, 10 Feb 2026 00:00:00 GMT", rule-id="logs-expire-30d"')
  t.equal(objectExpirationHeader(document, 'elsewhere', new Date(uploaded)), undefined, 'no header where no expiry rule matches')
  t.equal(objectExpirationHeader(null, 'logs/a', new Date(uploaded)), undefined, 'nor without rules')
  // A document written around the doors (by hand, or by a build that took any age) is read leniently: an age past any date acts on nothing.
  const endless = { rules: [{ id: 'endless', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 1e308 } } }] }
  t.equal(objectExpirationHeader(endless, 'logs/a', new Date(uploaded)), undefined, 'no "Invalid Date" for an age past any date')
  t.equal(actionAt(lifecycleRules(endless), 'logs/a', uploaded, 'Standard', Date.now()), null)
})

t.test('uploads: aborted by a matching enabled rule once their age is reached', async t => {
  t.equal(uploadAbortDue(rules, 'big/file', uploaded, at(1)), true)
  t.equal(uploadAbortDue(rules, 'big/file', uploaded, at(1) - 1), false)
  t.equal(uploadAbortDue(rules, 'small/file', uploaded, at(100)), false)
})

t.test('the prefixes a sweep walks: each covered key range once', async t => {
  const cases: Array<[string, unknown, string[], string[]]> = [
    ['nested prefixes are walked once, from the outer one', document, [''], ['big/']],
    ['only rules with object actions are walked', { rules: [{ id: 'a', enabled: true, conditions: { prefix: 'x/' }, abortMultipartUploadsTransition: age(1) }] }, [], ['x/']],
    ['disabled rules are not walked', { rules: [{ id: 'a', enabled: false, conditions: {}, deleteObjectsTransition: age(1) }] }, [], []],
    ['siblings and nesting', {
      rules: [
        { id: 'a', enabled: true, conditions: { prefix: 'logs/2026/' }, deleteObjectsTransition: age(1) },
        { id: 'b', enabled: true, conditions: { prefix: 'logs/' }, deleteObjectsTransition: age(9) },
        { id: 'c', enabled: true, conditions: { prefix: 'img/' }, storageClassTransitions: ia({ type: 'Age', maxAge: DAY }) }
      ]
    }, ['img/', 'logs/'], []],
    ['a whole-bucket abort rule is the store\'s upload age, not a walk', { rules: [{ id: 'a', enabled: true, conditions: {}, abortMultipartUploadsTransition: age(1) }] }, [], []]
  ]
  for (const [name, doc, objects, uploads] of cases) {
    t.same(objectSweepPrefixes(lifecycleRules(doc)), objects, `${name}: objects`)
    t.same(uploadSweepPrefixes(lifecycleRules(doc)), uploads, `${name}: uploads`)
  }
})

t.test('the registry keeps only rules the engine reads, whichever door (or library call) gives them', async t => {
  const registry = createRegistry(new MemoryRegistryStorage())
  await registry.create('logs')
  await t.rejects(registry.updateSettings('logs', { lifecycle: { rules: [{ id: 'r', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 1e308 } } }] } }),
    { message: /maxAge must be a whole number of seconds/ }, 'an age past any date is refused')
  await t.rejects(registry.updateSettings('logs', { lifecycle: 'every day' }), TypeError)
  await registry.updateSettings('logs', { lifecycle: { rules: [{ id: 'r', enabled: true, conditions: {}, extra: 1, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } }] } })
  t.same((await registry.info('logs'))?.settings.lifecycle, { rules: [{ id: 'r', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } }] }, 'what is kept is what acts')
  await registry.updateSettings('logs', { lifecycle: null })
  t.equal((await registry.info('logs'))?.settings.lifecycle, null)
})

t.test('a rule with no action is refused, as S3 refuses one, so that S3 can always take back what it reads', async t => {
  for (const rule of [
    { id: 'r', enabled: true, conditions: { prefix: 'q/' } },
    { id: 'r', enabled: true, conditions: {}, storageClassTransitions: [] }
  ]) t.throws(() => parseLifecycleRules([rule]), /rules\[0\] has no action/, JSON.stringify(rule))
  const abortOnly = { id: 'r', enabled: true, conditions: {}, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 86400 } } }
  t.same(parseLifecycleRules([abortOnly]), [abortOnly], 'one action is enough')
})

t.test('a Date condition is kept as its instant in UTC, which must be a date of four digits', async t => {
  const rule = (date: string): unknown[] => [{ id: 'r', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Date', date } } }]
  t.same(parseLifecycleRules(rule('2027-01-01'))[0].deleteObjectsTransition?.condition, { type: 'Date', date: '2027-01-01T00:00:00.000Z' })
  t.same(parseLifecycleRules(rule('9999-12-31T22:30:00-01:00'))[0].deleteObjectsTransition?.condition, { type: 'Date', date: '9999-12-31T23:30:00.000Z' })
  t.throws(() => parseLifecycleRules(rule('9999-12-31T23:30:00-01:00')), /from the year 0 to 9999 in UTC/, 'the year 10000 in UTC')
  t.throws(() => parseLifecycleRules(rule('0000-01-01T00:30:00+01:00')), /from the year 0 to 9999 in UTC/, 'the year -1 in UTC')
})

t.test('ids and prefixes S3 could not carry back, and a second transition, are refused', async t => {
  const expire = { condition: { type: 'Age', maxAge: DAY } }
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a lone surrogate in an id', { id: 'keep\uD800', enabled: true, conditions: {}, deleteObjectsTransition: expire }, /rules\[0\]\.id must be at most 255 characters of well-formed Unicode/],
    ['a lone surrogate in a prefix', { id: 'r', enabled: true, conditions: { prefix: 'logs/\uDFFF' }, deleteObjectsTransition: expire }, /conditions\.prefix must be a string of well-formed Unicode without control characters, of at most 1024 bytes/],
    ['a prefix longer than any key', { id: 'r', enabled: true, conditions: { prefix: 'p'.repeat(1025) }, deleteObjectsTransition: expire }, /of at most 1024 bytes/],
    ['two transitions', { id: 'r', enabled: true, conditions: {}, storageClassTransitions: [...ia({ type: 'Age', maxAge: DAY }), ...ia({ type: 'Age', maxAge: 2 * DAY })] }, /storageClassTransitions has one transition at most/]
  ]
  for (const [what, rule, message] of cases) t.throws(() => parseLifecycleRules([rule]), message, what)
  t.equal(parseLifecycleRules([{ id: 'r', enabled: true, conditions: { prefix: 'é'.repeat(512) }, deleteObjectsTransition: expire }])[0].conditions.prefix, 'é'.repeat(512), 'a prefix of 1,024 bytes is a key\'s')
})

t.test('rules are at most MAX_LIFECYCLE_CONFIGURATION_BYTES as S3\'s document of them', async t => {
  const rule = (i: number, prefix: string): Record<string, unknown> => ({ id: `${'i'.repeat(250)}${String(i).padStart(4, '0')}`, enabled: true, conditions: { prefix }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: DAY } } })
  const many = Array.from({ length: MAX_LIFECYCLE_RULES }, (_, i) => rule(i, 'p'.repeat(100)))
  const kept = parseLifecycleRules(many)
  t.equal(kept.length, MAX_LIFECYCLE_RULES, 'a thousand rules with ids of 254 characters and prefixes of 100 fit')
  t.ok(lifecycleConfigurationBytes(kept) <= MAX_LIFECYCLE_CONFIGURATION_BYTES)
  const long = Array.from({ length: MAX_LIFECYCLE_RULES }, (_, i) => rule(i, `${i}/${'p'.repeat(1000)}`))
  t.throws(() => parseLifecycleRules(long), /the rules are at most 1048576 bytes as the S3 API's GetBucketLifecycleConfiguration document of them.*\(got \d+\)/, 'a thousand prefixes of a key\'s length do not')
  // Escapes count as S3 writes them: `&` is five bytes there.
  t.equal(lifecycleConfigurationBytes([{ id: '&', enabled: true, conditions: { prefix: '' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: DAY } } }]) -
    lifecycleConfigurationBytes([{ id: 'a', enabled: true, conditions: { prefix: '' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: DAY } } }]), 4)
})
