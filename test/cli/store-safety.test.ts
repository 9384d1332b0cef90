/**
 * What a download may do to the files it replaces, and what no command may
 * do to fsbucket's own directories: a walk leaves a data directory (or a
 * bucket's) out, so `mirror --delete` into a directory holding the store
 * removes nothing of it; a download into the store is refused; a file
 * replaced keeps its mode; a link the user names is written through, a
 * pipe written into; an unreadable directory fails its own items only.
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { bin, runBin } from './fixture.js'

/** A work directory holding the data directory `data` with bucket `www` (`site/index.html`, `photos/cat.jpg`). */
async function workWithStore (t: Test): Promise<{ work: string, data: string }> {
  const work = testdir(t)
  const data = path.join(work, 'data')
  const registry = await openRegistry(data, { fsync: false })
  await registry.create('www')
  const bucket = (await registry.open('www'))!
  await bucket.put('site/index.html', 'index')
  await bucket.put('photos/cat.jpg', 'cat')
  await registry.close()
  return { work, data }
}

t.test('mirror --delete into a directory holding the data directory leaves the store whole', async t => {
  const { work, data } = await workWithStore(t)
  const mirrored = await runBin(['mirror', '--delete', 'fsb://www/site', '.', '--data', data], { cwd: work })
  t.equal(mirrored.code, 0, mirrored.stderr)
  t.notMatch(mirrored.out, /remove:/, 'nothing removed')
  t.equal(await fsp.readFile(path.join(work, 'index.html'), 'utf8'), 'index', 'the mirror is made')
  const listed = await runBin(['ls', '-r', 'fsb://www', '--data', data], { cwd: work })
  t.match(listed.out, /photos\/cat\.jpg/, 'the bucket keeps its objects')
  t.match(listed.out, /site\/index\.html/)
})

t.test('cp -r of a directory holding the data directory leaves the store out, and says so', async t => {
  const { work, data } = await workWithStore(t)
  await fsp.writeFile(path.join(work, 'notes.txt'), 'notes')
  const copied = await runBin(['cp', '-r', '.', 'fsb://www/backup/', '--data', data], { cwd: work })
  t.equal(copied.code, 1, 'one item left out is a failure of the command')
  t.match(copied.stderr, /data: an fsbucket data directory or bucket directory: left out/)
  const listed = await runBin(['ls', '-r', 'fsb://www/backup/', '--data', data], { cwd: work })
  t.same(listed.out.trim().split('\n').map(line => line.split(/\s+/).at(-1)), ['backup/notes.txt'], 'only the user\'s file')
})

