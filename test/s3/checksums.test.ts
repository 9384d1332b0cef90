/**
 * Checksums through the S3 API with the AWS SDK v3: x-amz-checksum-* on
 * PutObject (header and trailer) stored and returned by GetObject /
 * HeadObject with ChecksumMode ENABLED; per-part checksums (UploadPart,
 * ListParts, CompleteMultipartUpload) and the completed object's COMPOSITE
 * or FULL_OBJECT checksum; reads of one part (`partNumber`) with the part's
 * checksum; the algorithm and type of CreateMultipartUpload kept with the
 * upload and followed by UploadPart, UploadPartCopy and the completion;
 * the checksums and ETag of CopyObject, within a bucket and between buckets.
 */
import t from 'tap'
import {
  ChecksumAlgorithm, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand,
  ListMultipartUploadsCommand, ListPartsCommand, PutObjectCommand, UploadPartCommand, UploadPartCopyCommand, type S3Client
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { Crc64Nvme } from '@aws-sdk/crc64-nvme'
import { createHash, randomBytes } from 'node:crypto'
import zlib from 'node:zlib'
import { rejection, s3Server } from './fixture.js'

function crc32 (data: Uint8Array): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(zlib.crc32(data))
  return b
}

async function crc64 (data: Uint8Array): Promise<Buffer> {
  const crc = new Crc64Nvme()
  crc.update(data)
  return Buffer.from(await crc.digest())
}

const b64 = (b: Buffer): string => b.toString('base64')

async function uploadParts (s3: S3Client, key: string, algorithm: ChecksumAlgorithm, parts: Buffer[], type?: 'COMPOSITE' | 'FULL_OBJECT'): Promise<{ uploadId: string, etags: string[], checksums: Array<string | undefined> }> {
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: key, ChecksumAlgorithm: algorithm, ...(type === undefined ? {} : { ChecksumType: type }) }))
  const etags: string[] = []
  const checksums: Array<string | undefined> = []
  for (const [i, body] of parts.entries()) {
    const part = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: key, UploadId: created.UploadId, PartNumber: i + 1, Body: body, ChecksumAlgorithm: algorithm }))
    etags.push(part.ETag!)
    checksums.push(part.ChecksumCRC32 ?? part.ChecksumCRC64NVME ?? part.ChecksumSHA256)
  }
  return { uploadId: created.UploadId!, etags, checksums }
}

t.test('PutObject checksums are stored and returned with ChecksumMode ENABLED', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const body = Buffer.from('123456789')
  for (const algorithm of [ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.CRC64NVME, ChecksumAlgorithm.SHA1, ChecksumAlgorithm.SHA256]) {
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `sum/${algorithm}`, Body: body, ChecksumAlgorithm: algorithm }))
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: `sum/${algorithm}`, ChecksumMode: 'ENABLED' }))
    const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: `sum/${algorithm}`, ChecksumMode: 'ENABLED' }))
    t.equal(await got.Body!.transformToString(), '123456789', `${algorithm}: the SDK validated the returned checksum`)
    t.equal(head.ChecksumType, 'FULL_OBJECT')
    const field = `Checksum${algorithm}` as 'ChecksumCRC32'
    t.equal(got[field], head[field], `${algorithm}: GET and HEAD agree`)
    t.ok(typeof head[field] === 'string' && head[field] !== '', `${algorithm}: returned`)
  }
  const expected = { CRC32: 'y/Q5Jg==', CRC32C: '4waSgw==', CRC64NVME: 'rosUhgp5mIg=' }
  for (const [algorithm, value] of Object.entries(expected)) {
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: `sum/${algorithm}`, ChecksumMode: 'ENABLED' }))
    t.equal(head[`Checksum${algorithm}` as 'ChecksumCRC32'], value, `${algorithm}: the catalogue's check value`)
  }
  const quiet = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'sum/CRC32' }))
  t.equal(quiet.ChecksumCRC32, undefined, 'not without ChecksumMode')
  const ranged = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'sum/CRC32', ChecksumMode: 'ENABLED', Range: 'bytes=0-3' }))
  t.equal(await ranged.Body!.transformToString(), '1234')
  t.equal(ranged.ChecksumCRC32, undefined, 'a range is answered without the whole object\'s checksum')

  const wrong = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'sum/wrong', Body: body, ChecksumCRC32C: 'AAAAAA==' })))
  t.equal(wrong.name, 'BadDigest')
  t.equal((await rejection(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'sum/wrong' })))).$metadata.httpStatusCode, 404, 'nothing stored')
})

