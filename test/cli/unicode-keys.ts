/**
 * Keys that differ only in Unicode normalization, run the same way over a
 * transport (the test files unicode-keys-local and unicode-keys-http). A
 * listing matches keys and prefixes by their NFC form but shows each key as
 * last written, so under `résumé/` a key may be spelled decomposed: cp -r,
 * mirror and ls find the part under the prefix by NFC form, never by the
 * prefix's length; and two local names of one key fail the second, in cp -r
 * as in mirror.
 */
import type { Test } from 'tap'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { Cli } from './fixture.js'

const composed = 'r\u00e9sum\u00e9' // résumé, NFC
const decomposed = 're\u0301sume\u0301' // résumé, NFD

async function keysUnder (cli: Cli, location: string): Promise<string[]> {
  const listed = await cli.run(['ls', '-r', '--json', location])
  return listed.out.trim().split('\n').filter(line => line !== '').map(line => JSON.parse(line).key)
}

async function localNames (dir: string): Promise<string[]> {
  const names: string[] = []
  for (const entry of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) names.push(path.relative(dir, path.join(entry.parentPath, entry.name)))
  }
  return names.sort()
}

export async function unicodeKeys (t: Test, cli: Cli): Promise<void> {
  const { run, work } = cli
  t.equal((await run(['mb', 'fsb://keys'])).code, 0)
  t.equal((await run(['cp', '-', `fsb://keys/${decomposed}/one.txt`], { input: Buffer.from('1') })).code, 0)
  t.equal((await run(['cp', '-', `fsb://keys/${composed}/two.txt`], { input: Buffer.from('2') })).code, 0)
  t.same(await keysUnder(cli, `fsb://keys/${composed}/`), [`${decomposed}/one.txt`, `${composed}/two.txt`],
    'the listing under the composed prefix shows each key as written')

  for (const [spelled, prefix] of [['composed', composed], ['decomposed', decomposed]]) {
    await t.test(`cp -r from the prefix typed ${spelled} names the files under it`, async t => {
      const down = await run(['cp', '-r', `fsb://keys/${prefix}`, `down-${spelled}`])
      t.equal(down.code, 0, down.stderr)
      t.same(await localNames(path.join(work, `down-${spelled}`)), ['one.txt', 'two.txt'])
      const copied = await run(['cp', '-r', `fsb://keys/${prefix}`, `fsb://keys/copy-${spelled}`])
      t.equal(copied.code, 0, copied.stderr)
      t.same(await keysUnder(cli, `fsb://keys/copy-${spelled}/`), [`copy-${spelled}/one.txt`, `copy-${spelled}/two.txt`])
    })

    await t.test(`ls of the prefix typed ${spelled} shows the names under it`, async t => {
      const listed = await run(['ls', `fsb://keys/${prefix}/`])
      t.equal(listed.code, 0, listed.stderr)
      t.same(listed.out.trim().split('\n').map(line => line.split(/ +/).at(-1)), ['one.txt', 'two.txt'])
    })

    await t.test(`mirror --delete to and from the prefix typed ${spelled} keeps what it holds`, async t => {
      const dir = path.join(work, `same-${spelled}`)
      await fsp.mkdir(dir)
      await fsp.writeFile(path.join(dir, 'one.txt'), '1')
      await fsp.writeFile(path.join(dir, 'two.txt'), '2')
      const up = await run(['mirror', '--delete', `same-${spelled}`, `fsb://keys/${prefix}`])
      t.equal(up.code, 0, up.stderr)
      t.equal(up.out, '', 'the bucket holds these bytes already: nothing uploaded, nothing removed')
      t.same((await keysUnder(cli, `fsb://keys/${composed}/`)).map(key => key.normalize('NFC')), [`${composed}/one.txt`, `${composed}/two.txt`])
      const down = await run(['mirror', '--delete', `fsb://keys/${prefix}`, `same-${spelled}`])
      t.equal(down.code, 0, down.stderr)
      t.equal(down.out, '', 'the directory holds these files already: nothing downloaded, nothing removed')
      t.same(await localNames(dir), ['one.txt', 'two.txt'])
      const across = await run(['mirror', '--delete', `fsb://keys/${prefix}`, `fsb://keys/mirror-${spelled}`])
      t.equal(across.code, 0, across.stderr)
      t.same(await keysUnder(cli, `fsb://keys/mirror-${spelled}/`), [`mirror-${spelled}/one.txt`, `mirror-${spelled}/two.txt`])
    })
  }

  await t.test('cp -r of two local names of one key (NFC and NFD) fails the second, as mirror does', async t => {
    await fsp.mkdir(path.join(work, 'cafe'))
    await fsp.writeFile(path.join(work, 'cafe', 'caf\u00e9.txt'), 'composed')
    await fsp.writeFile(path.join(work, 'cafe', 'cafe\u0301.txt'), 'decomposed')
    const up = await run(['cp', '-r', 'cafe', 'fsb://keys/cafe'])
    t.equal(up.code, 1, 'the second name is reported')
    t.match(up.stderr, /^fsbucket: cp cafe\/caf.*\.txt: names the same key as .*cafe\/caf.*\.txt \(keys are compared in NFC\): skipped\n$/)
    t.equal(up.out.trim().split('\n').length, 1, 'one upload')
    t.same(await keysUnder(cli, 'fsb://keys/cafe/'), ['cafe/cafe\u0301.txt'], 'the first in name order is the key')
    t.equal((await run(['cat', 'fsb://keys/cafe/caf\u00e9.txt'])).out, 'decomposed')
  })
}
