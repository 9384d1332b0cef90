/**
 * Runs the store port's conformance suites (copy and lifecycle included) against the
 * PostgreSQL store: the catalog in a throwaway PostgreSQL server, the
 * bodies in each subtest's directory, each directory a store of its own.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import t from 'tap'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgStore } from '../../../src/stores/pg/store.js'
import { storeConformance, type StoreUnderTest } from '../../conformance/store.js'
import { copyConformance } from '../../conformance/store-copy.js'
import { lifecycleConformance } from '../../conformance/store-lifecycle.js'
import { lockConformance } from '../../conformance/store-locks.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
const catalog = await PgCatalog.connect(server.url())
t.teardown(async () => { await catalog.close() })

const stores = new Map<string, string>()

const store: StoreUnderTest = {
  name: 'pg',
  open: async dir => {
    let storeId = stores.get(dir)
    if (storeId === undefined) {
      storeId = randomBytes(8).toString('hex')
      stores.set(dir, storeId)
    }
    return await PgStore.open(catalog, storeId, path.join(dir, '.fsbucket'), { fsync: false, create: true })
  },
  // Leftovers are judged by the garbage table and file times (catalog.test.ts covers the sweeper).
  supports: { sharedHandles: true, persistence: true, leftovers: false }
}

storeConformance(t, store)
copyConformance(t, store)
lifecycleConformance(t, store)
lockConformance(t, store)
