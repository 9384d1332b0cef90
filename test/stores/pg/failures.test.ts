/**
 * Failures of the catalog beneath running gateways: a connection the
 * server ends while a gateway works between two statements (a restart, a
 * failover, a session an operator terminated) fails that request with
 * 10908 and leaves the process running; a bucket delete cut short after
 * its bucket was closed to writes can be run again, and what one cut short
 * after its commit left is swept; a write racing a bucket delete on another
 * gateway answers 10006 and brings no directory back; a catalog string that
 * is wrong, or no URL at all, is reported without its password, however the
 * password is written; a password rotated under running gateways answers
 * 10908, as an outage does, not 10001;
 * a gateway frozen inside a transaction or a settings update loses it (and
 * its locks) after a while, one still linking files does not; a statement
 * the gateway stopped waiting for never lands later; a data directory that
 * is not the shared one is refused; a file missing under a transaction (a
 * part as its upload completes) is a storage failure, not 10908.
 */
import t, { type Test } from 'tap'
import { createRegistry, openRegistry, type BucketObjectBody } from '../../../src/index.js'
import { randomBytes } from 'node:crypto'
import { existsSync, renameSync } from 'node:fs'
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { BucketEngine } from '../../../src/bucket/index.js'
import { BlobFiles } from '../../../src/stores/fs/blobs.js'
import { isUnavailable, PgCatalog, redactUrl } from '../../../src/stores/pg/catalog.js'
import { PgRegistryStorage } from '../../../src/stores/pg/registry-storage.js'
import { PgStore } from '../../../src/stores/pg/store.js'
import { testdir } from '../../testdir.js'
import { deletedBucketLeftovers } from '../deleted-buckets.js'
import { startPostgres } from './server.js'

const server = await startPostgres({ passwords: true })
t.teardown(async () => { await server.destroy() })

/** The URL of a new database of the server, owned by `owner`. */
async function database (name: string, owner = 'postgres'): Promise<string> {
  const admin = await PgCatalog.connect(server.url())
  await admin.query('preparing', `CREATE DATABASE ${name} OWNER ${owner}`)
  await admin.close()
  return server.url(name)
}

/** Ends the server session `pid` as `pg_terminate_backend` (or a fast shutdown) does, and waits until its client has heard. */
async function terminate (admin: PgCatalog, pid: number): Promise<void> {
  await admin.query('terminating', 'SELECT pg_terminate_backend($1)', [pid])
  await new Promise(resolve => setTimeout(resolve, 300))
}

t.test('a session ended between two statements of a transaction fails the request with 10908, not the process', async t => {
  const catalog = await PgCatalog.connect(server.url())
  const admin = await PgCatalog.connect(server.url())
  t.teardown(async () => { await catalog.close(); await admin.close() })
  await t.rejects(catalog.transaction('completing an upload', async client => {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    // Between two statements, as completion links part files or a copy links bodies.
    await terminate(admin, rows[0].pid)
    await client.query('SELECT 1')
  }), { code: 10908 })
  t.equal((await catalog.query('reading', 'SELECT 1 AS one')).rows[0].one, 1, 'the next request gets a new connection')
})

t.test('a session ended while it holds a lock fails the holder with 10908, not the process', async t => {
  const catalog = await PgCatalog.connect(server.url())
  const admin = await PgCatalog.connect(server.url())
  t.teardown(async () => { await catalog.close(); await admin.close() })
  await t.rejects(catalog.withLock('sweeping', 'sweep:failures', async () => {
    const { rows } = await catalog.query<{ pid: number }>('sweeping', 'SELECT pg_backend_pid() AS pid')
    await terminate(admin, rows[0].pid)
    await catalog.query('sweeping', 'SELECT 1')
  }), { code: 10908 })
  t.equal(await catalog.withLock('sweeping', 'sweep:failures', async () => 'again', false), 'again', 'the lock went with the session')
})

