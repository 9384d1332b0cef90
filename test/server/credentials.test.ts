/**
 * Scoped tokens at every door, in process: each permission against the
 * HTTP routes (bearer), the management API (bearer) and the S3 port (the
 * derived key pair, through the AWS SDK), on the bucket the token names and
 * on another. The configured token and S3 pair stay the admin.
 */
import t from 'tap'
import type { AddressInfo } from 'node:net'
import {
  CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetBucketCorsCommand, GetBucketLocationCommand, GetObjectCommand, HeadBucketCommand, ListBucketsCommand, ListMultipartUploadsCommand, PutBucketCorsCommand, PutBucketLifecycleConfigurationCommand, ListObjectsV2Command,
  PutObjectCommand, S3Client
} from '@aws-sdk/client-s3'
import { buildApp } from '../../src/app.js'
import { openRegistry, type NewToken, type Permission } from '../../src/index.js'
import { buildS3App, s3AccessPolicy } from '../../src/s3/index.js'
import { mintBySignedJwt } from '../signed-jwt.js'
import { testdir } from '../testdir.js'

const adminToken = 'configured-admin-token'
const adminPair = { accessKeyId: 'configured-key', secretAccessKey: 'configured-secret' }
const account = '0123456789abcdef0123456789abcdef'

t.test('each permission at each door', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  for (const name of ['photos', 'other']) {
    await registry.create(name)
    await (await registry.open(name))!.put(`${name}.txt`, name)
  }
  const app = await buildApp({ dataDir, host: '0.0.0.0', token: adminToken, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(adminPair, adminToken, false), domains: [], logLevel: false })
  await s3.listen({ host: '127.0.0.1', port: 0 })
  const endpoint = `http://127.0.0.1:${(s3.server.address() as AddressInfo).port}`
  const clients: S3Client[] = []
  t.teardown(async () => {
    for (const c of clients) c.destroy()
    await app.close()
    await s3.close()
    await registry.close()
  })
  const clientOf = (credentials: { accessKeyId: string, secretAccessKey: string }): S3Client => {
    const c = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials, maxAttempts: 1 })
    clients.push(c)
    return c
  }
  const http = async (bearer: string, method: string, url: string, payload?: unknown): Promise<{ status: number, code: number | null, body: any }> => {
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${bearer}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: payload === undefined ? undefined : typeof payload === 'string' ? payload : JSON.stringify(payload)
    })
    const body = String(response.headers['content-type']).startsWith('application/json') ? response.json() : null
    return { status: response.statusCode, code: body?.errors?.[0]?.code ?? null, body }
  }
  const s3Outcome = async (client: S3Client, command: any): Promise<string> => {
    try {
      await client.send(command)
      return 'ok'
    } catch (err) {
      return (err as { name: string }).name
    }
  }

  const permissions: Permission[] = ['admin-read-write', 'admin-read-only', 'object-read-write', 'object-read-only']
  for (const permission of permissions) {
    const made: NewToken = await registry.tokens.create({ name: permission, permission, buckets: permission.startsWith('object') ? ['photos'] : [] })
    const writes = permission.endsWith('read-write')
    const admin = permission.startsWith('admin')
    const denied = { status: 403, code: 10950 }
    await t.test(`${permission}: HTTP routes`, async t => {
      const listed = await http(made.token, 'GET', '/')
      t.same(listed.body.result.map((b: { name: string }) => b.name).filter((n: string) => n === 'photos' || n === 'other'), admin ? ['other', 'photos'] : ['photos'], 'the buckets it may see')
      t.equal((await http(made.token, 'GET', '/photos')).status, 200, 'lists its bucket')
      t.equal((await http(made.token, 'GET', '/photos/photos.txt')).status, 200, 'reads its bucket')
      t.match(await http(made.token, 'GET', '/other/other.txt'), admin ? { status: 200 } : denied, 'another bucket')
      t.match(await http(made.token, 'PUT', '/photos/new.txt', 'x'), writes ? { status: 200 } : denied, 'writes')
      t.match(await http(made.token, 'DELETE', '/photos/new.txt'), writes ? { status: 204 } : denied, 'deletes')
      t.match(await http(made.token, 'POST', '/photos/up.txt?action=mpu-create'), writes ? { status: 200 } : denied, 'starts uploads')
    })
    await t.test(`${permission}: management API`, async t => {
      t.match(await http(made.token, 'GET', `/client/v4/accounts/${account}/r2/buckets`), admin ? { status: 200 } : denied, 'lists buckets')
      t.match(await http(made.token, 'POST', `/client/v4/accounts/${account}/r2/buckets`, { name: `made-by-${permission.replace(/-/g, '')}` }),
        permission === 'admin-read-write' ? { status: 200 } : denied, 'creates a bucket')
      t.match(await http(made.token, 'GET', '/client/v4/user/tokens'), admin ? { status: 200 } : denied, 'lists tokens')
      t.match(await http(made.token, 'GET', '/client/v4/user/tokens/verify'), { status: 200, body: { result: { id: made.id, status: 'active' } } }, 'verifies itself')
    })
    await t.test(`${permission}: S3 with the derived pair`, async t => {
      const client = clientOf({ accessKeyId: made.accessKeyId, secretAccessKey: made.secretAccessKey })
      const buckets = await client.send(new ListBucketsCommand({}))
      t.same(buckets.Buckets?.map(b => b.Name).filter(n => n === 'photos' || n === 'other'), admin ? ['other', 'photos'] : ['photos'], 'ListBuckets shows what it may see')
      t.equal(await s3Outcome(client, new HeadBucketCommand({ Bucket: 'photos' })), 'ok')
      t.equal(await s3Outcome(client, new ListObjectsV2Command({ Bucket: 'photos' })), 'ok')
      t.equal(await s3Outcome(client, new GetObjectCommand({ Bucket: 'photos', Key: 'photos.txt' })), 'ok')
      t.equal(await s3Outcome(client, new GetObjectCommand({ Bucket: 'other', Key: 'other.txt' })), admin ? 'ok' : 'AccessDenied')
      t.equal(await s3Outcome(client, new PutObjectCommand({ Bucket: 'photos', Key: 's3.txt', Body: 'x' })), writes ? 'ok' : 'AccessDenied')
      t.equal(await s3Outcome(client, new CopyObjectCommand({ Bucket: 'photos', Key: 'copy.txt', CopySource: 'other/other.txt' })),
        permission === 'admin-read-write' ? 'ok' : 'AccessDenied', 'a copy reads its source and writes its destination')
      t.equal(await s3Outcome(client, new GetBucketCorsCommand({ Bucket: 'photos' })), admin ? 'NoSuchCORSConfiguration' : 'AccessDenied', 'bucket settings')
      t.equal(await s3Outcome(client, new CreateBucketCommand({ Bucket: `s3-${permission}` })), permission === 'admin-read-write' ? 'ok' : 'AccessDenied')
    })
  }

  await t.test('the configured credentials stay the admin', async t => {
    t.equal((await http(adminToken, 'GET', '/other/other.txt')).status, 200)
    t.equal((await http(adminToken, 'GET', '/client/v4/user/tokens')).status, 200)
    t.equal(await s3Outcome(clientOf(adminPair), new GetObjectCommand({ Bucket: 'other', Key: 'other.txt' })), 'ok')
  })

  await t.test('a wrong bearer and an unknown key pair are refused as before', async t => {
    t.match(await http('not-a-token', 'GET', '/photos/photos.txt'), { status: 403, code: 40300 })
    t.equal(await s3Outcome(clientOf({ accessKeyId: 'f'.repeat(32), secretAccessKey: 'x' }), new GetObjectCommand({ Bucket: 'photos', Key: 'photos.txt' })), 'InvalidAccessKeyId')
  })

  await t.test('an object token with every bucket sees every bucket', async t => {
    const made = await registry.tokens.create({ name: 'all', permission: 'object-read-only' })
    t.equal((await http(made.token, 'GET', '/other/other.txt')).status, 200)
    t.match(await http(made.token, 'GET', '/client/v4/accounts/x/r2/buckets'), { status: 403, code: 10950 }, 'nothing on the management API')
  })
})

