/**
 * The checksum a CompleteMultipartUpload names in its x-amz-checksum-*
 * header: judged when the completion is asked again as when it was first
 * asked (a retry with a wrong checksum is refused, not answered 200), held
 * to the upload's algorithm (InvalidRequest, as a part is), and one header
 * at most (InvalidRequest, as S3 answers several on any request).
 */
import t from 'tap'
import { ChecksumAlgorithm, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3'
import { randomBytes } from 'node:crypto'
import zlib from 'node:zlib'
import { raw, rejection, s3Server, type S3Server } from './fixture.js'

function crc32 (data: Uint8Array): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(zlib.crc32(data))
  return b
}

const b64 = (b: Buffer): string => b.toString('base64')

interface Uploaded { uploadId: string, parts: Array<{ PartNumber: number, ETag: string, ChecksumCRC32: string }>, composite: string, whole: string }

/** An upload of `bodies` created with CRC32 (COMPOSITE unless `type` says), each part sent with its CRC32. */
async function crc32Upload (s3: S3Client, key: string, bodies: Buffer[], extra: Record<string, unknown> = {}, type?: 'FULL_OBJECT'): Promise<Uploaded> {
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: key, ChecksumAlgorithm: ChecksumAlgorithm.CRC32, ...(type === undefined ? {} : { ChecksumType: type }), ...extra }))
  const parts = []
  for (const [i, body] of bodies.entries()) {
    const part = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: key, UploadId: created.UploadId, PartNumber: i + 1, Body: body, ChecksumCRC32: b64(crc32(body)), ...extra }))
    parts.push({ PartNumber: i + 1, ETag: part.ETag!, ChecksumCRC32: part.ChecksumCRC32! })
  }
  return { uploadId: created.UploadId!, parts, composite: `${b64(crc32(Buffer.concat(bodies.map(crc32))))}-${bodies.length}`, whole: b64(crc32(Buffer.concat(bodies))) }
}

/** A CompleteMultipartUpload with these x-amz-checksum-* values (the SDK's members). */
async function complete (s3: S3Client, key: string, upload: Uploaded, checksums: Record<string, string | undefined>, extra: Record<string, unknown> = {}): Promise<{ ETag?: string, ChecksumCRC32?: string }> {
  return await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'photos', Key: key, UploadId: upload.uploadId, MultipartUpload: { Parts: upload.parts }, ...checksums, ...extra }))
}

t.test('a completion asked again is held to the checksum it names, as the first one was', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  const bodies = [randomBytes(64), randomBytes(32)]
  const upload = await crc32Upload(s3, 'again', bodies)
  const first = await complete(s3, 'again', upload, { ChecksumCRC32: upload.composite })
  t.equal(first.ChecksumCRC32, upload.composite)
  const version = (await (await registry.open('photos'))!.head('again'))?.version

  const same = await complete(s3, 'again', upload, { ChecksumCRC32: upload.composite })
  t.same([same.ETag, same.ChecksumCRC32], [first.ETag, upload.composite], 'the same checksum: the same answer')
  t.equal((await complete(s3, 'again', upload, {})).ETag, first.ETag, 'no checksum named: the same answer')
  for (const [what, value] of [['a wrong composite value', 'AAAAAA==-2'], ['the right value with another part count', `${upload.composite.slice(0, -2)}-3`], ['a whole-object value', upload.whole]]) {
    const refused = await rejection(complete(s3, 'again', upload, { ChecksumCRC32: value }))
    t.same([refused.name, refused.$metadata.httpStatusCode], ['BadDigest', 400], `${what}: BadDigest, as the first completion answers it`)
    t.match(refused.message, `the object's is ${Buffer.from(upload.composite.slice(0, -2), 'base64').toString('hex')}-2 (COMPOSITE)`, `${what}: the message names the object's checksum`)
  }
  const otherAlgorithm = await rejection(complete(s3, 'again', upload, { ChecksumSHA256: `${b64(randomBytes(32))}-2` }))
  t.same([otherAlgorithm.name, otherAlgorithm.$metadata.httpStatusCode], ['InvalidRequest', 400], 'another algorithm than the upload\'s')
  const otherType = await rejection(complete(s3, 'again', upload, {}, { ChecksumType: 'FULL_OBJECT' }))
  t.same([otherType.name, otherType.$metadata.httpStatusCode], ['BadDigest', 400], 'another checksum type than the object\'s')
  t.equal((await (await registry.open('photos'))!.head('again'))?.version, version, 'nothing written again')

  // FULL_OBJECT: a whole-object value is judged on the repeat too.
  const full = await crc32Upload(s3, 'full', bodies, {}, 'FULL_OBJECT')
  await complete(s3, 'full', full, { ChecksumCRC32: full.whole }, { ChecksumType: 'FULL_OBJECT' })
  t.equal((await complete(s3, 'full', full, { ChecksumCRC32: full.whole }, { ChecksumType: 'FULL_OBJECT' })).ChecksumCRC32, full.whole, 'the right whole-object value')
  const wrongWhole = await rejection(complete(s3, 'full', full, { ChecksumCRC32: 'AAAAAA==' }, { ChecksumType: 'FULL_OBJECT' }))
  t.same([wrongWhole.name, wrongWhole.$metadata.httpStatusCode], ['BadDigest', 400], 'a wrong whole-object value')
  t.match(wrongWhole.message, `the object's is ${Buffer.from(full.whole, 'base64').toString('hex')}`)
})

