/**
 * Runs the store port's conformance suite against the in-memory store.
 */
import t from 'tap'
import { MemoryStore } from '../../src/stores/memory/store.js'
import { storeConformance } from './store-conformance.js'

storeConformance(t, {
  name: 'memory',
  open: async () => new MemoryStore(),
  supports: { sharedHandles: false, persistence: false, leftovers: false }
})
