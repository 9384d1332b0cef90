/**
 * The start's write probe beside other processes at work on the data
 * directory (several gateways started at once on an empty one): a file
 * of a bucket's `.fsbucket/` renamed or removed between the probe's
 * listing and its look (a settings file's temporary, another start's
 * probe) or a lock directory released meanwhile is no reason to refuse to
 * start, and a lock directory is never written in.
 */
import t from 'tap'
import { promises as fsp, mkdirSync } from 'node:fs'
import path from 'node:path'
import { checkWritable } from '../../src/server/preflight.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

t.test('files and locks that come and go in .fsbucket/ do not fail the check', async t => {
  const data = testdir(t)
  const internal = path.join(data, 'default', '.fsbucket')
  mkdirSync(internal, { recursive: true })
  let stop = false
  // As another process writes settings (a temporary renamed over the file), probes, and takes and releases a lock.
  const churn = (async () => {
    for (let i = 0; !stop; i++) {
      const temp = path.join(internal, `.settings.json.${i}.tmp`)
      await fsp.writeFile(temp, '{}')
      await fsp.rename(temp, path.join(internal, 'settings.json'))
      await fsp.writeFile(path.join(internal, '.fsbucket-write-probe'), '')
      await fsp.rm(path.join(internal, '.fsbucket-write-probe'), { force: true })
      await fsp.mkdir(path.join(internal, 'settings.json.lock'))
      await fsp.rmdir(path.join(internal, 'settings.json.lock')) // fails (ENOTEMPTY) should a probe be written in it
    }
  })()
  const deadline = Date.now() + 1500
  try {
    while (Date.now() < deadline) await checkWritable(data)
  } finally {
    stop = true
    await churn
  }
  t.pass('every check passed, and every lock was released')
})

t.test('a create racing another process adopting the new place keeps the settings it was given', async t => {
  const data = testdir(t)
  const creator = await openRegistry(data, { fsync: false })
  const other = await openRegistry(data, { fsync: false }) // as another gateway would
  t.teardown(async () => { await creator.close(); await other.close() })
  for (let i = 0; i < 60; i++) {
    const name = `race-${i}`
    let stop = false
    const looking = (async () => { while (!stop) { await other.info(name); await new Promise(resolve => setImmediate(resolve)) } })()
    try {
      await creator.create(name, { storageClass: 'InfrequentAccess' })
    } finally {
      stop = true
      await looking
    }
    const fresh = await openRegistry(data, { fsync: false })
    const info = await fresh.info(name)
    await fresh.close()
    t.equal(info?.settings.storageClass, 'InfrequentAccess', `${name}: the creator's settings`)
  }
})
