import t from 'tap'
import { buildApp, call, createZone } from './helpers.js'

t.test('records of each checked type are created with the fields clients read', async t => {
  const { app } = await buildApp(t, { clock: () => new Date('2025-03-01T10:00:00.000Z') })
  const zone = await createZone(app, 'example.test')
  const url = `/zones/${zone.id}/dns_records`

  const a = await call(app, 'POST', url, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 3600, proxied: false })
  t.equal(a.status, 200)
  t.match(a.body.result, { name: 'www.example.test', type: 'A', content: '192.0.2.1', ttl: 3600, proxied: false, proxiable: true, comment: null, tags: [], settings: {}, zone_id: zone.id, zone_name: 'example.test' })
  t.match(a.body.result.id, /^[0-9a-f]{32}$/)
  t.equal(a.body.result.created_on, '2025-03-01T10:00:00.000000Z')
  t.same(Object.keys(a.body.result.meta).sort(), ['auto_added', 'managed_by_apps', 'managed_by_svc_tunnel', 'source'])

  const aaaa = await call(app, 'POST', url, { type: 'AAAA', name: '@', content: '2001:0DB8:0000:0000:0000:0000:0000:0001', ttl: 1, proxied: true })
  t.match(aaaa.body.result, { name: 'example.test', content: '2001:db8::1', proxied: true, ttl: 1 })

  const cname = await call(app, 'POST', url, { type: 'CNAME', name: 'blog.example.test.', content: 'Target.Example.NET', ttl: 120 })
  t.match(cname.body.result, { name: 'blog.example.test', content: 'target.example.net', proxiable: true })

  const srv = await call(app, 'POST', url, { type: 'SRV', name: '_sip._tcp', data: { priority: 10, weight: 5, port: 5060, target: 'sip.example.test' }, ttl: 1 })
  t.match(srv.body.result, { name: '_sip._tcp.example.test', content: '5 5060 sip.example.test', priority: 10, proxiable: false, data: { priority: 10, weight: 5, port: 5060, target: 'sip.example.test' } })

  const txt = await call(app, 'POST', url, { type: 'TXT', name: '@', content: 'v=spf1 -all', ttl: 1 })
  t.match(txt.body.result, { type: 'TXT', content: 'v=spf1 -all', proxiable: false })
  const mx = await call(app, 'POST', url, { type: 'MX', name: '@', content: 'mail.example.test', priority: 10, ttl: 1 })
  t.match(mx.body.result, { type: 'MX', priority: 10 })
})

t.test('proxied records are always automatic TTL', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const res = await call(app, 'POST', `/zones/${zone.id}/dns_records`, { type: 'A', name: 'p', content: '192.0.2.7', ttl: 600, proxied: true })
  t.equal(res.body.result.ttl, 1)
})

