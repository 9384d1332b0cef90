/**
 * A registry's `close()` is final: every call after it is refused with
 * `ERR_USE_AFTER_CLOSE`, on the filesystem store (where a call would open a
 * catalog again and write on disk) and in memory; a second `close()` does
 * nothing more.
 */
import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { openMemoryRegistry, openRegistry, type BucketRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

const closed = { code: 'ERR_USE_AFTER_CLOSE', message: /The registry is closed/ }

async function refusesEverything (t: Test, registry: BucketRegistry): Promise<void> {
  await t.rejects(registry.create('bbb'), closed, 'create')
  await t.rejects(registry.open('aaa'), closed, 'open')
  await t.rejects(registry.list(), closed, 'list')
  await t.rejects(registry.info('aaa'), closed, 'info')
  await t.rejects(registry.delete('aaa'), closed, 'delete')
  await t.rejects(registry.updateSettings('aaa', {}), closed, 'updateSettings')
  await t.rejects(registry.lockRules('aaa'), closed, 'lockRules')
  await t.rejects(registry.sweep(), closed, 'sweep')
  t.throws(() => registry.state('mgmt'), closed, 'state')
  t.throws(() => registry.tokens, closed, 'the token directory')
  await registry.close()
  t.pass('a second close() resolves')
}

t.test('a filesystem registry refuses every call after close(), and writes nothing more', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  await registry.create('aaa')
  await registry.close()
  await refusesEverything(t, registry)
  t.notOk(existsSync(path.join(dir, 'bbb')), 'no bucket was made on disk')
})

t.test('a memory registry refuses every call after close()', async t => {
  const registry = openMemoryRegistry()
  await registry.create('aaa')
  await registry.close()
  await refusesEverything(t, registry)
})

t.test('an open begun before close() and still on its way opens nothing after it', async t => {
  const dir = testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  await registry.create('aaa')
  // The open is past its check on entry, reading the bucket's settings, when the close begins.
  const opening = registry.open('aaa')
  const closing = registry.close()
  const opened = await opening.then(() => 'opened', (err: { code?: string }) => err.code)
  await closing
  t.equal(opened, 'ERR_USE_AFTER_CLOSE', 'refused, rather than a bucket nothing will close')
})
