/**
 * CopyObject between buckets and UploadPartCopy read the source through its
 * bucket's `get` and write the bytes again: a source over the copy limit is
 * refused by the engine before a byte of it is read (EntityTooLarge, 400, as
 * a copy within a bucket), not after up to 5 GiB were written. The source's
 * size is faked at its bucket's `get`: no test writes 5 GiB.
 */
import t from 'tap'
import { CopyObjectCommand, CreateMultipartUploadCommand, HeadObjectCommand, ListPartsCommand, PutObjectCommand, UploadPartCopyCommand } from '@aws-sdk/client-s3'
import { MAX_COPY_BYTES, type Bucket, type BucketObjectBody } from '../../src/bucket/index.js'
import { rejection, s3Server } from './fixture.js'

/** Makes `bucket`'s reads of `key` say the object has `size` bytes (the bytes served stay the stored ones). */
function fakeSize (bucket: Bucket, key: string, size: number): { opened: () => number } {
  const get = bucket.get.bind(bucket)
  let opened = 0
  bucket.get = async (name, options) => {
    const object = await get(name, options)
    if (name !== key || object === null || !('body' in object)) return object
    opened++
    const served = (object as BucketObjectBody).range ?? { offset: 0, length: object.size }
    return Object.assign(object, { size, range: options?.range === undefined ? { offset: 0, length: size } : served })
  }
  return { opened: () => opened }
}

t.test('CopyObject between buckets from a source over the copy limit: EntityTooLarge before a byte is written', async t => {
  const { client, registry } = await s3Server(t)
  await registry.create('archive')
  const s3 = client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'big', Body: 'bytes' }))
  const faked = fakeSize((await registry.open('photos'))!, 'big', MAX_COPY_BYTES + 1)
  const refused = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'archive', Key: 'copy', CopySource: 'photos/big' })))
  t.same([refused.name, refused.$metadata.httpStatusCode], ['EntityTooLarge', 400], 'as a copy within one bucket answers it')
  t.equal(faked.opened(), 1, 'the source was read through its bucket')
  t.equal((await rejection(s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'copy' })))).$metadata.httpStatusCode, 404, 'nothing written')
})

t.test('UploadPartCopy from a source over the copy limit: EntityTooLarge, no part stored; a range of it is copied', async t => {
  const { client, registry } = await s3Server(t)
  await registry.create('archive')
  const s3 = client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'big', Body: 'bytes' }))
  fakeSize((await registry.open('photos'))!, 'big', MAX_COPY_BYTES + 1)
  for (const bucket of ['photos', 'archive']) {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'joined' }))
    const refused = await rejection(s3.send(new UploadPartCopyCommand({ Bucket: bucket, Key: 'joined', UploadId, PartNumber: 1, CopySource: 'photos/big' })))
    t.same([refused.name, refused.$metadata.httpStatusCode], ['EntityTooLarge', 400], `${bucket}: refused`)
    t.same((await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'joined', UploadId }))).Parts ?? [], [], `${bucket}: no part stored`)
    const ranged = await s3.send(new UploadPartCopyCommand({ Bucket: bucket, Key: 'joined', UploadId, PartNumber: 1, CopySource: 'photos/big', CopySourceRange: 'bytes=1-3' }))
    t.ok(ranged.CopyPartResult?.ETag, `${bucket}: a range within the limit is copied`)
  }
})
