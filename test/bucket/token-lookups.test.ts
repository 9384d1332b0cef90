/**
 * What a token lookup costs: a hit is answered from the records a process
 * keeps; a miss of a value shaped as a token reads them again (a token made
 * elsewhere works at once); a miss of any other value (the configured admin
 * token, a stranger's guess) does not, so a busy server using its
 * configured credentials reads nothing per request.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createRegistry, TOKEN_CACHE_MS, type StateDocuments } from '../../src/bucket/index.js'
import type { RegistryStorage } from '../../src/bucket/port.js'
import { FsRegistryStorage } from '../../src/stores/fs/registry-storage.js'
import { MemoryRegistryStorage } from '../../src/stores/memory/registry-storage.js'
import { testdir } from '../testdir.js'

function counted<S extends RegistryStorage = MemoryRegistryStorage> (before: () => Promise<void> = async () => {}, storage: S = new MemoryRegistryStorage() as unknown as S): { storage: S, reads: () => number, checks: () => number } {
  let reads = 0
  let checks = 0
  const state = storage.state.bind(storage)
  storage.state = (area: string): StateDocuments => {
    const documents = state(area)
    if (area !== 'tokens') return documents
    return new Proxy(documents, {
      get (target, name, receiver) {
        const value = Reflect.get(target, name, receiver)
        if (name === 'version' && typeof value === 'function') {
          return async (...args: unknown[]) => {
            checks++
            return await value.apply(target, args)
          }
        }
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
  return { storage, reads: () => reads, checks: () => checks }
}

t.test('misses read again only for what could be a token', async t => {
  const { storage, reads, checks } = counted()
  const tokens = createRegistry(storage).tokens
  const made = await tokens.create({ name: 'reader', permission: 'object-read-only' })
  t.ok(await tokens.byValue(made.token), 'found')
  const afterHit = reads()
  const checked = checks()
  for (let i = 0; i < 20; i++) t.equal(await tokens.byValue('the-configured-admin-token'), null)
  for (let i = 0; i < 20; i++) t.equal(await tokens.byAccessKey('AKIAIOSFODNN7EXAMPLE'), null)
  t.equal(reads() + checks(), afterHit + checked, 'values no token has are answered from the records kept')
  t.equal(await tokens.byValue('A'.repeat(40)), null)
  t.equal(await tokens.byAccessKey('0'.repeat(32)), null)
  t.equal(checks(), checked + 2, 'a token-shaped miss checks the records once more')
  t.equal(reads(), afterHit, 'and, as they did not change, does not read them again')
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

// A store of many tokens made a server read and parse all of it every second, and for every token-shaped miss: a request then waited for that parse.
for (const [kind, open] of [
  ['memory', async () => { const one = new MemoryRegistryStorage(); return [one, one.another()] }],
  ['data directory', async (dir: string) => [await FsRegistryStorage.open(dir, { fsync: false }), await FsRegistryStorage.open(dir, { fsync: false })]]
] as Array<[string, (dir: string) => Promise<RegistryStorage[]>]>) {
  t.test(`records that did not change are not parsed again (${kind})`, async t => {
    const [mine, theirs] = await open(testdir(t))
    const { reads } = counted(async () => {}, mine)
    const tokens = createRegistry(mine).tokens
    const elsewhere = createRegistry(theirs).tokens
    const made = await elsewhere.create({ name: 'reader', permission: 'object-read-only' })
    t.ok(await tokens.byValue(made.token), 'a token made elsewhere works at once')
    const first = reads()
    await sleep(TOKEN_CACHE_MS + 50)
    for (let i = 0; i < 5; i++) t.ok(await tokens.byValue(made.token))
    for (let i = 0; i < 5; i++) t.equal(await tokens.byValue('B'.repeat(40)), null, 'a token-shaped miss')
    t.equal(reads(), first, 'the records, unchanged, were not read again')
    t.equal(await elsewhere.revoke(made.id), true)
    await sleep(TOKEN_CACHE_MS + 50)
    t.same(await tokens.byValue(made.token), { revoked: true }, 'a revocation elsewhere is seen once the cache runs out')
    t.equal(await tokens.byAccessKey(made.id), null)
    t.equal(reads(), first + 1, 'read once more, after the change')
  })
}

t.test('a tokens document of another format (a newer version\'s, after a downgrade) or damaged by hand is never read: every token request fails with StateDamaged, naming the file and why, and nothing is written over it', async t => {
  const dir = testdir(t)
  const registry = createRegistry(await FsRegistryStorage.open(dir))
  t.teardown(async () => { await registry.close() })
  const made = await registry.tokens.create({ name: 'ci', permission: 'admin-read-write' })
  t.ok((await registry.tokens.byValue(made.token)) !== null, 'format 1: found')
  const { readFile, writeFile } = await import('node:fs/promises')
  const path = await import('node:path')
  const file = path.join(dir, '.tokens', 'tokens.json')
  const document = JSON.parse(await readFile(file, 'utf8')) as { tokens: Array<Record<string, unknown>> }
  const record = document.tokens[0]
  const secret = record.secretAccessKey as string
  const damaged: Array<[string, string, RegExp]> = [
    ['format 2', JSON.stringify({ ...document, format: 2 }), /tokens\.json is format 2, which this version does not read/],
    ['not JSON', '{"format": 1, "tokens": [', /tokens\.json is not valid JSON/],
    ['an array', '[]', /tokens\.json is not a JSON object/],
    ['tokens not a list', JSON.stringify({ format: 1, tokens: 'x' }), /has no "tokens" list/],
    // A string `buckets` would match every bucket name it contains.
    ['a record\'s buckets a string', JSON.stringify({ format: 1, tokens: [{ ...record, buckets: 'photos' }] }), /tokens\[0\]/],
    ['a record without its secret', JSON.stringify({ format: 1, tokens: [{ ...record, secretAccessKey: undefined }] }), /tokens\[0\]/],
    ['revoked not a list', JSON.stringify({ ...document, revoked: 5 }), /"revoked"/],
    // V8's complaint would quote the text around the fault: `Unexpected token 'x', ..."cessKey":x0c3f9a12"...`.
    ['a secret left unquoted', JSON.stringify(document).replace(`"${secret}"`, `x${secret}`), /is not valid JSON: the text is not quoted, as it may hold secrets$/]
  ]
  for (const [what, text, why] of damaged) {
    await writeFile(file, text)
    const fresh = createRegistry(await FsRegistryStorage.open(dir))
    const refused = { code: 10916, errorName: 'StateDamaged', cause: { message: why } }
    // An operator with several data directories must be told which file to mend.
    const listed = await fresh.tokens.list().then(() => null, (err: { path?: string, cause?: Error }) => err)
    t.equal(listed?.path, file, `${what}: the error's path is the file's full path`)
    t.ok(listed?.cause?.message.startsWith(`${file} `), `${what}: so does its reason: ${listed?.cause?.message ?? ''}`)
    t.notOk(listed?.cause?.message.includes(secret.slice(0, 6)), `${what}: the reason quotes no secret`)
    await t.rejects(fresh.tokens.byValue(made.token), refused, `${what}: a lookup`)
    await t.rejects(fresh.tokens.list(), refused, `${what}: a list`)
    await t.rejects(fresh.tokens.create({ name: 'x', permission: 'admin-read-only' }), refused, `${what}: a create, which would write over it`)
    await t.rejects(fresh.tokens.revoke(record.id as string), refused, `${what}: a revocation`)
    t.equal(await readFile(file, 'utf8'), text, `${what}: the file is left as it was`)
    await fresh.close()
  }
})

t.test('a damaged tokens document of a store without files is named by where it is kept', async t => {
  const storage = new MemoryRegistryStorage()
  const registry = createRegistry(storage)
  t.teardown(async () => { await registry.close() })
  await storage.state('tokens').transaction(async tx => { Object.assign(await tx.load('tokens.json', {}), { format: 2, tokens: [] }) })
  await t.rejects(registry.tokens.list(), {
    path: 'the document tokens.json of state area tokens',
    cause: { message: /^the document tokens\.json of state area tokens is format 2, / }
  })
})
