/**
 * Symbolic links in a directory copied up: links to files and directories
 * are followed, but a link to a directory that holds it is skipped, not
 * walked again and again until the kernel gives up, even when that
 * directory is above the tree copied (`tree/up -> ..`).
 */
import t from 'tap'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { localCli } from './fixture.js'

t.test('a link to an enclosing directory is not followed', async t => {
  const { run, work } = await localCli(t)
  await fsp.mkdir(path.join(work, 'site', 'docs'), { recursive: true })
  await fsp.mkdir(path.join(work, 'elsewhere'))
  await fsp.writeFile(path.join(work, 'site', 'docs', 'a.txt'), 'a')
  await fsp.writeFile(path.join(work, 'elsewhere', 'b.txt'), 'b')
  await fsp.symlink('..', path.join(work, 'site', 'docs', 'up')) // back to site/
  await fsp.symlink('.', path.join(work, 'site', 'here'))
  await fsp.symlink(path.join(work, 'elsewhere'), path.join(work, 'site', 'more')) // followed
  t.equal((await run(['mb', 'fsb://site'])).code, 0)

  const expected = ['upload: site/docs/a.txt -> fsb://site/www/docs/a.txt', 'upload: site/more/b.txt -> fsb://site/www/more/b.txt']
  const copied = await run(['cp', '-r', 'site', 'fsb://site/www'])
  t.equal(copied.code, 0, copied.stderr)
  t.same(copied.out.trim().split('\n').sort(), expected)
  const mirrored = await run(['mirror', '--dry-run', 'site', 'fsb://site/mirror'])
  t.same(mirrored.out.trim().split('\n').sort(), expected.map(line => `(dry run) ${line.replace('/www/', '/mirror/')}`))
})

t.test('a link at the top of the tree to a directory above it is not followed', async t => {
  const { run, work } = await localCli(t)
  await fsp.mkdir(path.join(work, 'src', 'tree'), { recursive: true })
  await fsp.writeFile(path.join(work, 'src', 'tree', 'a.txt'), 'a')
  await fsp.writeFile(path.join(work, 'src', 'beside.txt'), 'not in the tree')
  await fsp.symlink('..', path.join(work, 'src', 'tree', 'up')) // src/, which holds the tree and so the link
  await fsp.symlink(work, path.join(work, 'src', 'tree', 'top')) // two levels up, by an absolute path
  t.equal((await run(['mb', 'fsb://site'])).code, 0)

  const copied = await run(['cp', '-r', 'src/tree', 'fsb://site/tree'])
  t.equal(copied.code, 0, copied.stderr)
  t.equal(copied.out, 'upload: src/tree/a.txt -> fsb://site/tree/a.txt\n', 'the parent directory is not uploaded')
  const mirrored = await run(['mirror', '--dry-run', 'src/tree', 'fsb://site/mirror'])
  t.equal(mirrored.out, '(dry run) upload: src/tree/a.txt -> fsb://site/mirror/a.txt\n')
})