t.test('invalid records are refused with the service codes', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const url = `/zones/${zone.id}/dns_records`
  const cases: Array<[string, Record<string, unknown>, number]> = [
    ['A not an address', { type: 'A', name: 'a', content: '1.2.3', ttl: 1 }, 9005],
    ['A with IPv6', { type: 'A', name: 'a', content: '::1', ttl: 1 }, 9005],
    ['AAAA not an address', { type: 'AAAA', name: 'a', content: '2001:db8::g', ttl: 1 }, 9006],
    ['AAAA with IPv4', { type: 'AAAA', name: 'a', content: '192.0.2.1', ttl: 1 }, 9006],
    ['CNAME not a hostname', { type: 'CNAME', name: 'c', content: 'bad host', ttl: 1 }, 9007],
    ['CNAME to itself', { type: 'CNAME', name: 'c', content: 'c.example.test', ttl: 1 }, 9007],
    ['proxied to loopback', { type: 'A', name: 'a', content: '127.0.0.1', ttl: 1, proxied: true }, 9003],
    ['proxied to private', { type: 'AAAA', name: 'a', content: 'fd00::1', ttl: 1, proxied: true }, 9003],
    ['proxied TXT', { type: 'TXT', name: 't', content: 'x', ttl: 1, proxied: true }, 9004],
    ['TTL too small', { type: 'A', name: 'a', content: '192.0.2.1', ttl: 30 }, 9021],
    ['TTL too large', { type: 'A', name: 'a', content: '192.0.2.1', ttl: 86401 }, 9021],
    ['TTL not an integer', { type: 'A', name: 'a', content: '192.0.2.1', ttl: 60.5 }, 9021],
    ['label too long', { type: 'A', name: 'x'.repeat(64), content: '192.0.2.1', ttl: 1 }, 9000],
    ['bad character', { type: 'A', name: 'a!b', content: '192.0.2.1', ttl: 1 }, 9000],
    ['hyphen at the end', { type: 'A', name: 'a-', content: '192.0.2.1', ttl: 1 }, 9000],
    ['unknown type', { type: 'BOGUS', name: 'a', content: 'x', ttl: 1 }, 9020],
    ['SRV port out of range', { type: 'SRV', name: '_s._tcp', data: { priority: 1, weight: 1, port: 65536, target: 'x.test' }, ttl: 1 }, 9101],
    ['SRV negative weight', { type: 'SRV', name: '_s._tcp', data: { priority: 1, weight: -1, port: 1, target: 'x.test' }, ttl: 1 }, 9101],
    ['SRV bad target', { type: 'SRV', name: '_s._tcp', data: { priority: 1, weight: 1, port: 1, target: 'not valid' }, ttl: 1 }, 9101],
    ['SRV without data', { type: 'SRV', name: '_s._tcp', ttl: 1 }, 9101],
    ['TXT without content', { type: 'TXT', name: 't', ttl: 1 }, 9009]
  ]
  for (const [what, body, code] of cases) {
    const res = await call(app, 'POST', url, body)
    t.equal(res.status, 400, `${what}: status`)
    t.equal(res.body.errors[0]?.code, code, `${what}: code`)
  }
  t.same((await call(app, 'GET', url)).body.result, [], 'nothing was stored')
})

t.test('record content and names are bounded as the hosted API bounds them', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const url = `/zones/${zone.id}/dns_records`
  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ['TXT with CR/LF', { type: 'TXT', name: 't', content: 'v=spf1 -all\r\nfake: line', ttl: 1 }, 9051, 'Invalid TXT record. Record may only contain printable ASCII!'],
    ['TXT with an escape sequence', { type: 'TXT', name: 't', content: '\u001b]0;title\u0007', ttl: 1 }, 9051, 'Invalid TXT record. Record may only contain printable ASCII!'],
    ['TXT of 100 KB', { type: 'TXT', name: 't', content: 'x'.repeat(100 * 1024), ttl: 1 }, 9015, 'Record content exceeds the allowed length of 4096 wire format bytes.'],
    ['TXT over 4096 wire bytes', { type: 'TXT', name: 't', content: 'x'.repeat(4081), ttl: 1 }, 9015, 'Record content exceeds the allowed length of 4096 wire format bytes.'],
    ['MX with a line feed', { type: 'MX', name: '@', content: 'mail.example.test\nx', priority: 10, ttl: 1 }, 9007, 'Content for MX record is invalid.'],
    ['CAA of 100 KB', { type: 'CAA', name: '@', content: `0 issue "${'x'.repeat(100 * 1024)}"`, ttl: 1 }, 9015, 'Record content exceeds the allowed length of 4096 wire format bytes.'],
    ['CNAME with a trailing line feed', { type: 'CNAME', name: 'c', content: 'target.example.net\n', ttl: 1 }, 9007, 'Content for CNAME record is invalid.'],
    ['A with a trailing line feed', { type: 'A', name: 'a', content: '192.0.2.1\n', ttl: 1 }, 9005, 'Content for A record must be a valid IPv4 address.'],
    ['name with a line feed', { type: 'A', name: 'www\n', content: '192.0.2.1', ttl: 1 }, 9000, 'DNS name is invalid.'],
    ['name over 255 bytes', { type: 'A', name: Array(5).fill('x'.repeat(59)).join('.'), content: '192.0.2.1', ttl: 1 }, 9000, 'DNS name is invalid.']
  ]
  for (const [what, body, code, message] of cases) {
    const res = await call(app, 'POST', url, body)
    t.equal(res.status, 400, `${what}: status`)
    t.same(res.body.errors, [{ code, message }], `${what}: error`)
  }
  t.same((await call(app, 'GET', url)).body.result, [], 'nothing was stored')

  const longest = await call(app, 'POST', url, { type: 'TXT', name: 't', content: 'x'.repeat(4080), ttl: 1 })
  t.equal(longest.status, 200, '4080 characters are 4096 bytes on the wire')
  const patched = await call(app, 'PATCH', `${url}/${longest.body.result.id as string}`, { content: 'a\nb' })
  t.equal(patched.body.errors[0]?.code, 9051, 'a PATCH is held to the same rules')
  t.equal((await call(app, 'POST', url, { type: 'TXT', name: 't', content: 'y'.repeat(4080), ttl: 1 })).status, 200)
  const third = await call(app, 'POST', url, { type: 'TXT', name: 't', content: 'z'.repeat(33), ttl: 1 })
  t.same(third.body.errors, [{ code: 83011, message: 'Combined content length of records with this name and type exceeds the limit.' }], 'over 8192 characters for one name and type')
  t.equal((await call(app, 'POST', url, { type: 'TXT', name: 't', content: 'z'.repeat(32), ttl: 1 })).status, 200, '8192 characters together')
})