t.test('tokens through the management API: create, list, delete', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '0.0.0.0', token: adminToken, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  const api = async (method: string, url: string, bearer = adminToken, payload?: unknown): Promise<any> => (await app.inject({
    method: method as 'GET', url: `/client/v4${url}`, headers: { authorization: `Bearer ${bearer}` }, ...(payload === undefined ? {} : { payload: payload as object })
  })).json()

  const created = await api('POST', '/user/tokens', adminToken, { name: 'uploader', permission: 'object-read-write', buckets: ['photos'], expires_on: '2099-01-01T00:00:00Z' })
  t.match(created, { success: true, result: { name: 'uploader', status: 'active', permission: 'object-read-write', buckets: ['photos'], expires_on: /^2099-01-01T00:00:00(\.0+)?Z$/, value: /^[\w-]{40}$/ } })
  t.equal(created.result.accessKeyId, created.result.id)
  const hosted = await api('POST', '/user/tokens', adminToken, {
    name: 'hosted shape',
    policies: [{ effect: 'allow', resources: { [`com.cloudflare.edge.r2.bucket.${account}_default_photos`]: '*' }, permission_groups: [{ name: 'Workers R2 Storage Bucket Item Read' }] }]
  })
  t.match(hosted.result, { permission: 'object-read-only', buckets: ['photos'] }, 'the hosted policies shape')
  const listed = await api('GET', '/user/tokens')
  t.same(listed.result.map((r: { name: string }) => r.name), ['uploader', 'hosted shape'])
  t.notOk(JSON.stringify(listed).includes(created.result.value), 'no value in a listing')
  t.notOk(JSON.stringify(listed).includes(created.result.secretAccessKey), 'no secret in a listing')
  t.match(await api('GET', `/user/tokens/${created.result.id as string}`), { result: { id: created.result.id } })

  t.match(await api('POST', '/user/tokens', created.result.value, { name: 'x', permission: 'admin-read-write' }), { success: false, errors: [{ code: 10950 }] }, 'an object token makes no token')
  t.match(await api('POST', '/user/tokens', adminToken, { name: 'x', permission: 'root' }), { success: false, errors: [{ code: 1199 }] })
  t.match(await api('POST', '/user/tokens', adminToken, { name: 'x', permission: 'admin-read-only', buckets: ['photos'] }), { success: false, errors: [{ code: 10040 }] })

  t.match(await api('DELETE', `/user/tokens/${created.result.id as string}`), { success: true, result: { id: created.result.id } })
  t.match(await api('DELETE', `/user/tokens/${created.result.id as string}`), { success: false, errors: [{ code: 10951 }] })
  t.match(await api('GET', '/user/tokens/verify', created.result.value), { success: false, errors: [{ code: 1000, message: 'Invalid API Token. It was revoked.' }] }, 'a revoked token is no token at once in the process that revoked it, and the refusal says so')
  t.match(await api('GET', '/user/tokens', created.result.value), { success: false, errors: [{ code: 9109, message: 'Invalid access token. It was revoked.' }] })
})

