/**
 * SSE-C through the S3 API with the AWS SDK v3 (SSECustomerAlgorithm /
 * SSECustomerKey, which the SDK sends as S3's three headers): PutObject,
 * GetObject (whole and ranges) and HeadObject under a key, answers echoing
 * the algorithm and the key's MD5; missing and wrong keys refused as S3
 * refuses them; multipart uploads, CopyObject and UploadPartCopy with keys
 * on both sides; malformed key headers; nothing of the key or the data in
 * the data directory; and awscli's `--sse-c` when `aws` is installed.
 */
import t from 'tap'
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, ListPartsCommand, PutObjectCommand,
  UploadPartCommand, UploadPartCopyCommand
} from '@aws-sdk/client-s3'
import { execFile, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { devCredentials, raw, rejection, s3Server } from './fixture.js'
import { testdir } from '../testdir.js'

const KEY = Buffer.from('0123456789abcdef0123456789ABCDEF') // 32 bytes, printable: awscli takes the key as text
const OTHER = Buffer.alloc(32, 9)
const KEY_MD5 = createHash('md5').update(KEY).digest('base64')
const sse = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: KEY as unknown as string }
const otherSse = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: OTHER as unknown as string }
const MARKER = 'S3-PLAINTEXT-MARKER'

function data (size: number): Buffer {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff
  for (let at = 0; at + MARKER.length <= size; at += 1000) bytes.write(MARKER, at)
  return bytes
}

function filesUnder (dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map(name => path.join(dir, name)).filter(file => statSync(file).isFile())
}

t.test('PutObject, GetObject and HeadObject under a customer key', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const body = data(70_000)
  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'sealed.bin', Body: body, ...sse }))
  t.equal(put.SSECustomerAlgorithm, 'AES256', 'PutObject echoes the algorithm')
  t.equal(put.SSECustomerKeyMD5, KEY_MD5, 'and the key\'s MD5')
  t.not(put.ETag, `"${createHash('md5').update(body).digest('hex')}"`, 'the ETag is not the MD5 of the data')

  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'sealed.bin', ...sse }))
  t.same(Buffer.from(await got.Body!.transformToByteArray()), body, 'GetObject with the key reads the data')
  t.equal(got.SSECustomerKeyMD5, KEY_MD5, 'and echoes the key\'s MD5')
  t.equal(got.ETag, put.ETag, 'with the ETag of the put')
  const ranged = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'sealed.bin', Range: 'bytes=65530-65570', ...sse }))
  t.same(Buffer.from(await ranged.Body!.transformToByteArray()), body.subarray(65530, 65571), 'a range across cipher blocks')
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'sealed.bin', ...sse }))
  t.equal(head.ContentLength, body.length, 'HeadObject with the key: the size')
  t.equal(head.SSECustomerAlgorithm, 'AES256', 'HeadObject echoes the algorithm')

  const missing = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'sealed.bin' })))
  t.equal(missing.$metadata.httpStatusCode, 400, 'GetObject without the key: 400')
  t.equal(missing.name, 'InvalidRequest', 'InvalidRequest')
  const wrong = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'sealed.bin', ...otherSse })))
  t.equal(wrong.$metadata.httpStatusCode, 403, 'with another key: 403')
  t.equal(wrong.name, 'AccessDenied', 'AccessDenied')
  const headless = await rejection(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'sealed.bin' })))
  t.equal(headless.$metadata.httpStatusCode, 400, 'HeadObject without the key: 400')
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'plain.txt', Body: 'plain' }))
  const unwanted = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'plain.txt', ...sse })))
  t.equal(unwanted.name, 'InvalidRequest', 'a key for a plain object: InvalidRequest')
})