t.test('CNAME exclusivity and identical records', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const url = `/zones/${zone.id}/dns_records`
  t.equal((await call(app, 'POST', url, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 1 })).status, 200)
  t.equal((await call(app, 'POST', url, { type: 'A', name: 'www', content: '192.0.2.2', ttl: 1 })).status, 200, 'two A records on one name')
  const same = await call(app, 'POST', url, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 300 })
  t.equal(same.body.errors[0].code, 81058)
  const cname = await call(app, 'POST', url, { type: 'CNAME', name: 'www', content: 'other.test', ttl: 1 })
  t.equal(cname.status, 400)
  t.equal(cname.body.errors[0].code, 81053)
  t.equal((await call(app, 'POST', url, { type: 'CNAME', name: 'alias', content: 'other.test', ttl: 1 })).status, 200)
  t.equal((await call(app, 'POST', url, { type: 'AAAA', name: 'alias', content: '2001:db8::1', ttl: 1 })).body.errors[0].code, 81053)
  t.equal((await call(app, 'POST', url, { type: 'TXT', name: 'alias', content: 'hello', ttl: 1 })).status, 200, 'other types may share the name in this emulation')
})

t.test('read, patch, put and delete one record', async t => {
  let now = new Date('2025-03-01T10:00:00.000Z')
  const { app } = await buildApp(t, { clock: () => now })
  const zone = await createZone(app, 'example.test')
  const url = `/zones/${zone.id}/dns_records`
  const created = (await call(app, 'POST', url, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 300, comment: 'first' })).body.result
  t.same((await call(app, 'GET', `${url}/${created.id}`)).body.result, created)

  now = new Date('2025-03-02T10:00:00.000Z')
  const patched = (await call(app, 'PATCH', `${url}/${created.id}`, { content: '192.0.2.9' })).body.result
  t.match(patched, { id: created.id, name: 'www.example.test', content: '192.0.2.9', ttl: 300, comment: 'first', created_on: created.created_on, modified_on: '2025-03-02T10:00:00.000000Z' })
  const badPatch = await call(app, 'PATCH', `${url}/${created.id}`, { content: 'nope' })
  t.equal(badPatch.body.errors[0].code, 9005)

  const put = (await call(app, 'PUT', `${url}/${created.id}`, { type: 'CNAME', name: 'www', content: 'target.test', ttl: 1 })).body.result
  t.match(put, { id: created.id, type: 'CNAME', content: 'target.test', comment: null })
  const putWithoutName = await call(app, 'PUT', `${url}/${created.id}`, { type: 'A', content: '192.0.2.1', ttl: 1 })
  t.equal(putWithoutName.body.errors[0].code, 9000, 'PUT replaces the whole record, so it needs a name')

  const missing = await call(app, 'GET', `${url}/${'0'.repeat(32)}`)
  t.equal(missing.status, 404)
  t.equal(missing.body.errors[0].code, 81044)
  t.equal((await call(app, 'PATCH', `${url}/${'0'.repeat(32)}`, { content: '192.0.2.1' })).body.errors[0].code, 81044)

  t.same((await call(app, 'DELETE', `${url}/${created.id}`)).body.result, { id: created.id })
  t.equal((await call(app, 'DELETE', `${url}/${created.id}`)).body.errors[0].code, 81044)
})

