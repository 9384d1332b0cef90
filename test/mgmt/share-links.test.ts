/**
 * The management API's share links and what verifying a token tells about
 * it: the body's validator (a table), who may make which link (the engine's
 * `authorize`, stable codes), the link's own token, the caller's expiry,
 * a server without an S3 port; the account check judged by the route, not
 * by an object key that ends like an exempt path; no token value or secret
 * in a log line.
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { managementApi, type ShareEndpoint } from '../../src/mgmt/index.js'
import { ManagementError } from '../../src/mgmt/errors.js'
import { parseShareRequest } from '../../src/mgmt/routes/share-links.js'
import { testdir } from '../testdir.js'
import { accountId, call, token } from './helpers.js'

const s3 = new URL('http://127.0.0.1:8788')

async function harness (t: Test, endpoint: ShareEndpoint = () => s3): Promise<{ app: FastifyInstance, registry: BucketRegistry }> {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos')
  await registry.create('other')
  const app = Fastify()
  await app.register(managementApi, { prefix: '/client/v4', registry, credentials: { tokens: [token], keys: [] }, shareEndpoint: endpoint })
  t.teardown(async () => { await app.close(); await registry.close() })
  return { app, registry }
}

const bearer = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` })
const sharePath = (bucket: string): string => `/accounts/${accountId}/r2/buckets/${bucket}/share-links`
const outcome = (answer: { status: number, body: any }): string => answer.status === 200 ? '200' : `${answer.status} ${answer.body.errors[0].code as number}`

t.test('parseShareRequest: what a share link may ask for', async t => {
  const refusal = (body: unknown): string => {
    try {
      const parsed = parseShareRequest(body)
      return `${parsed.method} ${parsed.seconds} ${parsed.key}`
    } catch (err) {
      if (!(err instanceof ManagementError)) throw err
      return `${err.status} ${err.code}`
    }
  }
  const table: Array<[string, unknown, string]> = [
    ['a key alone: a download for an hour', { key: 'a/b.txt' }, 'GET 3600 a/b.txt'],
    ['an upload for a day', { key: 'in.bin', method: 'PUT', expires_in: 86_400 }, 'PUT 86400 in.bin'],
    ['seven days', { key: 'k', expires_in: 604_800 }, 'GET 604800 k'],
    ['one second', { key: 'k', expires_in: 1 }, 'GET 1 k'],
    ['over seven days', { key: 'k', expires_in: 604_801 }, '400 1199'],
    ['zero seconds', { key: 'k', expires_in: 0 }, '400 1199'],
    ['a fraction', { key: 'k', expires_in: 1.5 }, '400 1199'],
    ['a duration text', { key: 'k', expires_in: '1h' }, '400 1199'],
    ['another method', { key: 'k', method: 'DELETE' }, '400 1199'],
    ['no key', { method: 'GET' }, '400 1199'],
    ['a key that is no string', { key: 7 }, '400 1199'],
    ['an empty key', { key: '' }, '400 10020'],
    ['a key over 1,024 bytes', { key: 'é'.repeat(513) }, '400 10020'],
    ['a lone surrogate', { key: 'a\ud800' }, '400 10020'],
    ['no object', ['k'], '400 1199'],
    ['nothing', undefined, '400 1199']
  ]
  for (const [what, body, want] of table) t.equal(refusal(body), want, what)
})

t.test('verify answers the permission and buckets of the credentials', async t => {
  const { app, registry } = await harness(t)
  const admin = await call(app, 'GET', '/user/tokens/verify')
  t.match(admin.body.result, { status: 'active', permission: 'admin-read-write', buckets: null })
  const expiresOn = new Date(Date.now() + 3_600_000)
  const reader = await registry.tokens.create({ name: 'reader', permission: 'object-read-only', buckets: ['photos'], expiresOn })
  const scoped = await call(app, 'GET', '/user/tokens/verify', undefined, bearer(reader.token))
  t.same(scoped.body.result, { id: reader.id, status: 'active', expires_on: expiresOn.toISOString().replace('Z', '000Z'), permission: 'object-read-only', buckets: ['photos'] })
  const forever = await registry.tokens.create({ name: 'ro', permission: 'admin-read-only' })
  t.same((await call(app, 'GET', '/user/tokens/verify', undefined, bearer(forever.token))).body.result,
    { id: forever.id, status: 'active', permission: 'admin-read-only', buckets: null }, 'no expires_on for a token that never expires')
})

t.test('who may make which link', async t => {
  const { app, registry } = await harness(t)
  const make = async (credential: Record<string, string>, bucket: string, body: Record<string, unknown>): Promise<string> =>
    outcome(await call(app, 'POST', sharePath(bucket), body, credential))
  const tokens = {
    admin: { authorization: `Bearer ${token}` },
    adminReadOnly: bearer((await registry.tokens.create({ name: 'aro', permission: 'admin-read-only' })).token),
    objectReadWrite: bearer((await registry.tokens.create({ name: 'orw', permission: 'object-read-write', buckets: ['photos'] })).token),
    objectReadOnly: bearer((await registry.tokens.create({ name: 'oro', permission: 'object-read-only', buckets: ['photos'] })).token)
  }
  const table: Array<[keyof typeof tokens, string, Record<string, unknown>, string]> = [
    ['admin', 'photos', { key: 'a.txt' }, '200'],
    ['admin', 'photos', { key: 'a.txt', method: 'PUT' }, '200'],
    ['admin', 'missing', { key: 'a.txt' }, '404 10006'],
    ['adminReadOnly', 'photos', { key: 'a.txt' }, '200'],
    ['adminReadOnly', 'photos', { key: 'a.txt', method: 'PUT' }, '403 10950'],
    ['objectReadWrite', 'photos', { key: 'a.txt', method: 'PUT' }, '200'],
    ['objectReadWrite', 'other', { key: 'a.txt' }, '403 10950'],
    ['objectReadOnly', 'photos', { key: 'a.txt' }, '200'],
    ['objectReadOnly', 'photos', { key: 'a.txt', method: 'PUT' }, '403 10950'],
    ['objectReadOnly', 'other', { key: 'a.txt' }, '403 10950'],
    // Outside its scope, a missing bucket is refused as an existing one is: nothing learnt.
    ['objectReadOnly', 'missing', { key: 'a.txt' }, '403 10950'],
    ['objectReadOnly', 'photos', { key: '' }, '400 10020']
  ]
  for (const [who, bucket, body, want] of table) t.equal(await make(tokens[who], bucket, body), want, `${who} ${String(body.method ?? 'GET')} ${bucket}`)
  t.equal(outcome(await call(app, 'POST', sharePath('photos'), { key: 'a' }, bearer('not-a-token'))), '403 10000', 'a wrong token')
  // Object tokens still have no other account route.
  t.equal(outcome(await call(app, 'POST', `/accounts/${accountId}/r2/buckets`, { name: 'mine' }, tokens.objectReadWrite)), '403 10950')
})

t.test('a link has a token of its own, made for the object, and its life is cut to the caller\'s', async t => {
  const { app, registry } = await harness(t)
  const answer = await call(app, 'POST', sharePath('photos'), { key: 'dir/my file.txt', method: 'PUT', expires_in: 86_400 })
  t.equal(answer.status, 200)
  const link = answer.body.result
  const url = new URL(link.url)
  t.equal(url.origin, s3.origin)
  t.equal(url.pathname, '/photos/dir/my%20file.txt')
  t.equal(url.searchParams.get('X-Amz-Expires'), '86400')
  t.match(url.searchParams.get('X-Amz-Credential'), new RegExp(`^${link.token_id as string}/`), 'signed with the link\'s token')
  t.equal(link.curl, `curl -T 'my file.txt' '${link.url as string}'`)
  const made = (await registry.tokens.list()).find(t => t.id === link.token_id)
  t.match(made, { name: 'share photos/dir/my file.txt', permission: 'object-read-write', buckets: ['photos'], expiresOn: link.expires_on })
  t.notOk(JSON.stringify(answer.body).includes('secret'), 'no secret in the answer')

  const soon = await registry.tokens.create({ name: 'brief', permission: 'object-read-only', buckets: ['photos'], expiresOn: new Date(Date.now() + 600_000) })
  const brief = await call(app, 'POST', sharePath('photos'), { key: 'a.txt', expires_in: 604_800 }, bearer(soon.token))
  const seconds = Number(new URL(brief.body.result.url).searchParams.get('X-Amz-Expires'))
  t.ok(seconds <= 600 && seconds > 590, `a link made with a token that expires in 10 minutes lives 10 minutes (${seconds} s)`)
  t.ok(Date.parse(brief.body.result.expires_on) <= Date.parse(soon.expiresOn ?? ''))
})

t.test('revoking the token that made a link ends the link; a link the configured credentials made has no maker', async t => {
  const { app, registry } = await harness(t)
  const maker = await registry.tokens.create({ name: 'maker', permission: 'object-read-only', buckets: ['photos'] })
  const byToken = (await call(app, 'POST', sharePath('photos'), { key: 'a.txt' }, bearer(maker.token))).body.result
  const byAdmin = (await call(app, 'POST', sharePath('photos'), { key: 'b.txt' })).body.result
  const listed = await registry.tokens.list()
  t.equal(listed.find(l => l.id === byToken.token_id)?.madeBy, maker.id, 'the link\'s token names its maker')
  t.equal(listed.find(l => l.id === byAdmin.token_id)?.madeBy, undefined)
  t.equal(await registry.tokens.revoke(maker.id), true)
  t.equal(await registry.tokens.byAccessKey(byToken.token_id), null, 'the link\'s token went with its maker: the URL answers InvalidAccessKeyId')
  t.match(await registry.tokens.byAccessKey(byAdmin.token_id), { principal: { id: byAdmin.token_id } }, 'the other link works on')
})

t.test('a link asked for with a token another process revoked after this one checked it is refused, and no token is made', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  const elsewhere = await openRegistry(dir, { fsync: false })
  await registry.create('photos')
  const app = Fastify()
  await app.register(managementApi, { prefix: '/client/v4', registry, credentials: { tokens: [token], keys: [] }, shareEndpoint: () => s3 })
  t.teardown(async () => { await app.close(); await registry.close(); await elsewhere.close() })
  const maker = await registry.tokens.create({ name: 'maker', permission: 'object-read-only', buckets: ['photos'] })
  t.equal(outcome(await call(app, 'POST', sharePath('photos'), { key: 'a.txt' }, bearer(maker.token))), '200')
  // Read again after that write: the next look within a second is answered from what was read here.
  t.equal((await call(app, 'GET', '/user/tokens/verify', undefined, bearer(maker.token))).status, 200, 'this process has read the maker')
  // Revoked by another process (a worker, the command line) within the second this one trusts what it read.
  t.equal(await elsewhere.tokens.revoke(maker.id), true)
  const before = (await registry.tokens.list()).length
  t.equal(outcome(await call(app, 'POST', sharePath('photos'), { key: 'b.txt' }, bearer(maker.token))), '403 10000', 'refused as the revoked token it is')
  t.equal((await registry.tokens.list()).length, before, 'no link token outlives its maker')
  await t.rejects(registry.tokens.create({ name: 'x', permission: 'object-read-only', madeBy: '0'.repeat(32) }), { name: 'MakerGoneError' })
})

t.test('an upload link for a key no write may name is refused, and no token is made', async t => {
  const { app, registry } = await harness(t)
  t.equal(outcome(await call(app, 'POST', sharePath('photos'), { key: 'a\u0000b', method: 'PUT' })), '400 10020')
  t.same(await registry.tokens.list(), [], 'no token')
  t.equal((await call(app, 'POST', sharePath('photos'), { key: 'a\u0000b' })).status, 200, 'a download link may name one (an object stored before the rule)')
})

t.test('a server without an S3 port makes no share links', async t => {
  const { app } = await harness(t, () => null)
  t.equal(outcome(await call(app, 'POST', sharePath('photos'), { key: 'a.txt' })), '501 10952')
})

t.test('the account check goes by the route, not by a key that ends like an exempt path', async t => {
  const { app, registry } = await harness(t)
  const reader = bearer((await registry.tokens.create({ name: 'oro', permission: 'object-read-only', buckets: ['photos'] })).token)
  const readOnly = bearer((await registry.tokens.create({ name: 'aro', permission: 'admin-read-only' })).token)
  const put = async (key: string, credential: Record<string, string>): Promise<number> =>
    (await app.inject({ method: 'PUT', url: `/client/v4/accounts/${accountId}/r2/buckets/other/objects/${key}`, headers: credential, payload: 'x' })).statusCode
  t.equal(await put('user/tokens/verify', reader), 403, 'an object token writes no object through a key ending in /user/tokens/verify')
  t.equal(await put('graphql', readOnly), 403, 'a read-only token writes no object through a key ending in /graphql')
  t.equal(await put('share-links', reader), 403)
  t.equal(await (await registry.open('other'))?.head('user/tokens/verify'), null, 'nothing was written')
})

t.test('no token value or S3 secret reaches a log line', async t => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: 'ADMIN-TOKEN-SECRET', publicBuckets: [], routes: [], fsync: false, logLevel: 'trace', logDestination: stream, registry, shareEndpoint: () => s3 })
  t.teardown(async () => { await app.close(); await registry.close() })
  const admin = { authorization: 'Bearer ADMIN-TOKEN-SECRET' }
  const created = await app.inject({ method: 'POST', url: '/client/v4/user/tokens', headers: admin, payload: { name: 'ci', permission: 'object-read-write', buckets: ['photos'] } })
  const made = created.json().result as { value: string, secretAccessKey: string, id: string }
  const mine = { authorization: `Bearer ${made.value}` }
  await app.inject({ method: 'GET', url: '/client/v4/user/tokens/verify', headers: mine })
  await app.inject({ method: 'PUT', url: '/photos/a.txt', headers: mine, payload: 'a' })
  await app.inject({ method: 'POST', url: `/client/v4/accounts/${accountId}/r2/buckets/photos/share-links`, headers: mine, payload: { key: 'a.txt' } })
  await app.inject({ method: 'GET', url: '/client/v4/user/tokens', headers: admin })
  await app.inject({ method: 'DELETE', url: `/client/v4/user/tokens/${made.id}`, headers: admin })
  await app.inject({ method: 'GET', url: '/photos/a.txt', headers: mine })
  const text = lines.join('')
  t.ok(lines.length >= 7, 'the requests were logged')
  for (const [what, secret] of [['the admin token', 'ADMIN-TOKEN-SECRET'], ['the new token', made.value], ['its S3 secret', made.secretAccessKey]]) {
    t.notOk(text.includes(secret), `${what} is in no log line`)
  }
})