t.test('a token made by a token that expires expires with it, at the latest', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  const app = await buildApp({ dataDir, host: '0.0.0.0', token: adminToken, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  const api = async (url: string, bearer: string, payload: object): Promise<any> => (await app.inject({
    method: 'POST', url: `/client/v4${url}`, headers: { authorization: `Bearer ${bearer}` }, payload
  })).json()
  const soon = new Date(Date.now() + 3600_000)
  const maker = await api('/user/tokens', adminToken, { name: 'temp admin', permission: 'admin-read-write', expires_on: soon.toISOString() })
  const forever = await api('/user/tokens', maker.result.value, { name: 'child', permission: 'admin-read-write' })
  t.equal(Date.parse(forever.result.expires_on), soon.getTime(), 'no expiry asked: the maker\'s')
  const later = await api('/user/tokens', maker.result.value, { name: 'child 2', permission: 'object-read-only', expires_on: '2099-01-01T00:00:00Z' })
  t.equal(Date.parse(later.result.expires_on), soon.getTime(), 'a later expiry: cut to the maker\'s')
  const earlier = new Date(Date.now() + 60_000)
  const sooner = await api('/user/tokens', maker.result.value, { name: 'child 3', permission: 'object-read-only', expires_on: earlier.toISOString() })
  t.equal(Date.parse(sooner.result.expires_on), earlier.getTime(), 'an earlier one is kept')
  const byAdmin = await api('/user/tokens', adminToken, { name: 'free', permission: 'object-read-only' })
  t.equal(byAdmin.result.expires_on, undefined, 'the configured token makes tokens that never expire')
  const expired = await registry.tokens.create({ name: 'over', permission: 'object-read-only', expiresOn: new Date(Date.now() + 50) })
  await new Promise(resolve => setTimeout(resolve, 100))
  t.match(await api('/accounts', expired.token, {}), { success: false, errors: [{ code: 10000, message: 'Authentication error. It expired.' }] }, 'an expired token\'s refusal says so')
})

t.test('a revoked token is refused by a loopback server without credentials, which takes any other bearer value', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: null, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  const made = await registry.tokens.create({ name: 'reader', permission: 'object-read-only', buckets: ['photos'] })
  const put = async (bearer: string): Promise<number> => (await app.inject({ method: 'PUT', url: '/photos/k', headers: { authorization: `Bearer ${bearer}` }, payload: 'x' })).statusCode
  const api = async (bearer: string): Promise<number> => (await app.inject({ method: 'GET', url: '/client/v4/user/tokens', headers: { authorization: `Bearer ${bearer}` } })).statusCode
  const verify = async (bearer: string): Promise<any> => (await app.inject({ method: 'GET', url: '/client/v4/user/tokens/verify', headers: { authorization: `Bearer ${bearer}` } })).json()
  t.equal(await put(made.token), 403, 'held to its permission')
  t.match(await verify(made.token), { success: true, result: { id: made.id } }, 'verified as itself')
  t.equal(await put('x'.repeat(40)), 200, 'a value no token has: the open server\'s admin')
  t.ok(await registry.tokens.revoke(made.id))
  t.equal(await put(made.token), 403, 'revoked: refused, not taken for the admin')
  t.match(await verify(made.token), { success: false, errors: [{ code: 1000 }] }, 'and by the management API')
  t.equal(await api('y'.repeat(40)), 200, 'which still takes a value no token has')
})

