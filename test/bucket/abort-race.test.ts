/**
 * An abort and a completion of one upload racing: exactly one succeeds.
 * The abort checks that the upload is live, then removes it; a completion
 * that commits between the two leaves the abort nothing to remove, and the
 * abort answers NoSuchUpload (10024) instead of claiming the upload.
 */
import t from 'tap'
import { BucketEngine } from '../../src/bucket/bucket.js'
import { MemoryStore } from '../../src/stores/memory/store.js'

t.test('a completion committed between the abort\'s look and its removal: the abort is NoSuchUpload, the object stays', async t => {
  const store = new MemoryStore()
  const engine = new BucketEngine(store)
  const upload = await engine.createMultipartUpload('k')
  const part = await upload.uploadPart(1, 'bytes of the only part')
  const abort = store.abortUpload.bind(store)
  let completed: Promise<unknown> | undefined
  // The store's removal runs the completion first, as a request on another connection (or process) would have.
  store.abortUpload = async (uploadId: string) => {
    completed ??= engine.resumeMultipartUpload('k', uploadId).complete([part])
    await completed
    return await abort(uploadId)
  }
  await t.rejects(upload.abort(), { code: 10024 }, 'the abort lost the race and says so')
  t.match(await (completed as Promise<unknown>), { key: 'k', size: 22 }, 'the completion won')
  const stored = await engine.get('k')
  t.equal(stored !== null && 'text' in stored ? await stored.text() : null, 'bytes of the only part', 'and its object is whole')
})
