/**
 * Races of multipart uploads at the body files (test/conformance/upload-races.ts),
 * against the PostgreSQL store. Its completion links the parts holding the
 * upload's row, which an abort waits for: only the placing of parts races.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import t from 'tap'
import { BucketEngine } from '../../../src/bucket/index.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgStore } from '../../../src/stores/pg/store.js'
import { createOnlyCompletionRaces, partPlacementRaces } from '../../conformance/upload-races.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
const catalog = await PgCatalog.connect(server.url())
t.teardown(async () => { await catalog.close() })

const open = async (dir: string): Promise<BucketEngine> => {
  const store = await PgStore.open(catalog, randomBytes(8).toString('hex'), path.join(dir, '.fsbucket'), { fsync: false, create: true })
  return new BucketEngine(store)
}
partPlacementRaces(t, open)
createOnlyCompletionRaces(t, open)
