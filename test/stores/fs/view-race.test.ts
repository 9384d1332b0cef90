/**
 * The readable view when two processes change entries of one directory at
 * once: one hiding the last key of a directory (which removes the emptied
 * directory) while the other shows a new key in it, or both showing one key.
 * Each process is a KeyView of its own; the other's step is run at the
 * exact moment of the race by wrapping the node:fs call it must come
 * before (the view imports node:fs functions by name, so the wrapping is
 * made visible to it with syncBuiltinESMExports).
 */
import fs from 'node:fs'
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import path from 'node:path'
import t, { type Test } from 'tap'
import { KeyView } from '../../../src/stores/fs/view.js'
import { testdir } from '../../testdir.js'

type FsName = 'linkSync' | 'renameSync' | 'mkdirSync'

/**
 * Runs `race` once, just before the first call of `name` whose path
 * argument (`at`: 0 the first, 1 the second) is `when`, then the call
 * itself; `every` runs it before every such call. Undone by the teardown.
 */
function before (t: Test, name: FsName, at: 0 | 1, when: string, race: () => void, every = false): { fired: () => number } {
  const functions = fs as unknown as Record<FsName, (...args: unknown[]) => unknown>
  const original = functions[name]
  let fired = 0
  functions[name] = (...args: unknown[]) => {
    if (args[at] === when && (every || fired === 0)) {
      fired++
      race()
    }
    return original(...args)
  }
  syncBuiltinESMExports()
  t.teardown(() => {
    functions[name] = original
    syncBuiltinESMExports()
  })
  return { fired: () => fired }
}

/** A bucket directory with its store directory and scratch directory, two processes' views of it, and two bodies. */
async function bucket (t: Test): Promise<{ dir: string, scratch: string, first: KeyView, second: KeyView, old: string, body: string }> {
  const dir = testdir(t)
  const storeDir = path.join(dir, '.fsbucket')
  const scratch = path.join(storeDir, 'tmp')
  await mkdir(scratch, { recursive: true })
  const old = path.join(storeDir, 'old-body')
  const body = path.join(storeDir, 'body')
  await writeFile(old, 'the old version')
  await writeFile(body, 'the new version')
  return { dir, scratch, first: new KeyView(dir, storeDir), second: new KeyView(dir, storeDir), old, body }
}

t.test('a key shown (linked) while another process hides the last key of its directory keeps its file', async t => {
  const { dir, first, second, old, body } = await bucket(t)
  t.ok(first.show('d/a', old))
  const race = before(t, 'linkSync', 1, path.join(dir, 'd', 'b'), () => { first.hide('d/a') })
  t.ok(second.show('d/b', body), 'shown')
  t.equal(race.fired(), 1, 'the other process removed the directory just before the link')
  t.equal(await readFile(path.join(dir, 'd', 'b'), 'utf8'), 'the new version', 'the file is there, in the directory made again')
  t.same(await readdir(path.join(dir, 'd')), ['b'], 'and the hidden key is gone')
})

t.test('a key written out while another process hides the last key of its directory keeps its file', async t => {
  const { dir, scratch, first, second, old } = await bucket(t)
  t.ok(first.show('d/a', old))
  const race = before(t, 'renameSync', 1, path.join(dir, 'd', 'b'), () => { first.hide('d/a') })
  t.ok(second.write('d/b', Buffer.from('a small body')), 'shown')
  t.equal(race.fired(), 1, 'the other process removed the directory just before the rename')
  t.equal(await readFile(path.join(dir, 'd', 'b'), 'utf8'), 'a small body', 'the file is there, in the directory made again')
  t.same(await readdir(path.join(dir, 'd')), ['b'], 'no temporary beside it')
  t.same(await readdir(scratch), [], 'none left in the scratch directory')
  t.same((await readdir(path.dirname(scratch))).sort(), ['body', 'old-body', 'tmp'], 'no marker of temporaries beside keys')
})

t.test('a key two levels down keeps its file when the directory above vanishes while the one below is made', async t => {
  const { dir, first, second, old, body } = await bucket(t)
  t.ok(first.show('x/a', old))
  const race = before(t, 'mkdirSync', 0, path.join(dir, 'x', 'y'), () => { first.hide('x/a') })
  t.ok(second.show('x/y/b', body), 'shown')
  t.equal(race.fired(), 1, 'the other process removed x just before x/y was made')
  t.equal(await readFile(path.join(dir, 'x', 'y', 'b'), 'utf8'), 'the new version')
})

t.test('a key shown by two processes at once ends with the entry of the one that showed it last', async t => {
  const { dir, first, second, old, body } = await bucket(t)
  // The first process publishes the older version between the second's look (no entry) and its link.
  const race = before(t, 'linkSync', 1, path.join(dir, 'k.txt'), () => { t.ok(first.show('k.txt', old)) })
  t.ok(second.show('k.txt', body), 'shown, though an entry appeared meanwhile')
  t.equal(race.fired(), 1)
  t.equal(await readFile(path.join(dir, 'k.txt'), 'utf8'), 'the new version', 'the later one replaced it')
})

t.test('a directory removed at every attempt: the key is not shown, after a bounded number of attempts', async t => {
  const { dir, scratch, second, body } = await bucket(t)
  const d = path.join(dir, 'd')
  const race = before(t, 'linkSync', 1, path.join(d, 'b'), () => { fs.rmdirSync(d) }, true)
  t.notOk(second.show('d/b', body), 'not shown')
  t.ok(race.fired() > 1 && race.fired() < 20, `gave up after ${race.fired()} attempts`)
  t.same((await readdir(dir)).sort(), ['.fsbucket'], 'nothing left in the bucket')
  t.same(await readdir(scratch), [])
})

t.test('a bucket deleted while a key is shown in it is not made again', async t => {
  const { dir, second } = await bucket(t)
  const outside = path.join(path.dirname(dir), `${path.basename(dir)}-deleted`)
  await mkdir(path.join(dir, 'd'))
  t.teardown(async () => { await rm(outside, { recursive: true, force: true }) })
  const race = before(t, 'renameSync', 1, path.join(dir, 'd', 'b'), () => { fs.renameSync(dir, outside) })
  t.notOk(second.write('d/b', Buffer.from('bytes')), 'not shown')
  t.equal(race.fired(), 1)
  t.notOk(fs.existsSync(dir), 'the bucket directory is not brought back')
  await rename(outside, dir) // for the teardown of the test directory
})
