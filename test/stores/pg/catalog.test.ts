/**
 * The PostgreSQL catalog around the store: migrations (once, under several
 * gateways starting together; a newer schema refused), an unreachable
 * server, the garbage of replaced bodies and its sweeper (grace period, one
 * sweeper at a time, hard-linked leftovers in one sweep), retirement, and
 * `fsbucket migrate` importing SQLite buckets with their bodies left in place.
 */
import { existsSync, promises as fsp, readdirSync, renameSync } from 'node:fs'
import { link, mkdir, writeFile } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import t, { type Test } from 'tap'
import { buildCli } from '../../../src/main.js'
import { openBucket, openRegistry, type Bucket, type BucketObjectBody } from '../../../src/index.js'
import { Database } from '../../../src/stores/fs/sqlite.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { SCHEMA_VERSION } from '../../../src/stores/pg/schema.js'
import { migrateToCatalog } from '../../../src/server/migrate.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

/** A fresh database of the server, so each test migrates from nothing. */
async function database (name: string): Promise<string> {
  const admin = await PgCatalog.connect(server.url())
  await admin.pool.query(`CREATE DATABASE ${name}`)
  await admin.close()
  return server.url(name)
}

t.test('migrations run once when several gateways start at once', async t => {
  const url = await database('racing')
  const catalogs = await Promise.all(Array.from({ length: 6 }, async () => await PgCatalog.connect(url)))
  t.teardown(async () => { await Promise.all(catalogs.map(async c => await c.close())) })
  const { rows } = await catalogs[0].pool.query('SELECT version FROM fsbucket.migrations ORDER BY version')
  t.same(rows.map(r => r.version), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1), 'each version applied once')
  await catalogs[0].pool.query('INSERT INTO fsbucket.migrations (version) VALUES ($1)', [SCHEMA_VERSION + 1])
  await t.rejects(PgCatalog.connect(url), /schema is version .*Upgrade fsbucket/, 'a catalog of a newer fsbucket is refused')
})

t.test('a catalog that cannot be reached fails at start with a clear message; a bad URL too', async t => {
  const port = await new Promise<number>(resolve => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)) })
  })
  await t.rejects(PgCatalog.connect(`postgres://postgres:secret@127.0.0.1:${port}/x`), /cannot be reached/)
  await t.rejects(PgCatalog.connect(`postgres://postgres:secret@127.0.0.1:${port}/x`), { message: /\[redacted\]/ }, 'the password is never shown')
  await t.rejects(PgCatalog.connect('mysql://localhost/x'), TypeError)
})

t.test('replaced and deleted bodies wait in garbage for the grace period; one sweeper at a time', async t => {
  const url = await database('sweeping')
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.teardown(async () => { await registry.close() })
  await registry.create('photos')
  const bucket = (await registry.open('photos'))!
  const first = await bucket.put('cat', 'one')
  const blobs = path.join(dataDir, 'photos', '.fsbucket', 'blobs')
  const bodyOf = (version: string): string => path.join(blobs, version.slice(0, 2), version)
  t.ok(existsSync(bodyOf(first!.version)), 'the body is a file named by its version')
  const second = await bucket.put('cat', 'two')
  t.ok(existsSync(bodyOf(first!.version)), 'the replaced body stays while reads may be in flight')
  t.same(await bucket.sweep({ leftoverGraceMs: 60_000 }), { abortedUploads: 0, removedLeftovers: 0 }, 'not before the grace period')
  t.ok(existsSync(bodyOf(first!.version)))

  const catalog = await PgCatalog.connect(url)
  t.teardown(async () => { await catalog.close() })
  const { rows: [{ store_id: storeId }] } = await catalog.pool.query("SELECT store_id FROM fsbucket.buckets WHERE name = 'photos'")
  let heldReport
  await catalog.withLock('test', `sweep:${storeId}`, async () => {
    heldReport = await bucket.sweep({ leftoverGraceMs: 0 })
  })
  t.same(heldReport, { abortedUploads: 0, removedLeftovers: 0, skippedBuckets: 1 }, 'another sweeper holds the lock: nothing is done, and the report says the bucket was skipped')
  t.ok(existsSync(bodyOf(first!.version)))

  await new Promise(resolve => setTimeout(resolve, 5))
  const report = await bucket.sweep({ leftoverGraceMs: 0 })
  t.equal(report.removedLeftovers, 1, 'after the grace period the sweeper removes it')
  t.notOk(existsSync(bodyOf(first!.version)))
  t.equal(await ((await bucket.get('cat')) as BucketObjectBody).text(), 'two', 'the current body is untouched')
  await bucket.delete('cat')
  t.ok(existsSync(bodyOf(second!.version)), 'a deleted body waits too')
  await new Promise(resolve => setTimeout(resolve, 5))
  await bucket.sweep({ leftoverGraceMs: 0 })
  t.same(readdirSync(path.join(blobs, second!.version.slice(0, 2))).filter(f => f.startsWith(second!.version)), [])
  const { rows } = await catalog.pool.query('SELECT count(*)::int AS n FROM fsbucket.garbage')
  t.equal(rows[0].n, 0, 'the garbage rows are gone with their files')
})

