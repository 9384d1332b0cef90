/**
 * Runs the RegistryStorage conformance suite against the PostgreSQL
 * storage: each subtest gets a database of its own in a throwaway server
 * and a data directory; a second handle is a second connection pool, as a
 * second gateway holds.
 */
import t from 'tap'
import { createRegistry, shareChecksWithinTurns } from '../../../src/index.js'
import type { RegistryStorage } from '../../../src/bucket/port.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgRegistryStorage } from '../../../src/stores/pg/registry-storage.js'
import { registryStorageConformance } from '../../conformance/registry-storage.js'
import { testdir } from '../../testdir.js'
import { countStatements, startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
let databases = 0

/** The URL of a new, empty database of the throwaway server. */
async function freshDatabase (): Promise<string> {
  const name = `registry${++databases}`
  const admin = await PgCatalog.connect(server.url())
  await admin.pool.query(`CREATE DATABASE ${name}`)
  await admin.close()
  return server.url(name)
}

const module = new URL('../../../src/stores/pg/registry-storage.js', import.meta.url).href

registryStorageConformance(t, {
  name: 'pg',
  open: async t => {
    const url = await freshDatabase()
    const dir = testdir(t)
    const opened: RegistryStorage[] = []
    const open = async (): Promise<RegistryStorage> => {
      const storage = await PgRegistryStorage.open(dir, url, { fsync: false })
      opened.push(storage)
      return storage
    }
    t.teardown(async () => { for (const storage of opened) await storage.close?.() })
    return {
      storage: await open(),
      another: open,
      elsewhere: `const { PgRegistryStorage } = await import(${JSON.stringify(module)})
        const storage = await PgRegistryStorage.open(${JSON.stringify(dir)}, ${JSON.stringify(url)}, { fsync: false })`
    }
  }
})

t.test('pg: the looks of one turn share one statement where a server shares looks; the next turn asks again', async t => {
  const storage = await PgRegistryStorage.open(testdir(t), await freshDatabase(), { fsync: false })
  t.teardown(async () => { await storage.close() })
  await storage.createPlace('b')
  await storage.writeSettings('b', { format: 1, creationDate: new Date(0).toISOString(), settings: {} as never })
  const counter = countStatements()
  t.teardown(counter.restore)
  const statementsOf = async (looks: () => Promise<unknown>): Promise<number> => {
    await new Promise(resolve => setImmediate(resolve))
    const before = counter.count
    await looks()
    return counter.count - before
  }
  const tenLooks = async (): Promise<unknown> => await Promise.all(Array.from({ length: 10 }, async (_, i) => await (i % 2 === 0 ? storage.settingsVersion('b') : storage.changeToken())))
  t.equal(await statementsOf(tenLooks), 10, 'a library caller looks every time')
  shareChecksWithinTurns(() => true)
  t.teardown(() => { shareChecksWithinTurns(() => false) })
  t.equal(await statementsOf(tenLooks), 2, 'a server: one statement per look and turn')
  t.equal(await statementsOf(tenLooks), 2, 'and again in the next turn')
})

t.test('pg: a look under the settings lock never waits for a look shared outside it (a pool of one connection)', async t => {
  const storage = await PgRegistryStorage.open(testdir(t), await freshDatabase(), { fsync: false, maxConnections: 1 })
  t.teardown(async () => { await storage.close() })
  await storage.createPlace('b')
  await storage.writeSettings('b', { format: 1, creationDate: new Date(0).toISOString(), settings: {} as never })
  shareChecksWithinTurns(() => true)
  t.teardown(() => { shareChecksWithinTurns(() => false) })
  // A look outside the lock, started in the same turn as the one under it, waits for the one connection the lock holds.
  let release = (): void => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  const outside = gate.then(async () => await storage.settingsVersion('b'))
  const started = Date.now()
  const inside = await storage.withSettingsLock('b', async () => {
    release()
    await Promise.resolve()
    return await storage.settingsVersion('b')
  })
  t.type(inside, 'string', 'the look under the lock is answered on its connection')
  t.ok(Date.now() - started < 2000, `at once (${Date.now() - started} ms), not after the pool's wait`)
  t.equal(await outside, inside, 'and the one outside once the lock is released')
})

t.test('pg: a tokens row edited by hand into text that is not JSON is StateDamaged naming the row, quoting none of it, and is left as it was', async t => {
  const url = await freshDatabase()
  const registry = createRegistry(await PgRegistryStorage.open(testdir(t), url, { fsync: false }))
  t.teardown(async () => { await registry.close() })
  const made = await registry.tokens.create({ name: 'ci', permission: 'admin-read-write' })
  const admin = await PgCatalog.connect(url)
  t.teardown(async () => { await admin.close() })
  const { rows } = await admin.pool.query<{ value: string }>('SELECT value FROM fsbucket.documents WHERE area = $1 AND name = $2', ['tokens', 'tokens.json'])
  const secret = (JSON.parse(rows[0].value) as { tokens: Array<{ secretAccessKey: string }> }).tokens[0].secretAccessKey
  // V8's complaint would quote the text around the fault: `Unexpected token 'x', ..."cessKey":x0c3f9a12"...`.
  const broken = rows[0].value.replace(`"${secret}"`, `x${secret}`)
  await admin.pool.query('UPDATE fsbucket.documents SET value = $1 WHERE area = $2 AND name = $3', [broken, 'tokens', 'tokens.json'])
  const where = 'the document tokens.json of state area tokens in the catalog'
  const fresh = createRegistry(await PgRegistryStorage.open(testdir(t), url, { fsync: false }))
  t.teardown(async () => { await fresh.close() })
  const refused = { code: 10916, errorName: 'StateDamaged', path: where, cause: { message: new RegExp(`^${where} is not valid JSON: (the fault is at position \\d+ \\()?the text is not quoted, as it may hold secrets\\)?$`) } }
  await t.rejects(fresh.tokens.byValue(made.token), refused, 'a lookup')
  await t.rejects(fresh.tokens.list(), refused, 'a list')
  const created = await fresh.tokens.create({ name: 'x', permission: 'admin-read-only' }).then(() => null, (err: Error & { cause?: Error }) => err)
  t.match(created, refused, 'a create, which would write over it')
  t.notOk(created?.cause?.message.includes(secret.slice(0, 6)), 'the reason quotes no secret')
  const after = await admin.pool.query<{ value: string }>('SELECT value FROM fsbucket.documents WHERE area = $1 AND name = $2', ['tokens', 'tokens.json'])
  t.equal(after.rows[0].value, broken, 'the row is left as it was')
})