t.test('an SSE-C completion asked again without the key with a wrong checksum: BadDigest naming no digest of the data', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: randomBytes(32) as unknown as string }
  const bodies = [Buffer.from('PIN=4821')]
  const upload = await crc32Upload(s3, 'secret', bodies, ssec)
  await complete(s3, 'secret', upload, { ChecksumCRC32: upload.composite }, ssec)
  t.equal((await complete(s3, 'secret', upload, { ChecksumCRC32: upload.composite })).ChecksumCRC32, undefined, 'the right value without the key: the answer, with no checksum')
  const refused = await rejection(complete(s3, 'secret', upload, { ChecksumCRC32: 'AAAAAA==-1' }))
  t.equal(refused.name, 'BadDigest')
  t.notMatch(refused.message, Buffer.from(upload.composite.slice(0, -2), 'base64').toString('hex'), 'the refusal names no digest of the data')
  t.match(refused.message, /not shown without the upload's customer key/)
  const withKey = await rejection(complete(s3, 'secret', upload, { ChecksumCRC32: 'AAAAAA==-1' }, ssec))
  t.match(withKey.message, `the object's is ${Buffer.from(upload.composite.slice(0, -2), 'base64').toString('hex')}-1 (COMPOSITE)`, 'with the key, the refusal names the object\'s')
})

t.test('a completion naming another algorithm than the upload\'s is InvalidRequest, the upload kept', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const bodies = [randomBytes(64), randomBytes(32)]
  const upload = await crc32Upload(s3, 'algorithm', bodies)
  const composite = await rejection(complete(s3, 'algorithm', upload, { ChecksumSHA256: `${b64(randomBytes(32))}-2` }))
  t.same([composite.name, composite.$metadata.httpStatusCode], ['InvalidRequest', 400], 'a composite value of another algorithm')
  t.match(composite.message, 'Checksum Type mismatch occurred, expected checksum Type: crc32, actual checksum Type: sha256')
  const whole = await rejection(complete(s3, 'algorithm', upload, { ChecksumCRC32C: b64(randomBytes(4)) }))
  t.same([whole.name, whole.$metadata.httpStatusCode], ['InvalidRequest', 400], 'a whole-object value of another algorithm')
  t.match(whole.message, 'expected checksum Type: crc32, actual checksum Type: crc32c')
  const done = await complete(s3, 'algorithm', upload, { ChecksumCRC32: upload.composite })
  t.equal(done.ChecksumCRC32, upload.composite, 'the upload was kept: the right completion completes it')
})

/** A CompleteMultipartUpload sent as is, unsigned (the fixture's server takes unsigned requests from its own origin). */
async function rawComplete (server: S3Server, key: string, upload: Uploaded, headers: Record<string, string>): Promise<{ status: number, code: string | undefined, body: string }> {
  const document = `<CompleteMultipartUpload>${upload.parts.map(p => `<Part><PartNumber>${p.PartNumber}</PartNumber><ETag>${p.ETag}</ETag><ChecksumCRC32>${p.ChecksumCRC32}</ChecksumCRC32></Part>`).join('')}</CompleteMultipartUpload>`
  const answer = await raw(server, 'POST', `/photos/${key}?uploadId=${encodeURIComponent(upload.uploadId)}`, { 'content-length': String(Buffer.byteLength(document)), ...headers }, document)
  return { status: answer.status, code: /<Code>(\w+)</.exec(answer.body)?.[1], body: answer.body }
}

t.test('several x-amz-checksum-* headers on a completion: InvalidRequest, none judged by the last, the upload kept', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  const bodies = [randomBytes(64), randomBytes(32)]
  const upload = await crc32Upload(s3, 'several', bodies)
  const wrongLast = await rawComplete(server, 'several', upload, { 'x-amz-checksum-crc32': 'AAAAAA==-2', 'x-amz-checksum-sha256': `${b64(randomBytes(32))}-2` })
  t.same([wrongLast.status, wrongLast.code], [400, 'InvalidRequest'])
  t.match(wrongLast.body, 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.')
  const rightLast = await rawComplete(server, 'several', upload, { 'x-amz-checksum-crc32': upload.composite, 'x-amz-checksum-crc32c': b64(randomBytes(4)) })
  t.same([rightLast.status, rightLast.code], [400, 'InvalidRequest'], 'whichever comes first or last')
  const done = await rawComplete(server, 'several', upload, { 'x-amz-checksum-crc32': upload.composite })
  t.equal(done.status, 200, 'one header: the upload completes')
})
