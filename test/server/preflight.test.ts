/**
 * The start's write probe (server/preflight.ts): a start killed between
 * writing its probe and removing it leaves the file, and the next start
 * takes it away, so nothing of a probe stays in the data directory or in a
 * bucket (where it would show in the readable view).
 */
import t from 'tap'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { checkWritable } from '../../src/server/preflight.js'
import { testdir } from '../testdir.js'

t.test('a probe a killed start left is removed by the next start', async t => {
  const data = testdir(t)
  mkdirSync(path.join(data, 'photos', '.fsbucket'), { recursive: true })
  const left = ['', 'photos', path.join('photos', '.fsbucket')].map(dir => path.join(data, dir, '.fsbucket-write-probe'))
  for (const file of left) writeFileSync(file, '')
  await checkWritable(data)
  for (const file of left) t.notOk(existsSync(file), `${path.relative(data, file)} is gone`)
  t.same(readdirSync(data), ['photos'], 'nothing else is left either')
})
