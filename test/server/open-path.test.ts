/**
 * The library's open functions refuse an empty path (which would resolve to
 * the working directory, making it a bucket) and a value that is no path,
 * before they touch the disk.
 */
import t from 'tap'
import { readdirSync } from 'node:fs'
import { openBucket, openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

t.test("openBucket('') and openRegistry('') are refused, and the working directory is left alone", async t => {
  const dir = testdir(t)
  const cwd = process.cwd()
  process.chdir(dir)
  t.teardown(() => { process.chdir(cwd) })
  await t.rejects(openBucket(''), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: /^openBucket: dir must not be empty/ })
  await t.rejects(openRegistry(''), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: /^openRegistry: dataDir must not be empty/ })
  await t.rejects(openBucket(42 as unknown as string), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^openBucket: dir must be a string/ })
  t.same(readdirSync(dir), [], 'nothing was written in the working directory')
})
