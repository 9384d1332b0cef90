/**
 * Every object command once, run the same way over a transport: the test
 * files objects-local and objects-http run this over the library and over
 * a gateway, and compare with the same expectations (the same output either
 * way is a promise of the commands).
 */
import type { Test } from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { openRegistry } from '../../src/index.js'
import type { Cli } from './fixture.js'

const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex')

export async function objectCommands (t: Test, cli: Cli): Promise<void> {
  const { run, work } = cli

  await t.test('mb, ls of buckets, mb -p, mb of an existing bucket', async t => {
    const made = await run(['mb', 'fsb://photos', 'fsb://backup'])
    t.equal(made.code, 0, made.stderr)
    t.equal(made.out, 'created bucket fsb://photos\ncreated bucket fsb://backup\n')
    const again = await run(['mb', 'fsb://photos'])
    t.equal(again.code, 1)
    t.equal(again.stderr, 'fsbucket: mb fsb://photos: bucket already exists\n')
    const tolerant = await run(['mb', '-p', 'fsb://photos', 'fsb://scratch'])
    t.equal(tolerant.code, 0, '-p ignores an existing bucket')
    t.equal(tolerant.out, 'created bucket fsb://scratch\n')
    const listed = await run(['ls'])
    t.match(listed.out, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}fsb:\/\/backup\n\S+ {2}fsb:\/\/photos\n\S+ {2}fsb:\/\/scratch\n$/)
    const json = (await run(['ls', '--json'])).out.trim().split('\n').map(line => JSON.parse(line))
    t.same(json.map(b => [b.type, b.name]), [['bucket', 'backup'], ['bucket', 'photos'], ['bucket', 'scratch']])
    t.equal((await run(['rb', 'fsb://scratch'])).out, 'removed bucket fsb://scratch\n', 'rb removes an empty bucket')
  })

  await t.test('mb of a name a file holds in the data directory fails, -p too: no bucket was made', async t => {
    await fsp.writeFile(path.join(cli.dataDir, 'stray'), 'made by hand')
    for (const args of [['mb', 'fsb://stray'], ['mb', '-p', 'fsb://stray']]) {
      const refused = await run(args)
      t.equal(refused.code, 1, `${args.join(' ')}: exit 1`)
      t.match(refused.stderr, /^fsbucket: mb fsb:\/\/stray: bucket already exists/m)
      // A data directory opened by the command itself says why, and where.
      if (cli.transport === 'local') t.match(refused.stderr, /^fsbucket: warning: a bucket cannot be created: .*stray: not a directory$/m)
    }
    t.notMatch((await run(['ls'])).out, /stray/, 'and lists no such bucket')
    // A bucket whose settings are damaged is left out of lists, yet exists: -p takes it as existing.
    t.equal((await run(['mb', 'fsb://damaged'])).code, 0)
    await fsp.writeFile(path.join(cli.dataDir, 'damaged', '.fsbucket', 'settings.json'), 'not json')
    const damaged = await run(['mb', '-p', 'fsb://damaged'])
    t.equal(damaged.code, 0, `mb -p of a damaged bucket: it exists (${damaged.stderr})`)
  })

  const cat = randomBytes(20_000)
  const tom = Buffer.from('tom\n')
  await fsp.mkdir(path.join(work, 'album', 'cats'), { recursive: true })
  await fsp.writeFile(path.join(work, 'album', 'cats', 'cat.jpg'), cat)
  await fsp.writeFile(path.join(work, 'album', 'tom.txt'), tom)
  await fsp.writeFile(path.join(work, 'album', 'empty'), '')

  await t.test('cp a file up, with metadata flags; stat and cat', async t => {
    const up = await run(['cp', 'album/cats/cat.jpg', 'fsb://photos/pets/', '--cache-control', 'max-age=60', '--meta', 'owner=ada', '--meta', 'city=Zürich'])
    t.equal(up.code, 0, up.stderr)
    t.equal(up.out, 'upload: album/cats/cat.jpg -> fsb://photos/pets/cat.jpg\n')
    t.equal(up.stderr, '', 'no progress bar when stderr is not a terminal')
    const typed = await run(['cp', 'album/tom.txt', 'fsb://photos/notes/tom', '--content-type', 'text/x-tom'])
    t.equal(typed.code, 0, typed.stderr)
    const stat = await run(['stat', 'fsb://photos/pets/cat.jpg', 'fsb://photos/notes/tom', 'fsb://photos'])
    t.equal(stat.code, 0, stat.stderr)
    const [catStat, tomStat, bucketStat] = stat.out.split(/\n(?=key:|bucket:)/)
    t.match(catStat, /^key: +pets\/cat\.jpg\n/)
    t.match(catStat, /^size: +20000 \(19\.5 KiB\)$/m)
    t.match(catStat, new RegExp(`^etag: +${md5(cat)}$`, 'm'))
    t.match(catStat, /^uploaded: +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m)
    t.match(catStat, /^storage-class: +Standard$/m)
    t.match(catStat, /^content-type: +image\/jpeg$/m, 'the type comes from the file name')
    t.match(catStat, /^cache-control: +max-age=60$/m)
    t.match(catStat, /^meta owner: +ada$/m)
    t.match(catStat, /^meta city: +Zürich$/m)
    t.match(tomStat, /^content-type: +text\/x-tom$/m, '--content-type wins over the name')
    t.match(bucketStat, /^bucket: +fsb:\/\/photos\ncreated: +\S+Z\n$/)
    const json = JSON.parse((await run(['stat', '--json', 'fsb://photos/pets/cat.jpg'])).out)
    t.match(json, { type: 'object', key: 'pets/cat.jpg', size: 20000, etag: md5(cat), storageClass: 'Standard', customMetadata: { owner: 'ada', city: 'Zürich' } })
    t.ok(Buffer.from((await run(['cat', 'fsb://photos/pets/cat.jpg'])).stdout).equals(cat), 'cat gives the bytes')
  })

  await t.test('cp from stdin and to stdout', async t => {
    const input = randomBytes(3000)
    const up = await run(['cp', '-', 'fsb://photos/from-stdin.bin'], { input })
    t.equal(up.code, 0, up.stderr)
    t.equal(up.out, 'upload: - -> fsb://photos/from-stdin.bin\n')
    const down = await run(['cp', 'fsb://photos/from-stdin.bin', '-'])
    t.equal(down.code, 0, down.stderr)
    t.ok(down.stdout.equals(input), 'the bytes came back on stdout, and nothing else')
    const empty = await run(['cp', '-', 'fsb://photos/empty-stdin'], { input: Buffer.alloc(0) })
    t.equal(empty.code, 0, empty.stderr)
    // `< dir` reads as no bytes at all in Node: it was stored as an empty object, exit 0.
    const directory = await run(['cp', '-', 'fsb://photos/from-a-directory'], { stdinPath: '.' })
    t.equal(directory.code, 1, 'a directory as stdin fails')
    t.match(directory.stderr, /stdin is a directory/, 'saying so')
    t.equal((await run(['stat', 'fsb://photos/from-a-directory'])).code, 1, 'and stores nothing')
  })

  await t.test('cp -r a directory up; ls with prefixes, -r and --json', async t => {
    const up = await run(['cp', '-r', 'album', 'fsb://photos/album'])
    t.equal(up.code, 0, up.stderr)
    t.same(up.out.trim().split('\n').sort(), [
      'upload: album/cats/cat.jpg -> fsb://photos/album/cats/cat.jpg',
      'upload: album/empty -> fsb://photos/album/empty',
      'upload: album/tom.txt -> fsb://photos/album/tom.txt'
    ])
    const top = await run(['ls', 'fsb://photos'])
    t.equal(top.code, 0, top.stderr)
    const names = top.out.trim().split('\n').map(line => line.split(/\s+/).pop())
    t.same(names, ['album/', 'empty-stdin', 'from-stdin.bin', 'notes/', 'pets/'])
    t.match(top.out, /^\S+Z {2} {11}0 {2}d41d8cd98f00b204e9800998ecf8427e {2}empty-stdin$/m, 'an empty stdin makes an empty object')
    t.match(top.out, /^ {20} {2} {9}PRE {2} {32} {2}album\/$/m, 'a prefix shows PRE')
    const inner = await run(['ls', 'fsb://photos/album/'])
    t.match(inner.out, new RegExp(`^\\S+Z {2} +${tom.length} {2}${md5(tom)} {2}tom\\.txt$`, 'm'), 'names relative to the prefix')
    t.match(inner.out, /PRE {2} +cats\/$/m)
    const deep = await run(['ls', '-r', 'fsb://photos/album'])
    t.same(deep.out.trim().split('\n').map(line => line.split(/\s+/).pop()), ['album/cats/cat.jpg', 'album/empty', 'album/tom.txt'])
    const json = (await run(['ls', '--json', 'fsb://photos/album/'])).out.trim().split('\n').map(line => JSON.parse(line))
    t.match(json, [{ type: 'prefix', prefix: 'album/cats/' }, { type: 'object', key: 'album/empty', size: 0 }, { type: 'object', key: 'album/tom.txt', size: tom.length, etag: md5(tom) }])
  })

  await t.test('cp down: a file, into a directory, -r a prefix', async t => {
    const one = await run(['cp', 'fsb://photos/album/tom.txt', 'copy.txt'])
    t.equal(one.code, 0, one.stderr)
    t.equal(one.out, 'download: fsb://photos/album/tom.txt -> copy.txt\n')
    t.ok((await fsp.readFile(path.join(work, 'copy.txt'))).equals(tom))
    await fsp.mkdir(path.join(work, 'into'))
    t.equal((await run(['cp', 'fsb://photos/pets/cat.jpg', 'into'])).code, 0)
    t.ok((await fsp.readFile(path.join(work, 'into', 'cat.jpg'))).equals(cat))
    const tree = await run(['cp', '-r', 'fsb://photos/album', 'restored'])
    t.equal(tree.code, 0, tree.stderr)
    t.ok((await fsp.readFile(path.join(work, 'restored', 'cats', 'cat.jpg'))).equals(cat))
    t.ok((await fsp.readFile(path.join(work, 'restored', 'tom.txt'))).equals(tom))
    t.equal((await fsp.readFile(path.join(work, 'restored', 'empty'))).length, 0)
    t.same((await fsp.readdir(path.join(work, 'restored'))).sort(), ['cats', 'empty', 'tom.txt'], 'no temporary file left behind')
  })

  await t.test('cp between buckets keeps the metadata unless flags say otherwise', async t => {
    const one = await run(['cp', 'fsb://photos/pets/cat.jpg', 'fsb://backup/'])
    t.equal(one.code, 0, one.stderr)
    t.equal(one.out, 'copy: fsb://photos/pets/cat.jpg -> fsb://backup/cat.jpg\n')
    const changed = await run(['cp', 'fsb://photos/pets/cat.jpg', 'fsb://backup/cat2.jpg', '--meta', 'owner=bob'])
    t.equal(changed.code, 0, changed.stderr)
    const [copied, copied2] = (await run(['stat', '--json', 'fsb://backup/cat.jpg', 'fsb://backup/cat2.jpg'])).out.trim().split('\n').map(line => JSON.parse(line))
    t.match(copied, { etag: md5(cat), httpMetadata: { contentType: 'image/jpeg', cacheControl: 'max-age=60' }, customMetadata: { owner: 'ada', city: 'Zürich' } })
    t.same(copied2.customMetadata, { owner: 'bob' })
    const tree = await run(['cp', '-r', 'fsb://photos/album/', 'fsb://backup/old'])
    t.equal(tree.code, 0, tree.stderr)
    t.same((await run(['ls', '-r', 'fsb://backup/old/'])).out.trim().split('\n').map(line => line.split(/\s+/).pop()),
      ['old/cats/cat.jpg', 'old/empty', 'old/tom.txt'])
  })

  await t.test('cp between buckets keeps Expires; stat shows it', async t => {
    // No flag of cp sets Expires: the object is written with the library, beside the commands (and the gateway).
    const registry = await openRegistry(cli.dataDir, { fsync: false })
    try {
      await (await registry.open('photos'))!.put('dated.txt', 'dated', { httpMetadata: { contentType: 'text/plain', cacheExpiry: new Date('2030-10-21T07:28:00Z') } })
    } finally {
      await registry.close()
    }
    const copied = await run(['cp', 'fsb://photos/dated.txt', 'fsb://backup/'])
    t.equal(copied.code, 0, copied.stderr)
    const json = JSON.parse((await run(['stat', '--json', 'fsb://backup/dated.txt'])).out)
    t.match(json.httpMetadata, { contentType: 'text/plain', cacheExpiry: '2030-10-21T07:28:00.000Z' }, 'the copy keeps it')
    t.match((await run(['stat', 'fsb://photos/dated.txt'])).out, /^expires: +Mon, 21 Oct 2030 07:28:00 GMT$/m, 'stat prints it')
    for (const location of ['fsb://photos/dated.txt', 'fsb://backup/dated.txt']) t.equal((await run(['rm', location])).code, 0)
  })

  await t.test('rm, rm -r, rm --dry-run', async t => {
    const missing = await run(['rm', 'fsb://backup/nope'])
    t.equal(missing.code, 1)
    t.equal(missing.stderr, 'fsbucket: rm fsb://backup/nope: no such key\n')
    const one = await run(['rm', 'fsb://backup/cat2.jpg'])
    t.equal(one.code, 0, one.stderr)
    t.equal(one.out, 'remove: fsb://backup/cat2.jpg\n')
    const dry = await run(['rm', '-r', '--dry-run', 'fsb://backup/old'])
    t.equal(dry.out, '(dry run) remove: fsb://backup/old/cats/cat.jpg\n(dry run) remove: fsb://backup/old/empty\n(dry run) remove: fsb://backup/old/tom.txt\n')
    t.equal((await run(['ls', '-r', 'fsb://backup/old/'])).out.trim().split('\n').length, 3, 'a dry run removes nothing')
    const tree = await run(['rm', '-r', 'fsb://backup/old'])
    t.equal(tree.code, 0, tree.stderr)
    t.equal(tree.out.trim().split('\n').length, 3)
    t.same((await run(['ls', '-r', 'fsb://backup'])).out.trim().split('\n').map(line => line.split(/\s+/).pop()), ['cat.jpg'])
  })

  await t.test('keys that are "." or ".." whole: up, cat, stat, down, rm', async t => {
    // A URL folds them away (`/dots/..` is `/`): over HTTP they read the bucket list, with exit 0.
    t.equal((await run(['mb', 'fsb://dots'])).code, 0)
    await fsp.writeFile(path.join(work, 'one-dot.txt'), 'one dot')
    await fsp.writeFile(path.join(work, 'two-dots.txt'), 'two dots')
    for (const [file, key] of [['one-dot.txt', '.'], ['two-dots.txt', '..']]) {
      const up = await run(['cp', file, `fsb://dots/${key}`])
      t.equal(up.code, 0, up.stderr)
      t.equal(up.out, `upload: ${file} -> fsb://dots/${key}\n`)
    }
    t.equal((await run(['cat', 'fsb://dots/.'])).out, 'one dot')
    t.equal((await run(['cat', 'fsb://dots/..'])).out, 'two dots')
    t.match(JSON.parse((await run(['stat', '--json', 'fsb://dots/..'])).out), { key: '..', size: 8 })
    const down = await run(['cp', 'fsb://dots/..', 'two-dots-back.txt'])
    t.equal(down.code, 0, down.stderr)
    t.equal(await fsp.readFile(path.join(work, 'two-dots-back.txt'), 'utf8'), 'two dots')
    const removed = await run(['rm', 'fsb://dots/.', 'fsb://dots/..'])
    t.equal(removed.code, 0, removed.stderr)
    t.equal((await run(['ls', '-r', 'fsb://dots'])).out, '', 'both removed')
    t.equal((await run(['rb', 'fsb://dots'])).code, 0)
  })

  await t.test('rm -r and rb --force where a lock rule retains keys: each key removed has its line, each kept its failure', async t => {
    const registry = await openRegistry(cli.dataDir, { fsync: false })
    try {
      await registry.create('lockb')
      const bucket = (await registry.open('lockb'))!
      for (const key of ['a1', 'a2', 'held/b1', 'held/b2', 'c1']) await bucket.put(key, key)
      await bucket.setLockRules([{ id: 'hold', enabled: true, prefix: 'held/', condition: { type: 'Indefinite' } }])
    } finally {
      await registry.close()
    }
    const kept = 'retained by a bucket lock rule (not deleted or overwritten)'
    const removed = await run(['rm', '-r', 'fsb://lockb'])
    t.equal(removed.code, 1)
    t.equal(removed.stderr, `fsbucket: rm fsb://lockb/held/b1: ${kept}\nfsbucket: rm fsb://lockb/held/b2: ${kept}\n`, 'the kept keys are named, not the first of the batch')
    t.equal(removed.out, 'remove: fsb://lockb/a1\nremove: fsb://lockb/a2\nremove: fsb://lockb/c1\n')
    t.equal((await run(['ls', '-r', 'fsb://lockb'])).out.replace(/^.* /gm, ''), 'held/b1\nheld/b2\n', 'only the kept keys are left')
    await run(['cp', 'album/tom.txt', 'fsb://lockb/d1'])
    const forced = await run(['rb', '--force', 'fsb://lockb'])
    t.equal(forced.code, 1)
    t.equal(forced.stderr, `fsbucket: rb fsb://lockb/held/b1: ${kept}\nfsbucket: rb fsb://lockb/held/b2: ${kept}\n`)
    t.equal(forced.out, 'remove: fsb://lockb/d1\n', 'and the bucket stays')
  })

  await t.test('rb refuses a bucket with objects; rb --force empties it first', async t => {
    const refused = await run(['rb', 'fsb://backup'])
    t.equal(refused.code, 1)
    t.equal(refused.stderr, 'fsbucket: rb fsb://backup: bucket not empty (rb --force removes its objects first)\n')
    const forced = await run(['rb', '--force', 'fsb://backup'])
    t.equal(forced.code, 0, forced.stderr)
    t.equal(forced.out, 'remove: fsb://backup/cat.jpg\nremoved bucket fsb://backup\n')
    t.notMatch((await run(['ls'])).out, /backup/)
    const gone = await run(['rb', 'fsb://backup'])
    t.equal(gone.stderr, 'fsbucket: rb fsb://backup: bucket "backup" does not exist\n')
  })
}
