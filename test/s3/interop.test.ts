/**
 * One engine behind every door: an object put through S3 is read through the
 * HTTP routes and the binding with the same bytes, ETag and metadata, and
 * the other way round.
 */
import t from 'tap'
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { buildApp } from '../../src/app.js'
import { s3Server } from './fixture.js'

t.test('S3 ⇄ HTTP routes ⇄ binding', async t => {
  const server = await s3Server(t)
  const gateway = await buildApp({ dataDir: server.dataDir, host: '127.0.0.1', token: null, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry: server.registry })
  t.teardown(async () => { await gateway.close() })
  const s3 = server.client()

  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'shared/a.txt', Body: 'from s3', ContentType: 'text/plain', Metadata: { origin: 's3' }, StorageClass: 'STANDARD_IA' }))
  const read = await gateway.inject({ method: 'GET', url: '/photos/shared/a.txt' })
  t.equal(read.statusCode, 200)
  t.equal(read.body, 'from s3')
  t.equal(read.headers.etag, put.ETag, 'same ETag through the HTTP routes')
  t.equal(read.headers['x-meta-origin'], 's3')
  t.equal(read.headers['x-storage-class'], 'InfrequentAccess')
  const object = await (await server.registry.open('photos'))!.head('shared/a.txt')
  t.equal(object?.httpEtag, put.ETag, 'same ETag through the binding')

  const written = await gateway.inject({ method: 'PUT', url: '/photos/shared/b.txt', payload: 'from http', headers: { 'content-type': 'text/x-http', 'x-meta-origin': 'http' } })
  t.equal(written.statusCode, 200)
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'shared/b.txt' }))
  t.equal(await got.Body!.transformToString(), 'from http')
  t.equal(got.ETag, written.headers.etag)
  t.equal(got.ContentType, 'text/x-http')
  t.same(got.Metadata, { origin: 'http' })
})