/** One bucket seen by two gateways on one catalog (a database of its own) and one data directory. */
/** What `fsbucket migrate --from <dataDir> --catalog <url>` prints (console.log, captured). */
async function migrate (dataDir: string, url: string): Promise<string> {
  const lines: string[] = []
  const log = console.log
  console.log = (line: string) => { lines.push(line) }
  try {
    await buildCli().parseAsync(['node', 'fsbucket', 'migrate', '--from', dataDir, '--catalog', url])
  } finally {
    console.log = log
  }
  return lines.join('\n')
}

async function twoGateways (t: Test, database_: string, name: string): Promise<{ url: string, dataDir: string, buckets: Bucket[] }> {
  const url = await database(database_)
  const dataDir = testdir(t)
  const gateways = await Promise.all([0, 1].map(async () => await openRegistry(dataDir, { catalog: url, fsync: false })))
  t.teardown(async () => { await Promise.all(gateways.map(async g => await g.close())) })
  await gateways[0].create(name)
  return { url, dataDir, buckets: await Promise.all(gateways.map(async g => (await g.open(name))!)) }
}

t.test('racing unconditional puts of one key on two gateways: each replaced body goes to garbage once, the live one never', async t => {
  const { url, dataDir, buckets } = await twoGateways(t, 'racing_puts', 'race')
  const values = Array.from({ length: 40 }, (_, i) => `value ${i}`)
  await Promise.all(values.map(async (value, i) => await buckets[i % 2].put('key', value)))
  const catalog = await PgCatalog.connect(url)
  t.teardown(async () => { await catalog.close() })
  const { rows } = await catalog.pool.query('SELECT count(*)::int AS n, count(DISTINCT file)::int AS files FROM fsbucket.garbage')
  t.same(rows[0], { n: 39, files: 39 }, 'every body but the last is garbage, each once')
  await new Promise(resolve => setTimeout(resolve, 5))
  await buckets[0].sweep({ leftoverGraceMs: 0 })
  const stored = await ((await buckets[1].get('key')) as BucketObjectBody).text()
  t.ok(values.includes(stored), 'the live body survives the sweep')
  const files = readdirSync(path.join(dataDir, 'race', '.fsbucket', 'blobs'), { recursive: true, withFileTypes: true }).filter(e => e.isFile())
  t.equal(files.length, 1, 'one body file is left: the live one')
})

t.test('a body replaced on another gateway while a sweep judges the files waits in garbage for its grace period', async t => {
  const { dataDir, buckets: [sweeping, writing] } = await twoGateways(t, 'sweep_race', 'race')
  const first = await writing.put('cat', 'one')
  const body = path.join(dataDir, 'race', '.fsbucket', 'blobs', first!.version.slice(0, 2), first!.version)
  await new Promise(resolve => setTimeout(resolve, 5))
  // The other gateway replaces the object after the sweep began, just before it looks which versions are live.
  const query = PgCatalog.prototype.query
  t.teardown(() => { PgCatalog.prototype.query = query })
  let replaced = false
  PgCatalog.prototype.query = async function (this: PgCatalog, what: string, text: string, params?: unknown[]) {
    if (!replaced && text.includes('SELECT DISTINCT version')) {
      replaced = true
      await writing.put('cat', 'two')
    }
    return await query.call(this, what, text, params)
  } as typeof query
  await sweeping.sweep({ leftoverGraceMs: 0 })
  t.ok(replaced, 'the object was replaced during the sweep')
  t.ok(existsSync(body), 'the replaced body stays for reads in flight on other gateways')
  PgCatalog.prototype.query = query
  await new Promise(resolve => setTimeout(resolve, 5))
  await sweeping.sweep({ leftoverGraceMs: 0 })
  t.notOk(existsSync(body), 'the next sweep after its grace period removes it')
  t.equal(await ((await sweeping.get('cat')) as BucketObjectBody).text(), 'two')
})

