/**
 * What the walk of a local source tells: a file it cannot upload (a name
 * that is not UTF-8, two names that are one key) is reported, never left
 * out in silence, nor is a FIFO, a socket, a device or a loop of links;
 * `mirror --delete` from an empty directory is refused, as from an empty
 * prefix.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { localCli } from './fixture.js'

t.test('a name that is not UTF-8 is reported by cp -r and mirror, and the command exits 1', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://conf'])).code, 0)
  await fsp.mkdir(path.join(work, 'bad'))
  await fsp.writeFile(Buffer.concat([Buffer.from(path.join(work, 'bad') + '/'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'x')
  await fsp.writeFile(path.join(work, 'bad', 'ok.txt'), 'y')
  for (const args of [['cp', '-r', 'bad', 'fsb://conf/cp'], ['mirror', 'bad', 'fsb://conf/mirror']]) {
    const result = await run(args)
    t.equal(result.code, 1, `${args[0]}: exit 1`)
    t.match(result.stderr, /^fsbucket: \w+ bad\/\uFFFD\uFFFD\.txt: the name is not UTF-8, and a key is: skipped\n$/, `${args[0]}: one line names it`)
    t.match(result.out, /ok\.txt\n$/, `${args[0]}: the other file is uploaded`)
  }
})

t.test('two local names of one key (NFC and NFD) upload once, and a second mirror moves nothing', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://conf'])).code, 0)
  await fsp.mkdir(path.join(work, 'nf'))
  await fsp.writeFile(path.join(work, 'nf', 'caf\u00e9.txt'), 'composed')
  await fsp.writeFile(path.join(work, 'nf', 'cafe\u0301.txt'), 'decomposed')
  const first = await run(['mirror', 'nf', 'fsb://conf/nf'])
  t.equal(first.code, 1, 'the second name is reported')
  t.match(first.stderr, /names the same key as .* \(keys are compared in NFC\): skipped\n$/)
  t.equal(first.out.trim().split('\n').length, 1, 'one upload')
  const again = await run(['mirror', 'nf', 'fsb://conf/nf'])
  t.equal(again.out, '', 'a second mirror uploads nothing')
  const back = await run(['mirror', 'fsb://conf/nf', 'back'])
  t.equal(back.code, 0, back.stderr)
  t.equal((await fsp.readdir(path.join(work, 'back'))).length, 1)
  t.equal((await run(['mirror', 'fsb://conf/nf', 'back'])).out, '', 'and back down, nothing twice')
})

t.test('mirror --delete from an empty directory is refused, and the destination kept', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://conf'])).code, 0)
  t.equal((await run(['cp', '-', 'fsb://conf/kept.txt'], { input: Buffer.from('kept') })).code, 0)
  await fsp.mkdir(path.join(work, 'empty'))
  const refused = await run(['mirror', '--delete', 'empty', 'fsb://conf'])
  t.equal(refused.code, 1)
  t.equal(refused.stderr, 'fsbucket: mirror empty: empty holds no files: --delete would remove everything the destination holds (use rm -r for that)\n')
  t.match((await run(['ls', 'fsb://conf'])).out, /kept\.txt/, 'nothing removed')
  t.equal((await run(['mirror', 'empty', 'fsb://conf'])).code, 0, 'without --delete an empty directory is nothing to do')
})

t.test('a FIFO, a link to a device and a loop of links are reported, and mirror --delete keeps their keys', async t => {
  const { run, work } = await localCli(t)
  t.equal((await run(['mb', 'fsb://conf'])).code, 0)
  const src = path.join(work, 'special')
  await fsp.mkdir(src)
  await fsp.writeFile(path.join(src, 'a.txt'), 'a')
  execFileSync('mkfifo', [path.join(src, 'fifo')])
  await fsp.symlink('/dev/zero', path.join(src, 'zero'))
  await fsp.symlink('loop2', path.join(src, 'loop1'))
  await fsp.symlink('loop1', path.join(src, 'loop2'))
  await fsp.symlink('nowhere', path.join(src, 'dangling'))
  // (A socket takes the FIFO's way: neither file, directory nor link. The test directory's path is too long to bind one.)
  const named = ['fifo', 'loop1', 'loop2', 'zero']
  for (const key of named) t.equal((await run(['cp', '-', `fsb://conf/up/${key}`], { input: Buffer.from('kept') })).code, 0)
  const copied = await run(['cp', '-r', 'special', 'fsb://conf/copy'])
  t.equal(copied.code, 1, 'cp -r: exit 1')
  for (const key of named) t.match(copied.stderr, new RegExp(`special/${key}: `), `cp -r: ${key} has a line`)
  t.notMatch(copied.stderr, /dangling/, 'a dangling link is skipped without a word')
  t.match(copied.out, /a\.txt\n$/, 'the regular file is uploaded')
  const mirrored = await run(['mirror', '--delete', 'special', 'fsb://conf/up'])
  t.equal(mirrored.code, 1, 'mirror: exit 1')
  t.notMatch(mirrored.out, /remove/, 'mirror --delete removes none of their keys')
  const listed = (await run(['ls', 'fsb://conf/up/'])).out
  for (const key of named) t.match(listed, new RegExp(`${key}\\n`), `up/${key} kept`)
  const alone = await run(['cp', 'special/loop1', 'fsb://conf/alone'])
  t.equal(alone.code, 1)
  t.match(alone.stderr, /too many symbolic links \(a loop of links\)/, 'a loop named alone is a loop, not a missing file')
})
