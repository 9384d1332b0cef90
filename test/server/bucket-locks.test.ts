/**
 * Bucket locks through every door of one server, over real sockets, on
 * both stores of a data directory (fs, and pg with a throwaway PostgreSQL):
 * the management API sets and reads the rules (and refuses bad ones with
 * 10040), then a retained object is neither overwritten nor deleted through
 * the library binding, the HTTP routes (a single DELETE and `POST ?delete`,
 * whose refusal names the keys it deleted and those it kept),
 * S3 (PutObject, CopyObject onto it, CompleteMultipartUpload onto it,
 * DeleteObject, DeleteObjects with an error entry for it and the other keys
 * deleted), the management API's object route, or the object commands' `rm`
 * (a child process, over HTTP and on the data directory itself), and stays
 * as it was; a new key under the locked prefix is created; a bucket with
 * rules is not deleted (10914).
 */
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, DeleteBucketCommand, DeleteObjectCommand,
  DeleteObjectsCommand, ListMultipartUploadsCommand, PutObjectCommand, S3Client, UploadPartCommand
} from '@aws-sdk/client-s3'
import { buildApp } from '../../src/app.js'
import { openRegistry } from '../../src/index.js'
import { buildS3App, s3AccessPolicy } from '../../src/s3/index.js'
import { runBin } from '../cli/fixture.js'
import { devCredentials, rejection } from '../s3/fixture.js'
import { startPostgres } from '../stores/pg/server.js'
import { testdir } from '../testdir.js'

const TOKEN = 'lock-test-token-5b1c'
const ACCOUNT = '0f1e2d3c4b5a69788796a5b4c3d2e1f0'

interface Answer { status: number, text: string, json: any }