t.test('a loopback server without credentials holds a scoped token sent as X-Auth-Key to that token, as it does a bearer', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: null, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  const asKey = async (key: string): Promise<any> => (await app.inject({ method: 'GET', url: '/client/v4/user/tokens', headers: { 'x-auth-email': 'me@example.test', 'x-auth-key': key } })).json()
  const reader = await registry.tokens.create({ name: 'reader', permission: 'object-read-only', buckets: ['photos'] })
  t.match(await asKey(reader.token), { success: false, errors: [{ code: 10950 }] }, 'an object token: no management API')
  t.match(await asKey('z'.repeat(40)), { success: true }, 'a key no token has: the open server\'s admin')
  const admin = await registry.tokens.create({ name: 'admin', permission: 'admin-read-write' })
  t.match(await asKey(admin.token), { success: true }, 'an admin token: its own principal')
  t.ok(await registry.tokens.revoke(admin.id))
  t.match(await asKey(admin.token), { success: false, errors: [{ code: 9109, message: 'Invalid access token. It was revoked.' }] }, 'revoked: refused, and the refusal says so')
  const expiring = await registry.tokens.create({ name: 'brief', permission: 'admin-read-write', expiresOn: new Date(Date.now() + 50) })
  await new Promise(resolve => setTimeout(resolve, 100))
  t.match(await asKey(expiring.token), { success: false, errors: [{ code: 9109, message: 'Invalid access token. It expired.' }] }, 'expired: refused')
})

