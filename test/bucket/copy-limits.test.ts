/**
 * A copy whose bytes must be read (a multipart source) from a source larger
 * than a copy may be is refused before a byte is written, not once
 * 5 GiB of it were written. The source's size is faked at the store's
 * `open`: no test writes 5 GiB.
 */
import t from 'tap'
import { BucketEngine } from '../../src/bucket/index.js'
import { MAX_COPY_BYTES } from '../../src/bucket/limits.js'
import { MemoryStore } from '../../src/stores/memory/store.js'

t.test('a multipart source over the copy limit is refused before its bytes are read', async t => {
  const store = new MemoryStore()
  const engine = new BucketEngine(store, { minPartSize: 5 })
  t.teardown(async () => { await engine.close() })
  const upload = await engine.createMultipartUpload('big')
  const part = await upload.uploadPart(1, 'bytes')
  await upload.complete([part])
  let staged = 0
  const open = store.open.bind(store)
  store.open = async id => {
    const reader = await open(id)
    return reader === null ? null : Object.assign(reader, { object: Object.assign({}, reader.object, { size: MAX_COPY_BYTES + 1 }) })
  }
  const stage = store.stage.bind(store)
  store.stage = async source => { staged++; return await stage(source) }
  await t.rejects(engine.copy('big', 'copy'), { code: 100100 }, 'EntityTooLarge')
  t.equal(staged, 0, 'nothing written')
  t.equal(await engine.head('copy'), null)
})
