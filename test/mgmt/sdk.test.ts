/**
 * The official SDK against a real fsbucket server: what "works unchanged"
 * means for the management API.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import Cloudflare from 'cloudflare'
import { buildApp } from '../../src/app.js'
import { openRegistry } from '../../src/index.js'
import { ManagementStore, createInvite } from '../../src/mgmt/index.js'
import { testdir } from '../testdir.js'

const apiToken = 'sdk-test-token-4f1c2b'
const accountId = '023e105f4ecef8ad9ca31a8372d0c353'

interface Server {
  client: Cloudflare
  port: number
  requests: () => number
  close: () => Promise<void>
}

async function startServer (dir: string): Promise<Server> {
  const registry = await openRegistry(dir, { fsync: false })
  const app = await buildApp({ dataDir: dir, host: '127.0.0.1', token: apiToken, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  let count = 0
  app.addHook('onRequest', async () => { count++ })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  const client = new Cloudflare({ apiToken, baseURL: `http://127.0.0.1:${port}/client/v4`, maxRetries: 2 })
  return {
    client,
    port,
    requests: () => count,
    close: async () => {
      await app.close()
      await registry.close()
    }
  }
}

async function server (t: Test, dir = testdir(t)): Promise<Server> {
  const started = await startServer(dir)
  t.teardown(started.close)
  return started
}

/** The error a promise rejects with. */
async function rejection (promise: Promise<unknown>): Promise<any> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

t.test('zones: create, list with auto-pagination over several pages, get', async t => {
  const { client } = await server(t)
  const names = Array.from({ length: 12 }, (_, i) => `zone${String(i).padStart(2, '0')}.test`)
  for (const name of names) await client.zones.create({ account: { id: accountId }, name })
  const seen: string[] = []
  for await (const zone of client.zones.list({ per_page: 5, order: 'name' })) seen.push(zone.name)
  t.same(seen, names, 'three pages, every zone once, in order')

  const first = await client.zones.list({ per_page: 5, account: { id: accountId }, name: 'zone03.test' })
  t.same(first.result.map(z => z.name), ['zone03.test'])
  const zone = await client.zones.get({ zone_id: first.result[0].id })
  t.equal(zone.name, 'zone03.test')
  t.equal(zone.status, 'active')

  const missing = await rejection(client.zones.get({ zone_id: '0'.repeat(32) }))
  t.type(missing, Cloudflare.NotFoundError)
  t.equal(missing.errors[0].code, 7003)
})

