import t from 'tap'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import {
  openBucket, openRegistry, isValidBucketName, hostName, uploadMaxAgeFromLifecycle, validateSettingsPatch
} from '../../src/index.js'
import { testdir } from '../testdir.js'

t.test('bucket names', async t => {
  const cases: Array<[string, boolean]> = [
    ['abc', true], ['a-b', true], ['default', true], ['0ab', true], ['a'.repeat(63), true],
    ['ab', false], ['a'.repeat(64), false], ['-ab', false], ['ab-', false], ['Abc', false],
    ['a_b', false], ['a.b', false], ['.mgmt', false], ['', false], ['a b', false]
  ]
  for (const [name, valid] of cases) t.equal(isValidBucketName(name), valid, JSON.stringify(name))
})

t.test('host names from Host headers', async t => {
  const cases: Array<[string, string]> = [
    ['cdn.example.test', 'cdn.example.test'],
    ['CDN.Example.Test:8787', 'cdn.example.test'],
    ['cdn.example.test.', 'cdn.example.test'],
    ['[::1]:8787', '[::1]'],
    ['127.0.0.1:80', '127.0.0.1']
  ]
  for (const [host, expected] of cases) t.equal(hostName(host), expected, host)
})

t.test('upload abort age from a lifecycle document', async t => {
  const abort = (maxAge: number, extra: object = {}) => ({
    id: 'r', enabled: true, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge } }, ...extra
  })
  const cases: Array<[string, unknown, number | undefined]> = [
    ['null', null, undefined],
    ['no rules', { rules: [] }, undefined],
    ['one rule', { rules: [abort(3600)] }, 3600_000],
    ['smallest wins', { rules: [abort(7200), abort(60)] }, 60_000],
    ['disabled rule ignored', { rules: [abort(60, { enabled: false }), abort(600)] }, 600_000],
    ['a rule whose enabled is no boolean is ignored, as the sweep ignores it', { rules: [abort(60, { enabled: 'false' }), abort(600)] }, 600_000],
    ['empty prefix applies', { rules: [abort(60, { conditions: { prefix: '' } })] }, 60_000],
    ['prefix rule ignored', { rules: [abort(60, { conditions: { prefix: 'tmp/' } })] }, undefined],
    ['other condition type ignored', { rules: [{ enabled: true, abortMultipartUploadsTransition: { condition: { type: 'Date', date: 'x' } } }] }, undefined],
    ['garbage', 'nonsense', undefined]
  ]
  for (const [name, lifecycle, expected] of cases) t.equal(uploadMaxAgeFromLifecycle(lifecycle), expected, name)
})