t.test('multipart: part checksums, COMPOSITE and FULL_OBJECT object checksums, reads by part', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const parts = [randomBytes(5 * 1024 * 1024), randomBytes(5 * 1024 * 1024), randomBytes(1000)]
  const whole = Buffer.concat(parts)

  const composite = await uploadParts(s3, 'composite', ChecksumAlgorithm.CRC32, parts)
  t.same(composite.checksums, parts.map(p => b64(crc32(p))), 'UploadPart echoes each part\'s CRC32')
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'composite', UploadId: composite.uploadId }))
  t.same(listed.Parts?.map(p => p.ChecksumCRC32), composite.checksums, 'ListParts lists them')
  const bad = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'composite', UploadId: composite.uploadId,
    MultipartUpload: { Parts: composite.etags.map((ETag, i) => ({ PartNumber: i + 1, ETag, ChecksumCRC32: i === 1 ? 'AAAAAA==' : composite.checksums[i] })) }
  })))
  t.equal(bad.name, 'InvalidPart', 'a part checksum that is not the part\'s')
  const done = await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'composite', UploadId: composite.uploadId,
    MultipartUpload: { Parts: composite.etags.map((ETag, i) => ({ PartNumber: i + 1, ETag, ChecksumCRC32: composite.checksums[i] })) }
  }))
  const expected = `${b64(crc32(Buffer.concat(parts.map(crc32))))}-3`
  t.equal(done.ChecksumCRC32, expected, 'the CRC32 of the part CRC32s, -3')
  t.equal(done.ChecksumType, 'COMPOSITE')
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'composite', ChecksumMode: 'ENABLED' }))
  t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(whole))
  t.equal(got.ChecksumCRC32, expected)
  t.equal(got.ChecksumType, 'COMPOSITE')

  for (const [i, bytes] of parts.entries()) {
    const part = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'composite', PartNumber: i + 1 }))
    t.ok(Buffer.from(await part.Body!.transformToByteArray()).equals(bytes), `part ${i + 1}'s bytes`)
    t.equal(part.PartsCount, 3)
    t.equal(part.$metadata.httpStatusCode, 206)
    t.equal(part.ContentRange, `bytes ${i * 5 * 1024 * 1024}-${i * 5 * 1024 * 1024 + bytes.length - 1}/${whole.length}`)
  }
  const headPart = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'composite', PartNumber: 3 }))
  t.same([headPart.ContentLength, headPart.PartsCount], [1000, 3], 'HEAD of one part')
  const past = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'composite', PartNumber: 4 })))
  t.same([past.name, past.$metadata.httpStatusCode], ['InvalidPartNumber', 416], 'a part past the last')

  const full = await uploadParts(s3, 'full', ChecksumAlgorithm.CRC64NVME, parts, 'FULL_OBJECT')
  const fullDone = await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'full', UploadId: full.uploadId, ChecksumType: 'FULL_OBJECT', ChecksumCRC64NVME: b64(await crc64(whole)),
    MultipartUpload: { Parts: full.etags.map((ETag, i) => ({ PartNumber: i + 1, ETag, ChecksumCRC64NVME: full.checksums[i] })) }
  }))
  t.equal(fullDone.ChecksumCRC64NVME, b64(await crc64(whole)), 'the CRC64NVME of the whole object, from the parts\'')
  t.equal(fullDone.ChecksumType, 'FULL_OBJECT')
  const fullGot = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'full', ChecksumMode: 'ENABLED' }))
  t.ok(Buffer.from(await fullGot.Body!.transformToByteArray()).equals(whole), 'the SDK validated the whole-object CRC64NVME')
  t.equal(fullGot.ChecksumType, 'FULL_OBJECT')

  const wrongFull = await uploadParts(s3, 'wrong-full', ChecksumAlgorithm.CRC32, parts.slice(2), 'FULL_OBJECT')
  const wrong = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'wrong-full', UploadId: wrongFull.uploadId, ChecksumType: 'FULL_OBJECT', ChecksumCRC32: 'AAAAAA==',
    MultipartUpload: { Parts: [{ PartNumber: 1, ETag: wrongFull.etags[0] }] }
  })))
  t.equal(wrong.name, 'BadDigest', 'a whole-object checksum the parts do not make')
  const refused = await rejection(s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'x', ChecksumAlgorithm: 'CRC64NVME', ChecksumType: 'COMPOSITE' })))
  t.equal(refused.name, 'InvalidRequest', 'CRC64NVME has no COMPOSITE type')
})

