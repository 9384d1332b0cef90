/** Event notifications and queues over the PostgreSQL catalog; the suite is test/conformance/queue-events.ts. */
import t from 'tap'
import { openRegistry } from '../../../src/index.js'
import { queueEventSuite } from '../../conformance/queue-events.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
const dataDir = testdir(t)
const registry = await openRegistry(dataDir, { catalog: server.url(), fsync: false, minPartSize: 5 })
t.teardown(async () => { await registry.close() })
await queueEventSuite(t, registry, dataDir)
