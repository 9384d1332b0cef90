/**
 * `fsbucket sweep --now <ISO 8601>` as users run it (the real command in a
 * child process) on a data directory another process keeps open, as a
 * running server does: lifecycle rules judged at that instant expire and
 * transition objects, stored times stay, and a `--now` that is not an
 * ISO 8601 instant is refused with a clear message and a non-zero exit.
 */
import t from 'tap'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { run } from './serve-process.js'

const DAY_MS = 86_400_000

const lifecycle = {
  rules: [
    { id: 'tmp-1d', enabled: true, conditions: { prefix: 'tmp/' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } },
    { id: 'ia-1d', enabled: true, conditions: {}, storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Age', maxAge: 86400 } }] }
  ]
}

async function sweep (dataDir: string, ...extra: string[]): Promise<{ code: number | string, stdout: string, stderr: string }> {
  const served = run(['sweep', '--data', dataDir, ...extra])
  const code = await served.exited
  return { code, stdout: served.stdout(), stderr: served.stderr() }
}

t.test('sweep --now carries the rules out as of that instant, beside an open registry', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await registry.close() })
  await registry.create('media')
  await registry.updateSettings('media', { lifecycle })
  const bucket = await registry.open('media')
  if (bucket === null) throw new Error('no bucket')
  await bucket.put('tmp/scratch', 'scratch')
  await bucket.put('photo.jpg', 'pixels', { customMetadata: { album: 'summer' } })
  const before = await bucket.head('photo.jpg')

  const now = await sweep(dataDir)
  t.equal(now.code, 0, `a sweep at the clock's time exits 0\n${now.stderr}`)
  t.match(now.stdout, /swept: 0 objects expired, 0 moved to InfrequentAccess/, 'and does nothing yet')

  const later = new Date(Date.now() + 2 * DAY_MS).toISOString()
  const swept = await sweep(dataDir, '--now', later)
  t.equal(swept.code, 0, `sweep --now ${later} exits 0\n${swept.stderr}`)
  t.match(swept.stdout, /swept: 1 objects expired, 1 moved to InfrequentAccess/)
  t.equal(await bucket.head('tmp/scratch'), null, 'tmp/ expired')
  const after = await bucket.head('photo.jpg')
  t.equal(after?.storageClass, 'InfrequentAccess', 'the rest moved to InfrequentAccess')
  t.equal(after?.etag, before?.etag, 'etag kept')
  t.equal(after?.uploaded.getTime(), before?.uploaded.getTime(), 'stored time unchanged: --now only judges')
  t.same(after?.customMetadata, { album: 'summer' }, 'metadata kept')
  const body = await bucket.get('photo.jpg')
  t.equal(body !== null && 'text' in body ? await body.text() : undefined, 'pixels', 'bytes kept')
})

t.test('a --now that is not an ISO 8601 instant is refused', async t => {
  const dataDir = testdir(t)
  for (const bad of ['tomorrow', '2027-02-30', '2027-01-31T12:00:00']) {
    const refused = await sweep(dataDir, '--now', bad)
    t.not(refused.code, 0, `${JSON.stringify(bad)}: non-zero exit`)
    t.match(refused.stderr, /--now.*expected an ISO 8601 instant/, `${JSON.stringify(bad)}: says what it expects`)
  }
  for (const good of ['2027-01-31', '2027-01-31T12:00:00.250+01:00']) {
    const accepted = await sweep(dataDir, '--now', good)
    t.equal(accepted.code, 0, `${good} is accepted\n${accepted.stderr}`)
  }
})