t.test('temporary credentials: made through the API, scoped to a bucket and prefixes, in the header and in presigned URLs', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  for (const name of ['photos', 'other']) {
    await registry.create(name)
    const bucket = (await registry.open(name))!
    for (const key of ['cats/tom.jpg', 'dogs/rex.jpg', 'readme.txt']) await bucket.put(key, `${name}/${key}`)
  }
  const app = await buildApp({ dataDir, host: '0.0.0.0', token: adminToken, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(adminPair, adminToken, false), domains: [], logLevel: false })
  await s3.listen({ host: '127.0.0.1', port: 0 })
  const endpoint = `http://127.0.0.1:${(s3.server.address() as AddressInfo).port}`
  const clients: S3Client[] = []
  t.teardown(async () => { for (const c of clients) c.destroy(); await app.close(); await s3.close(); await registry.close() })
  const mint = async (body: Record<string, unknown>, bearer = adminToken): Promise<any> => (await app.inject({
    method: 'POST', url: `/client/v4/accounts/${account}/r2/temp-access-credentials`, headers: { authorization: `Bearer ${bearer}` }, payload: body
  })).json()
  const outcome = async (client: S3Client, command: any): Promise<string> => {
    try {
      await client.send(command)
      return 'ok'
    } catch (err) {
      return (err as { name: string }).name
    }
  }

  const parent = await registry.tokens.create({ name: 'parent', permission: 'object-read-write', buckets: ['photos'] })
  const minted = await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'object-read-only', ttlSeconds: 600, prefixes: ['cats/'], objects: ['readme.txt'] })
  t.match(minted, { success: true, result: { accessKeyId: /^[0-9a-f]{32}$/, secretAccessKey: /^[0-9a-f]{64}$/, sessionToken: /\./ } })
  const session = minted.result as { accessKeyId: string, secretAccessKey: string, sessionToken: string }
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: session })
  clients.push(client)

  t.equal(await outcome(client, new GetObjectCommand({ Bucket: 'photos', Key: 'cats/tom.jpg' })), 'ok', 'a key under its prefix')
  t.equal(await outcome(client, new GetObjectCommand({ Bucket: 'photos', Key: 'readme.txt' })), 'ok', 'a key it names')
  t.equal(await outcome(client, new GetObjectCommand({ Bucket: 'photos', Key: 'dogs/rex.jpg' })), 'AccessDenied', 'another key')
  t.equal(await outcome(client, new GetObjectCommand({ Bucket: 'other', Key: 'cats/tom.jpg' })), 'AccessDenied', 'another bucket')
  t.equal(await outcome(client, new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'cats/' })), 'ok', 'a listing within its prefix')
  t.equal(await outcome(client, new ListObjectsV2Command({ Bucket: 'photos' })), 'AccessDenied', 'a listing of the whole bucket')
  t.equal(await outcome(client, new PutObjectCommand({ Bucket: 'photos', Key: 'cats/new.jpg', Body: 'x' })), 'AccessDenied', 'read only')
  // Clients (rclone, the AWS CLI's sync) ask whether the bucket exists first: that says no key.
  t.equal(await outcome(client, new HeadBucketCommand({ Bucket: 'photos' })), 'ok', 'HeadBucket of its bucket, limited to keys')
  t.equal(await outcome(client, new GetBucketLocationCommand({ Bucket: 'photos' })), 'ok', 'GetBucketLocation of its bucket')
  t.equal(await outcome(client, new GetBucketLocationCommand({ Bucket: 'other' })), 'AccessDenied', 'GetBucketLocation of another bucket')

  const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner')
  const inScope = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'photos', Key: 'cats/tom.jpg' }), { expiresIn: 60 })
  t.match(inScope, /X-Amz-Security-Token=/, 'the presigned URL carries the session token')
  t.equal((await fetch(inScope)).status, 200, 'a presigned URL within its scope')
  t.equal(await (await fetch(inScope)).text(), 'photos/cats/tom.jpg')
  t.equal((await fetch(await getSignedUrl(client, new GetObjectCommand({ Bucket: 'photos', Key: 'dogs/rex.jpg' }), { expiresIn: 60 }))).status, 403, 'and outside it')
  const tampered = inScope.replace(/X-Amz-Security-Token=([^&]+)/, (_m, token: string) => {
    const [body, mac] = decodeURIComponent(token).split('.')
    const terms = JSON.parse(Buffer.from(body, 'base64url').toString())
    terms.x = ['']
    return `X-Amz-Security-Token=${encodeURIComponent(`${Buffer.from(JSON.stringify(terms)).toString('base64url')}.${mac}`)}`
  })
  const refused = await fetch(tampered)
  t.equal(refused.status, 400, 'a session token whose terms were changed is refused')
  t.match(await refused.text(), '<Code>InvalidToken</Code>')

  const writer = (await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'object-read-write', ttlSeconds: 600, prefixes: ['cats/'] })).result
  const writes = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: writer })
  clients.push(writes)
  t.equal(await outcome(writes, new PutObjectCommand({ Bucket: 'photos', Key: 'cats/new.jpg', Body: 'x' })), 'ok', 'a writer within its prefix')
  t.equal(await outcome(writes, new PutObjectCommand({ Bucket: 'photos', Key: 'new.jpg', Body: 'x' })), 'AccessDenied', 'and outside it')
  t.equal(await outcome(writes, new CopyObjectCommand({ Bucket: 'photos', Key: 'cats/copy.jpg', CopySource: 'photos/dogs/rex.jpg' })), 'AccessDenied', 'a copy from outside its prefix')
  // Keys the engine keeps in NFC: a decomposed spelling of a key outside the scope names that key.
  await (await registry.open('photos'))!.put('caf\u00e9/secret.txt', 'secret')
  const cafe = (await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'object-read-write', ttlSeconds: 600, prefixes: ['cafe'] })).result
  const cafeClient = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: cafe })
  clients.push(cafeClient)
  t.equal(await outcome(cafeClient, new GetObjectCommand({ Bucket: 'photos', Key: 'caf\u00e9/secret.txt' })), 'AccessDenied', 'a key outside the prefix')
  t.equal(await outcome(cafeClient, new GetObjectCommand({ Bucket: 'photos', Key: 'cafe\u0301/secret.txt' })), 'AccessDenied', 'the same key, decomposed')
  t.equal(await outcome(cafeClient, new PutObjectCommand({ Bucket: 'photos', Key: 'cafe\u0301/secret.txt', Body: 'x' })), 'AccessDenied', 'nor overwritten so')
  t.equal(await outcome(cafeClient, new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'cafe\u0301' })), 'AccessDenied', 'nor listed so')
  t.equal((await (await registry.open('photos'))!.head('caf\u00e9/secret.txt'))?.size, 6, 'the object is as it was')
  // Uploads in progress name their keys: listed only within the scope.
  await (await registry.open('photos'))!.createMultipartUpload('dogs/private.bin')
  t.equal(await outcome(writes, new ListMultipartUploadsCommand({ Bucket: 'photos' })), 'AccessDenied', 'the uploads of the whole bucket')
  t.equal(await outcome(writes, new ListMultipartUploadsCommand({ Bucket: 'photos', Prefix: 'dogs/' })), 'AccessDenied', 'the uploads of another prefix')
  t.equal(await outcome(writes, new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'cats/big.bin' })), 'ok')
  const own = await writes.send(new ListMultipartUploadsCommand({ Bucket: 'photos', Prefix: 'cats/' }))
  t.same(own.Uploads?.map(u => u.Key), ['cats/big.bin'], 'the uploads within its prefix')

  t.match(await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'admin-read-write', ttlSeconds: 60 }), { success: false, errors: [{ code: 10040 }] }, 'no more than the parent holds')
  t.match(await mint({ bucket: 'other', parentAccessKeyId: parent.id, permission: 'object-read-only', ttlSeconds: 60 }), { success: false, errors: [{ code: 10040 }] }, 'nor on another bucket')
  t.match(await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'object-read-only', ttlSeconds: 604_801 }), { success: false, errors: [{ code: 10040 }] }, 'at most 7 days')
  t.match(await mint({ bucket: 'photos', parentAccessKeyId: 'f'.repeat(32), permission: 'object-read-only', ttlSeconds: 60 }), { success: false, errors: [{ code: 10951 }] })
  t.match(await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'object-read-only', ttlSeconds: 60 }, parent.token), { success: false, errors: [{ code: 10950 }] }, 'an object token mints nothing itself')

  // An admin session limited to keys changes no setting: a lifecycle rule of its own would expire keys outside its scope.
  const admin = await registry.tokens.create({ name: 'admin parent', permission: 'admin-read-write' })
  const limitedAdmin = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: (await mint({ bucket: 'photos', parentAccessKeyId: admin.id, permission: 'admin-read-write', ttlSeconds: 600, prefixes: ['cats/'] })).result })
  const wholeAdmin = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: (await mint({ bucket: 'photos', parentAccessKeyId: admin.id, permission: 'admin-read-write', ttlSeconds: 600 })).result })
  clients.push(limitedAdmin, wholeAdmin)
  const expireDogs = new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: [{ ID: 'dogs', Status: 'Enabled', Filter: { Prefix: 'dogs/' }, Expiration: { Days: 1 } }] } })
  t.equal(await outcome(limitedAdmin, expireDogs), 'AccessDenied', 'a lifecycle rule, from an admin session limited to a prefix')
  t.equal(await outcome(limitedAdmin, new PutBucketCorsCommand({ Bucket: 'photos', CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://evil.example'], AllowedMethods: ['GET'] }] } })), 'AccessDenied', 'CORS rules, so')
  t.equal(await outcome(limitedAdmin, new PutObjectCommand({ Bucket: 'photos', Key: 'cats/admin.jpg', Body: 'x' })), 'ok', 'its keys as before')
  t.equal(await outcome(wholeAdmin, expireDogs), 'ok', 'an admin session on the whole bucket sets it')

  // A token that expires makes no session that outlives it, whichever parent it names.
  const soon = new Date(Date.now() + 120_000)
  const expiring = await registry.tokens.create({ name: 'expiring admin', permission: 'admin-read-write', expiresOn: soon })
  const long = await mint({ bucket: 'photos', parentAccessKeyId: parent.id, permission: 'object-read-only', ttlSeconds: 604_800 }, expiring.token)
  t.equal(long.success, true, 'an expiring token mints')
  const terms = JSON.parse(Buffer.from(String(long.result.sessionToken).split('.')[0], 'base64url').toString()) as { e: number }
  t.equal(terms.e, Math.floor(soon.getTime() / 1000), 'a session that ends with its maker, not seven days on')

  await registry.tokens.revoke(parent.id)
  t.equal(await outcome(client, new GetObjectCommand({ Bucket: 'photos', Key: 'cats/tom.jpg' })), 'InvalidToken', 'revoking the parent revokes its sessions')
  t.equal((await fetch(inScope)).status, 400, 'and their presigned URLs')
})

t.test('temporary credentials minted by the client-side recipe (a JWT signed with the parent\'s secret) work on the S3 port', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const bucket = (await registry.open('photos'))!
  for (const key of ['data/a.bin', 'other/b.bin']) await bucket.put(key, key)
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(adminPair, adminToken, false), domains: [], logLevel: false })
  await s3.listen({ host: '127.0.0.1', port: 0 })
  const endpoint = `http://127.0.0.1:${(s3.server.address() as AddressInfo).port}`
  const clients: S3Client[] = []
  t.teardown(async () => { for (const c of clients) c.destroy(); await s3.close(); await registry.close() })
  const parent = await registry.tokens.create({ name: 'parent', permission: 'object-read-write', buckets: ['photos'] })
  const iat = Math.floor(Date.now() / 1000)
  const clientFor = (claims: Record<string, unknown>): S3Client => {
    const { accessKeyId, secretAccessKey, sessionToken } = mintBySignedJwt(parent, Object.assign({ sub: account, aud: new URL(endpoint).host, iss: parent.accessKeyId, iat, exp: iat + 900, bucket: 'photos' }, claims))
    const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId, secretAccessKey, sessionToken } })
    clients.push(client)
    return client
  }
  const outcome = async (client: S3Client, command: any): Promise<string> => await client.send(command).then(() => 'ok', (err: Error) => err.name)
  const reader = clientFor({ scope: 'object-read-only', actions: ['GetObject', 'HeadObject'], paths: { prefixPaths: ['data/'] } })
  t.equal(await outcome(reader, new GetObjectCommand({ Bucket: 'photos', Key: 'data/a.bin' })), 'ok', 'allowed: a key under the prefix')
  t.equal(await outcome(reader, new GetObjectCommand({ Bucket: 'photos', Key: 'other/b.bin' })), 'AccessDenied', 'refused: outside the prefix')
  t.equal(await outcome(reader, new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'data/' })), 'AccessDenied', 'refused: an operation not in its actions')
  const writer = clientFor({ scope: 'object-read-write' })
  t.equal(await outcome(writer, new PutObjectCommand({ Bucket: 'photos', Key: 'new.txt', Body: 'n' })), 'ok', 'no actions: what the scope allows')
  t.equal(await outcome(writer, new ListObjectsV2Command({ Bucket: 'photos' })), 'ok')
  const tooMuch = clientFor({ scope: 'admin-read-write' })
  t.equal(await outcome(tooMuch, new GetObjectCommand({ Bucket: 'photos', Key: 'data/a.bin' })), 'InvalidToken', 'a scope the parent does not hold')
  await registry.tokens.revoke(parent.id)
  t.equal(await outcome(reader, new GetObjectCommand({ Bucket: 'photos', Key: 'data/a.bin' })), 'InvalidToken', 'revoking the parent revokes them')
})

t.test('temporary credentials expire', async t => {
  const dataDir = testdir(t)
  let now = new Date()
  const registry = await openRegistry(dataDir, { fsync: false, clock: () => now })
  await registry.create('photos')
  await (await registry.open('photos'))!.put('k', 'v')
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(adminPair, adminToken, false), domains: [], logLevel: false })
  await s3.listen({ host: '127.0.0.1', port: 0 })
  const parent = await registry.tokens.create({ name: 'parent', permission: 'object-read-only' })
  const session = (await registry.tokens.createTemporaryCredentials(parent.id, { bucket: 'photos', permission: 'object-read-only', ttlSeconds: 60 }))!
  const client = new S3Client({ endpoint: `http://127.0.0.1:${(s3.server.address() as AddressInfo).port}`, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: session })
  t.teardown(async () => { client.destroy(); await s3.close(); await registry.close() })
  t.equal((await client.send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' })).then(() => 'ok', (err: Error) => err.name)), 'ok')
  now = new Date(now.getTime() + 61_000)
  t.equal((await client.send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' })).then(() => 'ok', (err: Error) => err.name)), 'ExpiredToken')
})
