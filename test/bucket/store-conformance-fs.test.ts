/**
 * Runs the store port's conformance suite against the filesystem store.
 */
import t from 'tap'
import { FsStore } from '../../src/stores/fs/store.js'
import { storeConformance } from './store-conformance.js'

storeConformance(t, {
  name: 'fs',
  open: async dir => await FsStore.open(dir, { fsync: false }),
  supports: { sharedHandles: true, persistence: true, leftovers: true }
})
