/**
 * Runs the RegistryStorage conformance suite against the in-memory storage
 * (`serve --memory`, `startServer`); a second handle is `another()`, on the
 * same buckets. No other process can reach it, so the suite's tests across
 * processes do not apply.
 */
import t from 'tap'
import { MemoryRegistryStorage } from '../../../src/stores/memory/registry-storage.js'
import { registryStorageConformance } from '../../conformance/registry-storage.js'

registryStorageConformance(t, {
  name: 'memory',
  open: async () => {
    const storage = new MemoryRegistryStorage()
    return { storage, another: async () => storage.another() }
  }
})

t.test('memory: separate storages share nothing', async t => {
  const one = new MemoryRegistryStorage()
  const two = new MemoryRegistryStorage()
  await one.createPlace('b')
  await one.state('mgmt').transaction(async tx => { (await tx.load('zones.json', { zones: [] as string[] })).zones.push('z') })
  t.same(await two.names(), [])
  t.equal(await two.state('mgmt').read('zones.json', null), null)
})