t.test('a bucket delete cut short after closing the bucket to writes can be run again', async t => {
  const registry = await openRegistry(testdir(t), { catalog: server.url(), fsync: false })
  t.teardown(async () => { await registry.close() })
  await registry.create('halfgone')
  // The first step of a delete committed (the bucket refuses writes), then the
  // gateway died or the catalog went away before the bucket's row was removed.
  t.equal(await (await registry.open('halfgone'))!.retire(), true)
  await registry.delete('halfgone')
  t.same((await registry.list()).map(b => b.name), [], 'the bucket is gone')
  await registry.create('halfgone')
  t.equal((await (await registry.open('halfgone'))!.put('k', 'v'))?.size, 1, 'and its name can be used again')
})

t.test('a catalog URL is shown without its password, however it is written', async t => {
  const cases: Array<[string, string]> = [
    ['postgres://fsb:secret@db:5432/fsb', 'postgres://fsb:[redacted]@db:5432/fsb'],
    // A URL parser reads the password up to the last @.
    ['postgres://fsb:p@ss-secret@db/fsb', 'postgres://fsb:[redacted]@db/fsb'],
    ['postgres://fsb:a/b@secret@db/fsb', 'postgres://fsb:[redacted]@db/fsb'],
    ['postgresql://db/fsb?user=fsb&password=secret&sslmode=require', 'postgresql://db/fsb?user=fsb&password=[redacted]&sslmode=require'],
    // A mistyped scheme is reported, the password still hidden.
    ['postgress://fsb:secret@db/fsb', 'postgress://fsb:[redacted]@db/fsb'],
    ['mysql://root:secret@db/fsb', 'mysql://root:[redacted]@db/fsb'],
    ['postgres://db/fsb', 'postgres://db/fsb'],
    ['postgres://fsb@db/fsb', 'postgres://fsb@db/fsb'],
    // Not quite a URL, or none at all: no sure end to a password (quotes, escapes, `#`, `&`), so nothing is shown.
    [' postgres://fsb:secret@127.0.0.1:55432/fsb', '[not shown: it may hold a password]'],
    ['postgres//fsb:secret@db/fsb', '[not shown: it may hold a password]'],
    ['postgres:/fsb:secret@db/fsb', '[not shown: it may hold a password]'],
    ['fsb:p//secret@db/fsb', '[not shown: it may hold a password]'],
    ['host=127.0.0.1 user=fsb password=secret dbname=fsb', '[not shown: it may hold a password]'],
    ["host=db PASSWORD = 'a secret\\' too' dbname=fsb", '[not shown: it may hold a password]'],
    ['host=db password=ab#secret', '[not shown: it may hold a password]'],
    ['host=db password="se secret"', '[not shown: it may hold a password]'],
    // A password named in a way not foreseen: the string is not shown at all.
    ['postgres://db/fsb?pass%77ord=secret', '[not shown: it may hold a password]'],
    ['{"password": "secret"}', '[not shown: it may hold a password]']
  ]
  for (const [url, shown] of cases) t.equal(redactUrl(url), shown, url)
  await t.rejects(PgCatalog.connect('postgress://fsb:secret@127.0.0.1/x'), { message: /^(?!.*secret).*\[redacted\]/ })
  for (const url of [' postgres://fsb:secret@127.0.0.1:55432/fsb', 'postgres//fsb:secret@127.0.0.1/fsb', 'host=127.0.0.1 user=fsb password=secret dbname=fsb']) {
    await t.rejects(PgCatalog.connect(url), { message: /^(?!.*secret)The catalog must be a postgres:\/\/ URL \(got a string that is not one, not shown as it may hold a password\)\.$/ }, url)
  }
})

