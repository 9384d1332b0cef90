/**
 * Conformance cases of the checksums beyond the binding's digests: the
 * CRCs (crc32, crc32c, crc64nvme) verified, stored and read back, deferred
 * checksums (S3's trailers), part checksums, the checksum of a completed
 * multipart object (COMPOSITE and FULL_OBJECT), and reads by part number.
 * Part of `bucketConformance`: every store runs them, read back through a
 * second handle on the same place.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import zlib from 'node:zlib'
import { Crc64Nvme } from '@aws-sdk/crc64-nvme'
import type { Test } from 'tap'
import type { Readable } from 'node:stream'
import type { Bucket, BucketObject, BucketReadServed, BucketUploadedPart } from '../../src/bucket/index.js'
import { testdir } from '../testdir.js'
import { expectCode, patternBytes } from './bucket.js'

type Open = (dir: string, options?: { minPartSize?: number }) => Promise<Bucket>

/** The check value of each CRC: the CRC of the ASCII digits "123456789" (the catalogues' test vectors). */
const CHECK = { crc32: 'cbf43926', crc32c: 'e3069283', crc64nvme: 'ae8b14860a799888' } as const

function crc32Hex (data: Uint8Array): string {
  return zlib.crc32(data).toString(16).padStart(8, '0')
}

async function crc64Hex (data: Uint8Array): Promise<string> {
  const crc = new Crc64Nvme()
  crc.update(data)
  return Buffer.from(await crc.digest()).toString('hex')
}

function hex (buffer: ArrayBuffer | undefined): string | undefined {
  return buffer === undefined ? undefined : Buffer.from(buffer).toString('hex')
}

