/**
 * A copy whose bytes must be read (a multipart source, or a source in
 * another bucket, which S3's CopyObject and UploadPartCopy read and write
 * again) from a source larger than a copy may be is refused before a byte
 * is read or written, not once 5 GiB of it were written. The source's size
 * is faked at the store's `open`: no test writes 5 GiB.
 */
import t from 'tap'
import { Readable } from 'node:stream'
import { BucketEngine, copiedBytes, type BucketObjectBody } from '../../src/bucket/index.js'
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

/** An engine over a memory store whose `open` of `key` reports `size` bytes, counting the bytes its readers give and the bodies it stages. */
function fakedSource (key: string, size: number): { store: MemoryStore, read: () => number } {
  const store = new MemoryStore()
  let read = 0
  const open = store.open.bind(store)
  store.open = async id => {
    const reader = await open(id)
    if (reader === null || id !== key) return reader
    const stream = reader.stream.bind(reader)
    return Object.assign(reader, {
      object: Object.assign({}, reader.object, { size }),
      bytes: undefined,
      // Bytes counted as they are pulled: a stream opened and never read counts none.
      stream: (offset: number, length: number) => Readable.from((async function * () {
        for await (const chunk of stream(offset, Math.min(length, reader.object.size - offset))) {
          read += (chunk as Buffer).length
          yield chunk
        }
      })())
    })
  }
  return { store, read: () => read }
}

t.test('a copy from another bucket (putCopied) of a source over the copy limit is refused before a byte is read or written', async t => {
  const faked = fakedSource('big', MAX_COPY_BYTES + 1)
  const from = new BucketEngine(faked.store)
  const destination = new MemoryStore()
  const to = new BucketEngine(destination)
  t.teardown(async () => { await from.close(); await to.close() })
  await from.put('big', 'bytes')
  let staged = 0
  const stage = destination.stage.bind(destination)
  destination.stage = async source => { staged++; return await stage(source) }
  const source = await from.get('big')
  t.equal(source?.size, MAX_COPY_BYTES + 1, 'the source says it is larger than a copy may be')
  await t.rejects(to.putCopied('copy', source as BucketObjectBody, {}, { bucket: 'from', key: 'big' }), { code: 100100 }, 'EntityTooLarge, as a copy within a bucket')
  t.equal(staged, 0, 'nothing staged')
  t.equal(faked.read(), 0, 'not a byte of the source read')
  t.equal(await to.head('copy'), null)

  // At the limit, the copy is made (the five bytes there are).
  const atLimit = fakedSource('big', MAX_COPY_BYTES)
  const within = new BucketEngine(atLimit.store)
  t.teardown(async () => { await within.close() })
  await within.put('big', 'bytes')
  const copied = await to.putCopied('copy', await within.get('big') as BucketObjectBody, {}, { bucket: 'within', key: 'big' })
  t.equal(copied?.size, 5)
  t.equal(atLimit.read(), 5, 'its bytes read')
})

t.test('the bytes of a part copied from a source over the copy limit (UploadPartCopy) are refused before a byte is read', async t => {
  const faked = fakedSource('big', MAX_COPY_BYTES + 1)
  const from = new BucketEngine(faked.store)
  const to = new BucketEngine(new MemoryStore(), { minPartSize: 5 })
  t.teardown(async () => { await from.close(); await to.close() })
  await from.put('big', 'bytes')
  const upload = await to.createMultipartUpload('joined')
  const source = await from.get('big') as BucketObjectBody
  t.throws(() => copiedBytes('uploadPart', source), { code: 100100 }, 'EntityTooLarge')
  t.equal(faked.read(), 0, 'not a byte of the source read')
  t.same((await upload.listParts()).parts, [], 'no part stored')
  // A range of it within the limit is copied.
  const range = await from.get('big', { range: { offset: 1, length: 3 } }) as BucketObjectBody
  const part = await upload.uploadPart(1, copiedBytes('uploadPart', range), { copied: true })
  t.equal((await upload.listParts()).parts[0]?.size, 3, `part ${part.partNumber}: the range's bytes`)
})

t.test('a copy whose destination cannot be looked at (a storage failure) closes the source it opened', async t => {
  const store = new MemoryStore()
  const engine = new BucketEngine(store)
  t.teardown(async () => { await engine.close() })
  await engine.put('src', 'bytes')
  await engine.put('dst', 'old')
  let opened = 0
  let closed = 0
  const open = store.open.bind(store)
  store.open = async id => {
    const reader = await open(id)
    if (reader === null) return null
    opened++
    const close = reader.close.bind(reader)
    return Object.assign(reader, { close: async () => { closed++; await close() } })
  }
  store.head = async () => { throw new Error('the disk went away') }
  // A checksum the source lacks: its bytes are read (the store's own copy declines).
  await t.rejects(engine.copy('src', 'dst', { onlyIf: { etagMatches: 'x' }, checksumAlgorithm: 'sha256' }), { message: 'the disk went away' })
  t.same([opened, closed], [1, 1], 'the source was closed')
})
