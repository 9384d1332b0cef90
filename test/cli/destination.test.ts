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

t.test('a file whose name is near the 255-byte limit downloads under its name', async t => {
  const { run, work } = await localCli(t)
  const name = `${'n'.repeat(246)}.txt` // 250 bytes: a name the file system takes
  await fsp.writeFile(path.join(work, name), 'long')
  t.equal((await run(['mb', 'fsb://names'])).code, 0)
  const up = await run(['cp', name, 'fsb://names/'])
  t.equal(up.code, 0, up.stderr)
  await fsp.mkdir(path.join(work, 'back'))
  const down = await run(['cp', `fsb://names/${name}`, 'back/'])
  t.equal(down.code, 0, down.stderr)
  t.equal(down.stderr, '')
  t.same(await fsp.readdir(path.join(work, 'back')), [name], 'the file, and no temporary one')
  const mirrored = await run(['mirror', 'fsb://names', 'mirrored'])
  t.equal(mirrored.code, 0, mirrored.stderr)
  t.equal(await fsp.readFile(path.join(work, 'mirrored', name), 'utf8'), 'long')
})

t.test('file system errors of a download read as one plain line', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://names'])).code, 0)
  t.equal((await run(['cp', '-', 'fsb://names/d/a.txt'], { input: Buffer.from('a') })).code, 0)
  await fsp.writeFile(path.join(work, 'file'), 'a file')
  const blocked = await run(['cp', '-r', 'fsb://names/d', 'file'])
  t.equal(blocked.code, 1)
  t.equal(blocked.stderr, 'fsbucket: cp fsb://names/d/a.txt: a file is in the way of a directory: file\n')
  const long = await run(['cp', 'fsb://names/d/a.txt', 'n'.repeat(300)])
  t.equal(long.code, 1)
  t.match(long.stderr, /^fsbucket: cp fsb:\/\/names\/d\/a\.txt: file name too long: n+\n$/)
})

t.test('cp -r and mirror never write through a symbolic link inside the destination', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://drop'])).code, 0)
  for (const key of ['link/keep.txt', 'deep/link/keep.txt', 'ok.txt']) {
    t.equal((await run(['cp', '-', `fsb://drop/${key}`], { input: Buffer.from(`key ${key}`) })).code, 0)
  }
  const outside = path.join(work, 'outside')
  await fsp.mkdir(outside)
  await fsp.writeFile(path.join(outside, 'keep.txt'), 'precious')
  for (const command of ['cp', 'mirror']) {
    const out = path.join(work, `${command}-out`)
    await fsp.mkdir(path.join(out, 'deep'), { recursive: true })
    await fsp.symlink(outside, path.join(out, 'link'))
    await fsp.symlink(outside, path.join(out, 'deep', 'link'))
    const result = await run(command === 'cp' ? ['cp', '-r', 'fsb://drop', `${command}-out`] : ['mirror', 'fsb://drop', `${command}-out`])
    t.equal(result.code, 1, `${command}: the items through links fail`)
    t.match(result.stderr, new RegExp(`fsb://drop/link/keep\\.txt: ${path.join(out, 'link').replace(/[.]/g, '\\.')} is a symbolic link`), command)
    t.match(result.stderr, /fsb:\/\/drop\/deep\/link\/keep\.txt: .*deep\/link is a symbolic link/, command)
    t.equal(await fsp.readFile(path.join(outside, 'keep.txt'), 'utf8'), 'precious', `${command}: nothing written outside the destination`)
    t.equal(await fsp.readFile(path.join(out, 'ok.txt'), 'utf8'), 'key ok.txt', `${command}: the other items are downloaded`)
    t.same(await fsp.readdir(outside), ['keep.txt'], `${command}: no temporary file left outside`)
  }
})

t.test('a directory in the way of a download, and a destination no file can be made in, are said as such', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://names'])).code, 0)
  t.equal((await run(['cp', '-', 'fsb://names/d/a.txt'], { input: Buffer.from('a') })).code, 0)
  await fsp.mkdir(path.join(work, 'out', 'a.txt'), { recursive: true })
  const blocked = await run(['cp', '-r', 'fsb://names/d', 'out'])
  t.equal(blocked.code, 1)
  t.equal(blocked.stderr, `fsbucket: cp fsb://names/d/a.txt: a directory is in the way of the file: ${path.join('out', 'a.txt')}\n`, 'not "use -r", which was given')
  const proc = await run(['cp', 'fsb://names/d/a.txt', '/proc/version'])
  t.equal(proc.code, 1)
  t.equal(proc.stderr, 'fsbucket: cp fsb://names/d/a.txt: cannot create a file in /proc to write version (ENOENT)\n', 'not "no such file" of a file that exists')
})
