/**
 * The conformance suite of the port's `RegistryStorage`: the same tests run
 * against every registry storage (the data directory's, PostgreSQL's).
 * Each subtest opens fresh storage, and a second handle on the same place
 * (as another process or gateway opens it) where the guarantee is shared:
 * places and their races, settings documents (versions, whole reads, the
 * settings lock), the change token, the stores a storage opens, and the
 * state documents' transactions.
 */
import { execFileSync } from 'node:child_process'
import { Readable } from 'node:stream'
import type { Test } from 'tap'
import type { RegistryStorage, SettingsDocument } from '../../src/bucket/port.js'
import { shareChecksWithinTurns } from '../../src/index.js'
import { createRegistry, secretOfToken, TOKEN_CACHE_MS } from '../../src/bucket/index.js'
import { arrivals, lookCommitArrive, phases, unshared } from '../stores/arrivals.js'
import { code } from './store.js'

export interface RegistryStorageUnderTest {
  name: string
  /**
   * Fresh storage for the subtest, and a function opening a second handle on
   * the same place; closed at the subtest's end. `elsewhere` is the source of
   * a module's first statements that open a handle on the same place in
   * another process, as `storage`; absent for a storage no other process
   * can reach (memory), which skips the tests across processes.
   */
  open: (t: Test) => Promise<{ storage: RegistryStorage, another: () => Promise<RegistryStorage>, elsewhere?: string }>
}

function settings (n: number, padding = 0): SettingsDocument {
  return { format: 1, creationDate: new Date(1_700_000_000_000 + n).toISOString(), settings: { publicRead: n % 2 === 0, corsRules: [], note: 'x'.repeat(padding) } as never }
}

/** The names of places a registry would take for buckets (a storage may also list its own dot-directories). */
async function bucketNames (storage: RegistryStorage): Promise<string[]> {
  return (await storage.names()).filter(name => !name.startsWith('.')).sort()
}

/** Writes a bucket's settings from another process (`elsewhere` opens its handle), returning when it has committed. */
function writeSettingsElsewhere (elsewhere: string, name: string, document: SettingsDocument): void {
  execFileSync(process.execPath, ['--input-type=module', '-e', `${elsewhere}
    await storage.writeSettings(${JSON.stringify(name)}, ${JSON.stringify(document)})
    await storage.close?.()`])
}

const tick = async (): Promise<void> => await new Promise(resolve => setImmediate(resolve))