t.test('a body whose put commits on another gateway while a sweep judges it a leftover is not removed', async t => {
  const { dataDir, buckets: [sweeping, writing] } = await twoGateways(t, 'sweep_stalled', 'stall')
  let release = (): void => {}
  const resumed = new Promise<void>(resolve => { release = resolve })
  // A put whose body stalls past the grace period (here: a sweep with none), then goes on.
  const putting = writing.put('slow', (async function * () {
    yield Buffer.alloc(64 * 1024, 1)
    await resumed
    yield Buffer.alloc(64 * 1024, 2)
  })())
  const blobs = path.join(dataDir, 'stall', '.fsbucket', 'blobs')
  while (!existsSync(blobs) || readdirSync(blobs, { recursive: true }).length < 2) await new Promise(resolve => setTimeout(resolve, 5))
  const query = PgCatalog.prototype.query
  t.teardown(() => { PgCatalog.prototype.query = query })
  let judged = false
  PgCatalog.prototype.query = async function (this: PgCatalog, what: string, text: string, params?: unknown[]) {
    const result = await query.call(this, what, text, params)
    // The sweep has just found no row for the stalled body: the put goes on and commits before anything is removed.
    if (!judged && text.includes('SELECT DISTINCT version')) {
      judged = true
      release()
      await putting
    }
    return result
  } as typeof query
  await sweeping.sweep({ leftoverGraceMs: -60_000 })
  t.ok(judged, 'the sweep judged the body while the put was stalled')
  PgCatalog.prototype.query = query
  t.equal((await putting)?.size, 128 * 1024)
  const read = await sweeping.get('slow')
  t.equal(read !== null && 'body' in read ? (await read.arrayBuffer()).byteLength : -1, 128 * 1024, 'its body is still there')
})

t.test('a leftover hard-linked to another leftover is removed in the same sweep', async t => {
  // A completion killed after it linked an upload's parts into blobs/ and
  // after the upload's row was gone leaves two names of one body. Removing the
  // first name changes the ctime of the second; the sweep must still judge it old.
  const url = await database('linked')
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.teardown(async () => { await registry.close() })
  await registry.create('photos')
  const bucket = (await registry.open('photos'))!
  await bucket.put('kept', 'a live object')
  const root = path.join(dataDir, 'photos', '.fsbucket')
  const upload = path.join(root, 'uploads', 'f'.repeat(32))
  const blob = path.join(root, 'blobs', 'ee', `${'e'.repeat(32)}.1`)
  await mkdir(upload, { recursive: true })
  await mkdir(path.dirname(blob), { recursive: true })
  await writeFile(path.join(upload, '1.0123456789ab'), 'part bytes')
  await link(path.join(upload, '1.0123456789ab'), blob)
  await new Promise(resolve => setTimeout(resolve, 150))

  const report = await bucket.sweep({ leftoverGraceMs: 0 })
  t.equal(report.removedLeftovers, 2, 'the orphan upload directory and the orphan segment')
  t.notOk(existsSync(upload), 'the upload directory is gone')
  t.notOk(existsSync(blob), 'the segment linked to it is gone too')
  t.equal(await ((await bucket.get('kept')) as BucketObjectBody).text(), 'a live object', 'a live object is untouched')
})

t.test('retiring: a bucket with objects is not deleted; an empty one refuses later writes', async t => {
  const url = await database('retiring')
  const dataDir = testdir(t)
  const one = await openRegistry(dataDir, { catalog: url, fsync: false })
  const two = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.teardown(async () => { await one.close(); await two.close() })
  await one.create('docs')
  const held = (await two.open('docs'))!
  await held.put('a', 'x')
  await t.rejects(one.delete('docs'), { code: 10008 })
  await held.delete('a')
  await one.delete('docs')
  await t.rejects(held.put('b', 'y'), { code: 10006 }, 'a handle on another gateway writes nowhere')
  const files = existsSync(path.join(dataDir, 'docs'))
    ? readdirSync(path.join(dataDir, 'docs'), { recursive: true, withFileTypes: true }).filter(e => e.isFile())
    : []
  t.same(files, [], 'the bodies are removed, and the refused write left none')
})