t.test('DNS records of each type, valid and invalid, list filters and ordering', async t => {
  const { client } = await server(t)
  const zone = await client.zones.create({ account: { id: accountId }, name: 'example.test' })
  const zone_id = zone.id

  const a = await client.dns.records.create({ zone_id, type: 'A', name: 'www', content: '192.0.2.10', ttl: 3600, proxied: false })
  t.match(a, { name: 'www.example.test', content: '192.0.2.10', ttl: 3600, proxiable: true })
  const aaaa = await client.dns.records.create({ zone_id, type: 'AAAA', name: 'www', content: '2001:db8:0:0::10', ttl: 1, proxied: true })
  t.equal(aaaa.content, '2001:db8::10')
  const cname = await client.dns.records.create({ zone_id, type: 'CNAME', name: 'docs', content: 'www.example.test', ttl: 300 })
  t.equal(cname.content, 'www.example.test')
  const srv = await client.dns.records.create({ zone_id, type: 'SRV', name: '_xmpp._tcp', data: { priority: 5, weight: 10, port: 5222, target: 'chat.example.test' }, ttl: 1 })
  t.match(srv, { content: '10 5222 chat.example.test', data: { priority: 5, weight: 10, port: 5222, target: 'chat.example.test' } })

  const invalid: Array<[string, () => Promise<unknown>, number]> = [
    ['A', async () => await client.dns.records.create({ zone_id, type: 'A', name: 'x', content: '300.1.1.1', ttl: 1 }), 9005],
    ['AAAA', async () => await client.dns.records.create({ zone_id, type: 'AAAA', name: 'x', content: '2001:db8::zz', ttl: 1 }), 9006],
    ['CNAME', async () => await client.dns.records.create({ zone_id, type: 'CNAME', name: 'x', content: 'not a host', ttl: 1 }), 9007],
    ['CNAME beside A', async () => await client.dns.records.create({ zone_id, type: 'CNAME', name: 'www', content: 'elsewhere.test', ttl: 1 }), 81053],
    ['identical', async () => await client.dns.records.create({ zone_id, type: 'A', name: 'www', content: '192.0.2.10', ttl: 1 }), 81058],
    ['SRV', async () => await client.dns.records.create({ zone_id, type: 'SRV', name: '_x._tcp', data: { priority: 1, weight: 1, port: 70000, target: 'a.test' }, ttl: 1 }), 9101],
    ['TTL', async () => await client.dns.records.create({ zone_id, type: 'A', name: 'y', content: '192.0.2.1', ttl: 5 }), 9021],
    ['proxied loopback', async () => await client.dns.records.create({ zone_id, type: 'A', name: 'y', content: '127.0.0.1', ttl: 1, proxied: true }), 9003]
  ]
  for (const [what, attempt, code] of invalid) {
    const err = await rejection(attempt())
    t.type(err, Cloudflare.BadRequestError, `${what}: BadRequestError`)
    t.equal(err.errors[0].code, code, `${what}: code`)
  }

  const onlyA = await client.dns.records.list({ zone_id, type: 'A' })
  t.same(onlyA.result.map(r => r.content), ['192.0.2.10'])
  const byName = await client.dns.records.list({ zone_id, name: { exact: 'www.example.test' }, order: 'type', direction: 'desc' })
  t.same(byName.result.map(r => r.type), ['AAAA', 'A'])
  const startsWith = await client.dns.records.list({ zone_id, name: { startswith: 'do' } })
  t.same(startsWith.result.map(r => r.name), ['docs.example.test'])
  const proxied = await client.dns.records.list({ zone_id, proxied: true })
  t.same(proxied.result.map(r => r.type), ['AAAA'])
  const byTtl = await client.dns.records.list({ zone_id, order: 'ttl', direction: 'desc' })
  t.same(byTtl.result.map(r => r.ttl), [3600, 300, 1, 1])
  const all: string[] = []
  for await (const r of client.dns.records.list({ zone_id, per_page: 5 })) all.push(r.id)
  t.equal(all.length, 4)

  const edited = await client.dns.records.edit(a.id, { zone_id, type: 'A', name: 'www', content: '192.0.2.11', ttl: 120 })
  t.equal(edited.content, '192.0.2.11')
  t.equal((await client.dns.records.get(a.id, { zone_id })).ttl, 120)
  await client.dns.records.delete(a.id, { zone_id })
  t.type(await rejection(client.dns.records.get(a.id, { zone_id })), Cloudflare.NotFoundError)
})

t.test('certificate packs and invites', async t => {
  const dir = testdir(t)
  const { client } = await server(t, dir)
  const zone = await client.zones.create({ account: { id: accountId }, name: 'example.test' })
  const packs: any[] = []
  for await (const pack of client.ssl.certificatePacks.list({ zone_id: zone.id, status: 'all' })) packs.push(pack)
  t.equal(packs.length, 1)
  t.same(packs[0].hosts, ['example.test', '*.example.test'])

  const invite = await createInvite(new ManagementStore((await openRegistry(dir, { fsync: false })).state('mgmt')), { email: 'me@example.test', accountId })
  const listed: string[] = []
  for await (const i of client.user.invites.list()) listed.push(i.id!)
  t.same(listed, [invite.id])
  const accepted = await client.user.invites.edit(invite.id, { status: 'accepted' })
  t.equal(accepted.status, 'accepted')
  const again = await rejection(client.user.invites.edit(invite.id, { status: 'accepted' }))
  t.type(again, Cloudflare.BadRequestError)
})

