/**
 * Runs the binding's conformance suite against the PostgreSQL store: the
 * catalog in a throwaway PostgreSQL server, the bodies in each subtest's
 * directory. Each directory is a store of its own in the one catalog.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import t from 'tap'
import { BucketEngine } from '../../../src/bucket/index.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgStore } from '../../../src/stores/pg/store.js'
import { bucketConformance, type SuiteOptions } from '../../conformance/bucket.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
const catalog = await PgCatalog.connect(server.url())
t.teardown(async () => { await catalog.close() })

const stores = new Map<string, string>()

bucketConformance(t, async (dir: string, options?: SuiteOptions) => {
  let storeId = stores.get(dir)
  if (storeId === undefined) {
    storeId = randomBytes(8).toString('hex')
    stores.set(dir, storeId)
  }
  const store = await PgStore.open(catalog, storeId, path.join(dir, '.fsbucket'), { fsync: options?.fsync, create: true })
  return new BucketEngine(store, options)
})
