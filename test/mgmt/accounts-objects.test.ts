/**
 * The endpoints Cloudflare's tools call besides zones and buckets: accounts,
 * memberships, the user and its token, the account's R2 object endpoints,
 * the storage-metrics GraphQL query, and JSON bodies without a JSON content
 * type. In process, with app.inject.
 */
import t from 'tap'
import { createInvite, ManagementStore } from '../../src/mgmt/index.js'
import { accountId, auth, buildApp, call } from './helpers.js'

const keyPair = { 'x-auth-email': 'user@example.test', 'x-auth-key': 'k'.repeat(37) }

t.test('accounts: the local account, then accepted invites, paged with result_info', async t => {
  const { app, registry } = await buildApp(t)
  const first = await call(app, 'GET', '/accounts')
  t.equal(first.status, 200)
  t.equal(first.body.result.length, 1, 'one account of its own')
  const local = first.body.result[0]
  t.match(local, { id: /^[0-9a-f]{32}$/, name: 'fsbucket', type: 'standard' })
  t.same(first.body.result_info, { page: 1, per_page: 20, count: 1, total_count: 1, total_pages: 1 })
  t.equal((await call(app, 'GET', '/accounts')).body.result[0].id, local.id, 'the same id every time')

  const store = new ManagementStore(registry.state('mgmt'))
  const names = ['Team A', 'Team B', 'Team C', 'Team D', 'Team E', 'Team F']
  for (const [i, name] of names.entries()) {
    const invite = await createInvite(store, { email: 'user@example.test', accountId: `${i}`.repeat(32), accountName: name, roles: ['Administrator'] })
    if (i < 5) t.equal((await call(app, 'PATCH', `/user/invites/${invite.id}`, { status: 'accepted' })).status, 200)
  }
  const page1 = await call(app, 'GET', '/accounts?per_page=5&page=1')
  t.same(page1.body.result_info, { page: 1, per_page: 5, count: 5, total_count: 6, total_pages: 2 }, 'accepted invites add accounts; a pending one does not')
  const page2 = await call(app, 'GET', '/accounts?per_page=5&page=2')
  t.same(page2.body.result.map((a: { name: string }) => a.name), ['Team E'])
  t.same((await call(app, 'GET', '/accounts?name=Team%20B')).body.result.map((a: { name: string }) => a.name), ['Team B'], 'name filter')

  t.equal((await call(app, 'GET', `/accounts/${local.id}`)).body.result.name, 'fsbucket', 'GET /accounts/{id}')
  t.equal((await call(app, 'GET', `/accounts/${'1'.repeat(32)}`)).body.result.name, 'Team B')
  const unknown = await call(app, 'GET', `/accounts/${'f'.repeat(32)}`)
  t.equal(unknown.status, 404)
  t.equal(unknown.body.errors[0].code, 7003)

  const memberships = await call(app, 'GET', '/memberships')
  t.equal(memberships.body.result.length, 6)
  t.equal(memberships.body.result_info.total_count, 6)
  t.match(memberships.body.result[0], { account: { id: local.id }, status: 'accepted', roles: ['Super Administrator - All Privileges'] })
  t.match(memberships.body.result[1], { account: { name: 'Team A' }, roles: ['Administrator'] })
  t.same((await call(app, 'GET', '/memberships?account.name=Team%20C')).body.result.map((m: any) => m.account.name), ['Team C'])
})

t.test('the user and its token', async t => {
  const { app } = await buildApp(t)
  const byToken = await call(app, 'GET', '/user')
  t.equal(byToken.status, 200)
  t.match(byToken.body.result, { id: /^[0-9a-f]{32}$/, email: 'user@fsbucket.invalid', suspended: false })
  t.equal((await call(app, 'GET', '/user', undefined, keyPair)).body.result.email, 'user@example.test', 'with the key pair, the key\'s email')

  const verified = await call(app, 'GET', '/user/tokens/verify')
  t.same(verified.body.result, { id: verified.body.result.id, status: 'active', permission: 'admin-read-write', buckets: null }, 'the configured token: admin on every bucket')
  t.match(verified.body.result.id, /^[0-9a-f]{32}$/)
  t.equal(verified.headers['cache-control'], 'no-store', 'no browser or proxy keeps an answer about the account')
  const noToken = await call(app, 'GET', '/user/tokens/verify', undefined, keyPair)
  t.equal(noToken.status, 401, 'the key pair has no token to verify')
  t.equal(noToken.headers['cache-control'], 'no-store', 'errors too')
  t.equal((await call(app, 'GET', '/user', undefined, {})).headers['cache-control'], 'no-store', 'and refusals of unauthenticated requests')
  t.equal(noToken.body.errors[0].code, 1000)
  const wrong = await call(app, 'GET', '/user/tokens/verify', undefined, { authorization: 'Bearer wrong-token' })
  t.equal(wrong.status, 401)
  t.equal(wrong.body.errors[0].code, 1000, 'a wrong token: Invalid API Token')
  t.notMatch(JSON.stringify(wrong.body), 'wrong-token', 'the token is not echoed')
})

