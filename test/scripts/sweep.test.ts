/**
 * `npm run sweep -- <directory>` (scripts/sweep.ts): a bucket of a data
 * directory is swept with its own lifecycle rules, as `fsbucket sweep`
 * sweeps it; before, the bucket was opened alone and its rules ignored (an
 * upload a whole-bucket rule keeps 30 days was aborted at 7).
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

const script = new URL('../../scripts/sweep.js', import.meta.url).pathname
const DAY = 86_400

t.test('a bucket directory of a data directory is swept with its rules, and only it', async t => {
  const dataDir = testdir(t)
  const eightDaysAgo = new Date(Date.now() - 8 * DAY * 1000)
  const registry = await openRegistry(dataDir, { fsync: false, clock: () => eightDaysAgo })
  for (const name of ['kept', 'other']) {
    await registry.create(name)
    const bucket = (await registry.open(name))!
    const upload = await bucket.createMultipartUpload('big')
    await upload.uploadPart(1, 'part')
  }
  // Uploads live 30 days in `kept`; `other` has the engine's 7.
  await registry.updateSettings('kept', { lifecycle: { rules: [{ id: 'keep', enabled: true, conditions: {}, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 30 * DAY } } }] } })
  await registry.close()

  const { stdout } = await promisify(execFile)(process.execPath, [script, path.join(dataDir, 'kept')])
  t.match(stdout, /kept: 0 objects expired, 0 moved to InfrequentAccess, 0 uploads aborted/, 'its rule keeps the 8-day-old upload')
  const after = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await after.close() })
  t.equal((await (await after.open('kept'))!.listMultipartUploads()).uploads.length, 1, 'the upload is there')
  const swept = await promisify(execFile)(process.execPath, [script, path.join(dataDir, 'other')])
  t.match(swept.stdout, /other: .*1 uploads aborted/, 'the other bucket, under the engine\'s 7 days, loses its upload')
})

t.test('a data directory is swept as one, not taken for a bucket (it holds a .fsbucket/ of its own)', async t => {
  const dataDir = testdir(t)
  const eightDaysAgo = new Date(Date.now() - 8 * DAY * 1000)
  const registry = await openRegistry(dataDir, { fsync: false, clock: () => eightDaysAgo })
  await registry.create('photos')
  await (await (await registry.open('photos'))!.createMultipartUpload('big')).uploadPart(1, 'part')
  await registry.close()
  const { stdout } = await promisify(execFile)(process.execPath, [script, dataDir])
  t.match(stdout, /every bucket swept: .*1 uploads aborted/, 'the bucket\'s old upload is aborted')
  t.notOk(existsSync(path.join(dataDir, '.fsbucket', 'catalog.db')), 'no bucket store made in the data directory')
})
