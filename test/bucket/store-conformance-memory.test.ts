/**
 * Runs the store port's conformance suites (copy included) against the in-memory store.
 */
import t from 'tap'
import { MemoryStore } from '../../src/stores/memory/store.js'
import { storeConformance, type StoreUnderTest } from './store-conformance.js'
import { copyConformance } from './store-conformance-copy.js'

const store: StoreUnderTest = {
  name: 'memory',
  open: async () => new MemoryStore(),
  supports: { sharedHandles: false, persistence: false, leftovers: false }
}

storeConformance(t, store)
copyConformance(t, store)
