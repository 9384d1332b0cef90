/**
 * A directory of blobs/ removed from outside is made again by the next put
 * that needs it, rather than every put of its versions failing until the
 * process restarts (the process remembers the directories it made).
 */
import t from 'tap'
import { readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { openBucket } from '../../src/index.js'
import { testdir } from '../testdir.js'

t.test('puts go on after blobs/ directories are removed by hand', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: false })
  const body = 'b'.repeat(20_000) // a file body, not one kept in the catalog
  for (let i = 0; i < 300; i++) await bucket.put(`before/${i}`, body)
  const blobs = path.join(dir, '.fsbucket', 'blobs')
  const made = readdirSync(blobs)
  t.ok(made.length > 100, `${made.length} directories made and remembered`)
  for (const name of made) rmSync(path.join(blobs, name), { recursive: true })
  // With 300 versions spread over 4,096 directories, some land in ones removed above.
  let failures = 0
  for (let i = 0; i < 300; i++) await bucket.put(`after/${i}`, body).catch(() => { failures++ })
  t.equal(failures, 0, 'every put succeeds')
  const read = await bucket.get('after/299')
  t.equal(read !== null && 'body' in read ? (await read.text()).length : 0, 20_000)
})
