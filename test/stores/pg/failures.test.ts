/**
 * Failures of the catalog beneath running gateways: a connection the
 * server ends while a gateway works between two statements (a restart, a
 * failover, a session an operator terminated) fails that request with
 * 10908 and leaves the process running; a bucket delete cut short after
 * its bucket was closed to writes can be run again.
 */
import t from 'tap'
import { openRegistry } from '../../../src/index.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

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
