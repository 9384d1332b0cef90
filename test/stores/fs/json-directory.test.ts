/**
 * A JsonDirectory document's version never repeats after a write. Over
 * writes A, B, C, ext4 gives C the inode A freed and a same-length change
 * gives C A's size, so what keeps C's version from being A's is the mtime
 * each write moves strictly forward; these tests check that property
 * itself, since whether two writes land in one coarse clock tick depends
 * on the kernel and the machine's speed.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { JsonDirectory } from '../../../src/stores/fs/json-directory.js'
import { testdir } from '../../testdir.js'

/** A revoked list of fixed length whose content changes every write, as a full list does on a revoke. */
function revokedList (write: number): { revoked: string[] } {
  return { revoked: [write.toString(16).padStart(8, '0')] }
}

async function writeTokens (documents: JsonDirectory, value: unknown): Promise<void> {
  await documents.transaction(async tx => {
    const doc = await tx.load<{ revoked: string[] }>('tokens.json', { revoked: [] })
    Object.assign(doc, value)
  })
}

async function mtimeOf (documents: JsonDirectory): Promise<bigint> {
  return (await fsp.stat(path.join(documents.dir, 'tokens.json'), { bigint: true })).mtimeNs
}

t.test('rapid writes of one size never repeat a version, and each moves the mtime forward', async t => {
  const documents = new JsonDirectory(testdir(t), { fsync: false })
  const versions = new Set<string>()
  const sizes = new Set<string>()
  let previous = -1n
  let stalled = 0
  for (let write = 0; write < 200; write++) {
    await writeTokens(documents, revokedList(write))
    const version = await documents.version('tokens.json')
    if (version === null) throw new Error('tokens.json is missing after a write')
    versions.add(version)
    sizes.add(version.split(':')[2] ?? '')
    const mtime = await mtimeOf(documents)
    if (mtime <= previous) stalled++
    previous = mtime
  }
  t.equal(versions.size, 200, 'no version repeats an earlier one')
  t.equal(sizes.size, 1, 'every document has the same size')
  t.equal(stalled, 0, 'every write leaves a later mtime than the document it replaced')
})

t.test('a write moves the mtime past a document stamped ahead of the clock', async t => {
  // A clock stepped back, or a coarse clock that has not ticked since the
  // last write: the document's mtime is not behind the time of the next write.
  const documents = new JsonDirectory(testdir(t), { fsync: false })
  await writeTokens(documents, revokedList(0))
  const ahead = new Date(Date.now() + 60_000)
  await fsp.utimes(path.join(documents.dir, 'tokens.json'), ahead, ahead)
  const first = await documents.version('tokens.json')
  let previous = await mtimeOf(documents)
  const versions = new Set([first])
  for (let write = 1; write <= 3; write++) {
    await writeTokens(documents, revokedList(write))
    const mtime = await mtimeOf(documents)
    t.ok(mtime > previous, `write ${write} leaves a later mtime`, { mtime, previous })
    t.ok(mtime - previous < 1_000_000n, `write ${write} stays within a millisecond of the one before`)
    previous = mtime
    versions.add(await documents.version('tokens.json'))
  }
  t.equal(versions.size, 4, 'no version repeats')
})

t.test('a directory that is a symbolic link is refused: nothing read or written through it', async t => {
  const root = testdir(t)
  const elsewhere = path.join(root, 'outside')
  await fsp.mkdir(elsewhere)
  await fsp.writeFile(path.join(elsewhere, 'tokens.json'), '{"planted":true}')
  const dir = path.join(root, 'data', '.tokens')
  await fsp.mkdir(path.dirname(dir))
  await fsp.symlink(elsewhere, dir)
  const state = new JsonDirectory(dir, { fsync: false, private: true })
  await t.rejects(state.transaction(async tx => { (await tx.load<Record<string, unknown>>('tokens.json', {})).secret = 's3cret' }), { code: 10905, path: dir }, 'a change')
  await t.rejects(state.read('tokens.json', {}), { code: 10905, path: dir }, 'a read')
  t.same(await fsp.readdir(elsewhere), ['tokens.json'], 'nothing written where it points')
  t.equal(await fsp.readFile(path.join(elsewhere, 'tokens.json'), 'utf8'), '{"planted":true}')
})

t.test('a change of several documents is all or nothing: a failure before its commit point changes none of them', async t => {
  const documents = new JsonDirectory(testdir(t), { fsync: false })
  await documents.transaction(async tx => { Object.assign(await tx.load('a.json', {}), { n: 1 }) })
  // A name whose temporary file cannot be made (over 255 bytes): the second document's write fails.
  const long = `${'b'.repeat(240)}.json`
  await t.rejects(documents.transaction(async tx => {
    Object.assign(await tx.load('a.json', {}), { n: 2 })
    Object.assign(await tx.load(long, {}), { n: 2 })
  }))
  t.same(await documents.read('a.json', null), { n: 1 }, 'the first document is as it was')
  t.same((await fsp.readdir(documents.dir)).filter(name => name.endsWith('.tmp') || name === 'commit.journal'), [], 'no temporary or journal is left')
})

