/**
 * What a token lookup costs: a hit is answered from the records a process
 * keeps; a miss of a value shaped as a token reads them again (a token made
 * elsewhere works at once); a miss of any other value (the configured admin
 * token, a stranger's guess) does not, so a busy server using its
 * configured credentials reads nothing per request.
 */
import t from 'tap'
import { createRegistry, type StateDocuments } from '../../src/bucket/index.js'
import { MemoryRegistryStorage } from '../../src/stores/memory/registry-storage.js'

function counted (before: () => Promise<void> = async () => {}): { storage: MemoryRegistryStorage, reads: () => number } {
  const storage = new MemoryRegistryStorage()
  let reads = 0
  const state = storage.state.bind(storage)
  storage.state = (area: string): StateDocuments => {
    const documents = state(area)
    if (area !== 'tokens') return documents
    return new Proxy(documents, {
      get (target, name, receiver) {
        const value = Reflect.get(target, name, receiver)
        if (name !== 'read' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value
        return async (...args: unknown[]) => {
          reads++
          const document = await value.apply(target, args)
          await before()
          return document
        }
      }
    })
  }
  return { storage, reads: () => reads }
}

t.test('misses read again only for what could be a token', async t => {
  const { storage, reads } = counted()
  const tokens = createRegistry(storage).tokens
  const made = await tokens.create({ name: 'reader', permission: 'object-read-only' })
  t.ok(await tokens.byValue(made.token), 'found')
  const afterHit = reads()
  for (let i = 0; i < 20; i++) t.equal(await tokens.byValue('the-configured-admin-token'), null)
  for (let i = 0; i < 20; i++) t.equal(await tokens.byAccessKey('AKIAIOSFODNN7EXAMPLE'), null)
  t.equal(reads(), afterHit, 'values no token has are answered from the records kept')
  t.equal(await tokens.byValue('A'.repeat(40)), null)
  t.equal(await tokens.byAccessKey('0'.repeat(32)), null)
  t.equal(reads(), afterHit + 2, 'a token-shaped miss reads once more')
})

t.test('a read in flight while this process revokes a token is not kept', async t => {
  let hold: Promise<void> = Promise.resolve()
  const { storage } = counted(async () => { await hold })
  const tokens = createRegistry(storage).tokens
  const made = await tokens.create({ name: 'leaving', permission: 'object-read-only' })
  let release = (): void => {}
  hold = new Promise(resolve => { release = resolve })
  // A lookup's read takes the records while the token is there, and finishes after the revoke.
  const during = tokens.byAccessKey(made.id)
  t.equal(await tokens.revoke(made.id), true)
  release()
  await during
  t.equal(await tokens.byAccessKey(made.id), null, 'the revoked token is gone at once in the process that revoked it')
})
