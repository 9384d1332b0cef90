/**
 * Large objects and mirrors, run the same way over a transport (the test
 * files transfers-local and transfers-http): multipart uploads from a file
 * and from stdin, a multipart copy between buckets, byte-exact round trips,
 * and mirror in its three directions with --delete and --dry-run.
 */
import type { Test } from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { Cli } from './fixture.js'

const MiB = 1024 * 1024
const md5 = (data: Buffer): Buffer => createHash('md5').update(data).digest()

/** The etag of an object completed from parts of `partSize` bytes. */
function multipartEtag (data: Buffer, partSize: number): string {
  const digests: Buffer[] = []
  for (let offset = 0; offset < data.length; offset += partSize) digests.push(md5(data.subarray(offset, offset + partSize)))
  return `${md5(Buffer.concat(digests)).toString('hex')}-${digests.length}`
}

function lines (text: string): string[] {
  return text.split('\n').filter(line => line !== '').sort()
}

export async function largeObjects (t: Test, cli: Cli): Promise<void> {
  const { run, work } = cli
  const big = randomBytes(12 * MiB + 123)
  await fsp.writeFile(path.join(work, 'big.bin'), big)
  const etag = multipartEtag(big, 5 * MiB)
  t.equal((await run(['mb', 'fsb://large'])).code, 0)

  const up = await run(['cp', '--part-size', '5MiB', '--parallel', '3', 'big.bin', 'fsb://large/big.bin'])
  t.equal(up.code, 0, up.stderr)
  const piped = await run(['cp', '--part-size', '5MiB', '-', 'fsb://large/piped.bin'], { input: big })
  t.equal(piped.code, 0, piped.stderr)
  const copied = await run(['cp', '--part-size', '5MiB', 'fsb://large/big.bin', 'fsb://large/copy.bin'])
  t.equal(copied.code, 0, copied.stderr)
  const small = await run(['cp', 'big.bin', 'fsb://large/whole.bin'])
  t.equal(small.code, 0, small.stderr)
  const stats = (await run(['stat', '--json', 'fsb://large/big.bin', 'fsb://large/piped.bin', 'fsb://large/copy.bin', 'fsb://large/whole.bin'])).out
    .trim().split('\n').map(line => JSON.parse(line))
  t.same(stats.map(s => s.etag), [etag, etag, etag, multipartEtag(big, 8 * MiB)],
    'file, stdin and copy went up in 3 parts of 5 MiB; the default part size is 8 MiB')
  t.same(stats.map(s => s.size), [big.length, big.length, big.length, big.length])

  const down = await run(['cp', 'fsb://large/copy.bin', 'back.bin'])
  t.equal(down.code, 0, down.stderr)
  t.ok((await fsp.readFile(path.join(work, 'back.bin'))).equals(big), 'the bytes came back through a multipart copy and a download')
  const cat = await run(['cat', 'fsb://large/piped.bin'])
  t.ok(cat.stdout.equals(big), 'cat streams a multipart object')

  // Five parts, two in flight: stdin's later parts are read into the buffers of parts already sent.
  const longer = randomBytes(22 * MiB + 5)
  const refilled = await run(['cp', '--part-size', '5MiB', '--parallel', '2', '-', 'fsb://large/refilled.bin'], { input: longer })
  t.equal(refilled.code, 0, refilled.stderr)
  const [stat] = (await run(['stat', '--json', 'fsb://large/refilled.bin'])).out.trim().split('\n').map(line => JSON.parse(line))
  t.equal(stat.etag, multipartEtag(longer, 5 * MiB), 'every part kept its own bytes')
  t.ok((await run(['cat', 'fsb://large/refilled.bin'])).stdout.equals(longer))
}