export function checksumConformance (t: Test, open: Open): void {
  async function place (tt: Test, options?: { minPartSize?: number }): Promise<{ bucket: Bucket, reopen: () => Promise<Bucket> }> {
    const dir = path.join(testdir(tt), 'bucket')
    const bucket = await open(dir, options)
    tt.teardown(() => bucket.close())
    return {
      bucket,
      // A second handle on the same place: it reads what the store kept, not what the first handle holds.
      reopen: async () => {
        const again = await open(dir, options)
        tt.teardown(() => again.close())
        return again
      }
    }
  }

  t.test('checksums: CRCs are verified, stored beside the MD5, and a second handle reads them', async t => {
    const { bucket, reopen } = await place(t)
    for (const [algorithm, value] of Object.entries(CHECK)) {
      const put = await bucket.put(`crc/${algorithm}`, '123456789', { [algorithm]: value })
      t.equal(hex(put?.checksums[algorithm as keyof typeof CHECK]), value, `${algorithm}: put returns it`)
    }
    const bytes = Buffer.from(CHECK.crc32c, 'hex')
    await bucket.put('crc/bytes', '123456789', { crc32c: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 4) })
    await expectCode(t, () => bucket.put('crc/wrong', '123456789', { crc32: '00000000' }), 10037, 'put', 'a CRC that does not match')
    t.equal(await bucket.head('crc/wrong'), null, 'nothing stored')
    await t.rejects(bucket.put('crc/short', '123456789', { crc64nvme: 'abcd' }), TypeError, 'a CRC of the wrong length')
    await t.rejects(bucket.put('crc/two', '123456789', { crc32: CHECK.crc32, sha1: 'f7c3bc1d808e04732adf679965ccc34ca7ae3441' }), TypeError, 'two algorithms')

    const again = await reopen()
    for (const [algorithm, value] of Object.entries(CHECK)) {
      const head = await again.head(`crc/${algorithm}`)
      t.equal(hex(head?.checksums[algorithm as keyof typeof CHECK]), value, `${algorithm}: head through another handle`)
      t.same(head?.checksums.toJSON(), { md5: createHash('md5').update('123456789').digest('hex'), [algorithm]: value }, `${algorithm}: toJSON has the MD5 and it`)
      t.equal(head?.checksums.composite, undefined)
    }
    t.equal(hex((await again.head('crc/bytes'))?.checksums.crc32c), CHECK.crc32c, 'given as bytes')
  })

  t.test('checksums: a deferred value is asked once the body has been read', async t => {
    const { bucket } = await place(t)
    let asked = 0
    const put = await bucket.put('late', '123456789', { crc32: () => { asked++; return CHECK.crc32 } })
    t.equal(asked, 1)
    t.equal(hex(put?.checksums.crc32), CHECK.crc32)
    await expectCode(t, () => bucket.put('late-wrong', '123456789', { sha256: () => '00'.repeat(32) }), 10037, 'put')
    await t.rejects(bucket.put('late-throws', '123456789', { crc32c: () => { throw new Error('trailer never came') } }), /trailer never came/, 'what it throws fails the put')
    t.equal(await bucket.head('late-wrong'), null)
    t.equal(await bucket.head('late-throws'), null)
  })

  t.test('checksums: parts keep theirs; a completion checks them and builds the object\'s', async t => {
    const { bucket, reopen } = await place(t, { minPartSize: 5 })
    const data = [patternBytes(8, 1), patternBytes(8, 2), patternBytes(3, 3)]
    const whole = Buffer.concat(data)

    // COMPOSITE crc32: the CRC32 of the concatenated part CRC32s, -3.
    const composite = await bucket.createMultipartUpload('composite')
    const parts: BucketUploadedPart[] = []
    for (const [i, bytes] of data.entries()) parts.push(await composite.uploadPart(i + 1, bytes, { crc32: crc32Hex(bytes) }))
    await expectCode(t, () => composite.uploadPart(4, data[0], { crc32: '00000000' }), 10037, 'uploadPart', 'a part whose CRC does not match')
    const listed = await composite.listParts()
    t.same(listed.parts.map(p => p.checksums), data.map(bytes => ({ crc32: crc32Hex(bytes) })), 'listParts has each part\'s CRC32')
    await expectCode(t, () => composite.complete([parts[0], { ...parts[1], checksums: { crc32: '00000000' } }, parts[2]]), 10025, 'completeMultipartUpload',
      'a named part checksum that is not the part\'s')
    const done = await composite.complete(parts.map((p, i) => ({ ...p, checksums: { crc32: crc32Hex(data[i]) } })))
    const expected = crc32Hex(Buffer.concat(data.map(bytes => Buffer.from(crc32Hex(bytes), 'hex'))))
    t.same(done.checksums.composite === undefined ? undefined : { ...done.checksums.composite, value: hex(done.checksums.composite.value) },
      { algorithm: 'crc32', value: expected, parts: 3 }, 'the composite CRC32 of the parts')
    t.equal(done.checksums.crc32, undefined, 'no whole-object CRC32 claimed')

    // FULL_OBJECT crc64nvme (its only type): the CRC of the whole object, from the parts'.
    const full = await bucket.createMultipartUpload('full')
    const fullParts: BucketUploadedPart[] = []
    for (const [i, bytes] of data.entries()) fullParts.push(await full.uploadPart(i + 1, bytes, { crc64nvme: await crc64Hex(bytes) }))
    await t.rejects(full.complete(fullParts, { checksumType: 'COMPOSITE' }), TypeError, 'crc64nvme has no composite type')
    await expectCode(t, () => full.complete(fullParts, { checksum: { crc64nvme: '00'.repeat(8) } }), 10037, 'completeMultipartUpload', 'a whole-object checksum that does not match')
    const fullDone = await full.complete(fullParts, { checksum: { crc64nvme: await crc64Hex(whole) } }) as BucketObject
    t.equal(hex(fullDone.checksums.crc64nvme), await crc64Hex(whole), 'the CRC64NVME of the whole object')

    // FULL_OBJECT crc32 when asked; SHA-256 parts cannot make one.
    const asked = await bucket.createMultipartUpload('full32')
    const askedParts: BucketUploadedPart[] = []
    for (const [i, bytes] of data.entries()) askedParts.push(await asked.uploadPart(i + 1, bytes, { crc32: crc32Hex(bytes) }))
    t.equal(hex((await asked.complete(askedParts, { checksumType: 'FULL_OBJECT' }) as BucketObject).checksums.crc32), crc32Hex(whole))
    const sha = await bucket.createMultipartUpload('sha')
    const shaPart = await sha.uploadPart(1, data[0], { sha256: createHash('sha256').update(data[0]).digest('hex') })
    await t.rejects(sha.complete([shaPart], { checksumType: 'FULL_OBJECT' }), TypeError, 'FULL_OBJECT needs a CRC')
    t.equal((await sha.complete([shaPart])).checksums.composite?.algorithm, 'sha256')

    // Parts without a common algorithm: no object checksum.
    const mixed = await bucket.createMultipartUpload('mixed')
    const mixedParts = [await mixed.uploadPart(1, data[0], { crc32: crc32Hex(data[0]) }), await mixed.uploadPart(2, data[2])]
    const mixedDone = await mixed.complete(mixedParts)
    t.equal(mixedDone.checksums.composite, undefined)
    t.same(mixedDone.checksums.toJSON(), {}, 'no checksum claimed')

    const again = await reopen()
    const head = await again.head('composite')
    t.equal(hex(head?.checksums.composite?.value), expected, 'the composite checksum is kept')
    t.equal(hex((await again.head('full'))?.checksums.crc64nvme), await crc64Hex(whole), 'and the full-object one')
  })

  t.test('checksums: an upload keeps the algorithm and type it was created with; parts and completion follow them', async t => {
    const { bucket, reopen } = await place(t, { minPartSize: 5 })
    const data = [patternBytes(8, 7), patternBytes(8, 8), patternBytes(3, 9)]
    const whole = Buffer.concat(data)
    const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

    await t.rejects(bucket.createMultipartUpload('x', { checksumAlgorithm: 'crc64nvme', checksumType: 'COMPOSITE' }), TypeError, 'crc64nvme has no COMPOSITE type')
    await t.rejects(bucket.createMultipartUpload('x', { checksumAlgorithm: 'sha256', checksumType: 'FULL_OBJECT' }), TypeError, 'FULL_OBJECT needs a CRC')
    await t.rejects(bucket.createMultipartUpload('x', { checksumType: 'FULL_OBJECT' }), TypeError, 'a type needs an algorithm')

    // COMPOSITE sha256: a part must bring its sha256; a copied part gets it computed.
    const composite = await bucket.createMultipartUpload('kept-composite', { checksumAlgorithm: 'sha256' })
    const again = await reopen()
    const resumed = again.resumeMultipartUpload('kept-composite', composite.uploadId)
    t.same((await resumed.listParts()).checksum, { algorithm: 'sha256', type: 'COMPOSITE' }, 'a second handle reads the kept algorithm and type')
    const listedUpload = (await again.listMultipartUploads({ prefix: 'kept-composite' })).uploads[0]
    t.same(listedUpload.checksum, { algorithm: 'sha256', type: 'COMPOSITE' }, 'and so does the list of uploads')
    await t.rejects(resumed.uploadPart(1, data[0]), { name: 'TypeError', message: /expected checksum Type: sha256, actual checksum Type: null/ }, 'a part without its checksum')
    await t.rejects(resumed.uploadPart(1, data[0], { crc32: crc32Hex(data[0]) }), { message: /expected checksum Type: sha256, actual checksum Type: crc32/ }, 'a part with another algorithm')
    const parts = [
      await resumed.uploadPart(1, data[0], { sha256: sha(data[0]) }),
      await resumed.uploadPart(2, data[1], { copied: true }),
      await resumed.uploadPart(3, data[2], { sha256: sha(data[2]), copied: true })
    ]
    t.same(parts.map(p => p.checksums), data.map(bytes => ({ sha256: sha(bytes) })), 'every part has its sha256 (the copied one computed)')
    await t.rejects(resumed.complete(parts.map(p => ({ partNumber: p.partNumber, etag: p.etag }))), { message: /must include the checksum for each part. It was missing for part 1/ },
      'a completion leaving the parts\' checksums out')
    await expectCode(t, () => resumed.complete(parts, { checksumType: 'FULL_OBJECT' }), 10037, 'completeMultipartUpload', 'a completion naming another type (BadDigest, as S3 documents)')
    const done = await resumed.complete(parts)
    const compositeHex = sha(Buffer.concat(data.map(bytes => Buffer.from(sha(bytes), 'hex'))))
    t.same([done.checksums.composite?.algorithm, hex(done.checksums.composite?.value)], ['sha256', compositeHex], 'the composite sha256')
    for (const [i, bytes] of data.entries()) {
      const read = await (await reopen()).read('kept-composite', { partNumber: i + 1, body: false }) as BucketReadServed
      t.same(read.partChecksum === undefined ? undefined : { ...read.partChecksum, value: Buffer.from(read.partChecksum.value).toString('hex') },
        { algorithm: 'sha256', value: sha(bytes), type: 'COMPOSITE' }, `a read of part ${i + 1} carries that part's sha256`)
    }

    // FULL_OBJECT crc32: a part without a checksum gets its CRC32 computed; the completion needs no type.
    const full = await bucket.createMultipartUpload('kept-full', { checksumAlgorithm: 'crc32', checksumType: 'FULL_OBJECT' })
    const fullParts = [await full.uploadPart(1, data[0]), await full.uploadPart(2, data[1], { crc32: crc32Hex(data[1]) }), await full.uploadPart(3, data[2])]
    t.same(fullParts.map(p => p.checksums), data.map(bytes => ({ crc32: crc32Hex(bytes) })), 'each part\'s CRC32, computed where not sent')
    const fullDone = await full.complete(fullParts.map(p => ({ partNumber: p.partNumber, etag: p.etag })))
    t.equal(hex(fullDone.checksums.crc32), crc32Hex(whole), 'the whole object\'s CRC32, the kept type')
    t.equal(fullDone.checksums.composite, undefined)
    const fullPart = await (await reopen()).read('kept-full', { partNumber: 2, body: false }) as BucketReadServed
    t.equal(fullPart.partChecksum, undefined, 'a part of a FULL_OBJECT object of several parts: no checksum, as S3')
    const one = await bucket.createMultipartUpload('kept-one', { checksumAlgorithm: 'crc32c', checksumType: 'FULL_OBJECT' })
    await one.complete([await one.uploadPart(1, data[2])])
    const onlyPart = await (await reopen()).read('kept-one', { partNumber: 1, body: false }) as BucketReadServed
    t.same([onlyPart.partChecksum?.algorithm, onlyPart.partChecksum?.type], ['crc32c', 'FULL_OBJECT'], 'the only part of a FULL_OBJECT object: the object\'s')

    // Without an algorithm, nothing changes: parts with or without checksums, as before.
    const plain = await bucket.createMultipartUpload('plain')
    t.equal((await plain.listParts()).checksum, undefined, 'an upload without an algorithm keeps none')
    const plainParts = [await plain.uploadPart(1, data[2]), await plain.uploadPart(2, data[2], { copied: true })]
    t.same(plainParts.map(p => p.checksums), [undefined, undefined], 'and computes none')
  })

  t.test('checksums: a part\'s defaultChecksum applies only where neither it nor its upload names an algorithm', async t => {
    const { bucket, reopen } = await place(t, { minPartSize: 5 })
    const data = [patternBytes(8, 3), patternBytes(5, 4)]
    const bare = await bucket.createMultipartUpload('bare')
    const parts = [
      await bare.uploadPart(1, data[0], { defaultChecksum: 'crc64nvme' }),
      await bare.uploadPart(2, data[1], { defaultChecksum: 'crc64nvme', copied: true })
    ]
    t.same(parts.map(p => p.checksums), [{ crc64nvme: await crc64Hex(data[0]) }, { crc64nvme: await crc64Hex(data[1]) }], 'computed for a bare part, copied or not')
    const listed = await (await reopen()).resumeMultipartUpload('bare', bare.uploadId).listParts()
    t.same(listed.parts.map(p => p.checksums), parts.map(p => p.checksums), 'and kept (a second handle lists them)')
    const done = await bare.complete(parts.map(p => ({ partNumber: p.partNumber, etag: p.etag })))
    t.equal(hex(done.checksums.crc64nvme), await crc64Hex(Buffer.concat(data)), 'the object gets their FULL_OBJECT combination')
    const sent = await (await bucket.createMultipartUpload('sent')).uploadPart(1, data[0], { crc32: crc32Hex(data[0]), defaultChecksum: 'crc64nvme' })
    t.same(sent.checksums, { crc32: crc32Hex(data[0]) }, 'a part that brings a checksum keeps only its own')
    const kept = await bucket.createMultipartUpload('kept', { checksumAlgorithm: 'crc32c', checksumType: 'FULL_OBJECT' })
    t.same(Object.keys((await kept.uploadPart(1, data[0], { defaultChecksum: 'crc64nvme' })).checksums ?? {}), ['crc32c'], 'an upload\'s own algorithm wins')
    await t.rejects(kept.uploadPart(2, data[0], { defaultChecksum: 'crc7' as 'crc32' }), TypeError, 'an unknown algorithm is refused')
    await t.rejects(bucket.createMultipartUpload('other').then(async u => await u.uploadPart(1, data[0], { defaultChecksum: 'sha512' as 'sha256' })),
      { name: 'TypeError', message: /must be one of crc32, crc32c, crc64nvme, sha1, sha256/ }, 'and so is one no upload can have')
  })

  t.test('reads by part number serve each part of a multipart object', async t => {
    const { bucket, reopen } = await place(t, { minPartSize: 5 })
    const data = [patternBytes(7, 4), patternBytes(7, 5), patternBytes(2, 6)]
    const upload = await bucket.createMultipartUpload('parts')
    const parts: BucketUploadedPart[] = []
    for (const [i, bytes] of data.entries()) parts.push(await upload.uploadPart(i + 1, bytes))
    await upload.complete(parts)
    await bucket.put('single', 'one piece')
    const again = await reopen()
    for (const [i, bytes] of data.entries()) {
      const read = await again.read('parts', { partNumber: i + 1 }) as BucketReadServed
      t.equal(read.status, 'partial', `part ${i + 1}`)
      t.same(read.range, { offset: i * 7, length: bytes.length })
      t.equal(read.partsCount, 3)
      const body = Buffer.isBuffer(read.body) ? read.body : Buffer.concat(await (read.body as Readable).toArray())
      t.same([...body], [...bytes], `part ${i + 1}'s bytes`)
    }
    const head = await again.read('parts', { partNumber: 3, body: false }) as BucketReadServed
    t.same([head.status, head.range, head.partsCount, head.body], ['partial', { offset: 14, length: 2 }, 3, null], 'a HEAD of the last part')
    t.equal((await again.read('parts', { partNumber: 4 })).status, 'range-not-satisfiable', 'a part past the last')
    const single = await again.read('single', { partNumber: 1, body: false }) as BucketReadServed
    t.same([single.status, single.range, single.partsCount], ['partial', { offset: 0, length: 9 }, undefined], 'part 1 of an object put whole is a range over all of it, without a part count')
    await again.put('empty', '')
    const empty = await again.read('empty', { partNumber: 1, body: false }) as BucketReadServed
    t.same([empty.status, empty.range], ['found', null], 'part 1 of an empty object is the whole read: no range fits')
    t.equal((await again.read('single', { partNumber: 2 })).status, 'range-not-satisfiable')
    t.equal((await again.read('parts', { partNumber: 1, onlyIf: { etagMatches: 'other' } })).status, 'precondition-failed', 'conditions first')
    await t.rejects(again.read('parts', { partNumber: 0 }), RangeError)
    await t.rejects(again.read('parts', { partNumber: 1, range: 'bytes=0-1' }), TypeError, 'not with a range')
  })
}