t.test('multipart uploads, CopyObject and UploadPartCopy under keys', async t => {
  const { client, dataDir } = await s3Server(t)
  const s3 = client()
  const parts = [data(6000), data(6000).reverse(), data(100)]
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'mp.bin', ...sse }))
  t.equal(created.SSECustomerKeyMD5, KEY_MD5, 'CreateMultipartUpload echoes the key\'s MD5')
  const refused = await rejection(s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId, PartNumber: 1, Body: parts[0] })))
  t.equal(refused.$metadata.httpStatusCode, 400, 'a part without the key is refused')
  const etags: string[] = []
  for (const [i, body] of parts.entries()) {
    const part = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId, PartNumber: i + 1, Body: body, ...sse }))
    t.equal(part.SSECustomerKeyMD5, KEY_MD5, `UploadPart ${i + 1} echoes the key's MD5`)
    etags.push(part.ETag!)
  }
  const checksumsOf = (parts: Array<Record<string, unknown>> | undefined): string[] => (parts ?? []).flatMap(part => Object.keys(part).filter(name => name.startsWith('Checksum') && part[name] !== undefined))
  const keyless = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId }))
  t.equal(keyless.Parts?.length, 3, 'ListParts without the key lists the parts')
  t.same(checksumsOf(keyless.Parts as Array<Record<string, unknown>>), [], 'but no checksum of their data')
  const keyed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId, ...sse }))
  t.equal(checksumsOf(keyed.Parts as Array<Record<string, unknown>>).length, 3, 'with the key, each part\'s checksum')
  const listed = { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) }
  const wrongKey = await rejection(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId, MultipartUpload: listed, ...otherSse })))
  t.same([wrongKey.name, wrongKey.$metadata.httpStatusCode], ['AccessDenied', 403], 'a completion with another key than the upload\'s is refused')
  const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId, MultipartUpload: listed, ...sse }))
  t.match(done.ETag, /-3"$/, 'the upload\'s own key completes it')
  const retried = await rejection(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: 'mp.bin', UploadId: created.UploadId, MultipartUpload: listed, ...otherSse })))
  t.same([retried.name, retried.$metadata.httpStatusCode], ['AccessDenied', 403], 'a completion asked again with another key is refused too')
  const failedCondition = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'cond.bin', CopySource: 'photos/mp.bin', CopySourceIfMatch: '"nope"' })))
  t.same([failedCondition.name, failedCondition.$metadata.httpStatusCode], ['InvalidRequest', 400], 'a copy of an SSE-C source without its key: the key is judged before the source\'s conditions')
  const plain = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'plain-mp.bin' }))
  const plainPart = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'plain-mp.bin', UploadId: plain.UploadId, PartNumber: 1, Body: 'p' }))
  const keyOnPlain = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'plain-mp.bin', UploadId: plain.UploadId, MultipartUpload: { Parts: [{ ETag: plainPart.ETag, PartNumber: 1 }] }, ...sse
  })))
  t.equal(keyOnPlain.$metadata.httpStatusCode, 400, 'a key on the completion of an upload made without one is refused')
  const whole = Buffer.concat(parts)
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'mp.bin', ...sse }))
  t.same(Buffer.from(await got.Body!.transformToByteArray()), whole, 'the object reads back whole')
  const ranged = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'mp.bin', Range: 'bytes=5990-12010', ...sse }))
  t.same(Buffer.from(await ranged.Body!.transformToByteArray()), whole.subarray(5990, 12011), 'a range across all three parts')

  const noSourceKey = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copy.bin', CopySource: 'photos/mp.bin' })))
  t.equal(noSourceKey.name, 'InvalidRequest', 'CopyObject without the source key: InvalidRequest')
  const copied = await s3.send(new CopyObjectCommand({
    Bucket: 'photos', Key: 'copy.bin', CopySource: 'photos/mp.bin',
    CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY as unknown as string, ...otherSse
  }))
  t.equal(copied.SSECustomerKeyMD5, createHash('md5').update(OTHER).digest('base64'), 'CopyObject echoes the copy\'s key MD5')
  const copy = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'copy.bin', ...otherSse }))
  t.same(Buffer.from(await copy.Body!.transformToByteArray()), whole, 'the copy reads with its own key')
  const ontoItself = await rejection(s3.send(new CopyObjectCommand({
    Bucket: 'photos', Key: 'copy.bin', CopySource: 'photos/copy.bin',
    CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: OTHER as unknown as string, ...otherSse
  })))
  t.equal(ontoItself.name, 'InvalidRequest', 'a copy onto itself under the same key changes nothing: InvalidRequest, as S3 answers')
  const rekeyed = await s3.send(new CopyObjectCommand({
    Bucket: 'photos', Key: 'copy.bin', CopySource: 'photos/copy.bin',
    CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: OTHER as unknown as string, ...sse
  }))
  t.equal(rekeyed.SSECustomerKeyMD5, createHash('md5').update(KEY).digest('base64'), 'onto itself under another key is a change')
  await s3.send(new CopyObjectCommand({
    Bucket: 'photos', Key: 'copy.bin', CopySource: 'photos/copy.bin',
    CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY as unknown as string, ...otherSse
  }))

  const target = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'pc.bin', ...sse }))
  const partCopy = await s3.send(new UploadPartCopyCommand({
    Bucket: 'photos', Key: 'pc.bin', UploadId: target.UploadId, PartNumber: 1, CopySource: 'photos/copy.bin', CopySourceRange: 'bytes=10-5999',
    CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: OTHER as unknown as string, ...sse
  }))
  await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'pc.bin', UploadId: target.UploadId, MultipartUpload: { Parts: [{ ETag: partCopy.CopyPartResult!.ETag, PartNumber: 1 }] }
  }))
  const pc = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'pc.bin', ...sse }))
  t.same(Buffer.from(await pc.Body!.transformToByteArray()), whole.subarray(10, 6000), 'UploadPartCopy deciphers its source and encrypts the part')

  const leaks: string[] = []
  for (const file of filesUnder(dataDir)) {
    const bytes = readFileSync(file)
    for (const needle of [KEY, OTHER, Buffer.from(KEY.toString('base64')), Buffer.from(MARKER)]) {
      if (bytes.includes(needle)) leaks.push(`${path.relative(dataDir, file)}: ${needle.toString('latin1').slice(0, 10)}`)
    }
  }
  t.same(leaks, [], 'no file holds the keys or the data')

  // Last, as its plaintext is stored: copied out without a key.
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'out.bin', CopySource: 'photos/copy.bin', CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: OTHER as unknown as string }))
  const out = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'out.bin' }))
  t.same(Buffer.from(await out.Body!.transformToByteArray()), whole, 'copied out plain, it reads without a key')
})

