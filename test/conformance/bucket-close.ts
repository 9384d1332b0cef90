/**
 * Conformance cases of a handle's `close()`: final on every store. Every
 * later call on the handle, and on an upload handle it gave, rejects with
 * `ERR_USE_AFTER_CLOSE` (before its arguments are judged), a second
 * `close()` does nothing more, and the objects stay for another handle on
 * the same place. Part of `bucketConformance`: every store runs them.
 */
import path from 'node:path'
import type { Test } from 'tap'
import type { Bucket, BucketObjectBody } from '../../src/bucket/index.js'
import { testdir } from '../testdir.js'

type Open = (dir: string) => Promise<Bucket>

/** Awaits a call that must be refused as a use after close, its message naming `method`. */
export async function expectClosed (t: Test, call: () => Promise<unknown> | unknown, method: string): Promise<void> {
  try {
    await call()
  } catch (err) {
    t.equal((err as { code?: unknown }).code, 'ERR_USE_AFTER_CLOSE', `${method}: ERR_USE_AFTER_CLOSE`)
    t.equal((err as Error).message, `${method}: The bucket is closed. (ERR_USE_AFTER_CLOSE)`, `${method}: the message names the call`)
    return
  }
  t.fail(`${method}: expected ERR_USE_AFTER_CLOSE, got an answer`)
}

export function closeConformance (t: Test, open: Open): void {
  t.test('close: every later call on the handle rejects with ERR_USE_AFTER_CLOSE; the objects stay', async t => {
    const dir = path.join(testdir(t), 'bucket')
    const bucket = await open(dir)
    await bucket.put('kept', 'still here')
    const upload = await bucket.createMultipartUpload('big')
    const part = await upload.uploadPart(1, 'a part')
    await bucket.close()

    await expectClosed(t, () => bucket.head('kept'), 'head')
    await expectClosed(t, () => bucket.get('kept'), 'get')
    await expectClosed(t, () => bucket.read('kept'), 'read')
    await expectClosed(t, () => bucket.put('new', 'bytes'), 'put')
    await expectClosed(t, () => bucket.put('', 'bytes'), 'put') // a bad key too: the close is judged first
    await expectClosed(t, () => bucket.delete('kept'), 'delete')
    await expectClosed(t, () => bucket.list(), 'list')
    await expectClosed(t, () => bucket.copy('kept', 'copy'), 'copy')
    await expectClosed(t, () => bucket.createMultipartUpload('other'), 'createMultipartUpload')
    await expectClosed(t, () => bucket.resumeMultipartUpload('big', upload.uploadId), 'resumeMultipartUpload')
    await expectClosed(t, () => bucket.listMultipartUploads(), 'listMultipartUploads')
    await expectClosed(t, () => bucket.sweep(), 'sweep')
    await expectClosed(t, () => bucket.retire(), 'retire')
    await expectClosed(t, () => upload.uploadPart(2, 'late'), 'uploadPart')
    await expectClosed(t, () => upload.listParts(), 'listParts')
    await expectClosed(t, () => upload.complete([part]), 'completeMultipartUpload')
    await expectClosed(t, () => upload.abort(), 'abortMultipartUpload')
    await bucket.close()
    t.pass('a second close() resolves')
    await expectClosed(t, () => bucket.head('kept'), 'head')

    const again = await open(dir)
    t.teardown(() => again.close())
    t.equal(await (await again.get('kept') as BucketObjectBody).text(), 'still here', 'another handle on the place reads what was stored')
    const uploads = await again.listMultipartUploads()
    t.same(uploads.uploads.map(u => u.uploadId), [upload.uploadId], 'and the upload in progress, untouched')
  })
}
