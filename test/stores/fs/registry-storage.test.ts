/**
 * Runs the RegistryStorage conformance suite against the data directory's
 * storage; a second handle is a second storage on the same directory.
 * And the modes of the state areas that hold secrets.
 */
import t from 'tap'
import { statSync } from 'node:fs'
import path from 'node:path'
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

t.test('the areas holding secrets (the tokens\' records, the management API\'s credentials) are the server user\'s only', async t => {
  const dir = testdir(t)
  const storage = await FsRegistryStorage.open(dir, { fsync: false })
  const modeOf = (file: string): number => statSync(file).mode & 0o777
  // What the process's umask would let a plain directory and document be (0755 and 0644 under the usual 022).
  const open = 0o777 & ~process.umask()
  for (const area of ['tokens', 'mgmt']) {
    await storage.state(area).transaction(async tx => { (await tx.load<{ n?: number }>('doc.json', {})).n = 1 })
    t.equal(modeOf(path.join(dir, `.${area}`)), 0o700, `.${area}/ is 0700`)
    t.equal(modeOf(path.join(dir, `.${area}`, 'doc.json')), 0o600, `.${area}/doc.json is 0600`)
  }
  await storage.state('other').transaction(async tx => { (await tx.load<{ n?: number }>('doc.json', {})).n = 1 })
  t.equal(modeOf(path.join(dir, '.other')), open, 'another area is as the umask makes it')
})