t.test('a password rotated under running gateways answers 10908, as an outage does, not 10001', async t => {
  const admin = await PgCatalog.connect(server.url())
  t.teardown(async () => { await admin.close() })
  await admin.query('preparing', "CREATE ROLE rotated LOGIN PASSWORD 'before-secret'")
  const url = (await database('rotated', 'rotated')).replace('postgres@', 'rotated:before-secret@')
  const registry = await openRegistry(testdir(t), { catalog: url, fsync: false })
  t.teardown(async () => { await registry.close() })
  await registry.create('photos')
  const bucket = (await registry.open('photos'))!
  await bucket.put('cat', 'meow')
  // The password changes, then the server restarts: every session ends, and the next ones must log in.
  await admin.query('rotating', "ALTER ROLE rotated PASSWORD 'after-secret'")
  await admin.query('rotating', "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'rotated'")
  await new Promise(resolve => setTimeout(resolve, 300))
  await t.rejects(bucket.get('cat'), { code: 10908 }, 'a read (28P01)')
  await t.rejects(bucket.put('cat', 'purr'), { code: 10908 }, 'a write')
  await t.rejects(registry.list(), { code: 10908 }, 'the bucket list')
  await admin.query('rotating', "ALTER ROLE rotated NOLOGIN PASSWORD 'before-secret'")
  await t.rejects(bucket.get('cat'), { code: 10908 }, 'a role that may not log in (28000)')
  await admin.query('rotating', 'ALTER ROLE rotated LOGIN')
  t.equal(await (await bucket.get('cat') as BucketObjectBody).text(), 'meow', 'the gateway recovers on its own once the login works')
  // At start-up a refused login is a setting to correct, said so, without the password.
  await t.rejects(PgCatalog.connect(url.replace('before-secret', 'wrong-secret')), { message: /^(?!.*secret)The catalog .* cannot be used: password authentication failed/ })
})

t.test('a bucket delete cut short after moving the directory away, before its commit: the sweep keeps the directory, the bucket takes it back', async t => {
  const dataDir = testdir(t)
  const url = await database('uncommitted')
  const before = await openRegistry(dataDir, { catalog: url, fsync: false })
  await before.create('halfmoved')
  await (await before.open('halfmoved'))!.put('k', 'v')
  await (await before.open('halfmoved'))!.delete('k')
  await before.close()
  // What a gateway that died between the move and the commit leaves: the row (the transaction rolled back), the directory moved.
  const catalog = await PgCatalog.connect(url)
  const { rows } = await catalog.query<{ store_id: string }>('test', 'SELECT store_id FROM fsbucket.buckets WHERE name = $1', ['halfmoved'])
  await catalog.close()
  const moved = path.join(dataDir, `.deleted-halfmoved-${rows[0].store_id}`)
  renameSync(path.join(dataDir, 'halfmoved'), moved)

  // A gateway starting then: the directory is put back before the data directory is judged.
  const registry = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.teardown(async () => { await registry.close() })
  t.ok(existsSync(path.join(dataDir, 'halfmoved', '.fsbucket')), 'put back as the gateway starts')
  // A gateway running then: its sweep keeps the directory (its store is still there), and the bucket's next open takes it back.
  renameSync(path.join(dataDir, 'halfmoved'), moved)
  await registry.sweep()
  t.ok(existsSync(path.join(dataDir, 'halfmoved', '.fsbucket')), 'the bucket\'s directory is back, not swept away')
  t.equal((await (await registry.open('halfmoved'))!.put('k2', 'v2'))?.size, 2, 'the bucket takes writes')
  await (await registry.open('halfmoved'))!.delete('k2')
  await registry.delete('halfmoved')
  t.same((await registry.list()).map(b => b.name), [], 'and can be deleted')
})

t.test('a sweep removes what a bucket delete cut short after its commit left in the shared directory', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { catalog: await database('leftovers'), fsync: false })
  t.teardown(async () => { await registry.close() })
  await deletedBucketLeftovers(t, registry, dataDir)
})