t.test('record list filters and ordering', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const url = `/zones/${zone.id}/dns_records`
  const records = [
    { type: 'A', name: 'b', content: '192.0.2.2', ttl: 300 },
    { type: 'A', name: 'a', content: '192.0.2.3', ttl: 1, proxied: true },
    { type: 'AAAA', name: 'a', content: '2001:db8::1', ttl: 120 },
    { type: 'CNAME', name: 'c', content: 'a.example.test', ttl: 60 },
    { type: 'TXT', name: 'a', content: 'hello world', ttl: 1 }
  ]
  for (const r of records) t.equal((await call(app, 'POST', url, r)).status, 200)
  const list = async (q: string): Promise<any[]> => (await call(app, 'GET', `${url}?${q}`)).body.result
  const names = (rs: any[]): string[] => rs.map(r => `${r.type} ${r.name}`)

  t.same(names(await list('')), ['A a.example.test', 'A b.example.test', 'AAAA a.example.test', 'CNAME c.example.test', 'TXT a.example.test'])
  t.same(names(await list('type=AAAA')), ['AAAA a.example.test'])
  t.same(names(await list('type=A&type=CNAME')), ['A a.example.test', 'A b.example.test', 'CNAME c.example.test'])
  t.same(names(await list('name=a.example.test&type=A')), ['A a.example.test'])
  t.same(names(await list('name.startswith=b')), ['A b.example.test'])
  t.same(names(await list('content.contains=world')), ['TXT a.example.test'])
  t.same(names(await list('content.exact=192.0.2.2')), ['A b.example.test'])
  t.same(names(await list('proxied=true')), ['A a.example.test'])
  t.same(names(await list('type=CNAME&proxied=true&match=any')), ['A a.example.test', 'CNAME c.example.test'])
  t.same((await list('order=ttl')).map(r => r.ttl), [1, 1, 60, 120, 300])
  t.same((await list('order=ttl&direction=desc')).map(r => r.ttl), [300, 120, 60, 1, 1])
  t.same((await list('order=content')).map(r => r.content), ['192.0.2.2', '192.0.2.3', '2001:db8::1', 'a.example.test', 'hello world'])
  t.same((await list('order=name&direction=desc'))[0].name, 'c.example.test')

  const page = await call(app, 'GET', `${url}?per_page=5&page=2`)
  t.same(page.body.result, [])
  t.same(page.body.result_info, { page: 2, per_page: 5, count: 0, total_count: 5, total_pages: 1 })
  t.equal((await call(app, 'GET', `${url}?order=colour`)).status, 400)
  t.equal((await call(app, 'GET', `${url}?proxied=maybe`)).status, 400)
})

t.test('records of an unknown zone answer 7003', async t => {
  const { app } = await buildApp(t)
  const res = await call(app, 'POST', `/zones/${'a'.repeat(32)}/dns_records`, { type: 'A', name: 'a', content: '192.0.2.1', ttl: 1 })
  t.equal(res.status, 404)
  t.equal(res.body.errors[0].code, 7003)
})