t.test('fsbucket migrate imports SQLite buckets; bodies stay in place; a second run skips them', async t => {
  const url = await database('imported')
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false, minPartSize: 5 })
  await before.create('site', { public: true })
  const site = (await before.open('site'))!
  await site.put('index.html', '<h1>hi</h1>', { httpMetadata: { contentType: 'text/html' }, customMetadata: { by: 'test' } })
  for (let i = 0; i < 30; i++) await site.put(`assets/${i}`, `asset ${i}`)
  const upload = await site.createMultipartUpload('big')
  const part1 = await upload.uploadPart(1, 'a'.repeat(10))
  const part2 = await upload.uploadPart(2, 'b'.repeat(3))
  const pending = await site.createMultipartUpload('later', { checksumAlgorithm: 'crc32' })
  const pendingPart = await pending.uploadPart(1, 'p'.repeat(10), { crc32: '175c4288' })
  await upload.complete([part1, part2])
  await before.state('mgmt').transaction(async tx => { (await tx.load<{ n: number }>('zones.json', { n: 0 })).n = 7 })
  await before.close()
  // A bucket's directory that no store ever opened: no body directory yet.
  await mkdir(path.join(dataDir, 'bare'))

  t.match(await migrate(dataDir, url), /site: 32 objects, 1 uploads in progress/)

  const after = await openRegistry(dataDir, { catalog: url, fsync: false, minPartSize: 5 })
  t.teardown(async () => { await after.close() })
  const info = await after.info('site')
  t.equal(info?.settings.public, true, 'settings are imported')
  const bucket = (await after.open('site'))!
  const page = await bucket.get('index.html') as BucketObjectBody
  t.equal(await page!.text(), '<h1>hi</h1>')
  t.equal(page!.httpMetadata?.contentType, 'text/html')
  t.same(page!.customMetadata, { by: 'test' })
  t.equal(await ((await bucket.get('big')) as BucketObjectBody).text(), 'a'.repeat(10) + 'bbb', 'a multipart object reads from its part files')
  t.equal((await bucket.list({ prefix: 'assets/' })).objects.length, 30)
  const resumed = bucket.resumeMultipartUpload('later', pending.uploadId)
  const listedParts = await resumed.listParts()
  t.same([listedParts.checksum, listedParts.parts[0].checksums], [{ algorithm: 'crc32', type: 'COMPOSITE' }, { crc32: '175c4288' }],
    'an upload\'s checksum algorithm and its parts\' checksums are imported')
  const done = await resumed.complete([pendingPart, await resumed.uploadPart(2, 'q', { crc32: 'f500ae27' })])
  t.equal(done.size, 11, 'an upload in progress continues after the import')
  t.equal(done.checksums.composite?.algorithm, 'crc32')
  t.same(await after.state('mgmt').read('zones.json', null), { n: 7 }, 'state documents are imported')
  t.match(await (await after.open('bare'))!.put('k', 'v'), { key: 'k' }, 'a bucket no store had opened takes writes')

  t.match(await migrate(dataDir, url), /site: skipped \(already in the catalog\)/, 'a second run leaves imported buckets alone')
})

