/**
 * A directory of blobs/ removed from outside is made again by the next put
 * that needs it, rather than every put of its versions failing until the
 * process restarts (the process remembers the directories it made); and
 * a directory it makes is synced in its parent before a body lands in it,
 * a body bound for it while another makes it included.
 */
import t from 'tap'
import { promises as fsp, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { openBucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'

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

t.test('a directory the store makes is durable in its parent before a body lands in it', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: true, minPartSize: 1 })
  t.teardown(async () => { await bucket.close() })
  const events: string[] = []
  const promises = fsp as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  const { mkdir, open } = promises
  t.teardown(() => { Object.assign(promises, { mkdir, open }) })
  promises.mkdir = async (...args: unknown[]) => {
    const made = await mkdir(...args)
    events.push(`mkdir ${String(args[0])}`)
    return made
  }
  promises.open = async (...args: unknown[]) => {
    if (args[1] === 'r') events.push(`sync ${String(args[0])}`)
    return await open(...args)
  }
  await bucket.put('big', 'b'.repeat(200_000)) // a file body, in a blobs/ directory made for it
  const upload = await bucket.createMultipartUpload('m')
  await upload.uploadPart(1, 'part') // the upload's directory
  const root = path.join(dir, '.fsbucket')
  for (const parent of ['blobs', 'uploads']) {
    const made = events.findIndex(e => e.startsWith(`mkdir ${path.join(root, parent)}${path.sep}`))
    t.ok(made >= 0, `a directory made under ${parent}/`)
    t.ok(events.indexOf(`sync ${path.join(root, parent)}`, made) > made, `${parent}/ synced after it`)
  }
})

t.test('a body bound for a directory another is making waits until that directory is durable in its parent', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: true, minPartSize: 1 })
  t.teardown(async () => { await bucket.close() })
  const upload = await bucket.createMultipartUpload('m')
  const uploads = path.join(dir, '.fsbucket', 'uploads')
  const events: string[] = []
  const promises = fsp as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  const { open, rename } = promises
  t.teardown(() => { Object.assign(promises, { open, rename }) })
  promises.open = async (...args: unknown[]) => {
    const handle = await open(...args) as { sync: () => Promise<void> }
    if (args[0] === uploads && args[1] === 'r') {
      const sync = handle.sync.bind(handle)
      // A slow flush of uploads/: the other part reaches the upload's directory meanwhile.
      handle.sync = async () => {
        await new Promise(resolve => setTimeout(resolve, 100))
        await sync()
        events.push('uploads/ synced')
      }
    }
    return handle
  }
  promises.rename = async (...args: unknown[]) => {
    if (path.dirname(String(args[1])) === path.join(uploads, upload.uploadId)) events.push('part placed')
    return await rename(...args)
  }
  await Promise.all([upload.uploadPart(1, 'one'), upload.uploadPart(2, 'two')])
  t.same(events, ['uploads/ synced', 'part placed', 'part placed'], 'neither part lands before the directory\'s entry is durable')
})