t.test('lib-storage with its default checksum: the object gets a composite CRC32', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const data = randomBytes(11 * 1024 * 1024)
  await new Upload({ client: s3, params: { Bucket: 'photos', Key: 'lib.bin', Body: data }, partSize: 5 * 1024 * 1024, queueSize: 2 }).done()
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'lib.bin', ChecksumMode: 'ENABLED' }))
  const parts = [data.subarray(0, 5 << 20), data.subarray(5 << 20, 10 << 20), data.subarray(10 << 20)]
  t.equal(head.ChecksumCRC32, `${b64(crc32(Buffer.concat(parts.map(crc32))))}-3`)
  t.equal(head.ChecksumType, 'COMPOSITE')
  t.equal(createHash('md5').update(data).digest('hex').length, 32)
})

t.test('CreateMultipartUpload\'s algorithm and type are kept: ListParts answers them, parts and completion follow them', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  // A client that sends no checksum of its own unless asked.
  const bare = client({ requestChecksumCalculation: 'WHEN_REQUIRED' })
  const parts = [randomBytes(5 * 1024 * 1024), randomBytes(1000)]
  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('base64')

  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'kept', ChecksumAlgorithm: 'SHA256' }))
  const UploadId = created.UploadId!
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'kept', UploadId }))
  t.same([listed.ChecksumAlgorithm, listed.ChecksumType], ['SHA256', 'COMPOSITE'], 'ListParts answers the kept algorithm and type')
  const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos', Prefix: 'kept' }))
  t.same([uploads.Uploads?.[0].ChecksumAlgorithm, uploads.Uploads?.[0].ChecksumType], ['SHA256', 'COMPOSITE'], 'so does ListMultipartUploads')
  const none = await rejection(bare.send(new UploadPartCommand({ Bucket: 'photos', Key: 'kept', UploadId, PartNumber: 1, Body: parts[0] })))
  t.same([none.name, none.$metadata.httpStatusCode], ['InvalidRequest', 400], 'a part of a COMPOSITE upload without its checksum')
  t.match(none.message, /expected checksum Type: sha256, actual checksum Type: null/)
  const other = await rejection(s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'kept', UploadId, PartNumber: 1, Body: parts[0], ChecksumAlgorithm: 'CRC32' })))
  t.same([other.name, other.$metadata.httpStatusCode], ['InvalidRequest', 400], 'a part with another algorithm\'s checksum')
  const first = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'kept', UploadId, PartNumber: 1, Body: parts[0], ChecksumAlgorithm: 'SHA256' }))
  t.equal(first.ChecksumSHA256, sha(parts[0]))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'source', Body: parts[1] }))
  const copied = await s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'kept', UploadId, PartNumber: 2, CopySource: 'photos/source' }))
  t.equal(copied.CopyPartResult?.ChecksumSHA256, sha(parts[1]), 'UploadPartCopy answers the SHA-256 computed over the copied bytes')
  const missing = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'kept', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.ETag }, { PartNumber: 2, ETag: copied.CopyPartResult?.ETag }] }
  })))
  t.same([missing.name, missing.$metadata.httpStatusCode], ['InvalidRequest', 400], 'a completion without the parts\' checksums')
  t.match(missing.message, /missing for part 1/)
  const otherType = await rejection(s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'kept', UploadId, ChecksumType: 'FULL_OBJECT',
    MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.ETag, ChecksumSHA256: sha(parts[0]) }, { PartNumber: 2, ETag: copied.CopyPartResult?.ETag, ChecksumSHA256: sha(parts[1]) }] }
  })))
  t.same([otherType.name, otherType.$metadata.httpStatusCode], ['BadDigest', 400], 'a completion naming another checksum type, as S3 documents')
  const done = await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'kept', UploadId,
    MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.ETag, ChecksumSHA256: sha(parts[0]) }, { PartNumber: 2, ETag: copied.CopyPartResult?.ETag, ChecksumSHA256: sha(parts[1]) }] }
  }))
  const composite = createHash('sha256').update(Buffer.concat(parts.map(p => createHash('sha256').update(p).digest()))).digest('base64')
  t.same([done.ChecksumSHA256, done.ChecksumType], [`${composite}-2`, 'COMPOSITE'])
  for (const [i, bytes] of parts.entries()) {
    const part = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'kept', PartNumber: i + 1, ChecksumMode: 'ENABLED' }))
    t.ok(Buffer.from(await part.Body!.transformToByteArray()).equals(bytes), `part ${i + 1}'s bytes`)
    t.same([part.ChecksumSHA256, part.ChecksumType], [sha(bytes), 'COMPOSITE'], `GetObject of part ${i + 1} answers that part's SHA-256`)
  }
  const headPart = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'kept', PartNumber: 2, ChecksumMode: 'ENABLED' }))
  t.equal(headPart.ChecksumSHA256, sha(parts[1]), 'and so does HeadObject')

  // FULL_OBJECT CRC32C: a part sent without a checksum gets its CRC32C; the completion takes the kept type.
  const full = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'full-kept', ChecksumAlgorithm: 'CRC32C', ChecksumType: 'FULL_OBJECT' }))
  const fullParts = []
  for (const [i, bytes] of parts.entries()) {
    fullParts.push(await bare.send(new UploadPartCommand({ Bucket: 'photos', Key: 'full-kept', UploadId: full.UploadId, PartNumber: i + 1, Body: bytes })))
  }
  t.ok(fullParts.every(p => typeof p.ChecksumCRC32C === 'string'), 'each part answers the CRC32C computed for it')
  const fullDone = await bare.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'full-kept', UploadId: full.UploadId, MultipartUpload: { Parts: fullParts.map((p, i) => ({ PartNumber: i + 1, ETag: p.ETag })) }
  }))
  t.equal(fullDone.ChecksumType, 'FULL_OBJECT', 'a completion without x-amz-checksum-type uses the kept type')
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'full-kept', ChecksumMode: 'ENABLED' }))
  t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat(parts)), 'the SDK validated the whole-object CRC32C')
  t.equal(got.ChecksumCRC32C, fullDone.ChecksumCRC32C)
  const fullPart = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'full-kept', PartNumber: 1, ChecksumMode: 'ENABLED' }))
  t.equal(fullPart.ChecksumCRC32C, undefined, 'a part of a FULL_OBJECT object of several parts answers no checksum, as S3')
})

