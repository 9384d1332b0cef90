import t from 'tap'
import { accountId, auth, buildApp, call, createZone } from './helpers.js'

const buckets = `/accounts/${accountId}/r2/buckets`

t.test('buckets: create, read, list with a cursor, delete', async t => {
  const { app, registry } = await buildApp(t)
  const created = await call(app, 'POST', buckets, { name: 'photos', storageClass: 'InfrequentAccess' })
  t.equal(created.status, 200)
  t.match(created.body.result, { name: 'photos', storage_class: 'InfrequentAccess' })
  t.ok(!Number.isNaN(Date.parse(created.body.result.creation_date)))
  t.ok(await registry.info('photos'), 'the gateway sees the same bucket')

  for (const name of ['alpha', 'beta', 'gamma']) t.equal((await call(app, 'POST', buckets, { name })).status, 200)
  const one = await call(app, 'GET', `${buckets}/beta`)
  t.match(one.body.result, { name: 'beta', storage_class: 'Standard' })

  const first = await call(app, 'GET', `${buckets}?per_page=2`)
  t.same(first.body.result.buckets.map((b: any) => b.name), ['alpha', 'beta'])
  t.equal(first.body.result_info.per_page, 2)
  t.ok(first.body.result_info.cursor)
  const second = await call(app, 'GET', `${buckets}?per_page=2&cursor=${first.body.result_info.cursor}`)
  t.same(second.body.result.buckets.map((b: any) => b.name), ['gamma', 'photos'])
  t.equal(second.body.result_info.cursor, '')
  t.same((await call(app, 'GET', `${buckets}?name_contains=mm`)).body.result.buckets.map((b: any) => b.name), ['gamma'])
  t.same((await call(app, 'GET', `${buckets}?direction=desc&per_page=1`)).body.result.buckets.map((b: any) => b.name), ['photos'])
  t.same((await call(app, 'GET', `${buckets}?start_after=beta`)).body.result.buckets.map((b: any) => b.name), ['gamma', 'photos'])

  const patched = await app.inject({ method: 'PATCH', url: `/client/v4${buckets}/beta`, headers: { authorization: 'Bearer test-token-0123456789abcdef', 'cf-r2-storage-class': 'InfrequentAccess' } })
  t.equal(patched.json().result.storage_class, 'InfrequentAccess')

  t.same((await call(app, 'DELETE', `${buckets}/beta`)).body.result, {})
  t.equal((await call(app, 'GET', `${buckets}/beta`)).body.errors[0].code, 10006)
})

t.test('bucket errors: exists, invalid name, missing, not empty', async t => {
  const { app, registry } = await buildApp(t)
  await call(app, 'POST', buckets, { name: 'full' })
  const exists = await call(app, 'POST', buckets, { name: 'full' })
  t.equal(exists.status, 409)
  t.equal(exists.body.errors[0].code, 10004)
  t.equal(exists.headers['x-should-retry'], 'false', 'the SDK is told not to retry')
  for (const name of ['ab', 'UPPER', 'under_score', '-lead', 'x'.repeat(64)]) {
    const bad = await call(app, 'POST', buckets, { name })
    t.equal(bad.status, 400, name)
    t.equal(bad.body.errors[0].code, 10005, name)
  }
  t.equal((await call(app, 'POST', buckets, { name: 'okay', storageClass: 'Glacier' })).body.errors[0].code, 10040)
  const missing = await call(app, 'DELETE', `${buckets}/nothing`)
  t.equal(missing.status, 404)
  t.equal(missing.body.errors[0].code, 10006)

  const bucket = await registry.open('full')
  await bucket!.put('a.txt', 'hello')
  const notEmpty = await call(app, 'DELETE', `${buckets}/full`)
  t.equal(notEmpty.status, 409)
  t.equal(notEmpty.body.errors[0].code, 10008)
  t.ok(await registry.info('full'), 'the bucket is still there')
})

