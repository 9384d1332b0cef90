/**
 * `--part-size` takes what the store takes: from 5 MiB (the smallest part
 * but the last) to 5 GiB less 5 MiB (the largest part or single put,
 * limits.ts), and refuses more at once, before a byte moves.
 */
import t from 'tap'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { MAX_PART_BYTES, MAX_PUT_BYTES } from '../../src/bucket/index.js'
import { parsePartSize } from '../../src/cli/context.js'
import { localCli } from './fixture.js'

const MiB = 1024 * 1024

t.test('the largest part size is the largest part and single put', async t => {
  t.equal(parsePartSize('5115MiB'), MAX_PART_BYTES)
  t.equal(parsePartSize(String(MAX_PUT_BYTES)), MAX_PUT_BYTES)
  for (const bad of ['5GiB', '5116MiB', String(MAX_PART_BYTES + 1), '4.999GiB']) {
    t.throws(() => parsePartSize(bad), /expected a part size from 5MiB .* to 5115MiB/, bad)
  }
  t.equal(parsePartSize('4.99GiB'), Math.floor(4.99 * 1024 * MiB), 'below the limit')
})

t.test('cp --part-size 5GiB is refused at once, exit 1', async t => {
  const cli = await localCli(t)
  await fsp.writeFile(path.join(cli.work, 'a.txt'), 'a')
  t.equal((await cli.run(['mb', 'fsb://bkt'])).code, 0)
  const ran = await cli.run(['cp', '--part-size', '5GiB', 'a.txt', 'fsb://bkt/a.txt'])
  t.equal(ran.code, 1)
  t.match(ran.stderr, /^error: option '--part-size <size>' argument '5GiB' is invalid\. expected a part size from 5MiB .* to 5115MiB/)
  t.equal(ran.out, '', 'nothing copied')
  t.equal((await cli.run(['stat', 'fsb://bkt/a.txt'])).code, 1, 'no object')
})
