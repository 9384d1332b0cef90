/**
 * A bucket's settings document read back from the storage (registry.ts,
 * bucket-infos.ts, settings-document.ts): a damaged one (not JSON, `null`,
 * not an object, no creation date) is told from a missing one, answers
 * SettingsDamaged (10915) to every call naming the bucket, is left out of
 * lists (the other buckets still listed) and warned of once per version of
 * the file, naming the file and what is wrong; no content makes a look loop.
 * A field today's rules refuse (an older version's) is ignored and warned
 * of, and the bucket served.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

interface Warning { fields: { bucket: string, path?: string, reason: string }, message: string }

async function opened (t: Test): Promise<{ registry: BucketRegistry, dir: string, warnings: Warning[] }> {
  const dir = testdir(t)
  const warnings: Warning[] = []
  const registry = await openRegistry(dir, { fsync: false, warn: (fields, message) => { warnings.push({ fields, message }) } })
  t.teardown(async () => { await registry.close() })
  return { registry, dir, warnings }
}

const settingsFile = (dir: string, name: string): string => path.join(dir, name, '.fsbucket', 'settings.json')

/** `promise`, or a rejection after `ms`: the old code looked at a `null` document forever. */
async function within<T> (promise: Promise<T>, ms = 3000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms) })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

t.test('a settings file holding `null` answers 10915 at once, never loops', async t => {
  const { registry, dir } = await opened(t)
  await registry.create('victim')
  await writeFile(settingsFile(dir, 'victim'), 'null\n')
  await t.rejects(within(registry.info('victim')), { code: 10915 }, 'info')
  await t.rejects(within(registry.open('victim')), { code: 10915 }, 'open')
  await t.rejects(within(registry.updateSettings('victim', { public: true })), { code: 10915 }, 'updateSettings')
  t.equal(await readFile(settingsFile(dir, 'victim'), 'utf8'), 'null\n', 'the damaged file is left for the operator to mend')
})

t.test('one damaged bucket leaves the others listed, and is warned of once per version of its file', async t => {
  const { registry, dir, warnings } = await opened(t)
  await registry.create('alpha')
  await registry.create('broken')
  await registry.create('gamma')
  await writeFile(settingsFile(dir, 'broken'), '')
  t.same((await within(registry.list())).map(b => b.name), ['alpha', 'gamma'], 'the others are listed')
  t.same((await registry.list()).map(b => b.name), ['alpha', 'gamma'], 'again')
  await t.rejects(registry.info('broken'), { code: 10915, message: /settings are damaged/ }, 'a call naming it answers the damage')
  t.equal(warnings.length, 1, 'one warning for one version of the file')
  t.equal(warnings[0].fields.bucket, 'broken')
  t.equal(warnings[0].fields.path, settingsFile(dir, 'broken'), 'the file is named')
  t.match(warnings[0].fields.reason, /is not valid JSON/, 'and what is wrong with it')
  await t.rejects(registry.list({ strict: true }), { code: 10915 }, 'a strict list (start-up) refuses it')

  await writeFile(settingsFile(dir, 'broken'), '{"format": 1')
  await registry.list()
  t.equal(warnings.length, 2, 'a new version of the file is warned of again')

  const mended = { format: 1, creationDate: '2026-01-01T00:00:00.000Z', settings: { public: true } }
  await writeFile(settingsFile(dir, 'broken'), JSON.stringify(mended))
  t.same((await registry.list()).map(b => b.name), ['alpha', 'broken', 'gamma'], 'mended, it is listed again')
  t.equal((await registry.info('broken'))?.settings.public, true)
})