t.test('a write racing a bucket delete on another gateway answers 10006 and brings no directory back', async t => {
  const url = await database('racing')
  const dataDir = testdir(t)
  const one = await PgRegistryStorage.open(dataDir, url, { fsync: false })
  const two = await PgRegistryStorage.open(dataDir, url, { fsync: false })
  const deleting = createRegistry(one)
  const writing = createRegistry(two)
  t.teardown(async () => { await deleting.close(); await writing.close() })
  await deleting.create('photos')
  // Gateway two reads the bucket's row; gateway one deletes the bucket before two opens its store.
  const query = two.catalog.query.bind(two.catalog)
  two.catalog.query = (async (what: string, text: string, params?: unknown[]) => {
    const result = await query(what, text, params)
    if (what === 'opening a bucket') await deleting.delete('photos')
    return result
  }) as typeof two.catalog.query
  await t.rejects(async () => await (await writing.open('photos'))!.put('cat', 'meow'), { code: 10006 })
  t.notOk(existsSync(path.join(dataDir, 'photos')), 'the deleted bucket\'s directory is not made again')
})

t.test('a live bucket whose directory is missing (an unmounted share) is a storage failure, not a deleted bucket', async t => {
  const url = await database('share_unmounted')
  const dataDir = testdir(t)
  const making = createRegistry(await PgRegistryStorage.open(dataDir, url, { fsync: false }))
  await making.create('photos')
  await making.create('kept') // the share is there: only this bucket's directory is missing
  await making.close()
  renameSync(path.join(dataDir, 'photos'), path.join(dataDir, 'elsewhere'))
  const other = createRegistry(await PgRegistryStorage.open(dataDir, url, { fsync: false }))
  t.teardown(async () => { await other.close() })
  const err = await (async () => { await (await other.open('photos'))!.put('cat', 'meow') })().then(() => null, (e: { code?: number }) => e)
  t.not(err?.code, 10006, 'the catalog still holds the bucket: not NoSuchBucket')
  t.ok(err !== null, 'the write fails')
  t.notOk(existsSync(path.join(dataDir, 'photos')), 'and makes no directory')
})

t.test('a catalog that refuses the connection is named in the message, without its password', async t => {
  const url = server.url('missing').replace('postgres@', 'postgres:secret@')
  await t.rejects(PgCatalog.connect(url), { message: /^The catalog postgres:\/\/postgres:\[redacted\]@.* cannot be used: database "missing" does not exist$/ })
  await t.rejects(PgCatalog.connect('postgres://fsb:secret@127.0.0.1:99999/x'), { message: /^(?!.*secret)The catalog .* cannot be used: Invalid URL/ })
})

t.test('the server ends the transaction of a gateway that froze between two statements, so its row locks do not stall the others', async t => {
  const frozen = await PgCatalog.connect(server.url(), { idleInTransactionMs: 1000 })
  const other = await PgCatalog.connect(server.url())
  t.teardown(async () => { await frozen.close(); await other.close() })
  await other.query('preparing', 'CREATE TABLE IF NOT EXISTS frozen_rows (id int PRIMARY KEY, n int)')
  await other.query('preparing', 'INSERT INTO frozen_rows VALUES (1, 0) ON CONFLICT DO NOTHING')
  let thawed = false
  let locked = (): void => {}
  const holding = new Promise<void>(resolve => { locked = resolve })
  const stuck = frozen.transaction('committing a write', async client => {
    await client.query('SELECT n FROM frozen_rows WHERE id = 1 FOR UPDATE')
    locked()
    // Frozen between two statements (a paused VM): the row stays locked until the server gives up.
    await new Promise(resolve => setTimeout(resolve, 4000))
    thawed = true
    await client.query('UPDATE frozen_rows SET n = n + 1 WHERE id = 1')
  })
  await holding
  const started = Date.now()
  await other.query('committing a write', 'UPDATE frozen_rows SET n = 100 WHERE id = 1')
  t.notOk(thawed, `another gateway's write went through while the first was still frozen (${Date.now() - started} ms)`)
  await t.rejects(stuck, { code: 10908 }, 'the frozen gateway learns its transaction is gone when it resumes')
  t.equal((await other.query('reading', 'SELECT n FROM frozen_rows WHERE id = 1')).rows[0].n, 100, 'and its write never landed')
})

