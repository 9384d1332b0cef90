/**
 * Runs the store port's conformance suites (copy and lifecycle included) against the in-memory store.
 */
import t from 'tap'
import { MemoryStore } from '../../../src/stores/memory/store.js'
import { storeConformance, type StoreUnderTest } from '../../conformance/store.js'
import { copyConformance } from '../../conformance/store-copy.js'
import { lifecycleConformance } from '../../conformance/store-lifecycle.js'
import { lockConformance } from '../../conformance/store-locks.js'

const store: StoreUnderTest = {
  name: 'memory',
  open: async () => new MemoryStore(),
  supports: { sharedHandles: false, persistence: false, leftovers: false }
}

storeConformance(t, store)
copyConformance(t, store)
lifecycleConformance(t, store)
lockConformance(t, store)
