/**
 * Runs the binding's conformance suite against the in-memory store: the same
 * rules must hold whatever keeps the bytes.
 */
import t from 'tap'
import { BucketEngine } from '../../../src/bucket/index.js'
import { MemoryStore } from '../../../src/stores/memory/store.js'
import type { OpenBucketOptions } from '../../../src/index.js'
import { bucketConformance } from '../../conformance/bucket.js'

const stores = new Map<string, MemoryStore>()

bucketConformance(t, async (dir: string, options?: OpenBucketOptions) => {
  let store = stores.get(dir)
  if (store === undefined) {
    store = new MemoryStore()
    stores.set(dir, store)
  }
  return new BucketEngine(store, options)
})