/** Makes every link of part and segment files take `steps` pauses of `ms` first, telling its progress after each when `advancing`. */
function slowLinks (t: Test, steps: number, ms: number, advancing: boolean): { calls: number } {
  const seen = { calls: 0 }
  const { linkParts, linkSegments } = BlobFiles.prototype
  const slowly = async (progress: (() => void) | undefined): Promise<void> => {
    seen.calls++
    for (let i = 0; i < steps; i++) {
      await new Promise(resolve => setTimeout(resolve, ms))
      if (advancing) progress?.()
    }
  }
  BlobFiles.prototype.linkParts = async function (version, parts, progress) { await slowly(progress); return await linkParts.call(this, version, parts, progress) }
  BlobFiles.prototype.linkSegments = async function (version, segments, progress) { await slowly(progress); return await linkSegments.call(this, version, segments, progress) }
  t.teardown(() => { Object.assign(BlobFiles.prototype, { linkParts, linkSegments }) })
  return seen
}

t.test('a completion or a copy that links files for longer than the limit on silent transactions still lands', async t => {
  // A slow mount: linking thousands of parts can outlast the limit that ends frozen gateways' transactions.
  const catalog = await PgCatalog.connect(server.url(), { idleInTransactionMs: 1000 })
  t.teardown(async () => { await catalog.close() })
  const bucket = new BucketEngine(await PgStore.open(catalog, randomBytes(8).toString('hex'), path.join(testdir(t), '.fsbucket'), { fsync: false, create: true }), { minPartSize: 1 })
  const links = slowLinks(t, 10, 250, true)
  const upload = await bucket.createMultipartUpload('big')
  const parts = [await upload.uploadPart(1, 'first '), await upload.uploadPart(2, 'second')]
  const object = await upload.complete(parts)
  t.equal(object.size, 12)
  t.equal(await (await bucket.get('big') as BucketObjectBody).text(), 'first second', 'completed, though linking took 2.5 times the limit')
  await bucket.put('one', 'single body')
  await bucket.copy('one', 'copy')
  t.equal(await (await bucket.get('copy') as BucketObjectBody).text(), 'single body', 'a copy that links as long lands too')
  t.equal(links.calls, 2, 'both linked slowly')
})

t.test('a completion whose linking hangs loses its transaction, and its locks, after the limit', async t => {
  // A stuck mount: the process runs, but its file work does not advance.
  const catalog = await PgCatalog.connect(server.url(), { idleInTransactionMs: 1000 })
  t.teardown(async () => { await catalog.close() })
  const storeId = randomBytes(8).toString('hex')
  const root = path.join(testdir(t), '.fsbucket')
  const bucket = new BucketEngine(await PgStore.open(catalog, storeId, root, { fsync: false, create: true }), { minPartSize: 1 })
  await bucket.put('big', 'before')
  const upload = await bucket.createMultipartUpload('big')
  const parts = [await upload.uploadPart(1, 'first '), await upload.uploadPart(2, 'second')]
  slowLinks(t, 1, 4000, false)
  const started = Date.now()
  const completing = upload.complete(parts)
  // Another gateway writing the same key waits for the row only until the server ends the hung transaction.
  await new Promise(resolve => setTimeout(resolve, 200))
  const other = await PgCatalog.connect(server.url())
  t.teardown(async () => { await other.close() })
  const elsewhere = new BucketEngine(await PgStore.open(other, storeId, root, { fsync: false }))
  await elsewhere.put('big', 'written elsewhere')
  const waited = Date.now() - started
  t.ok(waited >= 800 && waited < 3500, `the other write waited for the key's row, then went through before the hang ended (${waited} ms)`)
  await t.rejects(completing, { code: 10908 }, 'the hung completion fails once it resumes')
  t.equal(await (await bucket.get('big') as BucketObjectBody).text(), 'written elsewhere')
})