t.test('SQLite buckets and a PostgreSQL catalog are fenced: no gateway on the catalog before migrate, no SQLite catalogs after', async t => {
  const url = await database('fenced')
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  await before.create('default')
  await (await before.open('default'))!.put('kept.txt', 'from the SQLite days')
  await before.close()

  // A gateway started before migrate would make its own empty `default` over these bodies, and its sweep would remove them.
  await t.rejects(openRegistry(dataDir, { catalog: url, fsync: false }),
    { message: /holds buckets kept in SQLite catalogs that the PostgreSQL catalog does not know \(default\): import them first.*fsbucket migrate --from/ })
  t.match(await migrate(dataDir, url), /default: 1 objects/)
  const after = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.equal(await ((await (await after.open('default'))!.get('kept.txt')) as BucketObjectBody).text(), 'from the SQLite days')
  await after.close()
  // Now the SQLite files are stale: a gateway or a command without --catalog (a sweep among them) is refused.
  await t.rejects(openRegistry(dataDir, { fsync: false }), { message: /is kept in a PostgreSQL catalog .*open it with its catalog \(--catalog or FSBUCKET_CATALOG/ })
  await t.rejects(openBucket(path.join(dataDir, 'default'), { fsync: false }), { message: /is kept in a PostgreSQL catalog/ }, 'one of its buckets opened alone too')

  // What is no bucket to import does not stop a gateway: a deleted bucket's directory, a SQLite bucket being deleted.
  const leftovers = path.join(testdir(t), 'leftovers')
  const old = await openRegistry(leftovers, { fsync: false })
  await old.create('retiring')
  t.equal(await (await old.open('retiring'))!.retire(), true, 'a delete cut short: the bucket refuses writes')
  await old.create('moved')
  await old.close()
  renameSync(path.join(leftovers, 'moved'), path.join(leftovers, '.deleted-moved-0123456789ab'))
  await (await openRegistry(leftovers, { catalog: await database('leftovers2'), fsync: false })).close()

  // A directory a catalog's gateway opened first is the catalog's too.
  const fresh = path.join(testdir(t), 'fresh')
  await (await openRegistry(fresh, { catalog: await database('fresh'), fsync: false })).close()
  await t.rejects(openRegistry(fresh, { fsync: false }), { message: /is kept in a PostgreSQL catalog/ })
})

t.test('fsbucket migrate brings back no deleted bucket: a moved directory and a bucket being deleted stay out; one deleted between two runs is named', async t => {
  const url = await database('deletions')
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  for (const name of ['kept', 'moved', 'retiring', 'later']) await before.create(name)
  await (await before.open('kept'))!.put('k', 'v')
  await before.delete('moved')
  t.equal(await (await before.open('retiring'))!.retire(), true, 'a delete cut short before the move: the bucket refuses writes')
  await before.close()
  // A delete cut short after the move, before the removal: the sweep has not removed its directory yet.
  await mkdir(path.join(dataDir, '.deleted-moved-0123456789ab', '.fsbucket'), { recursive: true })
  await writeFile(path.join(dataDir, '.deleted-moved-0123456789ab', '.fsbucket', 'settings.json'), JSON.stringify({ format: 1, creationDate: new Date().toISOString(), settings: {} }))

  const first = await migrate(dataDir, url)
  t.match(first, /retiring: skipped \(being deleted\)/)
  t.notMatch(first, /in the catalog, but no bucket/, 'nothing to name on a first run')
  const after = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.same((await after.list()).map(b => b.name), ['kept', 'later'], 'the deleted buckets are not imported')
  await after.close()

  // A run cut short leaves no mark: gateways on the SQLite catalogs may serve the directory again, and delete a bucket imported already.
  await fsp.rm(path.join(dataDir, '.fsbucket', 'catalog.json'))
  const between = await openRegistry(dataDir, { fsync: false })
  await between.delete('later')
  await between.close()
  const second = await migrate(dataDir, url)
  t.match(second, /kept: skipped \(already in the catalog\)/)
  t.ok(second.includes(`later: in the catalog, but no bucket of ${path.resolve(dataDir)}: left as it is (made by a gateway on the catalog, or deleted from the directory`),
    'the bucket deleted since the first run is named, left for the operator to delete (a --from naming another directory would take every bucket)')
  t.notMatch(second, /kept: in the catalog/, 'a live bucket is not')
})

t.test('fsbucket migrate writing small bodies out on a slow mount outlasts the limit on silent transactions, and still lands', async t => {
  const url = await database('slowmount')
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  await before.create('small')
  for (let i = 0; i < 12; i++) await (await before.open('small'))!.put(`k${i}`, `small body ${i}`)
  await before.close()
  // Each body file opened slowly: 12 of them take 1.2 s, four times the limit the catalog is given.
  const open = fsp.open
  t.teardown(() => { fsp.open = open })
  fsp.open = (async (...args: Parameters<typeof open>) => {
    if (String(args[0]).startsWith(dataDir) && args[1] === 'w') await new Promise(resolve => setTimeout(resolve, 100))
    return await open(...args)
  }) as typeof open
  const report = await migrateToCatalog(dataDir, url, () => {}, { idleInTransactionMs: 300 })
  fsp.open = open
  t.same(report.buckets, [{ name: 'small', objects: 12, uploads: 0 }])
  const after = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.teardown(async () => { await after.close() })
  t.equal(await ((await (await after.open('small'))!.get('k11')) as BucketObjectBody).text(), 'small body 11')
})

t.test('fsbucket migrate refuses, before writing anything, SQLite keys holding U+0000; once they are deleted it imports', async t => {
  const url = await database('nulkeys')
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  await before.create('old')
  const old = (await before.open('old'))!
  await old.put('keep', 'kept')
  await old.put('a-x', 'legacy')
  const upload = await old.createMultipartUpload('u-x')
  await before.close()
  // The engine refuses such keys now: write them as an older version did.
  const db = new Database(path.join(dataDir, 'old', '.fsbucket', 'catalog.db'))
  for (const [table, from, to] of [['objects', 'a-x', 'a\u0000x'], ['uploads', 'u-x', 'u\u0000x']]) {
    db.prepare(`UPDATE ${table} SET key = ?, id = ? WHERE key = ?`).run(to, Buffer.from(to, 'utf8'), from)
  }
  db.close()

  await t.rejects(migrate(dataDir, url), { message: /nothing was imported: 2 key\(s\) hold U\+0000[^]*old: object "a\\u0000x"[^]*old: upload "u\\u0000x"[^]*run migrate again/ })
  const admin = await PgCatalog.connect(url)
  t.teardown(async () => { await admin.close() })
  t.same((await admin.pool.query('SELECT name FROM fsbucket.buckets')).rows, [], 'no bucket was imported')

  const again = await openRegistry(dataDir, { fsync: false })
  const bucket = (await again.open('old'))!
  t.equal(await ((await bucket.get('a\u0000x')) as BucketObjectBody).text(), 'legacy', 'the SQLite store still reads the legacy key')
  t.same((await bucket.list()).objects.map(o => o.key), ['a\u0000x', 'keep'])
  t.equal((await bucket.head('a\u0000x'))?.key, 'a\u0000x', 'whole, on every SQLite driver')
  t.same((await bucket.listMultipartUploads()).uploads.map(u => u.key), ['u\u0000x'])
  await bucket.delete('a\u0000x')
  await bucket.resumeMultipartUpload('u\u0000x', upload.uploadId).abort()
  await again.close()
  t.match(await migrate(dataDir, url), /old: 1 objects, 0 uploads in progress/)
})

t.test('a multipart object stored without its part layout is read by part from its part bodies; uploads from before the checksum column read as none', async t => {
  const url = await database('layouts')
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { catalog: url, fsync: false, minPartSize: 5 })
  t.teardown(async () => { await registry.close() })
  await registry.create('photos')
  const bucket = (await registry.open('photos'))!
  const upload = await bucket.createMultipartUpload('old')
  const parts = [await upload.uploadPart(1, 'a'.repeat(8)), await upload.uploadPart(2, 'b'.repeat(8)), await upload.uploadPart(3, 'c'.repeat(2))]
  await upload.complete(parts)
  const pending = await bucket.createMultipartUpload('pending')
  const admin = await PgCatalog.connect(url)
  t.teardown(async () => { await admin.close() })
  await admin.pool.query("UPDATE fsbucket.objects SET checksums = (checksums::jsonb - 'multipart')::text, rev = nextval('fsbucket.revisions')")
  await admin.pool.query('UPDATE fsbucket.uploads SET checksum = NULL')
  const reread = (await registry.open('photos'))!
  for (const [i, bytes] of ['a'.repeat(8), 'b'.repeat(8), 'cc'].entries()) {
    const outcome = await reread.read('old', { partNumber: i + 1 })
    t.same(outcome.status === 'partial' ? [outcome.range, outcome.partsCount] : outcome.status, [{ offset: i * 8, length: bytes.length }, 3], `part ${i + 1}`)
  }
  t.equal((await reread.resumeMultipartUpload('pending', pending.uploadId).listParts()).checksum, undefined, 'an upload row without a checksum has none')
})

t.test('the object commands use the catalog FSBUCKET_CATALOG names', async t => {
  const url = await database('commands')
  const dataDir = testdir(t)
  const saved = process.env.FSBUCKET_CATALOG
  process.env.FSBUCKET_CATALOG = url
  const write = process.stdout.write
  process.stdout.write = (() => true) as typeof process.stdout.write
  try {
    await buildCli().parseAsync(['node', 'fsbucket', 'mb', 'fsb://made-by-cli', '--data', dataDir])
  } finally {
    process.stdout.write = write
    if (saved === undefined) delete process.env.FSBUCKET_CATALOG
    else process.env.FSBUCKET_CATALOG = saved
  }
  t.equal(process.exitCode ?? 0, 0)
  const registry = await openRegistry(dataDir, { catalog: url, fsync: false })
  t.teardown(async () => { await registry.close() })
  t.ok(await registry.info('made-by-cli'), 'the bucket is in the PostgreSQL catalog')
  t.notOk(existsSync(path.join(dataDir, 'made-by-cli', '.fsbucket', 'catalog.db')), 'not in a SQLite catalog')
})