async function call (base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${TOKEN}` } }
  if (typeof body === 'string') init.body = body
  else if (body !== undefined) {
    init.body = JSON.stringify(body)
    init.headers = { ...init.headers, 'content-type': 'application/json' }
  }
  const res = await fetch(base + path, init)
  const text = await res.text()
  let json: any = null
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, text, json }
}

const errorOf = (answer: Answer): [number, number] => [answer.status, answer.json?.errors?.[0]?.code]

async function doors (t: Test, catalog: string | undefined): Promise<void> {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false, minPartSize: 5, ...(catalog === undefined ? {} : { catalog }) })
  const app = await buildApp({ dataDir, host: '127.0.0.1', token: TOKEN, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const s3app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: false })
  await s3app.listen({ host: '127.0.0.1', port: 0 })
  const s3 = new S3Client({ endpoint: `http://127.0.0.1:${(s3app.server.address() as AddressInfo).port}`, region: 'auto', forcePathStyle: true, credentials: devCredentials, maxAttempts: 1 })
  t.teardown(async () => { s3.destroy(); await s3app.close(); await app.close(); await registry.close() })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const api = `/client/v4/accounts/${ACCOUNT}/r2/buckets`
  const lock = `${api}/vault/lock`

  t.equal((await call(base, 'POST', api, { name: 'vault' })).status, 200)
  for (const [key, value] of [['keep/a', 'original a'], ['keep/b', 'original b'], ['free/x', 'x'], ['free/y', 'y'], ['src', 'source']]) {
    t.equal((await call(base, 'PUT', `/vault/${key}`, value)).status, 200)
  }

  // The management API: rules read, refused with 10040 when malformed, set, read back.
  t.same((await call(base, 'GET', lock)).json.result, { rules: [] }, 'no rules at first')
  t.same(errorOf(await call(base, 'GET', `${api}/nowhere/lock`)), [404, 10006], 'an unknown bucket')
  const bad: Array<[unknown, RegExp]> = [
    [[], /body must be an object/],
    [{ rules: {} }, /rules must be an array/],
    [{ rules: null }, /rules must be an array/],
    [{ rules: [{ id: 'r', enabled: true, condition: { type: 'Age', maxAgeSeconds: -1 } }] }, /rules\[0\]\.condition\.maxAgeSeconds/],
    [{ rules: [{ id: 'r', enabled: true, condition: { type: 'Date', date: 'soon' } }] }, /rules\[0\]\.condition\.date/],
    [{ rules: [{ id: 'r', enabled: true, condition: { type: 'Never' } }] }, /Age, Date or Indefinite/],
    [{ rules: [{ id: 'r', enabled: 1, condition: { type: 'Indefinite' } }] }, /enabled/],
    [{ rules: [{ id: 'r', enabled: true, condition: { type: 'Indefinite' } }, { id: 'r', enabled: true, condition: { type: 'Indefinite' } }] }, /used by another rule/]
  ]
  for (const [body, message] of bad) {
    const answer = await call(base, 'PUT', lock, body)
    t.same(errorOf(answer), [400, 10040], JSON.stringify(body))
    t.match(answer.json.errors[0].message, message)
  }
  const rules = [{ id: 'keep', enabled: true, prefix: 'keep/', condition: { type: 'Indefinite' } }]
  t.equal((await call(base, 'PUT', lock, { rules })).status, 200)
  t.same((await call(base, 'GET', lock)).json.result, { rules })
  for (const [what, body] of [['no body', undefined], ['null', null]] as const) {
    t.same(errorOf(await call(base, 'PUT', lock, body)), [400, 10040], `${what}: refused, never taken for "clear every rule"`)
  }
  t.same((await call(base, 'GET', lock)).json.result, { rules }, 'and the rules stand')

  // The library binding.
  const bucket = (await registry.open('vault'))!
  await t.rejects(bucket.put('keep/a', 'library'), { code: 10913, message: /^put: The object is retained by a bucket lock rule .*\(key: "keep\/a"\) \(10913\)$/ }, 'library put')
  await t.rejects(bucket.delete(['free/x', 'keep/a']), { code: 10913 }, 'library delete')
  t.equal(await bucket.head('free/x'), null, 'the key beside it is deleted')
  t.equal((await bucket.put('keep/new', 'created'))?.key, 'keep/new', 'a new key under the prefix is created')

  // The HTTP routes.
  t.same(errorOf(await call(base, 'PUT', '/vault/keep/a', 'routes')), [403, 10913], 'routes PUT')
  t.same(errorOf(await call(base, 'DELETE', '/vault/keep/a')), [403, 10913], 'routes DELETE')
  const partly = await call(base, 'POST', '/vault?delete', { keys: ['keep/b', 'free/y', 'missing', 'keep/a'] })
  t.same(errorOf(partly), [403, 10913], 'routes POST ?delete')
  t.match(partly.json.errors[0].message, /\(key: "keep\/b"\)/, 'naming the first kept key')
  t.same(partly.json.result, { deleted: ['free/y', 'missing'], kept: ['keep/b', 'keep/a'] }, 'and which keys went and which stayed, in the order sent')
  t.equal((await call(base, 'GET', '/vault/free/y')).status, 404, 'the other key of the batch is deleted')

  // S3.
  const denied = async (what: string, promise: Promise<unknown>): Promise<void> => {
    const err = await rejection(promise)
    t.same([err.name, err.$metadata.httpStatusCode], ['AccessDenied', 403], what)
  }
  await denied('PutObject', s3.send(new PutObjectCommand({ Bucket: 'vault', Key: 'keep/a', Body: 's3' })))
  await denied('CopyObject onto it', s3.send(new CopyObjectCommand({ Bucket: 'vault', Key: 'keep/a', CopySource: 'vault/src' })))
  await denied('DeleteObject', s3.send(new DeleteObjectCommand({ Bucket: 'vault', Key: 'keep/a' })))
  const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'vault', Key: 'keep/a' }))
  const part = await s3.send(new UploadPartCommand({ Bucket: 'vault', Key: 'keep/a', UploadId: upload.UploadId, PartNumber: 1, Body: 'multipart' }))
  await denied('CompleteMultipartUpload onto it', s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'vault', Key: 'keep/a', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] }
  })))
  t.same((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'vault' }))).Uploads?.map(u => u.UploadId), [upload.UploadId], 'the upload stays')
  await s3.send(new AbortMultipartUploadCommand({ Bucket: 'vault', Key: 'keep/a', UploadId: upload.UploadId }))
  await call(base, 'PUT', '/vault/free/z', 'z')
  const batch = await s3.send(new DeleteObjectsCommand({ Bucket: 'vault', Delete: { Objects: [{ Key: 'keep/a' }, { Key: 'free/z' }] } }))
  t.same(batch.Deleted?.map(d => d.Key), ['free/z'], 'DeleteObjects deletes the other keys')
  t.same(batch.Errors?.map(e => [e.Key, e.Code]), [['keep/a', 'AccessDenied']], 'and answers an error entry for the retained one')
  t.equal((await call(base, 'GET', '/vault/free/z')).status, 404)

  // The management API's object route.
  t.same(errorOf(await call(base, 'DELETE', `${api}/vault/objects/keep/a`)), [403, 10913], 'management API object DELETE')

  // The object commands, in a child process: over HTTP, and on the data directory itself.
  const flagsOf = {
    http: ['--endpoint', base, '--token', TOKEN],
    local: ['--data', dataDir, ...(catalog === undefined ? [] : ['--catalog', catalog])]
  }
  for (const [transport, flags] of Object.entries(flagsOf)) {
    const rm = await runBin(['rm', 'fsb://vault/keep/b', ...flags], { cwd: dataDir })
    t.not(rm.code, 0, `rm (${transport}) fails`)
    t.match(rm.stderr, /retained by a bucket lock rule/, `rm (${transport}) says why`)
  }

  // Every refusal left the objects as they were.
  t.equal((await call(base, 'GET', '/vault/keep/a')).text, 'original a')
  t.equal((await call(base, 'GET', '/vault/keep/b')).text, 'original b')

  // A bucket with rules is not deleted, through either API.
  t.same(errorOf(await call(base, 'DELETE', `${api}/vault`)), [409, 10914], 'management API bucket DELETE')
  const s3Delete = await rejection(s3.send(new DeleteBucketCommand({ Bucket: 'vault' })))
  t.same([s3Delete.name, s3Delete.$metadata.httpStatusCode], ['InvalidBucketState', 409], 'S3 DeleteBucket')

  // Rules cleared: the objects go, then the bucket.
  t.equal((await call(base, 'PUT', lock, {})).status, 200, 'a body without rules clears them')
  t.same((await call(base, 'GET', lock)).json.result, { rules: [] })
  t.equal((await call(base, 'POST', '/vault?delete', { keys: ['keep/a', 'keep/b', 'keep/new', 'free/x', 'src'] })).status, 200)
  t.equal((await call(base, 'DELETE', `${api}/vault`)).status, 200, 'the bucket is deleted')
}

t.test('fs store: every door refuses to delete or overwrite a retained object', async t => { await doors(t, undefined) })

t.test('pg store: every door refuses to delete or overwrite a retained object', async t => {
  const server = await startPostgres()
  t.teardown(async () => { await server.destroy() })
  await doors(t, server.url())
})