t.test('a statement that waited past its time on a lock is cancelled by the server: the request answered 10908 never lands later', async t => {
  const catalog = await PgCatalog.connect(server.url(), { statementTimeoutMs: 1000 })
  const holder = await PgCatalog.connect(server.url())
  t.teardown(async () => { await catalog.close(); await holder.close() })
  await holder.query('preparing', 'CREATE TABLE IF NOT EXISTS waited_rows (id int PRIMARY KEY, body text)')
  await holder.query('preparing', "INSERT INTO waited_rows VALUES (1, 'before') ON CONFLICT (id) DO UPDATE SET body = 'before'")
  let release = (): void => {}
  const released = new Promise<void>(resolve => { release = resolve })
  let locked = (): void => {}
  const holding = new Promise<void>(resolve => { locked = resolve })
  // Another gateway (or an operator's session) holds the row for a while.
  const held = holder.transaction('holding', async client => {
    await client.query('SELECT 1 FROM waited_rows WHERE id = 1 FOR UPDATE')
    locked()
    await released
  })
  await holding
  const started = Date.now()
  await t.rejects(catalog.query('committing a write', "UPDATE waited_rows SET body = 'answered 503' WHERE id = 1"), { code: 10908 })
  t.ok(Date.now() - started < 4000, 'answered once the statement timed out')
  release()
  await held
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal((await holder.query('reading', 'SELECT body FROM waited_rows WHERE id = 1')).rows[0].body, 'before', 'the refused write did not land once the lock was free')
})

