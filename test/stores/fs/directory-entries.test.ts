/**
 * A directory the stores make is made durable in its parent: a bucket's
 * directory in the data directory, `.fsbucket/` in the bucket's, and its
 * `tmp/`, `blobs/` and `uploads/` in `.fsbucket/`. Without the parent's
 * sync, a power cut could lose a bucket whose creation was answered, with
 * every file synced inside it (file systems that do not order directory
 * creations before later syncs). The syncs are watched through FileHandle.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { openRegistry } from '../../../src/index.js'
import { JsonDirectory } from '../../../src/stores/fs/json-directory.js'
import { testdir } from '../../testdir.js'

const synced: string[] = []

t.beforeEach(() => { synced.length = 0 })

t.before(async () => {
  const opened = new WeakMap<object, string>()
  const open = fsp.open
  ;(fsp as { open: typeof fsp.open }).open = async function (this: unknown, ...args: Parameters<typeof fsp.open>) {
    const handle = await open.apply(this, args)
    opened.set(handle, String(args[0]))
    return handle
  }
  const probe = await open(import.meta.filename ?? process.argv[1], 'r')
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> }
  await probe.close()
  const sync = proto.sync
  proto.sync = async function (this: object) {
    synced.push(opened.get(this) ?? '?')
    return await sync.call(this)
  }
  t.teardown(() => { (fsp as { open: typeof fsp.open }).open = open; proto.sync = sync })
})

t.test('creating a bucket syncs each directory it makes into its parent', async t => {
  const data = path.join(testdir(t), 'data')
  const registry = await openRegistry(data, { fsync: true })
  t.teardown(async () => { await registry.close() })
  synced.length = 0
  await registry.create('photos')
  const bucket = path.join(data, 'photos')
  for (const parent of [data, bucket, path.join(bucket, '.fsbucket')]) {
    t.ok(synced.includes(parent), `${path.relative(data, parent) || 'the data directory'} is synced after a directory is made in it`)
  }
  synced.length = 0
  await registry.open('photos')
  t.notOk(synced.includes(data), 'opening a bucket that exists syncs no parent')
})

t.test('a state directory and the directories of its documents are synced into their parents as they are made', async t => {
  const data = testdir(t)
  const state = path.join(data, '.mgmt')
  const documents = new JsonDirectory(state, { fsync: true })
  await documents.transaction(async tx => { Object.assign(await tx.load('zones/z.json', {}), { n: 1 }) })
  t.ok(synced.includes(data), 'the state directory, in the data directory')
  t.ok(synced.includes(state), 'zones/, in the state directory')
})

t.test('a change of several documents syncs the directories of its temporaries before its journal names them', async t => {
  const state = path.join(testdir(t), '.mgmt')
  const documents = new JsonDirectory(state, { fsync: true })
  await documents.transaction(async tx => { Object.assign(await tx.load('zones/z.json', {}), { n: 1 }) })
  const beforeJournal: string[] = []
  const journal = path.join(state, 'commit.journal')
  const watching = synced.length
  await documents.transaction(async tx => {
    Object.assign(await tx.load('zones/z.json', {}), { n: 2 })
    Object.assign(await tx.load('zones.json', {}), { n: 2 })
  })
  const isJournal = (file: string): boolean => path.dirname(file) === state && path.basename(file).startsWith(`.${path.basename(journal)}.`)
  for (const file of synced.slice(watching)) {
    if (isJournal(file)) break
    beforeJournal.push(file)
  }
  t.ok(synced.slice(watching).some(isJournal), 'the journal is synced')
  t.ok(beforeJournal.includes(path.join(state, 'zones')), 'zones/ is synced before it')
})