t.test('a download into the data directory is refused', async t => {
  const { work, data } = await workWithStore(t)
  for (const args of [['cp', 'fsb://www/site/index.html', 'data/www/x.html'], ['cp', '-r', 'fsb://www/site', 'data/new'], ['mirror', 'fsb://www/site', 'data']]) {
    const refused = await runBin([...args, '--data', data], { cwd: work })
    t.equal(refused.code, 1, args.join(' '))
    t.match(refused.stderr, /inside fsbucket's data directory/)
  }
  t.same((await fsp.readdir(data)).sort(), ['.fsbucket', 'www'], 'no bucket was made of a download')
  // A link into the store is the store.
  await fsp.symlink(path.join(data, 'www', 'site'), path.join(work, 'viewlink'))
  const throughLink = await runBin(['cp', 'fsb://www/site/index.html', 'viewlink/planted.txt', '--data', data], { cwd: work })
  t.equal(throughLink.code, 1, 'a download through a link into the store is refused')
  t.match(throughLink.stderr, /inside fsbucket's data directory/)
  await fsp.rm(path.join(work, 'viewlink'))

  // A data directory below the destination: keys of a backup that name the store's own files are refused, item by item.
  await fsp.mkdir(path.join(work, 'dest'))
  await fsp.rename(data, path.join(work, 'dest', 'data'))
  const moved = path.join(work, 'dest', 'data')
  const other = path.join(work, 'other')
  const registry = await openRegistry(other, { fsync: false })
  await registry.create('src')
  const source = (await registry.open('src'))!
  await source.put('data/www/.fsbucket/format.json', 'not a format')
  await source.put('data/newbucket/f', 'a new bucket')
  await source.put('plain.txt', 'plain')
  await registry.close()
  const copied = await runBin(['cp', '-r', 'fsb://src', 'dest', '--data', other], { cwd: work })
  t.equal(copied.code, 1)
  t.match(copied.stderr, /is an fsbucket data directory or bucket directory: nothing is written there/)
  t.equal(await fsp.readFile(path.join(work, 'dest', 'plain.txt'), 'utf8'), 'plain', 'the other keys are written')
  t.same((await fsp.readdir(moved)).sort(), ['.fsbucket', 'www'], 'no bucket was made in the store below')
  t.notMatch(await fsp.readFile(path.join(moved, 'www', '.fsbucket', 'format.json'), 'utf8'), /not a format/, 'and its files are as they were')
})

t.test('a file a download replaces keeps its mode; a link the user names is written through; a pipe is written into', async t => {
  const { work, data } = await workWithStore(t)
  await fsp.writeFile(path.join(work, 'secret'), 'old', { mode: 0o600 })
  await fsp.chmod(path.join(work, 'secret'), 0o600)
  t.equal((await runBin(['cp', 'fsb://www/site/index.html', 'secret', '--data', data], { cwd: work })).code, 0)
  t.equal(await fsp.readFile(path.join(work, 'secret'), 'utf8'), 'index')
  t.equal((await fsp.stat(path.join(work, 'secret'))).mode & 0o777, 0o600, 'the mode is kept')

  await fsp.writeFile(path.join(work, 'target.txt'), 'old')
  await fsp.symlink('target.txt', path.join(work, 'link'))
  t.equal((await runBin(['cp', 'fsb://www/site/index.html', 'link', '--data', data], { cwd: work })).code, 0)
  t.ok((await fsp.lstat(path.join(work, 'link'))).isSymbolicLink(), 'the link stays a link')
  t.equal(await fsp.readFile(path.join(work, 'target.txt'), 'utf8'), 'index', 'and its target holds the bytes')

  const fifo = path.join(work, 'pipe')
  await new Promise<void>((resolve, reject) => spawn('mkfifo', [fifo]).on('exit', code => code === 0 ? resolve() : reject(new Error(`mkfifo ${code}`))))
  const reading = fsp.readFile(fifo, 'utf8')
  const written = await runBin(['cp', 'fsb://www/site/index.html', 'pipe', '--data', data], { cwd: work })
  t.equal(written.code, 0, written.stderr)
  t.equal(await reading, 'index', 'the pipe\'s reader gets the bytes')
  t.ok((await fsp.lstat(fifo)).isFIFO(), 'and it is still a pipe')

  // /dev/stdout redirected to a file: written into, the shell's file kept (with what it held before, appended).
  const out = path.join(work, 'out.txt')
  await fsp.writeFile(out, 'HEADER\n')
  const appended = await new Promise<number | null>(resolve => {
    spawn('sh', ['-c', `node "$0" cp -q fsb://www/site/index.html /dev/stdout --data "$1" >> "$2"; echo FOOTER >> "$2"`, bin, data, out], { cwd: work, stdio: 'ignore' }).on('exit', resolve)
  })
  t.equal(appended, 0)
  t.equal(await fsp.readFile(out, 'utf8'), 'HEADER\nindexFOOTER\n', 'the download lands in the shell\'s file, appended')
})

t.test('a directory that cannot be read fails its own items only: the others are copied', async t => {
  const { work, data } = await workWithStore(t)
  const src = path.join(work, 'src')
  await fsp.mkdir(path.join(src, 'locked'), { recursive: true })
  await fsp.writeFile(path.join(src, 'a.txt'), 'a')
  await fsp.writeFile(path.join(src, 'locked', 'b.txt'), 'b')
  // A directory the walk cannot list, whoever runs the test (root reads mode 000): /proc/1/map_files refuses even root.
  await fsp.symlink('/proc/1/map_files', path.join(src, 'zz'))
  const copied = await runBin(['cp', '-r', 'src', 'fsb://www/two/', '--data', data], { cwd: work })
  t.equal(copied.code, 1)
  t.match(copied.stderr, /zz/, 'the unreadable directory is named')
  const listed = await runBin(['ls', '-r', 'fsb://www/two/', '--data', data], { cwd: work })
  t.match(listed.out, /two\/a\.txt/, 'the others are copied')
  t.match(listed.out, /two\/locked\/b\.txt/)

  // mirror --delete removes nothing under what the walk left out: it is not missing from the source.
  const registry = await openRegistry(data, { fsync: false })
  await (await registry.open('www'))!.put('two/zz/backed-up.txt', 'kept')
  await registry.close()
  const mirrored = await runBin(['mirror', '--delete', 'src', 'fsb://www/two', '--data', data], { cwd: work })
  t.equal(mirrored.code, 1)
  t.notMatch(mirrored.out, /remove:/, 'nothing removed')
  t.match((await runBin(['ls', '-r', 'fsb://www/two/', '--data', data], { cwd: work })).out, /two\/zz\/backed-up\.txt/, 'the keys under the unreadable directory stay')
})