t.test('JSON bodies sent as text/plain or without a content type', async t => {
  const { app } = await buildApp(t)
  for (const [name, headers] of [['plain', { 'content-type': 'text/plain;charset=UTF-8' }], ['none', {}]] as const) {
    const res = await app.inject({ method: 'POST', url: `/client/v4/accounts/${accountId}/r2/buckets`, headers: { ...auth, ...headers }, payload: Buffer.from(JSON.stringify({ name: `typed-${name}` })) })
    t.equal(res.statusCode, 200, `${name}: created`)
    t.equal(res.json().result.name, `typed-${name}`)
  }
  const bad = await app.inject({ method: 'POST', url: `/client/v4/accounts/${accountId}/r2/buckets`, headers: { ...auth, 'content-type': 'text/plain' }, payload: 'not json' })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().errors[0].code, 6007, 'malformed JSON is still 6007')
})

t.test('an object\'s Content-Type is stored as given through the account\'s API, malformed or not', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('things')
  const bucket = (await registry.open('things'))!
  for (const [i, type] of ['', ';;;', 'a/b/c', 'text/plain, text/html'].entries()) {
    const put = await app.inject({ method: 'PUT', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects/ct-${i}`, headers: { ...auth, 'content-type': type }, payload: 'x' })
    t.equal(put.statusCode, 200, JSON.stringify(type))
    t.equal((await bucket.head(`ct-${i}`))?.httpMetadata.contentType, type)
    const read = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects/ct-${i}`, headers: auth })
    t.equal(read.headers['content-type'], type, `${JSON.stringify(type)}: sent back as stored, as the other doors do`)
  }
})

t.test('an object read through the account\'s API never acts as the console\'s origin, and a stored value no header can carry is left out, not a 500', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('things')
  const bucket = (await registry.open('things'))!
  const url = (key: string): string => `/client/v4/accounts/${accountId}/r2/buckets/things/objects/${key}`
  // What a form upload or the binding can store: a part's Content-Type may hold any byte but CR and LF.
  await bucket.put('page.html', '<script>alert(1)</script>', { httpMetadata: { contentType: 'text/html' } })
  await bucket.put('listed', 'x', { httpMetadata: { contentType: 'text/plain;,text/html' } })
  await bucket.put('image', 'x', { httpMetadata: { contentType: 'image/png' } })
  await bucket.put('nul', 'x', { httpMetadata: { contentType: 'text/a\u0000b', contentLanguage: 'de\u0001', cacheControl: 'max-age=5' } })
  await bucket.put('utf8', 'x', { httpMetadata: { contentDisposition: 'attachment; filename="Zürich.txt"' } })

  const page = await app.inject({ method: 'GET', url: url('page.html'), headers: auth })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-type'], 'text/html', 'the stored type, as the binding keeps it')
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.match(page.headers['content-security-policy'], /^sandbox /, 'an HTML object runs in an opaque origin, never as the console\'s')
  t.match((await app.inject({ method: 'GET', url: url('listed'), headers: auth })).headers['content-security-policy'], /^sandbox /, 'a list of types is a page too')
  const image = await app.inject({ method: 'GET', url: url('image'), headers: auth })
  t.equal(image.headers['x-content-type-options'], 'nosniff')
  t.equal(image.headers['content-security-policy'], undefined, 'a passive type is served as is')

  const nul = await app.inject({ method: 'GET', url: url('nul'), headers: auth })
  t.equal(nul.statusCode, 200, 'a stored value with a control character does not fail the read')
  t.equal(nul.body, 'x')
  t.equal(nul.headers['content-type'], 'application/octet-stream', 'a type no header can carry is left out')
  t.equal(nul.headers['content-language'], undefined)
  t.equal(nul.headers['cache-control'], 'max-age=5', 'the values that can travel still do')
  t.equal(nul.headers['x-content-type-options'], 'nosniff', 'so the bytes are a download')
  const utf8 = await app.inject({ method: 'GET', url: url('utf8'), headers: auth })
  t.equal(Buffer.from(String(utf8.headers['content-disposition']), 'latin1').toString('utf8'), 'attachment; filename="Zürich.txt"', 'UTF-8 goes out as its bytes')
})

