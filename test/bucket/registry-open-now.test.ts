/**
 * The registry's `openNow`: a bucket's info and open handle at once, for a
 * read answered in the turn its request came (src/http/fast-read.ts,
 * src/s3/fast-read.ts). It
 * answers only from what was read and is still current (settings whose
 * version has not moved, a handle open on this incarnation of the bucket),
 * and otherwise nothing, so that the caller asks `info` and `open`. Never a
 * stale answer: a change of settings made here or through another handle
 * (another process), a delete or the registry's close all end it.
 */
import t, { type Test } from 'tap'
import { openMemoryRegistry, openRegistry, type BucketRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

const registries: Array<[string, (t: Test, dir: string) => Promise<BucketRegistry>]> = [
  ['filesystem', async (_t, dir) => await openRegistry(dir, { fsync: false })],
  ['memory', async () => openMemoryRegistry()]
]

/** The next turn of the event loop, when looks shared within a turn are made again (src/stores/turn.ts). */
async function nextTurn (): Promise<void> {
  await new Promise(resolve => setImmediate(resolve))
}

for (const [store, open] of registries) {
  t.test(`${store}: openNow answers a bucket opened and unchanged, and nothing otherwise`, async t => {
    const registry = await open(t, testdir(t))
    t.teardown(() => registry.close())
    await registry.create('photos')
    await nextTurn()
    t.equal(registry.openNow('photos'), undefined, 'not opened yet: nothing')
    t.equal(registry.openNow('../photos'), undefined, 'not a bucket name: nothing')
    const bucket = await registry.open('photos')
    const now = registry.openNow('photos')
    t.equal(now?.bucket, bucket, 'opened: the same handle')
    t.equal(now?.info.name, 'photos')
    t.equal(now?.info.settings.public, false)

    await registry.updateSettings('photos', { public: true })
    await nextTurn()
    t.not(registry.openNow('photos')?.info.settings.public, false, 'after a change of settings: never the old ones')
    await registry.info('photos')
    t.equal(registry.openNow('photos')?.info.settings.public, true, 'read again: the new settings')

    await bucket?.close()
    t.equal(registry.openNow('photos'), undefined, 'a handle its user closed: nothing')
    const reopened = await registry.open('photos')
    t.equal(registry.openNow('photos')?.bucket, reopened, 'opened again: the new handle')

    await registry.delete('photos')
    await nextTurn()
    t.equal(registry.openNow('photos'), undefined, 'deleted: nothing')
    await registry.create('photos')
    await registry.info('photos')
    t.equal(registry.openNow('photos'), undefined, 'created again: nothing until it is opened')
    const again = await registry.open('photos')
    t.not(again, reopened, 'a new handle')
    t.equal(registry.openNow('photos')?.bucket, again)
    await registry.close()
    t.equal(registry.openNow('photos'), undefined, 'closed: nothing')
  })
}

t.test('filesystem: a change of settings through another registry (another process) ends openNow\'s answer at the next turn', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  const other = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await registry.close(); await other.close() })
  await registry.create('photos')
  await registry.open('photos')
  t.equal(registry.openNow('photos')?.info.settings.public, false)
  await other.updateSettings('photos', { public: true })
  await nextTurn()
  t.equal(registry.openNow('photos'), undefined, 'the settings moved: nothing, until they are read')
  await registry.info('photos')
  t.equal(registry.openNow('photos')?.info.settings.public, true, 'read again: the other process\'s settings')
  await other.delete('photos')
  await nextTurn()
  t.equal(registry.openNow('photos'), undefined, 'deleted by the other process: nothing')
  // Created again there: this registry still holds the handle of the bucket deleted, which is not the new one's.
  await other.create('photos')
  await registry.info('photos')
  t.equal(registry.openNow('photos'), undefined, 'created again by the other process: not the old handle')
  const fresh = await registry.open('photos')
  t.equal(registry.openNow('photos')?.bucket, fresh, 'until the new bucket is opened')
})

for (const [store, open] of registries) {
  t.test(`${store}: bucketForDomainNow answers from the domain map made last, and nothing once a bucket's settings change`, async t => {
    const registry = await open(t, testdir(t))
    t.teardown(() => registry.close())
    await registry.create('site')
    await registry.updateSettings('site', { domains: ['cdn.example.com'] })
    await nextTurn()
    t.equal(registry.bucketForDomainNow('cdn.example.com'), undefined, 'no map made yet: nothing')
    t.equal(await registry.bucketForDomain('cdn.example.com'), 'site')
    t.equal(registry.bucketForDomainNow('CDN.example.com:8787'), 'site', 'the map made: the bucket, for the Host as sent')
    t.equal(registry.bucketForDomainNow('localhost'), null, 'a name no bucket serves: null')
    await registry.updateSettings('site', { domains: ['www.example.com'] })
    await nextTurn()
    t.equal(registry.bucketForDomainNow('cdn.example.com'), undefined, 'settings changed: nothing, until the map is made again')
    t.equal(await registry.bucketForDomain('cdn.example.com'), null)
    t.equal(registry.bucketForDomainNow('www.example.com'), 'site')
    await registry.close()
    t.equal(registry.bucketForDomainNow('www.example.com'), undefined, 'closed: nothing')
  })
}
