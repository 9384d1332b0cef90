import t from 'tap'
import { accountId, auth, buildApp, call, createZone } from './helpers.js'

t.test('a created zone is active, has the fields clients read, and can be read back', async t => {
  const { app } = await buildApp(t, { clock: () => new Date('2025-03-01T10:00:00.000Z') })
  const zone = await createZone(app, 'Example.TEST')
  t.match(zone.id, /^[0-9a-f]{32}$/)
  t.equal(zone.name, 'example.test')
  t.equal(zone.status, 'active')
  t.equal(zone.paused, false)
  t.equal(zone.type, 'full')
  t.same(zone.account, { id: accountId, name: 'fsbucket' })
  t.equal(zone.created_on, '2025-03-01T10:00:00.000000Z')
  for (const field of ['name_servers', 'original_name_servers', 'modified_on', 'activated_on', 'owner', 'plan', 'meta', 'permissions']) {
    t.ok(field in zone, field)
  }
  const got = await call(app, 'GET', `/zones/${zone.id}`)
  t.equal(got.status, 200)
  t.same(got.body, { success: true, errors: [], messages: [], result: zone })
  t.match(got.headers['content-type'], /^application\/json/)
})

t.test('zone creation refuses duplicates and invalid names', async t => {
  const { app } = await buildApp(t)
  await createZone(app, 'example.test')
  const again = await call(app, 'POST', '/zones', { name: 'example.test', account: { id: accountId } })
  t.equal(again.status, 400)
  t.equal(again.body.errors[0].code, 1061)
  for (const name of ['localhost', 'bad_.-x.test', '1.2.3.4', '', 'a..test']) {
    const bad = await call(app, 'POST', '/zones', { name, account: { id: accountId } })
    t.equal(bad.body.errors[0]?.code, 1097, `${JSON.stringify(name)} refused`)
  }
  const noAccount = await call(app, 'POST', '/zones', { name: 'other.test' })
  t.equal(noAccount.status, 400)
})

t.test('unknown and malformed zone ids answer 7003', async t => {
  const { app } = await buildApp(t)
  for (const id of ['0'.repeat(32), 'not-an-id']) {
    const res = await call(app, 'GET', `/zones/${id}`)
    t.equal(res.status, 404)
    t.equal(res.body.success, false)
    t.equal(res.body.errors[0].code, 7003)
    t.match(res.body.errors[0].message, id)
  }
})

t.test('zone list: pagination, filters and ordering', async t => {
  const { app } = await buildApp(t)
  const names = ['delta.test', 'alpha.test', 'charlie.test', 'bravo.test', 'echo.test', 'foxtrot.test', 'golf.test']
  for (const name of names) await createZone(app, name, name === 'golf.test' ? 'ffffffffffffffffffffffffffffffff' : accountId)

  const first = await call(app, 'GET', '/zones?per_page=5&order=name')
  t.same(first.body.result.map((z: any) => z.name), ['alpha.test', 'bravo.test', 'charlie.test', 'delta.test', 'echo.test'])
  t.same(first.body.result_info, { page: 1, per_page: 5, count: 5, total_count: 7, total_pages: 2 })
  const second = await call(app, 'GET', '/zones?per_page=5&page=2&order=name')
  t.same(second.body.result.map((z: any) => z.name), ['foxtrot.test', 'golf.test'])
  const past = await call(app, 'GET', '/zones?per_page=5&page=3')
  t.equal(past.status, 200)
  t.same(past.body.result, [])
  t.equal(past.body.result_info.count, 0)

  const desc = await call(app, 'GET', '/zones?order=name&direction=desc&per_page=50')
  t.equal(desc.body.result[0].name, 'golf.test')

  const byAccount = await call(app, 'GET', '/zones?account.id=ffffffffffffffffffffffffffffffff')
  t.same(byAccount.body.result.map((z: any) => z.name), ['golf.test'])
  const byName = await call(app, 'GET', '/zones?name=bravo.test')
  t.same(byName.body.result.map((z: any) => z.name), ['bravo.test'])
  const byPrefix = await call(app, 'GET', '/zones?name=starts_with:ch')
  t.same(byPrefix.body.result.map((z: any) => z.name), ['charlie.test'])
  const anyOf = await call(app, 'GET', '/zones?name=bravo.test&account.id=ffffffffffffffffffffffffffffffff&match=any&order=name')
  t.same(anyOf.body.result.map((z: any) => z.name), ['bravo.test', 'golf.test'])
  const allOf = await call(app, 'GET', '/zones?name=bravo.test&account.id=ffffffffffffffffffffffffffffffff')
  t.same(allOf.body.result, [])
  const types = await call(app, 'GET', '/zones?type=partial&type=full&status=active&per_page=50')
  t.equal(types.body.result.length, 7)
  const badPage = await call(app, 'GET', '/zones?page=zero')
  t.equal(badPage.status, 400)
  const badOrder = await call(app, 'GET', '/zones?order=colour')
  t.equal(badOrder.status, 400)
})

t.test('deleting a zone removes it and its records', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  await call(app, 'POST', `/zones/${zone.id}/dns_records`, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 1 })
  const deleted = await call(app, 'DELETE', `/zones/${zone.id}`)
  t.same(deleted.body.result, { id: zone.id })
  t.equal((await call(app, 'GET', `/zones/${zone.id}`)).status, 404)
  t.equal((await call(app, 'GET', `/zones/${zone.id}/dns_records`)).status, 404)
  t.equal((await call(app, 'DELETE', `/zones/${zone.id}`)).body.errors[0].code, 7003)
  // The name is free again.
  const again = await createZone(app, 'example.test')
  t.same((await call(app, 'GET', `/zones/${again.id}/dns_records`)).body.result, [])
})

t.test('unknown paths under the prefix answer 7000 in the envelope', async t => {
  const { app } = await buildApp(t)
  for (const [method, url] of [['GET', '/nothing'], ['POST', '/zones/abc/unknown'], ['PATCH', '/zones']] as const) {
    const res = await call(app, method, url, method === 'GET' ? undefined : {})
    t.equal(res.status, 400, `${method} ${url}`)
    t.same(res.body, { success: false, errors: [{ code: 7000, message: 'No route for that URI' }], messages: [], result: null })
  }
})

t.test('malformed JSON answers 6007; an empty JSON body is no body', async t => {
  const { app } = await buildApp(t)
  const res = await app.inject({ method: 'POST', url: '/client/v4/zones', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name": ' })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].code, 6007)
  const deep = await app.inject({ method: 'POST', url: '/client/v4/zones', headers: { ...auth, 'content-type': 'application/json' }, payload: `{"name": ${'['.repeat(100_000)}${']'.repeat(100_000)}}` })
  t.equal(deep.json().errors[0].code, 6007, 'JSON nested deeper than any body needs is malformed too')
  const zone = await createZone(app, 'example.test')
  const del = await app.inject({ method: 'DELETE', url: `/client/v4/zones/${zone.id}`, headers: { ...auth, 'content-type': 'application/json' }, payload: '' })
  t.equal(del.statusCode, 200)
})