t.test('buckets: create, list, get, delete; conflicts are not retried', async t => {
  const { client, requests } = await server(t)
  const created = await client.r2.buckets.create({ account_id: accountId, name: 'media' })
  t.equal(created.name, 'media')
  await client.r2.buckets.create({ account_id: accountId, name: 'logs', storageClass: 'InfrequentAccess' })
  const list = await client.r2.buckets.list({ account_id: accountId })
  t.same(list.buckets?.map(b => [b.name, b.storage_class]), [['logs', 'InfrequentAccess'], ['media', 'Standard']])
  t.equal((await client.r2.buckets.get('media', { account_id: accountId })).name, 'media')

  const before = requests()
  const started = Date.now()
  const conflict = await rejection(client.r2.buckets.create({ account_id: accountId, name: 'media' }))
  t.type(conflict, Cloudflare.ConflictError)
  t.equal(conflict.errors[0].code, 10004)
  t.equal(requests() - before, 1, 'one request, no retries')
  t.ok(Date.now() - started < 400, 'no back-off')

  const invalid = await rejection(client.r2.buckets.create({ account_id: accountId, name: 'No_Such' }))
  t.type(invalid, Cloudflare.BadRequestError)
  t.equal(invalid.errors[0].code, 10005)

  await client.r2.buckets.delete('media', { account_id: accountId })
  const gone = await rejection(client.r2.buckets.get('media', { account_id: accountId }))
  t.type(gone, Cloudflare.NotFoundError)
  t.equal(gone.errors[0].code, 10006)

  await client.r2.buckets.lifecycle.update('logs', { account_id: accountId, rules: [{ id: 'abort', enabled: true, conditions: { prefix: '' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 86400 } } }] })
  t.equal((await client.r2.buckets.lifecycle.get('logs', { account_id: accountId })).rules?.[0].abortMultipartUploadsTransition?.condition?.maxAge, 86400)
  await client.r2.buckets.cors.update('logs', { account_id: accountId, rules: [{ allowed: { origins: ['*'], methods: ['GET'] } }] })
  t.same((await client.r2.buckets.cors.get('logs', { account_id: accountId })).rules, [{ allowed: { origins: ['*'], methods: ['GET'] } }])
})

t.test('user, token, accounts and memberships through the SDK', async t => {
  const { client, port } = await server(t)
  const user = await client.user.get() as { id: string, email: string }
  t.match(user, { id: /^[0-9a-f]{32}$/, email: 'user@fsbucket.invalid' })
  const verified = await client.user.tokens.verify()
  t.equal(verified.status, 'active', 'the token is active')
  const accounts = []
  for await (const account of client.accounts.list()) accounts.push(account)
  t.equal(accounts.length, 1, 'auto-pagination stops after the one account')
  t.equal(accounts[0].name, 'fsbucket')
  t.equal((await client.accounts.get({ account_id: accounts[0].id })).id, accounts[0].id)
  const memberships = []
  for await (const membership of client.memberships.list()) memberships.push(membership)
  t.equal(memberships.length, 1)
  t.equal(memberships[0].account?.id, accounts[0].id)
  t.equal(memberships[0].status, 'accepted')
  const wrong = new Cloudflare({ apiToken: 'wrong-token', baseURL: `http://127.0.0.1:${port}/client/v4`, maxRetries: 0 })
  t.type(await rejection(wrong.user.tokens.verify()), Cloudflare.AuthenticationError, 'verifying a wrong token: the SDK\'s authentication error (401)')
})

