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
