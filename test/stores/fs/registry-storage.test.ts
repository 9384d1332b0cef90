/**
 * Runs the RegistryStorage conformance suite against the data directory's
 * storage; a second handle is a second storage on the same directory.
 */
import t from 'tap'
import { FsRegistryStorage } from '../../../src/stores/fs/registry-storage.js'
import { testdir } from '../../testdir.js'
import { registryStorageConformance } from '../../conformance/registry-storage.js'

const module = new URL('../../../src/stores/fs/registry-storage.js', import.meta.url).href

registryStorageConformance(t, {
  name: 'fs',
  open: async t => {
    const dir = testdir(t)
    return {
      storage: await FsRegistryStorage.open(dir, { fsync: false }),
      another: async () => await FsRegistryStorage.open(dir, { fsync: false }),
      elsewhere: `const { FsRegistryStorage } = await import(${JSON.stringify(module)})
        const storage = await FsRegistryStorage.open(${JSON.stringify(dir)}, { fsync: false })`
    }
  }
})