export async function mirrors (t: Test, cli: Cli): Promise<void> {
  const { run, work } = cli
  const site = path.join(work, 'site')
  await fsp.mkdir(path.join(site, 'css'), { recursive: true })
  await fsp.writeFile(path.join(site, 'index.html'), '<h1>one</h1>')
  await fsp.writeFile(path.join(site, 'css', 'app.css'), 'body {}')
  await fsp.writeFile(path.join(site, 'video.bin'), randomBytes(6 * MiB))
  t.equal((await run(['mb', 'fsb://site'])).code, 0)

  await t.test('a directory to a prefix', async t => {
    const first = await run(['mirror', '--part-size', '5MiB', 'site', 'fsb://site/www'])
    t.equal(first.code, 0, first.stderr)
    t.same(lines(first.out), [
      'upload: site/css/app.css -> fsb://site/www/css/app.css',
      'upload: site/index.html -> fsb://site/www/index.html',
      'upload: site/video.bin -> fsb://site/www/video.bin'
    ])
    const again = await run(['mirror', 'site', 'fsb://site/www'])
    t.equal(again.code, 0, again.stderr)
    t.equal(again.out, '', 'nothing to do: sizes and etags agree, the multipart one included')

    await fsp.writeFile(path.join(site, 'index.html'), '<h1>two</h1>') // same size, other bytes
    await fsp.writeFile(path.join(site, 'new.txt'), 'new')
    await fsp.rm(path.join(site, 'css', 'app.css'))
    const dry = await run(['mirror', '--delete', '--dry-run', 'site', 'fsb://site/www'])
    t.same(lines(dry.out), [
      '(dry run) remove: fsb://site/www/css/app.css',
      '(dry run) upload: site/index.html -> fsb://site/www/index.html',
      '(dry run) upload: site/new.txt -> fsb://site/www/new.txt'
    ])
    const real = await run(['mirror', '--delete', 'site', 'fsb://site/www'])
    t.equal(real.code, 0, real.stderr)
    t.same(lines(real.out), lines(dry.out).map(line => line.replace('(dry run) ', '')), 'the dry run said what the run did')
    const listed = await run(['ls', '-r', 'fsb://site/www/'])
    t.same(listed.out.trim().split('\n').map(line => line.split(/\s+/).pop()), ['www/index.html', 'www/new.txt', 'www/video.bin'])
  })

  await t.test('a prefix to a directory', async t => {
    const out = path.join(work, 'out')
    const first = await run(['mirror', 'fsb://site/www', 'out'])
    t.equal(first.code, 0, first.stderr)
    t.equal(lines(first.out).length, 3)
    t.equal(await fsp.readFile(path.join(out, 'index.html'), 'utf8'), '<h1>two</h1>')
    t.ok((await fsp.readFile(path.join(out, 'video.bin'))).equals(await fsp.readFile(path.join(site, 'video.bin'))))
    await fsp.writeFile(path.join(out, 'new.txt'), 'old')
    await fsp.writeFile(path.join(out, 'stray.txt'), 'stray')
    const second = await run(['mirror', '--delete', 'fsb://site/www', 'out'])
    t.equal(second.code, 0, second.stderr)
    t.same(lines(second.out), ['download: fsb://site/www/new.txt -> out/new.txt', 'remove: out/stray.txt'])
    t.equal(await fsp.readFile(path.join(out, 'new.txt'), 'utf8'), 'new')
    t.same((await fsp.readdir(out)).sort(), ['index.html', 'new.txt', 'video.bin'])

    // A mistyped prefix holds nothing: with --delete it would empty the directory.
    for (const destination of ['out', 'fsb://site/copy-of-www']) {
      const typo = await run(['mirror', '--delete', 'fsb://site/wwww', destination])
      t.equal(typo.code, 1, `refused (${destination})`)
      t.match(typo.stderr, /fsb:\/\/site\/wwww\/ holds no objects: --delete would remove everything/)
    }
    t.same((await fsp.readdir(out)).sort(), ['index.html', 'new.txt', 'video.bin'], 'nothing removed')
    t.equal((await run(['mirror', 'fsb://site/wwww', 'out'])).code, 0, 'without --delete, an empty source is nothing to do')
  })

  await t.test('a prefix to another prefix', async t => {
    const first = await run(['mirror', 'fsb://site/www/', 'fsb://site/copy'])
    t.equal(first.code, 0, first.stderr)
    t.same(lines(first.out), [
      'copy: fsb://site/www/index.html -> fsb://site/copy/index.html',
      'copy: fsb://site/www/new.txt -> fsb://site/copy/new.txt',
      'copy: fsb://site/www/video.bin -> fsb://site/copy/video.bin'
    ])
    const again = await run(['mirror', '--delete', 'fsb://site/www/', 'fsb://site/copy'])
    t.equal(again.out, '')
  })
}
