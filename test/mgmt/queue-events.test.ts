/** Event notifications and queues over the fs store (a SQLite catalog per bucket); the suite is test/conformance/queue-events.ts. */
import t from 'tap'
import { openRegistry } from '../../src/index.js'
import { queueEventSuite } from '../conformance/queue-events.js'
import { testdir } from '../testdir.js'

const dataDir = testdir(t)
const registry = await openRegistry(dataDir, { fsync: false, minPartSize: 5 })
t.teardown(async () => { await registry.close() })
await queueEventSuite(t, registry, dataDir)