t.test('R2 objects through the SDK: upload, get, list with auto-pagination, delete', async t => {
  const { client } = await server(t)
  await client.r2.buckets.create({ account_id: accountId, name: 'sdk-objects' })
  const params = { account_id: accountId, bucket_name: 'sdk-objects' }
  const uploaded = await client.r2.buckets.objects.upload('notes/one.txt', 'first object', params)
  t.match(uploaded, { key: 'notes/one.txt', size: '12', storage_class: 'Standard', etag: /^[0-9a-f]{32}$/ })
  for (let i = 0; i < 4; i++) await client.r2.buckets.objects.upload(`many/${i}`, `object ${i}`, params)
  const got = await client.r2.buckets.objects.get('notes/one.txt', params)
  t.equal(await got.text(), 'first object', 'get answers the bytes')
  const keys: string[] = []
  for await (const object of client.r2.buckets.objects.list('sdk-objects', { account_id: accountId, per_page: 2 })) keys.push(object.key ?? '')
  t.same(keys, ['many/0', 'many/1', 'many/2', 'many/3', 'notes/one.txt'], 'the SDK follows the cursor across pages')
  t.same(await client.r2.buckets.objects.delete('notes/one.txt', params), { key: 'notes/one.txt' })
  const missing = await rejection(client.r2.buckets.objects.get('notes/one.txt', params))
  t.type(missing, Cloudflare.NotFoundError, 'a deleted object is not found')
})

t.test('wrong credentials raise the SDK’s authentication errors', async t => {
  const { port } = await server(t)
  const wrong = new Cloudflare({ apiToken: 'wrong-token', baseURL: `http://127.0.0.1:${port}/client/v4` })
  const err = await rejection(wrong.zones.list())
  t.type(err, Cloudflare.PermissionDeniedError)
  t.equal(err.errors[0].code, 9109)
  const keyed = new Cloudflare({ apiEmail: 'me@example.test', apiKey: 'wrong', baseURL: `http://127.0.0.1:${port}/client/v4` })
  t.type(await rejection(keyed.zones.list()), Cloudflare.PermissionDeniedError)
})

function getWithHost (port: number, host: string, path: string): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { host } }, res => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('a custom domain attached with the SDK serves the bucket on that Host', async t => {
  const dir = testdir(t)
  const { client, port } = await server(t, dir)
  const zone = await client.zones.create({ account: { id: accountId }, name: 'example.test' })
  await client.r2.buckets.create({ account_id: accountId, name: 'site' })
  const registry = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await registry.close() })
  await (await registry.open('site'))!.put('index.html', '<h1>hello</h1>')

  const before = await getWithHost(port, 'cdn.example.test', '/index.html')
  t.not(before.status, 200, 'not served before attaching')
  t.not(before.body, '<h1>hello</h1>')
  const attached = await client.r2.buckets.domains.custom.create('site', { account_id: accountId, domain: 'cdn.example.test', zoneId: zone.id, enabled: true })
  t.equal(attached.domain, 'cdn.example.test')
  const record = await client.dns.records.list({ zone_id: zone.id, name: { exact: 'cdn.example.test' } })
  t.equal(record.result[0]?.type, 'CNAME')

  const served = await getWithHost(port, 'cdn.example.test', '/index.html')
  t.equal(served.status, 200)
  t.equal(served.body, '<h1>hello</h1>')

  const domains = await client.r2.buckets.domains.custom.list('site', { account_id: accountId })
  t.same(domains.domains.map(d => d.domain), ['cdn.example.test'])
  await client.r2.buckets.domains.custom.delete('cdn.example.test', { account_id: accountId, bucket_name: 'site' })
  const after = await getWithHost(port, 'cdn.example.test', '/index.html')
  t.not(after.status, 200, 'not served after detaching')
  t.not(after.body, '<h1>hello</h1>')
})

t.test('state survives a restart of the server', async t => {
  const dir = testdir(t)
  const first = await startServer(dir)
  const zone = await first.client.zones.create({ account: { id: accountId }, name: 'persist.test' })
  const record = await first.client.dns.records.create({ zone_id: zone.id, type: 'A', name: 'www', content: '192.0.2.1', ttl: 1 })
  await first.client.r2.buckets.create({ account_id: accountId, name: 'kept' })
  await first.close()

  const second = await server(t, dir)
  t.equal((await second.client.zones.get({ zone_id: zone.id })).name, 'persist.test')
  t.equal((await second.client.dns.records.get(record.id, { zone_id: zone.id })).content, '192.0.2.1')
  t.equal((await second.client.r2.buckets.get('kept', { account_id: accountId })).name, 'kept')
})
