/**
 * Temporary credentials minted by the hosted client-side recipe (an HS256
 * JWT signed with the parent's S3 secret; the temporary secret is the hex
 * SHA-256 of the JWT; the session token base64("jwt/" + JWT)): what each
 * kind of token opens to, checked against its parent's record.
 */
import t from 'tap'
import { openSession, sessionParent } from '../../src/bucket/sessions.js'
import { b64url, mintBySignedJwt } from '../signed-jwt.js'

const now = new Date('2026-06-01T00:00:00Z')
const nowSeconds = now.getTime() / 1000
const parent = { id: 'a'.repeat(32), permission: 'object-read-write' as const, buckets: ['photos'], expiresOn: null, secretAccessKey: 'b'.repeat(64) }
const pair = { accessKeyId: parent.id, secretAccessKey: parent.secretAccessKey }
const base = { sub: 'account', aud: '127.0.0.1:9000', iss: parent.id, iat: nowSeconds, exp: nowSeconds + 900, bucket: 'photos', scope: 'object-read-only' }

t.test('a well-formed token opens to its claims, with the derived secret', async t => {
  const minted = mintBySignedJwt(pair, { ...base, actions: ['GetObject', 'HeadObject'], paths: { prefixPaths: ['data/'], objectPaths: ['readme.txt'] } })
  t.equal(sessionParent(minted.sessionToken), parent.id, 'the parent is the issuer')
  const opened = openSession(minted.sessionToken, minted.accessKeyId, { record: parent }, now)
  t.same(opened, {
    principal: { kind: 'session', id: parent.id, permission: 'object-read-only', buckets: ['photos'], prefixes: ['data/'], objects: ['readme.txt'], operations: ['GetObject', 'HeadObject'] },
    secretAccessKey: minted.secretAccessKey
  })
  const whole = openSession(mintBySignedJwt(pair, base).sessionToken, parent.id, { record: parent }, now)
  t.match(whole, { principal: { prefixes: [], objects: [] } }, 'no paths: the whole bucket')
  t.notOk(typeof whole === 'object' && 'operations' in whole.principal, 'no actions: every operation its permission allows')
})

t.test('what is refused', async t => {
  const open = (claims: Record<string, unknown>, options: { header?: Record<string, unknown>, key?: string, accessKeyId?: string, parent?: typeof parent, expired?: boolean } = {}): unknown => {
    const minted = mintBySignedJwt({ accessKeyId: parent.id, secretAccessKey: options.key ?? parent.secretAccessKey }, claims, options.header)
    const record = options.parent ?? parent
    return openSession(minted.sessionToken, options.accessKeyId ?? minted.accessKeyId, options.expired === true ? { expired: record } : { record }, now)
  }
  const cases: Array<[string, Record<string, unknown>, Parameters<typeof open>[1], string]> = [
    ['signed with another secret', base, { key: 'c'.repeat(64) }, 'invalid'],
    ['an unsigned JWT (alg none)', base, { header: { alg: 'none' } }, 'invalid'],
    ['presented with another access key id', base, { accessKeyId: 'd'.repeat(32) }, 'invalid'],
    ['naming another parent', { ...base, iss: 'e'.repeat(32) }, {}, 'invalid'],
    ['a scope the parent cannot hand on', { ...base, scope: 'admin-read-write' }, {}, 'invalid'],
    ['a bucket the parent cannot reach', { ...base, bucket: 'other' }, {}, 'invalid'],
    ['an invalid bucket name', { ...base, bucket: 'No_Such' }, {}, 'invalid'],
    ['a lifetime over 7 days', { ...base, exp: nowSeconds + 604_801 }, {}, 'invalid'],
    ['malformed paths', { ...base, paths: { prefixPaths: 'data/' } }, {}, 'invalid'],
    ['paths naming no key (never read as the whole bucket)', { ...base, paths: { prefixPaths: [], objectPaths: [] } }, {}, 'invalid'],
    ['an empty paths', { ...base, paths: {} }, {}, 'invalid'],
    ['no expiry', { ...base, exp: undefined }, {}, 'invalid'],
    ['past its expiry', { ...base, iat: nowSeconds - 1000, exp: nowSeconds - 1 }, {}, 'expired'],
    ['under an expired parent', base, { expired: true }, 'expired']
  ]
  for (const [what, claims, options, expected] of cases) t.equal(open(claims, options), expected, what)
  const tampered = mintBySignedJwt(pair, base)
  const [h, , s] = tampered.jwt.split('.')
  const forged = Buffer.from(`jwt/${h}.${b64url({ ...base, scope: 'object-read-write' })}.${s}`).toString('base64')
  t.equal(openSession(forged, parent.id, { record: parent }, now), 'invalid', 'claims changed after signing')
  t.equal(sessionParent(Buffer.from('jwt/not.a.jwt').toString('base64')), null, 'not a JWT: no parent')
  t.equal(openSession(tampered.sessionToken, parent.id, null, now), 'invalid', 'an unknown parent')
})

t.test('a paths claim of another shape is refused, never read as no limit (the whole bucket)', async t => {
  const open = (paths: unknown): unknown => {
    const minted = mintBySignedJwt(pair, { ...base, paths })
    return openSession(minted.sessionToken, minted.accessKeyId, { record: parent }, now)
  }
  const shapes: Array<[string, unknown]> = [
    ['a list of prefixes', ['data/']],
    ['a prefix as a string', 'data/'],
    ['a number', 1],
    ['a misspelt prefixPaths', { prefixpaths: ['data/'] }],
    ['the API\'s field names', { prefixes: ['data/'] }],
    ['one known field beside an unknown one', { objectPaths: ['readme.txt'], prefixPath: ['data/'] }]
  ]
  for (const [what, paths] of shapes) t.equal(open(paths), 'invalid', what)
  t.match(open(null), { principal: { prefixes: [], objects: [] } }, 'null is no paths: the whole bucket, as when absent')
  t.match(open({ prefixPaths: ['data/'] }), { principal: { prefixes: ['data/'], objects: [] } }, 'one of the two fields')
})

t.test('a limit spelt or placed where it is not read is refused, never read as no limit (every operation, the whole bucket)', async t => {
  const open = (claims: Record<string, unknown>): unknown => {
    const minted = mintBySignedJwt(pair, { ...base, ...claims })
    return openSession(minted.sessionToken, minted.accessKeyId, { record: parent }, now)
  }
  const shapes: Array<[string, Record<string, unknown>]> = [
    ['actions misspelt as action', { action: ['GetObject'] }],
    ['actions capitalised', { Actions: ['GetObject'] }],
    ['paths capitalised', { Paths: { prefixPaths: ['data/'] } }],
    ['prefixPaths beside paths, at the top', { prefixPaths: ['data/'] }],
    ['objectPaths at the top', { objectPaths: ['readme.txt'] }],
    ['the API\'s prefixes at the top', { prefixes: ['data/'] }]
  ]
  for (const [what, claims] of shapes) t.equal(open(claims), 'invalid', what)
  t.match(open({ actions: ['GetObject'], paths: { prefixPaths: ['data/'] } }), { principal: { prefixes: ['data/'], operations: ['GetObject'] } }, 'spelt right: read')
})