export function registryStorageConformance (t: Test, sut: RegistryStorageUnderTest): void {
  t.test(`${sut.name}: places are created once, listed, and removed at once`, async t => {
    const { storage } = await sut.open(t)
    t.same(await bucketNames(storage), [])
    t.equal(await storage.placeExists('alpha'), false)
    t.equal(await storage.createPlace('alpha'), true)
    t.equal(await storage.createPlace('alpha'), false, 'a second creation finds it')
    t.equal(await storage.createPlace('beta'), true)
    t.equal(await storage.placeExists('alpha'), true)
    t.same(await bucketNames(storage), ['alpha', 'beta'])
    t.equal(await storage.removePlace('alpha'), true)
    t.equal(await storage.removePlace('alpha'), false, 'gone already')
    t.equal(await storage.placeExists('alpha'), false)
    t.same(await bucketNames(storage), ['beta'])
    t.equal(await storage.createPlace('alpha'), true, 'the name can be taken again')
    t.equal(await storage.readSettings('alpha'), null, 'with no settings of the removed place')
  })

  t.test(`${sut.name}: of racing creators of one place exactly one wins, across handles`, async t => {
    const { storage, another } = await sut.open(t)
    const other = await another()
    const outcomes = await Promise.all(Array.from({ length: 8 }, async (_, i) => await (i % 2 === 0 ? storage : other).createPlace('race')))
    t.equal(outcomes.filter(Boolean).length, 1)
    t.equal(await other.placeExists('race'), true)
    const removals = await Promise.all([storage.removePlace('race'), other.removePlace('race')])
    t.same(removals.filter(Boolean).length, 1, 'and of racing removers exactly one')
  })

  t.test(`${sut.name}: settings documents: read as written, versions move with each write`, async t => {
    const { storage, another } = await sut.open(t)
    await storage.createPlace('b')
    t.equal(await storage.readSettings('b'), null)
    t.equal(await storage.settingsVersion('b'), null, 'no version without a document')
    await storage.writeSettings('b', settings(1))
    t.same(await storage.readSettings('b'), settings(1))
    const first = await storage.settingsVersion('b')
    t.type(first, 'string')
    t.equal(await storage.settingsVersion('b'), first, 'stable while nothing is written')
    const other = await another()
    await other.writeSettings('b', settings(2))
    t.same(await storage.readSettings('b'), settings(2), 'a write through another handle is read at once')
    const second = await storage.settingsVersion('b')
    t.not(second, first)
    await storage.writeSettings('b', settings(2))
    t.not(await storage.settingsVersion('b'), second, 'even a write of the same document moves it')
    t.equal(await code(storage.writeSettings('ghost', settings(1))), 10006, 'no settings for a place that does not exist')
    if (storage.settingsVersionNow !== undefined) {
      const now = storage.settingsVersionNow('b')
      t.equal(now, await storage.settingsVersion('b'), 'settingsVersionNow answers the same version at once')
      await other.writeSettings('b', settings(3))
      t.not(storage.settingsVersionNow('b'), now, 'and moves with a write through another handle')
      t.equal(storage.settingsVersionNow('b'), await storage.settingsVersion('b'))
      t.equal(storage.settingsVersionNow('ghost'), null, 'and null without a document')
    }
  })

  t.test(`${sut.name}: a reader sees a whole settings document while writers replace it`, async t => {
    const { storage, another } = await sut.open(t)
    await storage.createPlace('b')
    const documents = Array.from({ length: 12 }, (_, i) => settings(i, 20_000 + i * 997))
    await storage.writeSettings('b', documents[0])
    const other = await another()
    let writing = true
    const seen: Array<SettingsDocument | null> = []
    const reader = (async () => {
      while (writing) {
        seen.push(await other.readSettings('b'))
        await tick()
      }
    })()
    for (const document of documents.slice(1)) await storage.writeSettings('b', document)
    writing = false
    await reader
    const whole = seen.every(doc => documents.some(d => JSON.stringify(d) === JSON.stringify(doc)))
    t.ok(whole, `${seen.length} reads, each one of the documents written`)
  })

  t.test(`${sut.name}: the settings lock serializes read-modify-writes across handles`, async t => {
    const { storage, another } = await sut.open(t)
    const other = await another()
    await storage.createPlace('b')
    await storage.writeSettings('b', settings(0))
    let inside = 0
    let most = 0
    await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      await (i % 2 === 0 ? storage : other).withSettingsLock('b', async () => {
        inside++
        most = Math.max(most, inside)
        const current = await storage.readSettings('b') as SettingsDocument
        await tick()
        await storage.writeSettings('b', { ...current, creationDate: new Date(Date.parse(current.creationDate) + 1).toISOString() })
        inside--
      })
    }))
    t.equal(most, 1, 'one holder at a time')
    t.equal((await storage.readSettings('b'))?.creationDate, new Date(1_700_000_000_008).toISOString(), 'no increment lost')
    t.equal(await storage.withSettingsLock('b', async () => 'result'), 'result')
    await t.rejects(storage.withSettingsLock('b', async () => { throw new Error('refused') }), /refused/)
    t.equal(await other.withSettingsLock('b', async () => 'free again'), 'free again', 'a throwing holder releases the lock')
  })

  t.test(`${sut.name}: with looks shared within a turn, as a server shares them, a change finished before the turn is seen`, async t => {
    const { storage, another } = await sut.open(t)
    const other = await another()
    await storage.createPlace('b')
    await storage.writeSettings('b', settings(1))
    shareChecksWithinTurns(() => true)
    t.teardown(() => { shareChecksWithinTurns(() => false) })
    for (let round = 2; round < 5; round++) {
      const [version, token] = [await storage.settingsVersion('b'), await storage.changeToken()]
      await other.writeSettings('b', settings(round))
      await other.touch()
      await tick()
      t.not(await storage.settingsVersion('b'), version, `round ${round}: the settings version moved through the other handle`)
      t.not(await storage.changeToken(), token, `round ${round}: the change token too`)
      t.same(await storage.readSettings('b'), settings(round))
    }
  })

  t.test(`${sut.name}: with looks shared, a look taken in a timer or an immediate is not handed to a request the next poll reads`, async t => {
    const { storage, elsewhere } = await sut.open(t)
    if (elsewhere === undefined) {
      t.pass('no other process can reach this storage')
      return
    }
    await storage.createPlace('b')
    await storage.writeSettings('b', settings(1))
    shareChecksWithinTurns(() => true)
    t.teardown(() => { shareChecksWithinTurns(() => false) })
    const requests = await arrivals(t)
    const rounds = 2
    let n = 1
    for (const phase of phases) {
      let missed = 0
      for (let round = 0; round < rounds; round++) {
        const document = settings(++n)
        const seen = await lookCommitArrive(requests, phase,
          () => { void Promise.resolve(storage.settingsVersion('b')).catch(() => {}) },
          () => { writeSettingsElsewhere(elsewhere, 'b', document) },
          async () => await storage.settingsVersion('b'))
        if (seen !== await unshared(async () => await storage.settingsVersion('b'))) missed++
      }
      t.equal(missed, 0, `${phase}: the request sees the settings written before it was sent (missed in ${missed} of ${rounds} rounds)`)
    }
    t.same(await storage.readSettings('b'), settings(n), 'the last document written elsewhere')
  })

  t.test(`${sut.name}: the change token moves when a place comes or goes, and on touch`, async t => {
    const { storage, another } = await sut.open(t)
    const other = await another()
    const tokens = [await storage.changeToken()]
    t.equal(await storage.changeToken(), tokens[0], 'stable while nothing changes')
    await other.createPlace('b')
    tokens.push(await storage.changeToken())
    await other.touch()
    tokens.push(await storage.changeToken())
    await other.removePlace('b')
    tokens.push(await storage.changeToken())
    for (let i = 1; i < tokens.length; i++) t.not(tokens[i], tokens[i - 1], `change ${i} is seen through the other handle`)
    if (storage.changeTokenNow !== undefined) {
      t.equal(storage.changeTokenNow(), tokens.at(-1), 'changeTokenNow answers the same token at once')
      await other.touch()
      t.not(storage.changeTokenNow(), tokens.at(-1), 'and moves with it')
    }
  })

  t.test(`${sut.name}: the stores it opens share a bucket's objects across handles`, async t => {
    const { storage, another } = await sut.open(t)
    await storage.createPlace('b')
    const one = await storage.openStore('b')
    const two = await (await another()).openStore('b')
    t.teardown(async () => { await one.close(); await two.close() })
    const object = {
      key: 'k', version: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', size: 5, etag: 'e', uploaded: 1, storageClass: 'Standard' as const, httpMetadata: {}, customMetadata: {}, checksums: {}
    }
    const staged = await one.stage(Readable.from([Buffer.from('bytes')]), object.version)
    t.equal(await one.commit('k', object, staged, () => true), true)
    t.same(await two.head('k'), object)
    await two.delete(['k'])
    t.equal(await one.head('k'), null)
  })

  t.test(`${sut.name}: state documents: whole reads, transactions applied whole or not at all`, async t => {
    const { storage, another } = await sut.open(t)
    const state = storage.state('mgmt')
    const other = (await another()).state('mgmt')
    t.same(await state.read('zones.json', { zones: [] }), { zones: [] }, 'the fallback when missing')
    await state.transaction(async tx => {
      const zones = await tx.load<{ zones: string[] }>('zones.json', { zones: [] })
      zones.zones.push('one')
      const record = await tx.load<{ n: number }>('records/one.json', { n: 0 })
      record.n = 1
    })
    t.same(await other.read('zones.json', null), { zones: ['one'] }, 'read through another handle')
    t.same(await other.read('records/one.json', null), { n: 1 })
    await t.rejects(state.transaction(async tx => {
      (await tx.load<{ zones: string[] }>('zones.json', { zones: [] })).zones.push('two')
      tx.remove('records/one.json')
      throw new Error('changed my mind')
    }), /changed my mind/)
    t.same(await state.read('zones.json', null), { zones: ['one'] }, 'a failed transaction writes nothing')
    t.same(await state.read('records/one.json', null), { n: 1 }, 'and removes nothing')
    await other.transaction(async tx => { tx.remove('records/one.json') })
    t.equal(await state.read('records/one.json', null), null, 'removed')
    t.same(await storage.state('other').read('zones.json', 'none'), 'none', 'areas are separate')
    t.throws(() => storage.state('Bad-Area'), TypeError)
  })

  t.test(`${sut.name}: concurrent state transactions lose no change, across handles`, async t => {
    const { storage, another } = await sut.open(t)
    const states = [storage.state('mgmt'), (await another()).state('mgmt')]
    await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      await states[i % 2].transaction(async tx => {
        const counter = await tx.load<{ n: number }>('counter.json', { n: 0 })
        await tick()
        counter.n++
      })
    }))
    t.same(await storage.state('mgmt').read('counter.json', null), { n: 10 })
  })

  t.test(`${sut.name}: of racing deletes of one bucket, across handles, exactly one succeeds; the others are NoSuchBucket`, async t => {
    const { storage, another } = await sut.open(t)
    const here = createRegistry(storage)
    const there = createRegistry(await another())
    for (let round = 0; round < 8; round++) {
      const name = `racing-${round}`
      await here.create(name)
      const outcomes = await Promise.allSettled([here.delete(name), there.delete(name), here.delete(name), there.delete(name)])
      const codes = outcomes.map(outcome => outcome.status === 'fulfilled' ? 'deleted' : (outcome.reason as { code?: unknown }).code ?? String(outcome.reason))
      t.same(codes.filter(c => c === 'deleted').length, 1, `round ${round}: one delete succeeded (${codes.join(', ')})`)
      t.same(codes.filter(c => c !== 'deleted'), [10006, 10006, 10006], `round ${round}: the others are NoSuchBucket`)
      t.equal(await there.info(name), null)
    }
    // Deterministically: the other handle's delete opens the bucket's store only once this one's delete removed it.
    const other = await another()
    let release = (): void => {}
    const gate = new Promise<void>(resolve => { release = resolve })
    const gated = new Proxy(other, {
      get (target, property) {
        if (property === 'openStore') return async (name: string) => { await gate; return await target.openStore(name) }
        const value = Reflect.get(target, property) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      }
    })
    const late = createRegistry(gated)
    await here.create('late')
    const lateDelete = late.delete('late').then(() => 'deleted', (err: { code?: unknown }) => err.code ?? String(err))
    await new Promise(resolve => setTimeout(resolve, 50))
    await here.delete('late')
    release()
    t.equal(await lateDelete, 10006, 'a delete whose bucket went while it opened it is NoSuchBucket')
  })

  t.test(`${sut.name}: token records: kept hashed, seen through another handle, revoked and expired`, async t => {
    const { storage, another } = await sut.open(t)
    const here = createRegistry(storage).tokens
    const there = createRegistry(await another()).tokens
    t.equal(await there.byAccessKey('0'.repeat(32)), null, 'the other handle has read the records (none yet)')
    const made = await here.create({ name: 'reader', permission: 'object-read-only', buckets: ['beta', 'alpha', 'beta'] })
    t.match(made, { id: /^[0-9a-f]{32}$/, token: /^[A-Za-z0-9_-]{40}$/, permission: 'object-read-only', buckets: ['alpha', 'beta'], expiresOn: null })
    t.equal(made.accessKeyId, made.id, 'the access key id is the token id')
    t.equal(made.secretAccessKey, secretOfToken(made.token), 'the secret is the SHA-256 of the value')
    const stored = JSON.stringify(await storage.state('tokens').read('tokens.json', null))
    t.notOk(stored.includes(made.token), 'the value itself is not stored')
    // Within TOKEN_CACHE_MS of the other handle's read: a miss reads again, so a new token works at once everywhere.
    t.match(await there.byValue(made.token), { principal: { kind: 'token', id: made.id, permission: 'object-read-only', buckets: ['alpha', 'beta'] } })
    const second = await here.create({ name: 'writer', permission: 'object-read-write' })
    t.match(await there.byAccessKey(second.id), { record: { secretAccessKey: second.secretAccessKey } }, 'by access key too')
    t.match(await there.byAccessKey(made.id), { record: { secretAccessKey: made.secretAccessKey } })
    t.equal(await there.byValue(`${made.token}x`), null, 'another value is no token')
    const listed = await there.list()
    t.same(listed.map(l => l.id), [made.id, second.id])
    t.notOk('secretAccessKey' in listed[0], 'a listing holds no secret')

    t.equal(await here.revoke(second.id), true)
    t.equal(await here.revoke(made.id), true)
    t.equal(await here.revoke(made.id), false, 'gone already')
    await new Promise(resolve => setTimeout(resolve, TOKEN_CACHE_MS + 50))
    t.same(await there.byValue(made.token), { revoked: true }, 'the other handle sees the revocation once its cache ran out')
    const kept = JSON.stringify(await storage.state('tokens').read('tokens.json', null))
    t.notOk(kept.includes(made.secretAccessKey), 'what is kept of a revoked token holds not even its S3 secret')
    t.equal(await there.byAccessKey(made.id), null)

    // A token made for another (a share link's, madeBy) ends with it, and so do those made for it in turn; others stay.
    const maker = await here.create({ name: 'maker', permission: 'object-read-write', buckets: ['alpha'] })
    const link = await here.create({ name: 'share alpha/a', permission: 'object-read-only', buckets: ['alpha'], madeBy: maker.id })
    const linkOfLink = await here.create({ name: 'share alpha/b', permission: 'object-read-only', buckets: ['alpha'], madeBy: link.id })
    const bystander = await here.create({ name: 'share alpha/c', permission: 'object-read-only', buckets: ['alpha'] })
    t.equal((await here.list()).find(l => l.id === link.id)?.madeBy, maker.id, 'the listing names the maker')
    t.equal(await here.revoke(maker.id), true)
    t.same((await here.list()).map(l => l.id), [bystander.id], 'the maker and what was made for it are gone together')
    await new Promise(resolve => setTimeout(resolve, TOKEN_CACHE_MS + 50))
    t.equal(await there.byAccessKey(link.id), null, 'a link made for a revoked token no longer opens')
    t.same(await there.byValue(linkOfLink.token), { revoked: true }, 'nor one made for that one')
    t.match(await there.byAccessKey(bystander.id), { principal: { id: bystander.id } })
    t.equal(await here.revoke(bystander.id), true)

    let now = new Date()
    const clocked = createRegistry(storage, { clock: () => now }).tokens
    const brief = await clocked.create({ name: 'brief', permission: 'admin-read-only', expiresOn: new Date(now.getTime() + 60_000) })
    t.match(await clocked.byValue(brief.token), { principal: { permission: 'admin-read-only' } })
    now = new Date(now.getTime() + 61_000)
    t.match(await clocked.byValue(brief.token), { expired: { id: brief.id } }, 'an expired token is found as expired')
    t.match(await clocked.list(), [{ id: brief.id, expired: true }])
    await t.rejects(clocked.create({ name: 'x', permission: 'admin-read-write', buckets: ['alpha'] }), TypeError, 'admin permissions take no buckets')
    await t.rejects(clocked.create({ name: 'x', permission: 'root' as never }), TypeError)
    await t.rejects(clocked.create({ name: 'x', permission: 'object-read-only', expiresOn: new Date(0) }), RangeError)
  })
}
