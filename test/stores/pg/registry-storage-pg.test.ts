/**
 * Runs the RegistryStorage conformance suite against the PostgreSQL
 * storage: each subtest gets a database of its own in a throwaway server
 * and a data directory; a second handle is a second connection pool, as a
 * second gateway holds.
 */
import t from 'tap'
import type { RegistryStorage } from '../../../src/bucket/port.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgRegistryStorage } from '../../../src/stores/pg/registry-storage.js'
import { registryStorageConformance } from '../../registry/storage-conformance.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
let databases = 0

registryStorageConformance(t, {
  name: 'pg',
  open: async t => {
    const name = `registry${++databases}`
    const admin = await PgCatalog.connect(server.url())
    await admin.pool.query(`CREATE DATABASE ${name}`)
    await admin.close()
    const dir = testdir(t)
    const opened: RegistryStorage[] = []
    const open = async (): Promise<RegistryStorage> => {
      const storage = await PgRegistryStorage.open(dir, server.url(name), { fsync: false })
      opened.push(storage)
      return storage
    }
    t.teardown(async () => { for (const storage of opened) await storage.close?.() })
    return { storage: await open(), another: open }
  }
})
