/**
 * The PostgreSQL catalog's connection pool under bursts: many concurrent
 * bucket-settings updates (what the management API's PUTs of CORS, public
 * access and the rest turn into), more at once than the pool has
 * connections, through two gateways, finish without exhausting the pool or
 * stalling, lose no update, and leave the pool serving other requests
 * meanwhile. A lock held on one connection while its holder waits for
 * another would stall here until the pool's wait runs out (10908). And
 * `--catalog-connections` caps what a process opens.
 */
import t from 'tap'
import { createRegistry } from '../../../src/bucket/index.js'
import { buildCli } from '../../../src/main.js'
import { openRegistry } from '../../../src/index.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgRegistryStorage } from '../../../src/stores/pg/registry-storage.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

/** Connections each gateway's pool may open: far fewer than the updates in flight. */
const POOL = 3

t.test('a burst of settings updates, beyond the pool size, through two gateways', async t => {
  const dataDir = testdir(t)
  const gateways = await Promise.all([0, 1].map(async () =>
    createRegistry(await PgRegistryStorage.open(dataDir, server.url(), { fsync: false, maxConnections: POOL }))))
  t.teardown(async () => { await Promise.all(gateways.map(async g => await g.close())) })
  const [a, b] = gateways
  await a.create('burst')
  await a.create('other')

  const started = Date.now()
  const updates: Array<Promise<unknown>> = []
  for (let i = 0; i < 24; i++) {
    const gateway = i % 2 === 0 ? a : b
    const name = i % 4 < 3 ? 'burst' : 'other'
    // Each update changes a field of its own, so a lost update shows in the final settings.
    updates.push(gateway.updateSettings(name, { domains: [`d${i}.example`] }).then(async () =>
      await gateway.updateSettings(name, i % 3 === 0 ? { public: true } : { storageClass: 'InfrequentAccess' })))
    updates.push(gateway.info(name), gateway.list())
  }
  const results = await Promise.allSettled(updates)
  const failed = results.filter(r => r.status === 'rejected')
  t.same(failed.map(r => String((r as PromiseRejectedResult).reason)), [], 'every update and every read succeeded')
  // A stalled one fails with 10908 once the pool's wait (5 s) runs out: the assertion above catches it.
  t.comment(`the burst took ${Date.now() - started} ms`)

  for (const gateway of gateways) {
    const burst = await gateway.info('burst')
    t.equal(burst?.settings.public, true, 'public, set by some updates, is kept')
    t.equal(burst?.settings.storageClass, 'InfrequentAccess', 'the storage class, set by others, is kept')
    t.equal(burst?.settings.domains.length, 1)
  }

  // The pools are whole: a lock taken now is granted and its statements run.
  const catalog = await PgCatalog.connect(server.url(), { maxConnections: 1 })
  t.teardown(async () => { await catalog.close() })
  const inside = await catalog.withLock('test', 'one-connection', async () =>
    (await catalog.query<{ n: number }>('test', 'SELECT 1 AS n')).rows[0].n)
  t.equal(inside, 1, 'with a pool of one connection, a statement under a lock runs on the lock\'s connection')
  const [first, second] = await Promise.all([
    catalog.withLock('test', 'busy', async () => { await new Promise(resolve => setTimeout(resolve, 50)); return 'held' }, false),
    catalog.withLock('test', 'busy', async () => 'also held', false)
  ])
  t.same([first, second], ['held', undefined], 'without waiting, a lock this process holds is refused at once')
})

t.test('--catalog-connections caps the connections a process opens to the catalog', async t => {
  const serve = buildCli().commands.find(c => c.name() === 'serve')!
  t.equal(serve.options.find(o => o.long === '--catalog-connections')?.envVar, 'FSBUCKET_CATALOG_CONNECTIONS')
  const dataDir = testdir(t)
  const admin = await PgCatalog.connect(server.url(), { maxConnections: 1 })
  t.teardown(async () => { await admin.close() })
  await admin.query('preparing', 'CREATE DATABASE capped')
  const backends = async (): Promise<number> => (await admin.query('counting',
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = \'capped\' AND backend_type = \'client backend\'')).rows[0].n
  const registry = await openRegistry(dataDir, { catalog: server.url('capped'), fsync: false, catalogConnections: 2 })
  t.teardown(async () => { await registry.close() })
  await registry.create('capped')
  const bucket = (await registry.open('capped'))!
  // Far more requests at once than the cap: they wait their turn for one of its two connections.
  await Promise.all(Array.from({ length: 40 }, async (_, i) => { await bucket.put(`k${i}`, `v${i}`) }))
  t.equal((await bucket.list()).objects.length, 40, 'every write landed')
  const opened = await backends()
  t.ok(opened >= 1 && opened <= 2, `${opened} connection(s) opened`)
})