t.test('checksums of SSE-C objects are of the data, kept and answered with ChecksumMode ENABLED', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const body = data(30_000)
  const sha256 = createHash('sha256').update(body).digest('base64')
  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'summed.bin', Body: body, ChecksumAlgorithm: 'SHA256', ...sse }))
  t.equal(put.ChecksumSHA256, sha256, 'PutObject answers the SHA-256 of the data')
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'summed.bin', ChecksumMode: 'ENABLED', ...sse }))
  t.equal(got.ChecksumSHA256, sha256, 'GetObject answers it (and the SDK checked the deciphered bytes against it)')
  t.same(Buffer.from(await got.Body!.transformToByteArray()), body, 'the data')
  const plain = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'default.bin', Body: body, ...sse }))
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'default.bin', ChecksumMode: 'ENABLED', ...sse }))
  t.ok(head.ChecksumCRC32 ?? head.ChecksumCRC64NVME, 'an object put with the SDK\'s default checksum answers it')
  t.equal(head.ChecksumCRC32 ?? head.ChecksumCRC64NVME, plain.ChecksumCRC32 ?? plain.ChecksumCRC64NVME, 'the one PutObject answered')

  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'mp-summed.bin', ChecksumAlgorithm: 'CRC32', ...sse }))
  const parts = [data(6000), data(700)]
  const uploaded = []
  for (const [i, part] of parts.entries()) {
    const answer = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'mp-summed.bin', UploadId: created.UploadId, PartNumber: i + 1, Body: part, ChecksumAlgorithm: 'CRC32', ...sse }))
    uploaded.push({ ETag: answer.ETag, PartNumber: i + 1, ChecksumCRC32: answer.ChecksumCRC32 })
  }
  // Sent with the key (as S3 asks of a completion of an upload with a checksum): its answer carries the checksum.
  const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: 'mp-summed.bin', UploadId: created.UploadId, MultipartUpload: { Parts: uploaded }, ...sse }))
  t.match(done.ChecksumCRC32, /-2$/, 'a COMPOSITE CRC32 of the parts\' data')
  const whole = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'mp-summed.bin', ChecksumMode: 'ENABLED', ...sse }))
  t.equal(whole.ChecksumCRC32, done.ChecksumCRC32, 'HeadObject answers it')
})

t.test('malformed key headers', async t => {
  const server = await s3Server(t)
  const headers = (algorithm: string, key: Buffer, md5: string): Record<string, string> => ({
    'x-amz-server-side-encryption-customer-algorithm': algorithm,
    'x-amz-server-side-encryption-customer-key': key.toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': md5
  })
  const cases: Array<[string, Record<string, string>, number, string]> = [
    ['another algorithm', headers('AES128', KEY, KEY_MD5), 400, 'InvalidEncryptionAlgorithmError'],
    ['a short key', headers('AES256', KEY.subarray(1), createHash('md5').update(KEY.subarray(1)).digest('base64')), 400, 'InvalidArgument'],
    ['a wrong MD5', headers('AES256', KEY, createHash('md5').update(OTHER).digest('base64')), 400, 'InvalidArgument'],
    ['the algorithm alone', { 'x-amz-server-side-encryption-customer-algorithm': 'AES256' }, 400, 'InvalidArgument']
  ]
  for (const [name, given, status, code] of cases) {
    const answer = await raw(server, 'PUT', '/photos/bad', given, 'x')
    t.equal(answer.status, status, `${name}: ${status}`)
    t.match(answer.body, `<Code>${code}</Code>`, `${name}: ${code}`)
  }
  t.equal((await raw(server, 'GET', '/photos/bad')).status, 404, 'nothing was stored')
})

