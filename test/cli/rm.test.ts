/**
 * What rm reports: a batch the store refuses whole (a read-only token) fails
 * each of its keys with its own line, and `rm -r` given an object's key
 * rather than a prefix says so and exits 1 instead of removing nothing in
 * silence. (And stat of a bucket the token is not scoped to says the token
 * does not permit it, not that the bucket does not exist.)
 */
import t from 'tap'
import { openRegistry } from '../../src/index.js'
import { httpCli, localCli, runBin, type Cli } from './fixture.js'

t.setTimeout(5 * 60 * 1000)

async function store (cli: Cli, bucketName: string, keys: string[]): Promise<void> {
  const registry = await openRegistry(cli.dataDir, { fsync: false })
  try {
    await registry.create(bucketName)
    const bucket = await registry.open(bucketName)
    for (const key of keys) await bucket!.put(key, `body of ${key}`)
  } finally {
    await registry.close()
  }
}

t.test('a batch refused whole reports every key', async t => {
  const cli = await httpCli(t)
  await store(cli, 'rob', ['a', 'b', 'c'])
  const registry = await openRegistry(cli.dataDir, { fsync: false })
  const readOnly = await registry.tokens.create({ name: 'read only', permission: 'object-read-only', buckets: [] })
  await registry.close()
  const endpoint = cli.flags[cli.flags.indexOf('--endpoint') + 1]
  const ran = await runBin(['rm', '-r', 'fsb://rob', '--endpoint', endpoint, '--token', readOnly.token], { cwd: cli.work })
  t.equal(ran.code, 1)
  const lines = ran.stderr.trim().split('\n')
  t.same(lines.map(line => /^fsbucket: rm (fsb:\/\/rob\/[abc]): /.exec(line)?.[1]), ['fsb://rob/a', 'fsb://rob/b', 'fsb://rob/c'], ran.stderr)
  t.equal(ran.out, '', 'nothing removed')
  t.same((await runBin(['ls', '-r', 'fsb://rob', ...cli.flags], { cwd: cli.work })).out.trim().split('\n').length, 3, 'and all three stay')
})

t.test('stat of a bucket the token is not scoped to says the token does not permit it', async t => {
  const cli = await httpCli(t)
  await store(cli, 'mine', ['a'])
  await store(cli, 'theirs', ['b'])
  const registry = await openRegistry(cli.dataDir, { fsync: false })
  const scoped = await registry.tokens.create({ name: 'mine only', permission: 'object-read-only', buckets: ['mine'] })
  await registry.close()
  const endpoint = cli.flags[cli.flags.indexOf('--endpoint') + 1]
  const stat = async (target: string): Promise<{ code: number | null, stderr: string }> => await runBin(['stat', target, '--endpoint', endpoint, '--token', scoped.token], { cwd: cli.work })
  t.equal((await stat('fsb://mine')).code, 0, 'its own bucket')
  // The token's bucket list names its buckets alone: stat took the other one for a bucket that does not exist.
  const theirs = await stat('fsb://theirs')
  t.equal(theirs.code, 1)
  t.match(theirs.stderr, /the token does not permit this/, theirs.stderr)
  const absent = await stat('fsb://absent')
  t.equal(absent.code, 1)
  t.match(absent.stderr, /the token does not permit this|bucket "absent" does not exist/, 'a bucket that is nowhere: refused, however it is said')
})

for (const transport of ['local', 'http'] as const) {
  t.test(`rm -r of an object's key (${transport})`, async t => {
    const cli = transport === 'local' ? await localCli(t) : await httpCli(t)
    await store(cli, 'bkt', ['h.txt', 'dir/x.txt'])
    const ran = await cli.run(['rm', '-r', 'fsb://bkt/h.txt'])
    t.equal(ran.code, 1)
    t.equal(ran.stderr, 'fsbucket: rm fsb://bkt/h.txt: is an object, not a prefix: rm without -r removes it\n')
    t.equal((await cli.run(['stat', 'fsb://bkt/h.txt'])).code, 0, 'the key stays')
    t.equal((await cli.run(['rm', '-r', '--dry-run', 'fsb://bkt/h.txt'])).code, 1, 'a dry run says so too')

    const none = await cli.run(['rm', '-r', 'fsb://bkt/nothing'])
    t.same([none.code, none.stderr, none.out], [0, '', ''], 'a prefix matching nothing removes nothing, as before')
    const dir = await cli.run(['rm', '-r', 'fsb://bkt/dir'])
    t.same([dir.code, dir.out], [0, 'remove: fsb://bkt/dir/x.txt\n'], 'a prefix removes its keys')
  })
}