t.test('a change that stopped after its commit point is finished by the next change, before it reads anything', async t => {
  const dir = testdir(t)
  const documents = new JsonDirectory(dir, { fsync: false })
  await documents.transaction(async tx => {
    Object.assign(await tx.load('a.json', {}), { n: 1 })
    Object.assign(await tx.load('zones/z.json', {}), { n: 1 })
  })
  t.same(await fsp.readdir(dir).then(names => names.filter(n => n === 'commit.journal')), [], 'a finished change leaves no journal')
  // What a crash leaves after the journal was written and the first rename made: the second temporary, the journal.
  await fsp.writeFile(path.join(dir, 'a.json'), JSON.stringify({ n: 2 }))
  await fsp.writeFile(path.join(dir, 'zones', '.z.json.0.tmp'), JSON.stringify({ n: 2 }))
  await fsp.writeFile(path.join(dir, 'gone.json'), '{}')
  await fsp.writeFile(path.join(dir, 'commit.journal'), JSON.stringify({ renames: [['.a.json.0.tmp', 'a.json'], ['zones/.z.json.0.tmp', 'zones/z.json']], removes: ['gone.json'] }))
  const seen = await documents.transaction(async tx => await tx.load('zones/z.json', {}))
  t.same(seen, { n: 2 }, 'the next change reads the finished state')
  t.same(await documents.read('a.json', null), { n: 2 })
  t.equal(await documents.read('gone.json', null), null, 'and the removal is made')
  t.same((await fsp.readdir(dir)).filter(name => name === 'commit.journal'), [], 'the journal is gone')
})

t.test('a journal that is not this code\'s (damaged, or naming a path outside the directory) is never acted on', async t => {
  const work = testdir(t)
  const dir = path.join(work, 'state')
  const documents = new JsonDirectory(dir, { fsync: false })
  await documents.transaction(async tx => { Object.assign(await tx.load('a.json', {}), { n: 1 }) })
  await fsp.writeFile(path.join(work, 'outside.txt'), 'kept')
  for (const journal of ['{"renames": [', JSON.stringify({ renames: [], removes: ['../outside.txt'] }), JSON.stringify({ renames: [['a.json', '/tmp/x']], removes: [] })]) {
    await fsp.writeFile(path.join(dir, 'commit.journal'), journal)
    await t.rejects(documents.transaction(async tx => { Object.assign(await tx.load('a.json', {}), { n: 2 }) }), { message: /commit\.journal is not a journal of this directory/ }, journal)
  }
  t.equal(await fsp.readFile(path.join(work, 'outside.txt'), 'utf8'), 'kept', 'nothing outside the directory was touched')
  t.same(await documents.read('a.json', null), { n: 1 })
})

t.test('a failure after the journal is in place (its directory\'s sync) keeps what it names: the next change finishes it whole', async t => {
  const dir = testdir(t)
  const documents = new JsonDirectory(dir, { fsync: true })
  await documents.transaction(async tx => {
    Object.assign(await tx.load('zones.json', {}), { zones: ['z1'] })
    Object.assign(await tx.load('zones/z1.json', {}), { records: ['r'] })
  })
  // The directory's sync fails once the journal exists (EIO), in a change that edits one document and removes another.
  const open = fsp.open
  let failed = false
  ;(fsp as { open: typeof fsp.open }).open = async function (this: unknown, ...args: Parameters<typeof fsp.open>) {
    if (!failed && args[0] === dir && args[1] === 'r' && await fsp.stat(path.join(dir, 'commit.journal')).then(() => true, () => false)) {
      failed = true
      throw Object.assign(new Error('EIO: injected'), { code: 'EIO', syscall: 'open', path: dir })
    }
    return await open.apply(this, args)
  }
  t.teardown(() => { (fsp as { open: typeof fsp.open }).open = open })
  await t.rejects(documents.transaction(async tx => {
    Object.assign(await tx.load('zones.json', {}), { zones: [] })
    tx.remove('zones/z1.json')
  }))
  t.ok(failed, 'the sync failed after the journal was in place')
  await documents.transaction(async tx => { Object.assign(await tx.load('other.json', {}), { n: 1 }) })
  t.same([await documents.read('zones.json', null), await documents.read('zones/z1.json', null)], [{ zones: [] }, null], 'the change is whole: the zone gone with its records')
})
