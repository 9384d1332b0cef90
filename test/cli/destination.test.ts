/**
 * What a download may do to a local destination directory: mirror --delete
 * prunes only the directory's own files, never what a link to a directory
 * leads to; a file name the file system takes is a name a download can write.
 */
import t from 'tap'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { openRegistry } from '../../src/index.js'
import { localCli } from './fixture.js'

t.test('mirror --delete never removes files reached through a link to a directory', async t => {
  const { run, work, dataDir } = await localCli(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('site')
  const bucket = await registry.open('site')
  await bucket!.put('www/index.html', 'index')
  await bucket!.put('www/css/app.css', 'css')
  await registry.close()

  const out = path.join(work, 'out')
  const outside = path.join(work, 'shared')
  await fsp.mkdir(path.join(out, 'css'), { recursive: true })
  await fsp.mkdir(outside)
  await fsp.writeFile(path.join(outside, 'precious.txt'), 'not the mirror\'s')
  await fsp.writeFile(path.join(out, 'css', 'app.css'), 'css')
  await fsp.writeFile(path.join(out, 'stray.txt'), 'stray')
  await fsp.symlink(outside, path.join(out, 'shared')) // a link out of the destination
  await fsp.symlink('css', path.join(out, 'styles')) // a second name of a directory inside it

  const dry = await run(['mirror', '--delete', '--dry-run', 'fsb://site/www', 'out'])
  t.equal(dry.code, 0, dry.stderr)
  t.same(dry.out.trim().split('\n').sort(), [
    '(dry run) download: fsb://site/www/index.html -> out/index.html',
    `(dry run) remove: ${path.join('out', 'stray.txt')}`
  ])
  const real = await run(['mirror', '--delete', 'fsb://site/www', 'out'])
  t.equal(real.code, 0, real.stderr)
  t.same(real.out.trim().split('\n').sort(), [
    'download: fsb://site/www/index.html -> out/index.html',
    `remove: ${path.join('out', 'stray.txt')}`
  ])
  t.equal(await fsp.readFile(path.join(outside, 'precious.txt'), 'utf8'), 'not the mirror\'s', 'the file outside the destination is still there')
  t.equal(await fsp.readFile(path.join(out, 'css', 'app.css'), 'utf8'), 'css', 'so is the file the link gave a second name')
  const again = await run(['mirror', '--delete', 'fsb://site/www', 'out'])
  t.equal(again.out, '', 'and a second run has nothing to do')
})