t.test('what arrives without a checksum gets a CRC64NVME, as S3 adds it', async t => {
  const { client } = await s3Server(t)
  const bare = client({ requestChecksumCalculation: 'WHEN_REQUIRED' })
  const body = randomBytes(70_000)
  const put = await bare.send(new PutObjectCommand({ Bucket: 'photos', Key: 'plain', Body: body }))
  t.same([put.ChecksumCRC64NVME, put.ChecksumType], [b64(await crc64(body)), 'FULL_OBJECT'], 'PutObject answers the CRC64NVME it added')
  const head = await bare.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'plain', ChecksumMode: 'ENABLED' }))
  t.same([head.ChecksumCRC64NVME, head.ChecksumType, head.ChecksumCRC32], [b64(await crc64(body)), 'FULL_OBJECT', undefined], 'and HeadObject returns it, alone')
  const md5Only = await bare.send(new PutObjectCommand({ Bucket: 'photos', Key: 'md5', Body: body, ContentMD5: createHash('md5').update(body).digest('base64') }))
  t.equal(md5Only.ChecksumCRC64NVME, b64(await crc64(body)), 'Content-MD5 alone is no checksum of S3\'s kinds: the CRC64NVME is added too')
  const sent = await bare.send(new PutObjectCommand({ Bucket: 'photos', Key: 'sent', Body: body, ChecksumCRC32: b64(crc32(body)) }))
  t.same([sent.ChecksumCRC32, sent.ChecksumCRC64NVME], [b64(crc32(body)), undefined], 'a sent checksum is kept instead')

  // Multipart: each part sent bare gets its CRC64NVME, the object their FULL_OBJECT combination.
  const parts = [randomBytes(5 * 1024 * 1024), randomBytes(12_345)]
  const created = await bare.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'mp' }))
  const uploaded = []
  for (const [i, bytes] of parts.entries()) {
    uploaded.push(await bare.send(new UploadPartCommand({ Bucket: 'photos', Key: 'mp', UploadId: created.UploadId, PartNumber: i + 1, Body: bytes })))
    t.equal(uploaded[i].ChecksumCRC64NVME, b64(await crc64(bytes)), `part ${i + 1} answers its CRC64NVME`)
  }
  const copiedPart = await bare.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'mp', UploadId: created.UploadId, PartNumber: 3, CopySource: 'photos/plain' }))
  t.equal(copiedPart.CopyPartResult?.ChecksumCRC64NVME, b64(await crc64(body)), 'a copied part gets its CRC64NVME too')
  const listed = await bare.send(new ListPartsCommand({ Bucket: 'photos', Key: 'mp', UploadId: created.UploadId, MaxParts: 2 }))
  t.same(listed.Parts?.map(p => p.ChecksumCRC64NVME), uploaded.map(p => p.ChecksumCRC64NVME), 'ListParts lists them')
  const done = await bare.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'mp', UploadId: created.UploadId, MultipartUpload: { Parts: uploaded.map((p, i) => ({ PartNumber: i + 1, ETag: p.ETag })) }
  }))
  t.same([done.ChecksumCRC64NVME, done.ChecksumType], [b64(await crc64(Buffer.concat(parts))), 'FULL_OBJECT'], 'the object\'s CRC64NVME, combined from the parts\'')
  const got = await client().send(new GetObjectCommand({ Bucket: 'photos', Key: 'mp', ChecksumMode: 'ENABLED' }))
  t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat(parts)), 'the SDK validated it on the way back')
  t.equal(got.ChecksumCRC64NVME, done.ChecksumCRC64NVME)
})

