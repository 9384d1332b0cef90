import t from 'tap'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { openBucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

function openDescriptors (): number {
  return readdirSync('/proc/self/fd').length
}

t.test('bodies that are never read do not leak file descriptors', { skip: process.platform !== 'linux' && 'needs /proc' }, async t => {
  const bucket = await openBucket(path.join(testdir(t), 'bucket'))
  t.teardown(() => bucket.close())
  await bucket.put('large', new Uint8Array(256 * 1024)) // above the size read whole into memory
  await bucket.get('large') // warm up: the catalog and its WAL are open from here on
  const before = openDescriptors()
  for (let i = 0; i < 300; i++) await bucket.get('large')
  for (let i = 0; i < 300; i++) await bucket.get('large', { range: { offset: 10, length: 100_000 } })
  for (let round = 0; round < 10 && openDescriptors() > before + 5; round++) {
    gc()
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  t.ok(openDescriptors() <= before + 5, `descriptors: ${before} before, ${openDescriptors()} after 600 unread bodies`)

  const read = await bucket.get('large')
  t.equal((await (read as { arrayBuffer: () => Promise<ArrayBuffer> }).arrayBuffer()).byteLength, 256 * 1024, 'a body read to the end')
  t.ok(openDescriptors() <= before + 5, 'closes its descriptor at once')
})
