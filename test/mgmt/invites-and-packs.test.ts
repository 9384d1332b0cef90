import t from 'tap'
import { ManagementStore, createInvite } from '../../src/mgmt/index.js'
import { accountId, buildApp, call, createZone } from './helpers.js'
import { testdir } from '../testdir.js'

t.test('each zone has a universal certificate pack for the apex and the wildcard', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const res = await call(app, 'GET', `/zones/${zone.id}/ssl/certificate_packs?status=all`)
  t.equal(res.status, 200)
  t.equal(res.body.result.length, 1)
  const pack = res.body.result[0]
  t.match(pack, { type: 'universal', hosts: ['example.test', '*.example.test'], status: 'active', validity_days: 90, validation_method: 'txt', certificate_authority: 'google' })
  t.equal(pack.primary_certificate, pack.certificates[0].id)
  t.match(pack.certificates[0], { hosts: ['example.test', '*.example.test'], zone_id: zone.id, status: 'active', priority: null })
  t.ok(Date.parse(pack.certificates[0].expires_on) > Date.parse(pack.certificates[0].uploaded_on))
  t.same(res.body.result_info, { page: 1, per_page: 20, count: 1, total_count: 1, total_pages: 1 })
  t.same((await call(app, 'GET', `/zones/${zone.id}/ssl/certificate_packs/${pack.id}`)).body.result, pack)
  t.equal((await call(app, 'GET', `/zones/${zone.id}/ssl/certificate_packs/nope`)).status, 404)
  t.equal((await call(app, 'GET', `/zones/${'0'.repeat(32)}/ssl/certificate_packs`)).body.errors[0].code, 7003)
})

t.test('invites are listed, accepted or rejected once, and expire', async t => {
  let now = new Date('2025-03-01T10:00:00.000Z')
  const { app, registry } = await buildApp(t, { clock: () => now })
  const store = new ManagementStore(registry.state('mgmt'))
  const first = await createInvite(store, { email: 'me@example.test', accountId, accountName: 'Team' }, now)
  const second = await createInvite(store, { email: 'me@example.test', accountId }, now)
  const third = await createInvite(store, { email: 'me@example.test', accountId, validDays: 1 }, now)

  const listed = await call(app, 'GET', '/user/invites')
  t.same(listed.body.result.map((i: any) => i.id), [first.id, second.id, third.id])
  t.match(listed.body.result[0], { status: 'pending', organization_id: accountId, organization_name: 'Team', invited_member_email: 'me@example.test', roles: ['Administrator'] })

  const accepted = await call(app, 'PATCH', `/user/invites/${first.id}`, { status: 'accepted' })
  t.equal(accepted.status, 200)
  t.equal(accepted.body.result.status, 'accepted')
  t.equal((await call(app, 'GET', `/user/invites/${first.id}`)).body.result.status, 'accepted', 'the answer is kept')
  t.equal((await call(app, 'PATCH', `/user/invites/${first.id}`, { status: 'rejected' })).body.errors[0].code, 1005)
  t.equal((await call(app, 'PATCH', `/user/invites/${second.id}`, { status: 'rejected' })).body.result.status, 'rejected')
  t.equal((await call(app, 'PATCH', `/user/invites/${third.id}`, { status: 'maybe' })).body.errors[0].code, 1006)
  t.equal((await call(app, 'PATCH', `/user/invites/${'0'.repeat(32)}`, { status: 'accepted' })).status, 404)

  now = new Date('2025-03-03T10:00:00.000Z')
  t.equal((await call(app, 'GET', `/user/invites/${third.id}`)).body.result.status, 'expired')
  t.equal((await call(app, 'PATCH', `/user/invites/${third.id}`, { status: 'accepted' })).body.errors[0].code, 1005)
})

t.test('an invite is for an account id, for 1 to 365 whole days', async t => {
  const { registry } = await buildApp(t)
  const store = new ManagementStore(registry.state('mgmt'))
  const refused = async (request: Partial<Parameters<typeof createInvite>[1]>): Promise<unknown> => {
    try {
      await createInvite(store, { email: 'me@example.test', accountId, ...request })
      return null
    } catch (err) {
      return (err as { code?: number }).code
    }
  }
  for (const id of ['../../x', '', accountId.toUpperCase(), `${accountId}0`]) t.equal(await refused({ accountId: id }), 1199, `account ${JSON.stringify(id)}`)
  for (const days of [0, -1, 1.5, 366, Number.NaN, 1e20]) t.equal(await refused({ validDays: days }), 1199, `${days} days`)
  t.same(await store.invites(), [], 'nothing stored')
  const now = new Date('2025-03-01T10:00:00.000Z')
  const longest = await createInvite(store, { email: 'me@example.test', accountId, validDays: 365 }, now)
  t.equal(longest.expires_on, '2026-03-01T10:00:00.000000Z')
})

t.test('state survives a restart', async t => {
  const dir = testdir(t)
  const before = await buildApp(t, { dir })
  const zone = await createZone(before.app, 'example.test')
  const record = (await call(before.app, 'POST', `/zones/${zone.id}/dns_records`, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 1 })).body.result
  await before.app.close()
  await before.registry.close()

  const after = await buildApp(t, { dir })
  t.same((await call(after.app, 'GET', `/zones/${zone.id}`)).body.result, zone)
  t.same((await call(after.app, 'GET', `/zones/${zone.id}/dns_records/${record.id}`)).body.result, record)
})

t.test('two servers sharing a data directory see each other’s changes', async t => {
  const dir = testdir(t)
  const one = await buildApp(t, { dir })
  const two = await buildApp(t, { dir })
  const zone = await createZone(one.app, 'shared.test')
  await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    await call(i % 2 === 0 ? one.app : two.app, 'POST', `/zones/${zone.id}/dns_records`, { type: 'A', name: `h${i}`, content: '192.0.2.1', ttl: 1 })))
  t.equal((await call(two.app, 'GET', `/zones/${zone.id}/dns_records`)).body.result.length, 10, 'no write was lost')
})