t.test('CopyObject: the checksum asked for (or the source\'s) computed and answered; a multipart source copies to a single-part object', async t => {
  const { client, registry } = await s3Server(t)
  await registry.create('archive')
  const s3 = client()
  const data = randomBytes(6 * 1024 * 1024)
  await new Upload({ client: s3, params: { Bucket: 'photos', Key: 'multi', Body: data }, partSize: 5 * 1024 * 1024 }).done()
  const source = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'multi' }))
  t.match(source.ETag, /-2"$/, 'a multipart source')
  const md5 = `"${createHash('md5').update(data).digest('hex')}"`
  const sha = createHash('sha256').update(data).digest('base64')

  for (const bucket of ['photos', 'archive']) {
    const copied = await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: 'photos/multi', ChecksumAlgorithm: 'SHA256' }))
    t.equal(copied.CopyObjectResult?.ETag, md5, `${bucket}: the copy's ETag is the MD5 of its bytes, as S3's CopyObject`)
    t.same([copied.CopyObjectResult?.ChecksumSHA256, copied.CopyObjectResult?.ChecksumType], [sha, 'FULL_OBJECT'], `${bucket}: the SHA-256 asked for, in the result`)
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'copy', ChecksumMode: 'ENABLED' }))
    t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(data), `${bucket}: the bytes (the SDK validated the stored SHA-256)`)
    t.same([got.ETag, got.ChecksumSHA256, got.PartsCount], [md5, sha, undefined], `${bucket}: stored with the copy`)
  }
  // Without x-amz-checksum-algorithm, the source's algorithm: its composite CRC32 becomes the copy's whole-object CRC32.
  const plain = await s3.send(new CopyObjectCommand({ Bucket: 'archive', Key: 'plain', CopySource: 'photos/multi' }))
  t.same([plain.CopyObjectResult?.ChecksumCRC32, plain.CopyObjectResult?.ChecksumType], [b64(crc32(data)), 'FULL_OBJECT'])
  const small = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'small', Body: 'small', ChecksumAlgorithm: 'CRC32C' }))
  const within = await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'small-copy', CopySource: 'photos/small' }))
  t.same([within.CopyObjectResult?.ETag, within.CopyObjectResult?.ChecksumCRC32C], [small.ETag, small.ChecksumCRC32C], 'a single-part source within a bucket: its ETag and checksum kept')
  const bad = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'x', CopySource: 'photos/small', ChecksumAlgorithm: 'MD5' as 'CRC32' })))
  t.same([bad.name, bad.$metadata.httpStatusCode], ['InvalidRequest', 400], 'an algorithm S3 does not have')
})

