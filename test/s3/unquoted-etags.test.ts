/**
 * S3 takes an etag in If-Match / If-None-Match with or without quotes; the
 * binding's Headers form refuses an unquoted one, so the S3 door quotes it.
 */
import t from 'tap'
import { GetObjectCommand, PutObjectCommand, type S3ServiceException } from '@aws-sdk/client-s3'
import { s3Server } from './fixture.js'

async function status (promise: Promise<unknown>): Promise<number> {
  try {
    await promise
    return 200
  } catch (err) {
    return (err as S3ServiceException).$metadata.httpStatusCode ?? 0
  }
}

t.test('unquoted etags in conditional headers work as quoted ones', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'etagged', Body: 'first' }))
  const bare = (put.ETag ?? '').replace(/"/g, '')
  t.equal(await status(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'etagged', IfMatch: bare }))), 200, 'If-Match with the bare etag matches')
  t.equal(await status(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'etagged', IfMatch: 'abc' }))), 412, 'If-Match with another bare etag fails')
  t.equal(await status(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'etagged', IfNoneMatch: bare }))), 304, 'If-None-Match with the bare etag: not modified')
  t.equal(await status(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'etagged', Body: 'second', IfMatch: bare }))), 200, 'a conditional put with the bare etag')
})