t.test('objects through the account\'s API', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('things')
  const url = (key: string, bucket = 'things'): string => `/client/v4/accounts/${accountId}/r2/buckets/${bucket}/objects/${key}`

  const put = await app.inject({ method: 'PUT', url: url('docs/a.json'), headers: { ...auth, 'content-type': 'application/json', 'cache-control': 'max-age=5', 'cf-r2-storage-class': 'InfrequentAccess' }, payload: '{"not": "parsed"' })
  t.equal(put.statusCode, 200)
  t.match(put.json(), { success: true, result: { key: 'docs/a.json', size: '16', storage_class: 'InfrequentAccess', etag: /^[0-9a-f]{32}$/, version: /^[0-9a-f]{32}$/ } }, 'the envelope describes the object')
  const bucket = await registry.open('things')
  const stored = await bucket?.get('docs/a.json')
  t.equal(stored !== null && stored !== undefined && 'body' in stored ? await stored.text() : null, '{"not": "parsed"', 'the bytes, not parsed as JSON, through the binding')

  const got = await app.inject({ method: 'GET', url: url('docs/a.json'), headers: auth })
  t.equal(got.statusCode, 200)
  t.equal(got.body, '{"not": "parsed"')
  t.equal(got.headers['content-type'], 'application/json')
  t.equal(got.headers['cache-control'], 'max-age=5')
  t.equal(got.headers.etag, `"${put.json().result.etag as string}"`)
  t.equal(got.headers['content-length'], '16')

  const expires = await app.inject({ method: 'PUT', url: url('e'), headers: { ...auth, expires: 'whenever' }, payload: 'x' })
  t.equal(expires.statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: url('e'), headers: auth })).headers.expires, 'Thu, 01 Jan 1970 00:00:00 GMT', 'an Expires that is not a date is the epoch, as the binding stores it')
  const empty = await app.inject({ method: 'PUT', url: url('empty'), headers: auth })
  t.equal(empty.json().result.size, '0', 'a PUT without a body stores an empty object')

  const listed = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects?per_page=2`, headers: auth })
  t.same(listed.json().result.map((o: { key: string }) => o.key), ['docs/a.json', 'e'], 'a page of the listing')
  t.match(listed.json().result[0], { size: 16, storage_class: 'InfrequentAccess', http_metadata: { contentType: 'application/json', cacheControl: 'max-age=5' }, custom_metadata: {} })
  t.match(listed.json().result_info, { is_truncated: true, per_page: 2, cursor: /.+/ })
  const rest = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects?per_page=2&cursor=${String(listed.json().result_info.cursor)}`, headers: auth })
  t.same(rest.json().result.map((o: { key: string }) => o.key), ['empty'], 'the cursor gives the rest')
  t.equal(rest.json().result_info.cursor, '', 'and no further cursor')
  const grouped = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects?delimiter=/`, headers: auth })
  t.same(grouped.json().result_info.delimited, ['docs/'], 'delimited prefixes')
  const badCursor = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects?cursor=nonsense`, headers: auth })
  t.equal(badCursor.json().errors[0].code, 10040, 'a cursor not returned by the listing')
  const plain = await app.inject({ method: 'GET', url: url('empty'), headers: auth })
  t.equal(plain.headers['content-type'], 'application/octet-stream', 'no content type: application/octet-stream')
  t.equal(plain.headers['cache-control'], 'private, no-store', 'no Cache-Control of its own: no browser keeps a read made with credentials')

  const deleted = await app.inject({ method: 'DELETE', url: url('docs/a.json'), headers: auth })
  t.equal(deleted.statusCode, 200, 'DELETE answers 200, never a bodiless 204')
  t.same(deleted.json(), { success: true, errors: [], messages: [], result: { key: 'docs/a.json' } })
  t.equal((await app.inject({ method: 'DELETE', url: url('docs/a.json'), headers: auth })).statusCode, 200, 'deleting a missing key succeeds')

  const missing = await app.inject({ method: 'GET', url: url('docs/a.json'), headers: auth })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().errors[0].code, 10007)
  const noBucket = await app.inject({ method: 'PUT', url: url('x', 'nope'), headers: auth, payload: 'x' })
  t.equal(noBucket.statusCode, 404)
  t.equal(noBucket.json().errors[0].code, 10006)
  const badClass = await app.inject({ method: 'PUT', url: url('x'), headers: { ...auth, 'cf-r2-storage-class': 'Glacier' }, payload: 'x' })
  t.equal(badClass.json().errors[0].code, 10040)
  const badKey = await app.inject({ method: 'PUT', url: url('k'.repeat(1100)), headers: auth, payload: 'x' })
  t.equal(badKey.statusCode, 400)
  t.equal(badKey.json().errors[0].code, 10020, 'a key over 1024 bytes')
  const unauthenticated = await app.inject({ method: 'PUT', url: url('x'), payload: 'x' })
  t.equal(unauthenticated.json().errors[0].code, 9106, 'objects need credentials too')
  t.equal(await (await registry.open('things'))?.head('x'), null, 'nothing stored by refused requests')
})

