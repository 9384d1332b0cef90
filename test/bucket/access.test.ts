/** The access decision (`authorize`), the expiry parser and the S3 secret's derivation, as tables. */
import t from 'tap'
import { ADMIN, authorize, parseExpiry, requireAccess, secretOfToken, type Action, type Permission, type Principal } from '../../src/bucket/index.js'

const actions: Action[] = ['buckets:list', 'bucket:read', 'bucket:write', 'objects:list', 'object:read', 'object:write', 'account:read', 'account:write']

function token (permission: Permission, buckets: string[] | null = null): Principal {
  return { kind: 'token', id: 'a'.repeat(32), permission, buckets }
}

t.test('each permission allows its actions on every bucket', async t => {
  const allowed: Record<Permission, Action[]> = {
    'admin-read-write': actions,
    'admin-read-only': ['buckets:list', 'bucket:read', 'objects:list', 'object:read', 'account:read'],
    'object-read-write': ['buckets:list', 'objects:list', 'object:read', 'object:write'],
    'object-read-only': ['buckets:list', 'objects:list', 'object:read']
  }
  for (const [permission, yes] of Object.entries(allowed) as Array<[Permission, Action[]]>) {
    for (const action of actions) {
      const bucket = action.startsWith('account') || action === 'buckets:list' ? undefined : 'photos'
      t.equal(authorize(token(permission), action, bucket, 'k'), yes.includes(action), `${permission} ${action}`)
    }
  }
  for (const action of actions) t.equal(authorize(ADMIN, action, 'photos'), true, `the configured credentials: ${action}`)
})

t.test('an object token limited to buckets acts on those only, and sees those only', async t => {
  const p = token('object-read-write', ['photos'])
  t.equal(authorize(p, 'object:write', 'photos', 'k'), true)
  t.equal(authorize(p, 'object:read', 'other', 'k'), false)
  t.equal(authorize(p, 'objects:list', 'other'), false)
  t.equal(authorize(p, 'buckets:list'), true, 'it may ask for the list')
  t.equal(authorize(p, 'buckets:list', 'photos'), true, 'which shows its bucket')
  t.equal(authorize(p, 'buckets:list', 'other'), false, 'and no other')
  t.equal(authorize(p, 'bucket:read', 'photos'), false, 'no settings, even of its bucket')
  t.throws(() => requireAccess(p, 'object:read', 'other', 'k', 'get'), { code: 10950, status: 403, message: /^get: Access denied/ })
})

t.test('temporary credentials: one bucket, its prefixes and objects, never the account', async t => {
  const s: Principal = { kind: 'session', id: 'p', permission: 'object-read-write', buckets: ['photos'], prefixes: ['cats/'], objects: ['dog.jpg'] }
  const cases: Array<[Action, string | undefined, string | undefined, boolean]> = [
    ['object:read', 'photos', 'cats/tom.jpg', true],
    ['object:write', 'photos', 'cats/tom.jpg', true],
    ['object:read', 'photos', 'dog.jpg', true],
    ['object:read', 'photos', 'dog.jpg.bak', false],
    ['object:read', 'photos', 'birds/x', false],
    ['object:read', 'other', 'cats/tom.jpg', false],
    ['objects:list', 'photos', 'cats/', true],
    ['objects:list', 'photos', 'cats/t', true],
    ['objects:list', 'photos', '', false],
    ['objects:list', 'photos', undefined, false],
    ['objects:list', 'photos', 'c', false],
    ['account:read', undefined, undefined, false],
    ['bucket:read', 'photos', undefined, false]
  ]
  for (const [action, bucket, key, want] of cases) t.equal(authorize(s, action, bucket, key), want, `${action} ${bucket ?? ''} ${key ?? ''}`)
  const admin: Principal = { kind: 'session', id: 'p', permission: 'admin-read-write', buckets: ['photos'] }
  t.equal(authorize(admin, 'bucket:write', 'photos'), true, 'an admin session acts on its bucket')
  t.equal(authorize(admin, 'bucket:write', 'other'), false)
  t.equal(authorize(admin, 'account:read'), false, 'never on the account')
  for (const limits of [{ prefixes: ['pub/'] }, { objects: ['readme.txt'] }]) {
    const limited: Principal = { ...admin, ...limits }
    t.equal(authorize(limited, 'bucket:write', 'photos'), false, `an admin session limited to keys (${JSON.stringify(limits)}) changes no setting: a lifecycle rule would expire keys outside it`)
    t.equal(authorize(limited, 'bucket:read', 'photos'), true, 'and still reads them')
    t.equal(authorize(limited, 'object:write', 'photos', 'pub/a'), 'prefixes' in limits, 'its keys as before')
  }
})

t.test('a session\'s key scope is judged on the keys the engine keeps (NFC): another spelling of a key outside it stays outside', async t => {
  const s: Principal = { kind: 'session', id: 'p', permission: 'object-read-write', buckets: ['photos'], prefixes: ['cafe', 'jos\u00e9/'], objects: ['r\u00e9sum\u00e9.pdf'] }
  const cases: Array<[Action, string, boolean]> = [
    ['object:read', 'cafe/menu', true],
    ['object:read', 'caf\u00e9/secret.txt', false],
    ['object:read', 'cafe\u0301/secret.txt', false], // the same object, decomposed
    ['object:write', 'cafe\u0301/secret.txt', false],
    ['objects:list', 'cafe\u0301', false],
    ['objects:list', 'cafe/', true],
    ['object:read', 'jose\u0301/cv.pdf', true], // a decomposed spelling of a key inside the scope is inside
    ['objects:list', 'jose\u0301/', true],
    ['object:read', 're\u0301sume\u0301.pdf', true],
    ['object:read', 'resume.pdf', false]
  ]
  for (const [action, key, want] of cases) t.equal(authorize(s, action, 'photos', key), want, `${action} ${JSON.stringify(key)}`)
  const decomposed: Principal = { ...s, prefixes: ['jose\u0301/'], objects: [] }
  t.equal(authorize(decomposed, 'object:read', 'photos', 'jos\u00e9/cv.pdf'), true, 'a scope written decomposed admits the key it names')
})

t.test('--expires: ISO 8601 or a duration from now, in the future', async t => {
  const now = new Date('2026-06-01T12:00:00.000Z')
  const cases: Array<[string, string | null]> = [
    ['30d', '2026-07-01T12:00:00.000Z'],
    ['12h', '2026-06-02T00:00:00.000Z'],
    ['15m', '2026-06-01T12:15:00.000Z'],
    ['90s', '2026-06-01T12:01:30.000Z'],
    ['2026-12-31T00:00:00Z', '2026-12-31T00:00:00.000Z'],
    ['2026-12-31', '2026-12-31T00:00:00.000Z'],
    ['2026-06-01T14:00:00+02:00', null],
    ['2026-06-01T15:00:00+02:00', '2026-06-01T13:00:00.000Z'],
    ['0d', null],
    ['2025-01-01', null],
    ['tomorrow', null],
    ['30 days', null],
    ['1w', null],
    ['2026-13-01', null],
    ['', null]
  ]
  for (const [text, want] of cases) t.equal(parseExpiry(text, now)?.toISOString() ?? null, want, JSON.stringify(text))
})

t.test("a token's S3 secret is the hex SHA-256 of its value", async t => {
  t.equal(secretOfToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  t.equal(secretOfToken(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
})