t.test('lifecycle: default, replace, read back, seen by the registry', async t => {
  const { app, registry } = await buildApp(t)
  await call(app, 'POST', buckets, { name: 'uploads' })
  const initial = await call(app, 'GET', `${buckets}/uploads/lifecycle`)
  t.equal(initial.body.result.rules[0].abortMultipartUploadsTransition.condition.maxAge, 604800)
  const rules = [{ id: 'abort-1h', enabled: true, conditions: { prefix: '' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 3600 } } }]
  t.equal((await call(app, 'PUT', `${buckets}/uploads/lifecycle`, { rules })).status, 200)
  t.same((await call(app, 'GET', `${buckets}/uploads/lifecycle`)).body.result, { rules })
  t.same((await registry.info('uploads'))!.settings.lifecycle, { rules })
  const bad = await call(app, 'PUT', `${buckets}/uploads/lifecycle`, { rules: [{ id: 'x', enabled: true, conditions: { prefix: '' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: -5 } } }] })
  t.equal(bad.status, 400)
  // No body, or `null`, is refused: it never reads as "no rules" (only {"rules": []} removes them).
  for (const payload of [undefined, 'null']) {
    const response = await app.inject({ method: 'PUT', url: `/client/v4${buckets}/uploads/lifecycle`, headers: { ...auth, 'content-type': 'application/json' }, ...(payload === undefined ? {} : { payload }) })
    t.same([response.statusCode, response.json().errors[0]?.code], [400, 10040], `a body of ${String(payload)}`)
  }
  // Nor is `"rules": null` (the lock's PUT refuses it too): it removed every rule.
  const nullRules = await call(app, 'PUT', `${buckets}/uploads/lifecycle`, { rules: null })
  t.same([nullRules.status, nullRules.body.errors[0]?.code], [400, 10040], '"rules": null')
  t.match(nullRules.body.errors[0]?.message, /rules must be an array/, 'naming the field')
  const idle = await call(app, 'PUT', `${buckets}/uploads/lifecycle`, { rules: [{ id: 'idle', enabled: true, conditions: { prefix: 'q/' } }] })
  t.same([idle.status, idle.body.errors[0]?.code], [400, 10040], 'a rule with no action, which S3 would read back and refuse to take back')
  t.same((await call(app, 'GET', `${buckets}/uploads/lifecycle`)).body.result, { rules }, 'the rules stay')
  t.equal((await call(app, 'GET', `${buckets}/nothing/lifecycle`)).body.errors[0].code, 10006)
})