t.test('an object PUT through the account\'s API naming no storage class takes the bucket\'s (wrangler r2 object put)', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('cold', { storageClass: 'InfrequentAccess' })
  const put = await app.inject({ method: 'PUT', url: `/client/v4/accounts/${accountId}/r2/buckets/cold/objects/a.txt`, headers: auth, payload: 'x' })
  t.equal(put.json().result.storage_class, 'InfrequentAccess')
})

t.test('an object GET through the account\'s API takes the conditions the engine judges: 304, 412', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('things')
  const object = await (await registry.open('things'))!.put('a.txt', 'hello', { httpMetadata: { cacheControl: 'max-age=60' } })
  const get = async (headers: Record<string, string>): Promise<{ status: number, body: string, etag?: unknown }> => {
    const answer = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects/a.txt`, headers: { ...auth, ...headers } })
    return { status: answer.statusCode, body: answer.body, etag: answer.headers.etag }
  }
  t.same(await get({ 'if-none-match': object!.httpEtag }), { status: 304, body: '', etag: object!.httpEtag }, 'If-None-Match of its ETag')
  const notModified = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects/a.txt`, headers: { ...auth, 'if-none-match': object!.httpEtag } })
  t.equal(notModified.headers['cache-control'], 'max-age=60', 'the 304 carries the Cache-Control the 200 would have')
  t.equal((await get({ 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).status, 304, 'not modified since')
  t.same(await get({ 'if-none-match': '"other"' }), { status: 200, body: 'hello', etag: object!.httpEtag })
  const failed = await get({ 'if-match': '"other"' })
  t.same([failed.status, JSON.parse(failed.body).errors[0].code], [412, 10031], 'a failed If-Match')
  t.equal((await get({ 'if-unmodified-since': new Date(Date.now() + 60_000).toUTCString() })).body, 'hello')
  // A date equal to the Last-Modified (the upload time to the second), as RFC 9110 judges it.
  t.equal((await get({ 'if-unmodified-since': object!.uploaded.toUTCString() })).status, 200, 'not modified after its Last-Modified')
  t.equal((await get({ 'if-modified-since': object!.uploaded.toUTCString() })).status, 304, 'nor modified since it')
})

t.test('an object PUT through the account\'s API verifies Content-MD5, keeps its conditions and refuses aws-chunked framing', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('things')
  const url = `/client/v4/accounts/${accountId}/r2/buckets/things/objects/k`
  t.equal((await app.inject({ method: 'PUT', url, headers: auth, payload: 'first' })).statusCode, 200)
  const text = async (): Promise<string | null> => {
    const object = await (await registry.open('things'))!.get('k')
    return object !== null && 'body' in object ? await object.text() : null
  }
  const wrongMd5 = await app.inject({ method: 'PUT', url, headers: { ...auth, 'content-md5': Buffer.alloc(16).toString('base64') }, payload: 'second' })
  t.equal(wrongMd5.statusCode, 400)
  t.equal(wrongMd5.json().errors[0].code, 10037)
  const badMd5 = await app.inject({ method: 'PUT', url, headers: { ...auth, 'content-md5': 'nope' }, payload: 'second' })
  t.equal(badMd5.json().errors[0].code, 10040)
  const exists = await app.inject({ method: 'PUT', url, headers: { ...auth, 'if-none-match': '*' }, payload: 'second' })
  t.equal(exists.statusCode, 412)
  t.equal(exists.json().errors[0].code, 10031)
  const stale = await app.inject({ method: 'PUT', url, headers: { ...auth, 'if-match': '"00000000000000000000000000000000"' }, payload: 'second' })
  t.equal(stale.statusCode, 412)
  const framed = await app.inject({ method: 'PUT', url, headers: { ...auth, 'content-encoding': 'aws-chunked' }, payload: '6;chunk-signature=x\r\nsecond\r\n0\r\n\r\n' })
  t.equal(framed.statusCode, 400)
  t.equal(framed.json().errors[0].code, 10040)
  const key = Buffer.alloc(32, 7)
  const ssec = {
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': key.toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': (await import('node:crypto')).createHash('md5').update(key).digest('base64')
  }
  const keyed = await app.inject({ method: 'PUT', url, headers: { ...auth, ...ssec }, payload: 'secret' })
  t.same([keyed.statusCode, keyed.json().errors[0].code], [400, 10040], 'a customer key is refused, not ignored')
  t.equal(await text(), 'first', 'nothing refused was stored')
  const right = await app.inject({ method: 'PUT', url, headers: { ...auth, 'content-md5': Buffer.from('a7d6ad9d3a8e3ce5de2f9b3c5ff8a0f5', 'hex').toString('base64') }, payload: 'x' })
  t.equal(right.statusCode, 400, 'a digest of other bytes')
  const md5 = (await import('node:crypto')).createHash('md5').update('second').digest('base64')
  t.equal((await app.inject({ method: 'PUT', url, headers: { ...auth, 'content-md5': md5 }, payload: 'second' })).statusCode, 200)
  t.equal(await text(), 'second')
})

