/**
 * What rm reports: a batch the store refuses whole (a read-only token) fails
 * each of its keys with its own line, and `rm -r` given an object's key
 * rather than a prefix says so and exits 1 instead of removing nothing in
 * silence.
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
