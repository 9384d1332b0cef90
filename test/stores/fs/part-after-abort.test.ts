/**
 * A part whose body finishes arriving after its upload was aborted (a
 * client's Ctrl-C, another connection's abort): the put of the part answers
 * NoSuchUpload and the store keeps nothing of it, neither the part's file
 * nor the upload's directory its placing made again.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import t from 'tap'
import { openBucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'

t.test('a part completed after its upload was aborted leaves no file and no directory', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: false })
  t.teardown(async () => { await bucket.close() })
  const upload = await bucket.createMultipartUpload('big.bin')
  const body = new PassThrough()
  const part = upload.uploadPart(1, body)
  body.write(Buffer.alloc(64 * 1024, 1))
  await new Promise(resolve => setTimeout(resolve, 50))
  await upload.abort()
  body.end(Buffer.alloc(64 * 1024, 2))
  await t.rejects(part, { code: 10024 }, 'the part answers NoSuchUpload')
  t.same(await readdir(path.join(dir, '.fsbucket', 'uploads')), [], 'no upload directory is left')
})
