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