t.test('settings patches are checked', async t => {
  t.same(validateSettingsPatch({ domains: ['CDN.example.test:443', 'cdn.example.test'] }), { domains: ['cdn.example.test'] })
  t.same(validateSettingsPatch({ public: true, storageClass: 'InfrequentAccess' }), { public: true, storageClass: 'InfrequentAccess' })
  t.same(validateSettingsPatch({ cors: null }), { cors: null })
  const bad: Array<Record<string, unknown>> = [
    { public: 'yes' }, { storageClass: 'Glacier' }, { domains: 'x' }, { domains: [''] },
    { cors: [{ allowedOrigins: '*' }] }, { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET'], maxAgeSeconds: -1 }] },
    // Values that could never go out in a response header (every answer to an Origin would fail).
    { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET'], exposeHeaders: ['ETag\r\nX-Injected: 1'] }] },
    { cors: [{ allowedOrigins: ['https://a.test\n'], allowedMethods: ['GET'] }] },
    { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET'], maxAgeSeconds: 1e23 }] },
    { cors: [{ allowedOrigins: ['https://*.*.test'], allowedMethods: ['GET'] }] },
    // A rule id goes out in S3's XML, which carries no control character.
    { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET'], id: 'web\u0001' }] },
    { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET'], id: 'x'.repeat(256) }] }
  ]
  t.ok(validateSettingsPatch({ cors: [{ allowedOrigins: ['https://a.test'], allowedMethods: ['GET'], exposeHeaders: ['ETag'], maxAgeSeconds: 600 }] }).cors)
  for (const patch of bad) t.throws(() => validateSettingsPatch(patch as any), TypeError, JSON.stringify(patch))
})

t.test('create, info and list', async t => {
  const dir = testdir(t, { '.mgmt': {}, 'Not_A_Bucket': {}, 'stray-file': 'x' })
  const when = new Date('2026-01-02T03:04:05.678Z')
  const registry = await openRegistry(dir, { fsync: false, clock: () => when })
  t.teardown(() => registry.close())

  const created = await registry.create('photos', { public: true })
  t.equal(created.name, 'photos')
  t.same(created.creationDate, when)
  t.same(created.settings, { public: true, cors: null, lifecycle: null, domains: [], storageClass: 'Standard', notifications: [] })
  await registry.create('assets')

  t.same((await registry.list()).map(b => b.name), ['assets', 'photos'], 'sorted, dot and invalid directories skipped')
  t.equal((await registry.info('photos'))?.settings.public, true)
  t.equal(await registry.info('missing'), null)
  t.equal(await registry.info('..'), null, 'a path is never a bucket name')

  await t.rejects(registry.create('photos'), { code: 10004, status: 409 })
  await t.rejects(registry.create('No'), { code: 10005, status: 400 })
  await t.rejects(registry.create('../escape'), { code: 10005 })
  t.same(await fsp.readdir(path.dirname(dir)).then(names => names.includes('escape')), false)
})

t.test('a directory made by hand is adopted as a private bucket', async t => {
  const dir = testdir(t, { handmade: { 'hello.txt': 'hi' } })
  const registry = await openRegistry(dir, { fsync: false })
  t.teardown(() => registry.close())
  const first = await registry.info('handmade')
  t.equal(first?.settings.public, false)
  const again = await registry.info('handmade')
  t.same(again?.creationDate, first?.creationDate, 'creation date stays put')
  t.ok(await fsp.stat(path.join(dir, 'handmade', '.fsbucket', 'settings.json')))
})

t.test('settings changed by one process are seen by another at once', async t => {
  const dir = testdir(t)
  const one = await openRegistry(dir, { fsync: false })
  const two = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await one.close(); await two.close() })

  await one.create('site')
  t.equal((await two.info('site'))?.settings.public, false)
  t.equal(await two.bucketForDomain('cdn.example.test'), null)

  const updated = await one.updateSettings('site', { public: true, domains: ['CDN.example.test'] })
  t.equal(updated.public, true)
  t.equal((await two.info('site'))?.settings.public, true, 'the other registry re-reads the changed file')
  t.equal(await two.bucketForDomain('cdn.example.test:8787'), 'site', 'domain map rebuilt after a settings change')

  await two.updateSettings('site', { domains: [] })
  t.equal(await one.bucketForDomain('cdn.example.test'), null)
  t.equal((await one.info('site'))?.settings.public, true, 'a patch keeps the fields it does not name')

  await t.rejects(one.updateSettings('nope', { public: true }), { code: 10006 })
  await t.rejects(one.updateSettings('site', { public: 1 as any }), TypeError)
})

t.test('concurrent settings updates from two registries both land', async t => {
  const dir = testdir(t)
  const one = await openRegistry(dir, { fsync: false })
  const two = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await one.close(); await two.close() })
  await one.create('site')
  await Promise.all([
    one.updateSettings('site', { public: true }),
    two.updateSettings('site', { storageClass: 'InfrequentAccess' })
  ])
  // Each writer re-reads under the lock, so neither overwrites the other's field.
  const { settings } = (await one.info('site'))!
  t.equal(settings.public, true)
  t.equal(settings.storageClass, 'InfrequentAccess')
})

t.test('a put or an upload naming no storage class takes the bucket\'s, as the hosted binding does', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  t.teardown(() => registry.close())
  await registry.create('cold', { storageClass: 'InfrequentAccess' })
  const bucket = (await registry.open('cold'))!
  t.equal((await bucket.put('plain', 'x'))?.storageClass, 'InfrequentAccess')
  t.equal((await bucket.put('asked', 'x', { storageClass: 'Standard' }))?.storageClass, 'Standard', 'one asked for is kept')
  const upload = await bucket.createMultipartUpload('parts')
  t.equal((await upload.complete([await upload.uploadPart(1, 'y')])).storageClass, 'InfrequentAccess', 'an upload too')
  const odd = await openBucket(testdir(t), { fsync: false, defaultStorageClass: async () => 'GLACIER' as never })
  await t.rejects(odd.put('k', 'v'), { name: 'TypeError', message: /defaultStorageClass must give/ }, 'a default that is no storage class is refused, naming the default')
  await registry.updateSettings('cold', { storageClass: 'Standard' })
  t.equal((await bucket.put('later', 'x'))?.storageClass, 'Standard', 'the bucket\'s class as it is when the object is written')
})

