/**
 * Temporary credentials live at least the seconds they were asked for,
 * whenever in a second they were minted.
 */
import t from 'tap'
import { mintSession, openSession } from '../../src/bucket/sessions.js'
import type { TokenRecord } from '../../src/bucket/tokens.js'

const parent: TokenRecord = {
  id: 'a'.repeat(32),
  name: 'parent',
  permission: 'admin-read-write',
  buckets: null,
  createdOn: '2026-01-01T00:00:00.000Z',
  expiresOn: null,
  secretAccessKey: 'b'.repeat(64)
}

t.test('ttlSeconds counts from the instant of minting, not from the start of its second', async t => {
  for (const ms of [0, 1, 500, 900, 999]) {
    const minted = new Date(Date.UTC(2026, 10, 30, 12, 0, 0, ms))
    const credentials = mintSession(parent, { bucket: 'photos', permission: 'object-read-only', ttlSeconds: 1 }, minted)
    const at = (later: number): ReturnType<typeof openSession> =>
      openSession(credentials.sessionToken, credentials.accessKeyId, { record: parent }, new Date(minted.getTime() + later))
    t.not(at(0), 'expired', `minted at .${ms}: valid at once`)
    t.not(at(999), 'expired', `minted at .${ms}: valid 999 ms later`)
    t.equal(at(2000), 'expired', `minted at .${ms}: expired 2 s later`)
  }
})

t.test('notAfter ends the credentials at the latest then, and must be a valid Date', async t => {
  const minted = new Date(Date.UTC(2026, 10, 30, 12, 0, 0))
  const notAfter = new Date(minted.getTime() + 60_000)
  const credentials = mintSession(parent, { bucket: 'photos', permission: 'object-read-only', ttlSeconds: 3600, notAfter }, minted)
  const at = (later: number): ReturnType<typeof openSession> =>
    openSession(credentials.sessionToken, credentials.accessKeyId, { record: parent }, new Date(minted.getTime() + later))
  t.not(at(59_000), 'expired', 'valid before notAfter')
  t.equal(at(61_000), 'expired', 'expired after it, though ttlSeconds asked for an hour')
  for (const bad of [new Date(NaN), '2026-12-01', 5]) {
    t.throws(() => mintSession(parent, { bucket: 'photos', permission: 'object-read-only', ttlSeconds: 60, notAfter: bad as Date }, minted), { name: 'TypeError', message: /notAfter must be a valid Date/ }, String(bad))
  }
})

t.test('credentials whose session token no request could carry are refused when minted; those that fit are made', async t => {
  const minted = new Date(Date.UTC(2026, 10, 30, 12, 0, 0))
  const paths = (n: number, length: number): string[] => Array.from({ length: n }, (_, i) => `${i}/`.padEnd(length, 'p'))
  const fits = mintSession(parent, { bucket: 'photos', permission: 'object-read-only', ttlSeconds: 60, prefixes: paths(8, 1000) }, minted)
  t.ok(fits.sessionToken.length <= 12_288, `8 prefixes of 1,000 bytes: ${fits.sessionToken.length} characters`)
  t.not(openSession(fits.sessionToken, fits.accessKeyId, { record: parent }, minted), null, 'and it opens')
  for (const [n, length] of [[20, 600], [100, 1024]]) {
    t.throws(() => mintSession(parent, { bucket: 'photos', permission: 'object-read-only', ttlSeconds: 60, prefixes: paths(n, length) }, minted),
      { name: 'RangeError', message: /make a session token of \d+ characters, and at most 12288 fit/ }, `${n} prefixes of ${length} bytes`)
  }
})

t.test('prefixes and objects given but naming no key are refused, never read as the whole bucket', async t => {
  const minted = new Date(Date.UTC(2026, 10, 30, 12, 0, 0))
  const spec = { bucket: 'photos', permission: 'object-read-write' as const, ttlSeconds: 60 }
  for (const limits of [{ prefixes: [] }, { objects: [] }, { prefixes: [], objects: [] }]) {
    t.throws(() => mintSession(parent, { ...spec, ...limits }, minted), { name: 'TypeError', message: /name no key/ }, JSON.stringify(limits))
  }
  const one = mintSession(parent, { ...spec, prefixes: [], objects: ['a.txt'] }, minted)
  t.match(openSession(one.sessionToken, one.accessKeyId, { record: parent }, minted), { principal: { prefixes: [], objects: ['a.txt'] } }, 'an empty list beside a key limits to that key')
  const whole = mintSession(parent, spec, minted)
  t.match(openSession(whole.sessionToken, whole.accessKeyId, { record: parent }, minted), { principal: { prefixes: [], objects: [] } }, 'neither given: the whole bucket')
})