t.test('awscli --sse-c', { skip: spawnSync('aws', ['--version']).status === 0 ? false : 'aws is not installed' }, async t => {
  const { endpoint } = await s3Server(t)
  const dir = testdir(t)
  const source = path.join(dir, 'in.bin')
  const target = path.join(dir, 'out.bin')
  writeFileSync(source, data(20_000))
  const env = { ...process.env, AWS_ACCESS_KEY_ID: devCredentials.accessKeyId, AWS_SECRET_ACCESS_KEY: devCredentials.secretAccessKey, AWS_DEFAULT_REGION: 'auto', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' }
  // Asynchronously: the server answering awscli runs in this process.
  const aws = async (...args: string[]): Promise<unknown> => await promisify(execFile)('aws', ['--endpoint-url', endpoint, ...args], { env, encoding: 'utf8' })
  await aws('s3', 'cp', source, 's3://photos/cli.bin', '--sse-c', 'AES256', '--sse-c-key', KEY.toString())
  await aws('s3', 'cp', 's3://photos/cli.bin', target, '--sse-c', 'AES256', '--sse-c-key', KEY.toString())
  t.same(readFileSync(target), readFileSync(source), 'awscli writes and reads back an SSE-C object')
  await t.rejects(aws('s3', 'cp', 's3://photos/cli.bin', path.join(dir, 'no.bin')), /400|Bad Request/, 'and cannot read it without the key')
})

t.test('a copy onto itself that only removes SSE-C (copy source key alone) is a change; the same key, or none, is not', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'inplace.bin', Body: 'secret bytes', ...sse }))
  const sameKey = await rejection(s3.send(new CopyObjectCommand({
    Bucket: 'photos', Key: 'inplace.bin', CopySource: 'photos/inplace.bin', CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY as unknown as string, ...sse
  })))
  t.equal(sameKey.name, 'InvalidRequest', 'the same key on both sides changes nothing')
  const decrypted = await s3.send(new CopyObjectCommand({
    Bucket: 'photos', Key: 'inplace.bin', CopySource: 'photos/inplace.bin', CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY as unknown as string
  }))
  t.equal(decrypted.SSECustomerKeyMD5, undefined, 'the copy is not encrypted')
  const plain = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'inplace.bin' }))
  t.equal(await plain.Body!.transformToString(), 'secret bytes', 'decrypted in place, it reads without a key')
  const unchanged = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'inplace.bin', CopySource: 'photos/inplace.bin' })))
  t.equal(unchanged.name, 'InvalidRequest', 'plain onto itself, changing nothing: still refused')
  const encrypted = await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'inplace.bin', CopySource: 'photos/inplace.bin', ...sse }))
  t.equal(encrypted.SSECustomerKeyMD5, KEY_MD5, 'encrypting in place is a change too')
})

t.test('SSE-C headers beside x-amz-server-side-encryption: InvalidArgument, nothing written', async t => {
  const server = await s3Server(t)
  const customer = {
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': KEY.toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': KEY_MD5
  }
  const message = 'Server Side Encryption with Customer provided key is incompatible with the encryption method specified'
  for (const method of ['AES256', 'aws:kms']) {
    const both = { ...customer, 'x-amz-server-side-encryption': method }
    const put = await raw(server, 'PUT', '/photos/both.bin', { ...both, 'content-length': '1' }, 'x')
    t.equal(put.status, 400, `PutObject with ${method}: 400`)
    t.match(put.body, '<Code>InvalidArgument</Code>')
    t.match(put.body, `<Message>${message}</Message>`)
    const created = await raw(server, 'POST', '/photos/both.bin?uploads', both)
    t.equal(created.status, 400, `CreateMultipartUpload with ${method}: 400`)
    t.match(created.body, '<Code>InvalidArgument</Code>')
  }
  t.equal((await raw(server, 'GET', '/photos/both.bin')).status, 404, 'nothing was stored')
  await raw(server, 'PUT', '/photos/src.bin', { ...customer, 'content-length': '4' }, 'data')
  const copySource = {
    'x-amz-copy-source': '/photos/src.bin',
    'x-amz-copy-source-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-copy-source-server-side-encryption-customer-key': KEY.toString('base64'),
    'x-amz-copy-source-server-side-encryption-customer-key-md5': KEY_MD5
  }
  const copyBoth = await raw(server, 'PUT', '/photos/dst.bin', { ...copySource, ...customer, 'x-amz-server-side-encryption': 'AES256' })
  t.equal(copyBoth.status, 400, 'CopyObject whose destination has both: 400')
  t.match(copyBoth.body, '<Code>InvalidArgument</Code>')
  const toSseS3 = await raw(server, 'PUT', '/photos/dst.bin', { ...copySource, 'x-amz-server-side-encryption': 'AES256' })
  t.equal(toSseS3.status, 200, 'a copy source\'s key beside SSE-S3 for the copy is fine')
})