t.test('a document that is no settings document is damaged; a field the rules of a write refuse is ignored, the bucket served', async t => {
  const { registry, dir, warnings } = await opened(t)
  await registry.create('site')
  const good = JSON.parse(await readFile(settingsFile(dir, 'site'), 'utf8'))
  const damaged: Array<[string, unknown, RegExp]> = [
    ['{}', {}, /creationDate/],
    ['5', 5, /must be an object \(got number\)/],
    ['"s"', 's', /must be an object \(got string\)/],
    ['no settings', { format: 1, creationDate: good.creationDate }, /settings must be an object/],
    ['a creationDate that is no date', { ...good, creationDate: 'soon' }, /creationDate/],
    // What `Date.parse` takes, and no write makes: each would be some instant (or the server's local time) read as the bucket's creation.
    ['a creationDate of a year alone', { ...good, creationDate: '2020' }, /creationDate must be an ISO 8601 date/],
    ['a creationDate of one digit', { ...good, creationDate: '1' }, /creationDate/],
    ['an empty creationDate', { ...good, creationDate: '' }, /creationDate/],
    ['a creationDate that is a number', { ...good, creationDate: 1767225600000 }, /creationDate/],
    ['a creationDate on February 30', { ...good, creationDate: '2026-02-30T00:00:00Z' }, /creationDate/],
    ['a creationDate without a zone', { ...good, creationDate: '2026-01-01T08:00:00' }, /creationDate/],
    ['a creationDate as an HTTP date', { ...good, creationDate: 'Thu, 01 Jan 2026 00:00:00 GMT' }, /creationDate/],
    // A newer version's format, after a downgrade: never read as this version's.
    ['format 2', { ...good, format: 2 }, /format 2 is not one this version reads/],
    ['format "1"', { ...good, format: '1' }, /format "1" is not one/]
  ]
  for (const [label, document, reason] of damaged) {
    await writeFile(settingsFile(dir, 'site'), JSON.stringify(document))
    await t.rejects(registry.info('site'), { code: 10915 }, label)
    t.same(await registry.list(), [], `${label}: left out of the list, which still answers`)
    t.match(warnings.at(-1)?.fields.reason, reason, `${label}: the log line names what is wrong`)
  }
  for (const [creationDate, iso] of [['2026-01-01', '2026-01-01T00:00:00.000Z'], ['2026-01-01T08:00:00+02:00', '2026-01-01T06:00:00.000Z']]) {
    await writeFile(settingsFile(dir, 'site'), JSON.stringify({ ...good, creationDate }))
    t.equal((await registry.info('site'))?.creationDate.toISOString(), iso, `a creationDate of ${creationDate} is read`)
  }
  const { format: _, ...unversioned } = good
  await writeFile(settingsFile(dir, 'site'), JSON.stringify(unversioned))
  t.equal((await registry.info('site'))?.name, 'site', 'a document without a format (written by hand) is read as format 1')
  // An older version took rules today's refuse: the bucket stays reachable, with that field's default.
  const ignored: Array<[string, Record<string, unknown>, RegExp, (settings: Record<string, unknown>) => boolean]> = [
    ['cors: 5', { cors: 5 }, /settings\.cors must be/, s => s.cors === null],
    ['lifecycle: 5', { lifecycle: 5 }, /settings\.lifecycle must be/, s => s.lifecycle === null],
    ['public: "yes"', { public: 'yes' }, /settings\.public must be a boolean/, s => s.public === false],
    ['domains: "x"', { domains: 'x' }, /settings\.domains must be/, s => Array.isArray(s.domains) && s.domains.length === 0],
    ['a lifecycle rule id with a control character', { public: true, lifecycle: { rules: [{ id: 'a\u0001', enabled: true, conditions: {} }] } }, /control character/, s => s.lifecycle === null && s.public === true]
  ]
  for (const [label, fields, reason, defaulted] of ignored) {
    const count = warnings.length
    await writeFile(settingsFile(dir, 'site'), JSON.stringify({ ...good, settings: { ...good.settings, ...fields } }))
    const info = await registry.info('site')
    t.ok(info !== null && defaulted(info.settings as unknown as Record<string, unknown>), `${label}: served, that field at its default, the others kept`)
    t.equal(warnings.length, count + 1, `${label}: warned of once`)
    t.match(warnings.at(-1)?.fields.reason, reason, `${label}: the log line names the field`)
    await registry.info('site')
    t.equal(warnings.length, count + 1, `${label}: not again while the file is the same`)
  }
  await writeFile(settingsFile(dir, 'site'), JSON.stringify({ ...good, settings: { public: true, cors: [], future: 'kept' } }))
  const info = await registry.info('site')
  t.equal(info?.settings.public, true, 'a valid document is served')
  t.equal(info?.settings.cors, null, 'normalised as a write normalises it')
  t.equal((info?.settings as unknown as Record<string, unknown>).future, 'kept', 'a field of a newer version is kept')
})

t.test('a settings write keeps the stored fields it does not change, an ignored one too', async t => {
  const { registry, dir, warnings } = await opened(t)
  await registry.create('site')
  const good = JSON.parse(await readFile(settingsFile(dir, 'site'), 'utf8'))
  // An older version took this rule id; today's rules refuse it, and with it the bucket's whole lifecycle.
  const lifecycle = { rules: [{ id: 'keep\u0001', enabled: true, conditions: {} }, { id: 'good', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } }] }
  await writeFile(settingsFile(dir, 'site'), JSON.stringify({ ...good, settings: { ...good.settings, lifecycle } }))
  t.equal((await registry.info('site'))?.settings.lifecycle, null, 'served without it')
  t.equal(warnings.length, 1, 'warned of')
  const updated = await registry.updateSettings('site', { public: true })
  t.equal(updated.public, true)
  t.equal(updated.lifecycle, null, 'the answer is what is served')
  const stored = JSON.parse(await readFile(settingsFile(dir, 'site'), 'utf8'))
  t.same(stored.settings.lifecycle, lifecycle, 'the stored rules are kept for their owner to mend')
  t.equal(stored.settings.public, true)
  await registry.changeNotifications('site', current => current)
  t.same(JSON.parse(await readFile(settingsFile(dir, 'site'), 'utf8')).settings.lifecycle, lifecycle, 'by a change of notifications too')
})

t.test('a bucket whose settings are mended gets its custom domains back, though no registry write moved', async t => {
  const { registry, dir } = await opened(t)
  await registry.create('site')
  await registry.updateSettings('site', { domains: ['cdn.example.com'] })
  t.equal(await registry.bucketForDomain('cdn.example.com'), 'site')
  const file = settingsFile(dir, 'site')
  const mended = await readFile(file, 'utf8')
  await writeFile(file, 'null')
  await registry.create('other')
  t.equal(await registry.bucketForDomain('cdn.example.com'), null, 'damaged: not served')
  await writeFile(file, mended)
  t.equal(await registry.bucketForDomain('cdn.example.com'), 'site', 'mended: served again')
})

t.test('a warn that throws changes no answer: lists, 10915 and the file-holds-the-name refusal stand', async t => {
  const dir = testdir(t)
  let calls = 0
  const registry = await openRegistry(dir, { fsync: false, warn: () => { calls++; throw new Error('the log is gone') } })
  t.teardown(async () => { await registry.close() })
  await registry.create('kept')
  await registry.create('victim')
  await writeFile(settingsFile(dir, 'victim'), '{')
  t.same((await registry.list()).map(b => b.name), ['kept'], 'the list leaves the damaged bucket out')
  await t.rejects(registry.info('victim'), { code: 10915 }, 'and its requests answer 10915, not the warn\'s error')
  await writeFile(path.join(dir, 'stray'), 'made by hand')
  await t.rejects(registry.create('stray'), { code: 10004 }, 'a file holding a name: 10004 as before')
  t.equal(calls, 2, 'the warn was called for each')
})