t.test('a gateway whose data directory is not the shared one (the mount missing) refuses to start', async t => {
  const url = await database('unmounted')
  const shared = testdir(t)
  const first = await openRegistry(shared, { catalog: url, fsync: false })
  t.teardown(async () => { await first.close() })
  await first.create('photos')
  await (await first.open('photos'))!.put('cat', 'meow')
  // An empty mount point: the catalog's buckets are not there.
  await t.rejects(openRegistry(`${shared}-not-mounted`, { catalog: url, fsync: false }), { message: /holds none of the catalog's 1 bucket\(s\) \(photos\).*Is it mounted there\?/ })
  // Another data directory with a bucket of the same name at the mount point: an old SQLite gateway's.
  const old = `${shared}-old-sqlite`
  t.teardown(async () => { await rm(old, { recursive: true, force: true }) })
  const sqlite = await openRegistry(old, { fsync: false })
  await sqlite.create('photos')
  await (await sqlite.open('photos'))!.put('dog', 'woof')
  await sqlite.close()
  await t.rejects(openRegistry(old, { catalog: url, fsync: false }), { message: /has directories named like the catalog's buckets \(photos\), but none of the object bodies looked for in 1 of them: it is another data directory/ })
  const second = await openRegistry(shared, { catalog: url, fsync: false })
  t.teardown(async () => { await second.close() })
  const cat = await (await second.open('photos'))!.get('cat') as BucketObjectBody
  t.equal(await cat.text(), 'meow', 'the shared directory is accepted')
  // One body found is enough: bodies lost to a disk fault do not stop a start, whichever object is looked at first.
  await second.create('albums')
  await (await second.open('albums'))!.put('lost', 'gone')
  await rm(path.join(shared, 'albums', '.fsbucket', 'blobs'), { recursive: true })
  const photos = (await second.open('photos'))!
  for (const key of ['a', 'b', 'c']) await photos.put(key, key)
  // The object a look at the bucket's rows gives first loses its body.
  const catalog = await PgCatalog.connect(url)
  const { rows } = await catalog.query<{ file: string }>('reading',
    "SELECT segments->0->>0 AS file FROM fsbucket.objects WHERE size > 0 AND store_id = (SELECT store_id FROM fsbucket.buckets WHERE name = 'photos') LIMIT 1")
  await catalog.close()
  await rm(path.join(shared, 'photos', '.fsbucket', rows[0].file))
  const third = await openRegistry(shared, { catalog: url, fsync: false })
  await third.close()
})

t.test('a catalog whose buckets hold no bodies yet accepts any directory holding them', async t => {
  const url = await database('bodiless')
  const shared = testdir(t)
  const first = await openRegistry(shared, { catalog: url, fsync: false })
  await first.create('empty')
  await (await first.open('empty'))!.put('nothing', '')
  await first.close()
  const other = `${shared}-other`
  t.teardown(async () => { await rm(other, { recursive: true, force: true }) })
  const sqlite = await openRegistry(other, { fsync: false })
  await sqlite.create('empty')
  await sqlite.close()
  const second = await openRegistry(other, { catalog: url, fsync: false })
  t.same((await second.list()).map(b => b.name), ['empty'])
  await second.close()
})

t.test('a gateway frozen while it updates a bucket\'s settings does not stall the settings updates of the others', async t => {
  const frozen = await PgCatalog.connect(server.url(), { idleInTransactionMs: 1000 })
  const other = await PgCatalog.connect(server.url())
  t.teardown(async () => { await frozen.close(); await other.close() })
  let thawed = false
  let locked = (): void => {}
  const holding = new Promise<void>(resolve => { locked = resolve })
  const stuck = frozen.withLock('writing bucket settings', 'settings:frozen', async () => {
    locked()
    await new Promise(resolve => setTimeout(resolve, 4000)) // a paused VM, inside the critical section
    thawed = true
    await frozen.query('writing bucket settings', 'SELECT 1')
  }, true, 'transaction')
  await holding
  const started = Date.now()
  t.equal(await other.withLock('writing bucket settings', 'settings:frozen', async () => 'updated', true, 'transaction'), 'updated')
  t.notOk(thawed, `another gateway took the lock while the first was still frozen (${Date.now() - started} ms)`)
  await t.rejects(stuck, { code: 10908 }, 'the frozen gateway learns it lost the lock when it resumes')
})

t.test('a part file missing as its upload completes is a storage failure, not the catalog unavailable (10908, which clients retry)', async t => {
  const catalog = await PgCatalog.connect(server.url())
  t.teardown(async () => { await catalog.close() })
  const root = path.join(testdir(t), '.fsbucket')
  const bucket = new BucketEngine(await PgStore.open(catalog, randomBytes(8).toString('hex'), root, { fsync: false, create: true }), { minPartSize: 1 })
  const upload = await bucket.createMultipartUpload('big')
  const parts = [await upload.uploadPart(1, 'first '), await upload.uploadPart(2, 'second')]
  // The parts' files, removed by hand (or by a mount that lost them).
  const files = (await readdir(root, { recursive: true, withFileTypes: true })).filter(entry => entry.isFile() && !/catalog|format/.test(entry.name))
  t.ok(files.length >= 2, `the parts' files (${files.length})`)
  for (const file of files) await rm(path.join(file.parentPath ?? file.path, file.name))
  const failure = await upload.complete(parts).then(() => null, (err: unknown) => err as { errorName?: string, code?: unknown })
  t.ok(failure !== null, 'the completion fails')
  t.not(failure?.errorName, 'CatalogUnavailable', `not CatalogUnavailable (${String(failure?.errorName)} ${String(failure?.code)})`)
  t.equal(isUnavailable(Object.assign(new Error('gone'), { code: 'ENOENT', syscall: 'link', path: '/data/photos/x' })), false, 'a file\'s ENOENT')
  t.equal(isUnavailable(Object.assign(new Error('no socket'), { code: 'ENOENT', syscall: 'connect', address: '/run/postgresql/.s.PGSQL.5432' })), true, 'a missing socket file is the server down')
})
