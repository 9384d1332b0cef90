import t from 'tap'
import { authenticate, loadCredentials, type ManagementCredentials } from '../../src/mgmt/auth.js'
import { ManagementError } from '../../src/mgmt/errors.js'
import { openRegistry } from '../../src/index.js'
import path from 'node:path'
import { mkdirSync, writeFileSync } from 'node:fs'
import { buildApp, call, token } from './helpers.js'
import { testdir } from '../testdir.js'

const credentials = { tokens: ['secret-token'], keys: [{ email: 'me@example.test', key: 'a'.repeat(37) }] }

async function outcome (headers: Record<string, string>, creds: ManagementCredentials = credentials): Promise<string> {
  try {
    await authenticate(headers, creds)
    return 'ok'
  } catch (err) {
    if (!(err instanceof ManagementError)) throw err
    return [err.status, err.code, ...(err.chain ?? []).map(c => c.code)].join(' ')
  }
}

t.test('authentication outcomes', async t => {
  const table: Array<[string, Record<string, string>, string]> = [
    ['good token', { authorization: 'Bearer secret-token' }, 'ok'],
    ['good key pair', { 'x-auth-email': 'ME@example.test', 'x-auth-key': 'a'.repeat(37) }, 'ok'],
    ['nothing', {}, '400 9106'],
    ['wrong token', { authorization: 'Bearer other-token' }, '403 9109'],
    ['not a bearer', { authorization: 'Basic abc' }, '400 6003 6111'],
    ['bearer without token', { authorization: 'Bearer ' }, '400 6003 6111'],
    ['key without email', { 'x-auth-key': 'a'.repeat(37) }, '400 6003 6102'],
    ['email without key', { 'x-auth-email': 'me@example.test' }, '400 6003 6103'],
    ['malformed email', { 'x-auth-email': 'me', 'x-auth-key': 'a'.repeat(37) }, '400 6003 6102'],
    ['wrong key', { 'x-auth-email': 'me@example.test', 'x-auth-key': 'b'.repeat(37) }, '403 10000'],
    ['key of another email', { 'x-auth-email': 'you@example.test', 'x-auth-key': 'a'.repeat(37) }, '403 10000']
  ]
  for (const [what, headers, want] of table) t.equal(await outcome(headers), want, what)
})

t.test('a wrong token answers as the hosted API does: 10000 on an account, 1000 on verify, 9109 elsewhere', async t => {
  const credentials = { tokens: ['secret-token'], keys: [] }
  const wrong = { authorization: 'Bearer other-token' }
  const at = async (url: string): Promise<string> => {
    try {
      await authenticate(wrong, credentials, url)
      return 'ok'
    } catch (err) {
      return `${(err as ManagementError).status} ${(err as ManagementError).code}`
    }
  }
  t.equal(await at('/client/v4/accounts/abc/r2/buckets'), '403 10000')
  t.equal(await at('/client/v4/accounts?page=1'), '403 10000')
  t.equal(await at('/client/v4/zones'), '403 9109')
  t.equal(await at('/client/v4/user/tokens/verify'), '401 1000', 'verifying a wrong token: Invalid API Token')
  t.equal(await at('/client/v4/user'), '403 9109')
  t.equal(await at('/client/v4/zones?name=accounts/x'), '403 9109', 'only the path counts')
})

t.test('with no credentials configured, only an open (loopback) server accepts requests', async t => {
  t.equal(await outcome({ authorization: 'Bearer anything' }, { tokens: [], keys: [] }), '403 10000')
  t.equal(await outcome({ authorization: 'Bearer anything' }, { tokens: [], keys: [], open: true }), 'ok')
  t.equal(await outcome({}, { tokens: [], keys: [], open: true }), '400 9106', 'credentials must still be sent')
})

t.test('credentials come from flags, the environment and the data directory', async t => {
  const dir = testdir(t)
  mkdirSync(path.join(dir, '.mgmt'))
  writeFileSync(path.join(dir, '.mgmt', 'credentials.json'), JSON.stringify({ tokens: ['from-file'], keys: [{ email: 'f@example.test', key: 'file-key' }] }))
  const loaded = await loadCredentials({ env: { FSBUCKET_API_TOKEN: 'from-env', FSBUCKET_API_EMAIL: 'e@example.test', FSBUCKET_API_KEY: 'env-key' }, state: (await openRegistry(dir, { fsync: false })).state('mgmt') })
  t.same(loaded.tokens, ['from-env', 'from-file'])
  t.same(loaded.keys, [{ email: 'e@example.test', key: 'env-key' }, { email: 'f@example.test', key: 'file-key' }])
  const flagged = await loadCredentials({ token: 'from-flag', env: { FSBUCKET_API_TOKEN: 'from-env' } })
  t.same(flagged.tokens, ['from-flag'])
  t.same(await loadCredentials({ env: {} }), { tokens: [], keys: [] })
})

t.test('every route is behind authentication, and errors use the envelope', async t => {
  const { app } = await buildApp(t)
  const missing = await call(app, 'GET', '/zones', undefined, {})
  t.equal(missing.status, 400, 'no credentials: 400, as the hosted API answers')
  t.same(missing.body, { success: false, errors: [{ code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' }], messages: [], result: null })
  const malformed = await call(app, 'GET', '/zones', undefined, { authorization: 'Token x' })
  t.same(malformed.body.errors, [{ code: 6003, message: 'Invalid request headers', error_chain: [{ code: 6111, message: 'Invalid format for Authorization header' }] }])
  const wrong = await call(app, 'GET', '/accounts/x/r2/buckets', undefined, { authorization: 'Bearer nope' })
  t.equal(wrong.status, 403)
  t.equal(wrong.body.errors[0].code, 10000, 'a wrong token on an account path is an authentication error')
  t.notMatch(JSON.stringify(wrong.body), 'nope', 'the token is not echoed')
  const unknownPath = await call(app, 'GET', '/nowhere', undefined, {})
  t.equal(unknownPath.status, 400, 'unknown paths are not revealed before authentication')
  t.equal((await call(app, 'GET', '/zones', undefined, { authorization: `Bearer ${token}` })).status, 200)
})