t.test('the content of an SSE-C object through the account\'s API: the engine\'s refusal (10910), not an invalid argument', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('things')
  const bucket = await registry.open('things')
  await bucket?.put('sealed', 'the plaintext', { ssecKey: 'ab'.repeat(32), sha256: (await import('node:crypto')).createHash('sha256').update('the plaintext').digest('hex') })
  const got = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects/sealed`, headers: auth })
  t.equal(got.statusCode, 400)
  t.equal(got.json().errors[0].code, 10910, 'SsecKeyRequired, as docs/errors.md lists it')
  t.notMatch(got.body, 'plaintext', 'no data in the answer')
  const listed = await app.inject({ method: 'GET', url: `/client/v4/accounts/${accountId}/r2/buckets/things/objects`, headers: auth })
  t.equal(listed.statusCode, 200, 'the object is listed')
  t.same(listed.json().result.map((o: { key: string }) => o.key), ['sealed'], 'the object is listed')
  t.notMatch(listed.body, /checksum|sha256/i, 'with no checksum value')
  t.same((await bucket?.list())?.objects[0].checksums.toJSON(), {}, 'the binding\'s list it answers from shows none either')
})

t.test('graphql: the storage metrics of a bucket', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('measured')
  const bucket = await registry.open('measured')
  await bucket?.put('a', '12345', { customMetadata: { k: 'vv' } })
  await bucket?.put('bb', '1234567890')
  const query = 'query getR2StorageMetrics($accountTag: String, $filter: R2StorageAdaptiveGroupsFilter_InputObject) { viewer { accounts(filter: { accountTag: $accountTag }) { r2StorageAdaptiveGroups(limit: 1, filter: $filter) { max { objectCount payloadSize metadataSize } } } } }'
  const res = await call(app, 'POST', '/graphql', { query, variables: { accountTag: accountId, filter: { bucketName: 'measured' } } })
  t.equal(res.status, 200)
  t.same(res.body.data.viewer.accounts[0].r2StorageAdaptiveGroups[0].max, { objectCount: 2, payloadSize: 15, metadataSize: 1 + 2 + 1 + 2 }, 'objects, bytes, and key plus custom metadata bytes')
  const eu = await call(app, 'POST', '/graphql', { query, variables: { accountTag: accountId, filter: { bucketName: 'eu_measured' } } })
  t.equal(eu.body.data.viewer.accounts[0].r2StorageAdaptiveGroups[0].max.objectCount, 2, 'a bucket of a jurisdiction, as wrangler names it (eu_<name>)')
  const none = await call(app, 'POST', '/graphql', { query, variables: { filter: { bucketName: 'no-such-bucket' } } })
  t.same(none.body.data.viewer.accounts[0].r2StorageAdaptiveGroups, [], 'no groups for a missing bucket')
  const other = await call(app, 'POST', '/graphql', { query: '{ viewer { zones { zoneTag } } }' })
  t.equal(other.body.data, null)
  t.match(other.body.errors[0].message, /r2StorageAdaptiveGroups/, 'another query says what is answered')
})

t.test('an unknown path under the prefix answers 7000', async t => {
  const { app } = await buildApp(t)
  const res = await call(app, 'GET', '/user/nothing/here')
  t.equal(res.status, 400, 'the hosted API answers 7000 with 400')
  t.equal(res.body.errors[0].code, 7000)
})