t.test('CompleteMultipartUpload judges a COMPOSITE checksum given in its <base64>-<parts> form', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const parts = [randomBytes(64), randomBytes(32)]
  const upload = await uploadParts(s3, 'judged', ChecksumAlgorithm.CRC32, parts)
  const right = `${b64(crc32(Buffer.concat(parts.map(crc32))))}-2`
  const complete = async (ChecksumCRC32: string): Promise<unknown> => await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'judged', UploadId: upload.uploadId, ChecksumCRC32,
    MultipartUpload: { Parts: upload.etags.map((ETag, i) => ({ PartNumber: i + 1, ETag, ChecksumCRC32: upload.checksums[i] })) }
  }))
  for (const [what, value] of [['a wrong value', 'AAAAAA==-2'], ['the right value with another part count', `${right.slice(0, -2)}-3`], ['a whole-object value', b64(crc32(Buffer.concat(parts)))]]) {
    const refused = await rejection(complete(value))
    t.equal(refused.name, 'BadDigest', `${what}: refused`)
    t.match(refused.message, `the object's is ${Buffer.from(right.slice(0, -2), 'base64').toString('hex')}-2 (COMPOSITE)`, `${what}: the message names the object's composite checksum`)
  }
  t.equal((await rejection(complete('AAAAAA==-x'))).name, 'InvalidRequest', 'a value that is neither form')
  const done = await complete(right) as { ChecksumCRC32?: string }
  t.equal(done.ChecksumCRC32, right, 'the right one completes')
})

t.test('a completion of an SSE-C upload answers its checksum only to who sends the key', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const key = randomBytes(32)
  // The SDK takes the key's bytes and sends them as S3's three headers.
  const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key as unknown as string }
  const complete = async (withKey: boolean, uploadId: string, etag: string, checksum: string): Promise<{ ChecksumCRC32?: string }> => await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'secret', UploadId: uploadId, ...(withKey ? ssec : {}), MultipartUpload: { Parts: [{ PartNumber: 1, ETag: etag, ChecksumCRC32: checksum }] }
  }))
  for (const withKey of [false, true]) {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'secret', ChecksumAlgorithm: 'CRC32', ...ssec }))
    const part = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'secret', UploadId: created.UploadId, PartNumber: 1, Body: Buffer.from('PIN=4821'), ChecksumAlgorithm: 'CRC32', ...ssec }))
    if (!withKey) {
      // A wrong value, sent without the key, is refused without naming the object's.
      const refused = await rejection(s3.send(new CompleteMultipartUploadCommand({
        Bucket: 'photos', Key: 'secret', UploadId: created.UploadId, ChecksumCRC32: 'AAAAAA==-1', MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag, ChecksumCRC32: part.ChecksumCRC32 }] }
      })))
      t.equal(refused.name, 'BadDigest')
      t.notMatch(refused.message, Buffer.from(`${b64(crc32(crc32(Buffer.from('PIN=4821'))))}`, 'base64').toString('hex'), 'the refusal names no digest of the data')
      t.match(refused.message, /not shown without the upload's customer key/)
    }
    const first = await complete(withKey, created.UploadId!, part.ETag!, part.ChecksumCRC32!)
    const again = await complete(false, created.UploadId!, part.ETag!, part.ChecksumCRC32!)
    if (withKey) t.equal(first.ChecksumCRC32, `${b64(crc32(crc32(Buffer.from('PIN=4821'))))}-1`, 'with the key: the checksum')
    else t.equal(first.ChecksumCRC32, undefined, 'without the key: none')
    t.equal(again.ChecksumCRC32, undefined, `${withKey ? 'after a completion with the key' : 'again'}, a completion asked again without it: none`)
  }
})
