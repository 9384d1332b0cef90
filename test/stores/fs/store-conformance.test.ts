/**
 * Runs the store port's conformance suites (copy and lifecycle included) against the filesystem store.
 */
import t from 'tap'
import { FsStore } from '../../../src/stores/fs/store.js'
import { storeConformance, type StoreUnderTest } from '../../conformance/store.js'
import { copyConformance } from '../../conformance/store-copy.js'
import { lifecycleConformance } from '../../conformance/store-lifecycle.js'
import { lockConformance } from '../../conformance/store-locks.js'

const store: StoreUnderTest = {
  name: 'fs',
  open: async dir => await FsStore.open(dir, { fsync: false }),
  supports: { sharedHandles: true, persistence: true, leftovers: true }
}

storeConformance(t, store)
copyConformance(t, store)
lifecycleConformance(t, store)
lockConformance(t, store)
