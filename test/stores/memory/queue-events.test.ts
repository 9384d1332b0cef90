/** Event notifications and queues over the in-memory store (`serve --memory`); the suite is test/conformance/queue-events.ts. */
import t from 'tap'
import { openMemoryRegistry } from '../../../src/index.js'
import { queueEventSuite } from '../../conformance/queue-events.js'
import { testdir } from '../../testdir.js'

const registry = openMemoryRegistry({ minPartSize: 5 })
t.teardown(async () => { await registry.close() })
await queueEventSuite(t, registry, testdir(t))