t.test('open, delete and sweep go through the engine', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  t.teardown(() => registry.close())
  t.equal(await registry.open('missing'), null)
  await registry.create('full')
  await registry.create('empty')

  const bucket = await registry.open('full')
  t.equal(await registry.open('full'), bucket, 'one cached handle per process')
  await bucket!.put('a.txt', 'hello')
  await t.rejects(registry.delete('full'), { code: 10008, status: 409 })

  const empty = await registry.open('empty')
  await empty!.createMultipartUpload('pending')
  await registry.delete('empty')
  t.equal(await registry.info('empty'), null, 'uploads in progress do not keep a bucket alive')
  t.same((await fsp.readdir(dir)).filter(n => !n.startsWith('.')), ['full'])
  await t.rejects(registry.delete('empty'), { code: 10006, status: 404 })

  await registry.sweep()
  t.equal(await (await (await registry.open('full'))!.get('a.txt') as any).text(), 'hello', 'sweep leaves objects alone')
})

t.test('the sweeper honours a bucket lifecycle abort age', async t => {
  const dir = testdir(t)
  let now = new Date('2026-03-01T00:00:00Z')
  const registry = await openRegistry(dir, { fsync: false, clock: () => now })
  t.teardown(() => registry.close())
  await registry.create('short')
  await registry.create('default')
  await registry.updateSettings('short', {
    lifecycle: { rules: [{ id: 'abort-1h', enabled: true, conditions: {}, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 3600 } } }] }
  })
  const short = await (await registry.open('short'))!.createMultipartUpload('k')
  const long = await (await registry.open('default'))!.createMultipartUpload('k')
  now = new Date(now.getTime() + 2 * 3600_000)
  await registry.sweep()
  await t.rejects(short.uploadPart(1, 'x'), { code: 10024 }, 'aborted after the lifecycle age')
  t.equal((await long.uploadPart(1, 'x')).partNumber, 1, 'the 7-day default still holds elsewhere')
})

t.test('a bucket deleted and created again is a new bucket', async t => {
  const dir = testdir(t)
  let tick = Date.parse('2026-01-01T00:00:00Z')
  const registry = await openRegistry(dir, { fsync: false, clock: () => new Date(tick++) })
  const other = await openRegistry(dir, { fsync: false, clock: () => new Date(tick++) })
  t.teardown(async () => { await registry.close(); await other.close() })
  await registry.create('cycle')
  const before = await registry.open('cycle')
  await before!.put('k', 'old')
  await before!.delete('k')
  await other.delete('cycle')
  t.equal(await registry.open('cycle'), null, 'deletion by another process is seen at once')
  await other.create('cycle')
  const after = await registry.open('cycle')
  t.not(after, before, 'a fresh handle for the new incarnation')
  t.equal(await after!.head('k'), null)
})