t.test('lifecycle: impossible ages and dates are refused (10040), unknown fields are not kept', async t => {
  const { app } = await buildApp(t)
  await call(app, 'POST', buckets, { name: 'logs' })
  const expiring = (condition: unknown): unknown => ({ rules: [{ id: 'r', enabled: true, conditions: {}, deleteObjectsTransition: { condition } }] })
  const refusals: Array<[string, unknown, RegExp]> = [
    ['an age past any date', { type: 'Age', maxAge: 1e308 }, /maxAge must be a whole number of seconds from 1 to 3153600000/],
    ['an age of 9e15 s', { type: 'Age', maxAge: 9e15 }, /maxAge/],
    ['100 years and a second', { type: 'Age', maxAge: 3153600001 }, /maxAge/],
    ['a fraction of a second', { type: 'Age', maxAge: 1.5 }, /maxAge/],
    ['no age at all', { type: 'Age', maxAge: 0 }, /maxAge/],
    ['February 30', { type: 'Date', date: '2027-02-30' }, /date must be a date/],
    ['a date without its zone', { type: 'Date', date: '2027-01-01T00:00:00' }, /date must be a date/],
    ['a date in words', { type: 'Date', date: 'March 7, 2027' }, /date must be a date/],
    ['hour 24', { type: 'Date', date: '2027-01-01T24:00:00Z' }, /date must be a date/],
    ['a year past 9999 in UTC', { type: 'Date', date: '9999-12-31T23:30:00-01:00' }, /date must be a date/],
    ['a year before 0 in UTC', { type: 'Date', date: '0000-01-01T00:30:00+01:00' }, /date must be a date/]
  ]
  for (const [what, condition, message] of refusals) {
    const answer = await call(app, 'PUT', `${buckets}/logs/lifecycle`, expiring(condition))
    t.equal(answer.status, 400, what)
    t.equal(answer.body.errors[0].code, 10040, what)
    t.match(answer.body.errors[0].message, message, what)
  }
  // What S3 could not carry back (its 255 characters of ID, XML without control characters) is refused too.
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['an id of 256 characters', 'i'.repeat(256), {}],
    ['a control character in the id', 'x\u0001y', {}],
    ['a control character in the prefix', 'r', { prefix: 'p\u0001' }]
  ]
  for (const [what, id, conditions] of cases) {
    const answer = await call(app, 'PUT', `${buckets}/logs/lifecycle`, { rules: [{ id, enabled: true, conditions, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } }] })
    t.equal(answer.body.errors?.[0]?.code, 10040, what)
  }
  const tooMany = { rules: Array.from({ length: 1001 }, (_, i) => ({ id: `r${i}`, enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } })) }
  t.equal((await call(app, 'PUT', `${buckets}/logs/lifecycle`, tooMany)).body.errors[0].code, 10040, 'at most 1000 rules')
  const century = { type: 'Age', maxAge: 3153600000 }
  const given = { rules: [{ id: 'r', enabled: true, bogus: 1, conditions: { prefix: 'a/', extra: true }, deleteObjectsTransition: { condition: century, note: 'x' }, storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Date', date: '2028-02-29' }, why: 'y' }] }] }
  t.equal((await call(app, 'PUT', `${buckets}/logs/lifecycle`, given)).status, 200, '100 years and a leap day are fine')
  t.same((await call(app, 'GET', `${buckets}/logs/lifecycle`)).body.result, {
    rules: [{ id: 'r', enabled: true, conditions: { prefix: 'a/' }, deleteObjectsTransition: { condition: century }, storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Date', date: '2028-02-29T00:00:00.000Z' } }] }]
  }, 'what is read back is what acts: the fields the rules have, nothing else, a date as its instant in UTC')
})

t.test('CORS: none, replace, read back in the API shape, delete', async t => {
  const { app, registry } = await buildApp(t)
  await call(app, 'POST', buckets, { name: 'site' })
  const none = await call(app, 'GET', `${buckets}/site/cors`)
  t.equal(none.status, 404)
  t.equal(none.body.errors[0].code, 10059)
  const rules = [{ allowed: { origins: ['https://app.test'], methods: ['GET', 'HEAD'], headers: ['range'] }, exposeHeaders: ['etag'], maxAgeSeconds: 3600 }]
  t.equal((await call(app, 'PUT', `${buckets}/site/cors`, { rules })).status, 200)
  t.same((await call(app, 'GET', `${buckets}/site/cors`)).body.result, { rules })
  t.same((await registry.info('site'))!.settings.cors, [{ allowedOrigins: ['https://app.test'], allowedMethods: ['GET', 'HEAD'], allowedHeaders: ['range'], exposeHeaders: ['etag'], maxAgeSeconds: 3600 }])
  t.equal((await call(app, 'PUT', `${buckets}/site/cors`, { rules: [{ allowed: { origins: ['*'], methods: ['TRACE'] } }] })).status, 400)
  t.equal((await call(app, 'DELETE', `${buckets}/site/cors`)).status, 200)
  t.equal((await registry.info('site'))!.settings.cors, null)
  t.equal((await call(app, 'GET', `${buckets}/site/cors`)).status, 404)
  // As S3 holds them: at most 100 rules, origins of printable ASCII with one * at most, each mistake named.
  const rule = { allowed: { origins: ['https://app.test'], methods: ['GET'] } }
  const tooMany = await call(app, 'PUT', `${buckets}/site/cors`, { rules: Array(101).fill(rule) })
  t.equal(tooMany.body.errors[0].code, 10040)
  t.match(tooMany.body.errors[0].message, /at most 100 rules/)
  t.equal((await call(app, 'PUT', `${buckets}/site/cors`, { rules: Array(100).fill(rule) })).status, 200, '100 rules fit')
  for (const origin of ['https://**.x', 'https://\u00e9.x']) {
    const bad = await call(app, 'PUT', `${buckets}/site/cors`, { rules: [{ allowed: { origins: ['https://ok.test', origin], methods: ['GET'] } }] })
    t.equal(bad.body.errors[0].code, 10040, origin)
    t.match(bad.body.errors[0].message, /rules\[0\]\.allowed\.origins\[1\] must be printable ASCII with one \* at most/, origin)
  }
  // No rule is no configuration, read back as such by this API and by S3.
  t.equal((await call(app, 'PUT', `${buckets}/site/cors`, { rules: [] })).status, 200)
  t.equal((await registry.info('site'))!.settings.cors, null)
  t.equal((await call(app, 'GET', `${buckets}/site/cors`)).body.errors[0].code, 10059)
})

t.test('custom domains: attach creates the CNAME and the route, detach removes both', async t => {
  const { app, registry } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  const other = await createZone(app, 'other.test')
  await call(app, 'POST', buckets, { name: 'assets' })
  await call(app, 'POST', buckets, { name: 'second' })
  const custom = `${buckets}/assets/domains/custom`

  const attached = await call(app, 'POST', custom, { domain: 'CDN.example.test', zoneId: zone.id, enabled: true, minTLS: '1.2' })
  t.equal(attached.status, 200)
  t.same(attached.body.result, { domain: 'cdn.example.test', enabled: true, zoneId: zone.id, minTLS: '1.2' })
  const records = (await call(app, 'GET', `/zones/${zone.id}/dns_records?name=cdn.example.test`)).body.result
  t.equal(records.length, 1)
  t.match(records[0], { type: 'CNAME', proxied: true })
  t.same((await registry.info('assets'))!.settings.domains, ['cdn.example.test'])
  t.equal(await registry.bucketForDomain('cdn.example.test'), 'assets')

  const listed = await call(app, 'GET', custom)
  t.same(listed.body.result.domains, [{ domain: 'cdn.example.test', enabled: true, status: { ownership: 'active', ssl: 'active' }, minTLS: '1.2', zoneId: zone.id, zoneName: 'example.test' }])
  t.equal((await call(app, 'GET', `${custom}/cdn.example.test`)).body.result.zoneName, 'example.test')

  t.equal((await call(app, 'POST', `${buckets}/second/domains/custom`, { domain: 'cdn.example.test', zoneId: zone.id, enabled: true })).body.errors[0].code, 10072)
  t.equal((await call(app, 'POST', custom, { domain: 'cdn.elsewhere.test', zoneId: other.id, enabled: true })).body.errors[0].code, 10071)
  t.equal((await call(app, 'POST', custom, { domain: 'x.example.test', zoneId: '0'.repeat(32), enabled: true })).body.errors[0].code, 7003)
  t.equal((await call(app, 'POST', `${buckets}/nothing/domains/custom`, { domain: 'y.example.test', zoneId: zone.id, enabled: true })).body.errors[0].code, 10006)
  await call(app, 'POST', `/zones/${zone.id}/dns_records`, { type: 'A', name: 'taken', content: '192.0.2.1', ttl: 1 })
  t.equal((await call(app, 'POST', custom, { domain: 'taken.example.test', zoneId: zone.id, enabled: true })).body.errors[0].code, 81053)

  // The CNAME goes with the attachment: changed or removed alone, the domain would be served with no record.
  const cname = records[0].id as string
  for (const [method, body] of [['DELETE', undefined], ['PATCH', { content: 'elsewhere.test' }], ['PUT', { type: 'CNAME', name: 'cdn', content: 'elsewhere.test', ttl: 1 }]] as const) {
    t.same((await call(app, method, `/zones/${zone.id}/dns_records/${cname}`, body)).body.errors?.[0]?.code, 9102, `${method} of the domain's record is refused`)
  }
  t.equal((await call(app, 'GET', `/zones/${zone.id}/dns_records/${cname}`)).body.result.content, records[0].content, 'the record is as it was')
  // The name as it was attached (any case, a trailing dot) names the attachment.
  t.equal((await call(app, 'GET', `${custom}/CDN.Example.Test.`)).status, 200, 'read by the name as attached')

  // Cipher names are kept and shown as given: only names (no control character, no sentence), and not without end.
  for (const ciphers of [['\u0000x'], ['ECDHE RSA'], ['x'.repeat(65)], Array.from({ length: 65 }, (_, i) => `C${i}`), 'ECDHE-RSA-AES128-GCM-SHA256', [7]]) {
    const refused = await call(app, 'PUT', `${custom}/cdn.example.test`, { ciphers })
    t.equal(refused.status, 400, `ciphers ${JSON.stringify(ciphers).slice(0, 40)}`)
    t.match(refused.body.errors[0], { code: 10040, message: /ciphers must be an array of at most 64 cipher names/ })
  }
  const ciphered = await call(app, 'PUT', `${custom}/cdn.example.test`, { ciphers: ['ECDHE-RSA-AES128-GCM-SHA256', 'TLS_AES_128_GCM_SHA256'] })
  t.same(ciphered.body.result.ciphers, ['ECDHE-RSA-AES128-GCM-SHA256', 'TLS_AES_128_GCM_SHA256'], 'names are taken')
  const disabled = await call(app, 'PUT', `${custom}/cdn.example.test`, { enabled: false })
  t.same(disabled.body.result, { domain: 'cdn.example.test', enabled: false, minTLS: '1.2', ciphers: ['ECDHE-RSA-AES128-GCM-SHA256', 'TLS_AES_128_GCM_SHA256'] })
  t.same((await registry.info('assets'))!.settings.domains, [], 'a disabled domain is not served')
  await call(app, 'PUT', `${custom}/cdn.example.test`, { enabled: true })
  t.same((await registry.info('assets'))!.settings.domains, ['cdn.example.test'])

  t.same((await call(app, 'DELETE', `${custom}/cdn.example.test`)).body.result, { domain: 'cdn.example.test' })
  t.same((await registry.info('assets'))!.settings.domains, [])
  t.same((await call(app, 'GET', `/zones/${zone.id}/dns_records?name=cdn.example.test`)).body.result, [])
  t.equal((await call(app, 'DELETE', `${custom}/cdn.example.test`)).body.errors[0].code, 10073)
})

t.test('a domain attached while its bucket is deleted is refused, and no attachment is kept for a later bucket of the name', async t => {
  const { app, registry } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  await call(app, 'POST', buckets, { name: 'assets' })
  // The bucket goes between the route's look at it and the attachment's transaction.
  const info = registry.info.bind(registry)
  let looks = 0
  registry.info = async name => {
    if (name === 'assets' && ++looks === 2) await registry.delete('assets')
    return await info(name)
  }
  const attached = await call(app, 'POST', `${buckets}/assets/domains/custom`, { domain: 'cdn.example.test', zoneId: zone.id, enabled: true })
  registry.info = info
  t.same([attached.status, attached.body.errors?.[0]?.code], [404, 10006], 'refused as the bucket is gone')
  await call(app, 'POST', buckets, { name: 'assets' })
  t.same((await call(app, 'GET', `${buckets}/assets/domains/custom`)).body.result.domains, [], 'a new bucket of the name has no attachment')
  t.same((await call(app, 'GET', `/zones/${zone.id}/dns_records?name=cdn.example.test`)).body.result, [], 'and no record was made')
})

t.test('deleting a bucket or a zone detaches its custom domains', async t => {
  const { app, registry } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  await call(app, 'POST', buckets, { name: 'gone' })
  await call(app, 'POST', buckets, { name: 'kept' })
  await call(app, 'POST', `${buckets}/gone/domains/custom`, { domain: 'a.example.test', zoneId: zone.id, enabled: true })
  await call(app, 'POST', `${buckets}/kept/domains/custom`, { domain: 'b.example.test', zoneId: zone.id, enabled: true })
  await call(app, 'DELETE', `${buckets}/gone`)
  t.same((await call(app, 'GET', `/zones/${zone.id}/dns_records?name=a.example.test`)).body.result, [])
  await call(app, 'DELETE', `/zones/${zone.id}`)
  t.same((await registry.info('kept'))!.settings.domains, [])
  t.same((await call(app, 'GET', `${buckets}/kept/domains/custom`)).body.result.domains, [])
})
