/**
 * Conformance cases of customer-provided keys (SSE-C): objects put and
 * completed under a key read back whole, by ranges across cipher blocks
 * and parts, through a second handle; missing, wrong and unwanted keys are
 * refused; malformed keys are the hosted binding's errors; and neither the
 * key nor the plaintext is found anywhere in the store's directory. Part of
 * `bucketConformance`: every store runs them.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { Test } from 'tap'
import type { Bucket, BucketObject, BucketObjectBody } from '../../src/bucket/index.js'
import { testdir } from '../testdir.js'
import { expectCode, patternBytes } from './bucket.js'

type Open = (dir: string, options?: { minPartSize?: number }) => Promise<Bucket>

const KEY_HEX = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90'
const KEY = Buffer.from(KEY_HEX, 'hex')
const OTHER_HEX = '0f'.repeat(32)
const MARKER = 'PLAINTEXT-MARKER-7Q'

const REQUIRED = 10910
const MISMATCH = 10911
const NOT_APPLICABLE = 10912

/** Bytes that differ at every offset, with the marker repeated through them so a leak of any stretch shows. */
function plaintext (size: number, seed: number): Buffer {
  const bytes = Buffer.from(patternBytes(size, seed))
  for (let at = 0; at + MARKER.length <= size; at += 4096) bytes.write(MARKER, at)
  return bytes
}

async function bytesOf (object: BucketObject | BucketObjectBody | null): Promise<Buffer> {
  if (object === null || !('body' in object)) throw new Error('expected an object with a body')
  return Buffer.from(await object.arrayBuffer())
}

function filesUnder (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map(name => path.join(dir, name)).filter(file => statSync(file).isFile())
}

export function ssecConformance (t: Test, open: Open): void {
  async function place (tt: Test, options?: { minPartSize?: number }): Promise<{ bucket: Bucket, dir: string, reopen: () => Promise<Bucket> }> {
    const dir = path.join(testdir(tt), 'bucket')
    const bucket = await open(dir, options)
    tt.teardown(() => bucket.close())
    return {
      bucket,
      dir,
      reopen: async () => {
        const again = await open(dir, options)
        tt.teardown(() => again.close())
        return again
      }
    }
  }

  t.test('ssec: a put under a key reads back with it, whole and by ranges across cipher blocks', async t => {
    const { bucket, reopen } = await place(t)
    for (const size of [0, 5, 100, 70_000 + 7]) {
      const data = plaintext(size, size)
      const put = await bucket.put(`sealed/${size}`, data, { ssecKey: KEY_HEX })
      t.equal(put?.ssecKeyMd5, createHash('md5').update(KEY).digest('hex'), `${size}: put reports the key's MD5`)
      if (size > 0) t.not(put?.etag, createHash('md5').update(data).digest('hex'), `${size}: the etag is not the MD5 of the data`)
      t.equal(put?.checksums.md5, undefined, `${size}: no MD5 of the data is kept`)
      const given = createHash('md5').update(data).digest('hex')
      const withMd5 = await bucket.put(`sealed/${size} md5`, data, { ssecKey: KEY_HEX, md5: given })
      t.equal(Buffer.from(withMd5?.checksums.md5 ?? new ArrayBuffer(0)).toString('hex'), given, `${size}: an MD5 given is kept, as any checksum given`)
      t.equal(Buffer.from((await bucket.get(`sealed/${size} md5`, { ssecKey: KEY_HEX }))?.checksums.md5 ?? new ArrayBuffer(0)).toString('hex'), given, `${size}: and read back with the key`)
      t.same((await bucket.head(`sealed/${size} md5`))?.checksums.toJSON(), {}, `${size}: head, which takes no key, shows no checksum value`)
      t.same((await bucket.list({ prefix: `sealed/${size} md5` })).objects[0]?.checksums.toJSON(), {}, `${size}: nor does list`)
      t.equal(put?.size, size, `${size}: the size is the data's`)
      const again = await reopen()
      t.same(await bytesOf(await again.get(`sealed/${size}`, { ssecKey: KEY_HEX })), data, `${size}: a second handle reads the data with the hex key`)
      t.same(await bytesOf(await again.get(`sealed/${size}`, { ssecKey: KEY.buffer.slice(KEY.byteOffset, KEY.byteOffset + 32) })), data, `${size}: and with the key as an ArrayBuffer`)
      const head = await again.head(`sealed/${size}`)
      t.equal(head?.ssecKeyMd5, put?.ssecKeyMd5, `${size}: head reports the key's MD5 without the key`)
      t.equal(head?.etag, put?.etag, `${size}: and the same etag`)
    }
    const data = plaintext(70_007, 70_007)
    let mismatches = 0
    for (const [offset, length] of [[0, 1], [15, 2], [16, 16], [17, 40], [4095, 3], [65_535, 2], [65_536, 4000], [1, 70_006], [70_000, 7]]) {
      const got = await bytesOf(await bucket.get('sealed/70007', { ssecKey: KEY_HEX, range: { offset, length } }))
      if (!got.equals(data.subarray(offset, offset + length))) mismatches++
    }
    t.equal(mismatches, 0, 'each range reads exactly its plaintext')
    t.same(await bytesOf(await bucket.get('sealed/70007', { ssecKey: KEY_HEX, range: { suffix: 33 } })), data.subarray(-33), 'a suffix')
    t.same(await bytesOf(await bucket.get('sealed/100', { ssecKey: KEY_HEX, range: { offset: 17, length: 50 } })), plaintext(100, 100).subarray(17, 67), 'a range of a small body')
    const read = await bucket.read('sealed/70007', { ssecKey: KEY_HEX, range: 'bytes=16-31' })
    t.equal(read.status, 'partial', 'read serves a range')
    if (read.status === 'partial' && read.body !== null) {
      const chunks: Buffer[] = []
      for await (const chunk of read.body instanceof Buffer ? [read.body] : read.body) chunks.push(chunk as Buffer)
      t.same(Buffer.concat(chunks), data.subarray(16, 32), 'read deciphers its range')
    }
  })

  t.test('ssec: a missing, wrong or unwanted key is refused, and no ciphertext comes back', async t => {
    const { bucket } = await place(t)
    await bucket.put('sealed', 'secret words', { ssecKey: KEY_HEX })
    await bucket.put('plain', 'open words')
    await expectCode(t, async () => await bucket.get('sealed'), REQUIRED, 'get', 'get without the key')
    await expectCode(t, async () => await bucket.get('sealed', { ssecKey: OTHER_HEX }), MISMATCH, 'get', 'get with another key')
    await expectCode(t, async () => await bucket.get('plain', { ssecKey: KEY_HEX }), NOT_APPLICABLE, 'get', 'a key for a plain object')
    await expectCode(t, async () => await bucket.read('sealed'), REQUIRED, 'read', 'read without the key')
    t.equal(bucket.readNow('sealed'), undefined, 'readNow leaves an SSE-C object to read, which refuses it')
    await expectCode(t, async () => await bucket.read('sealed', { body: false }), REQUIRED, 'read', 'a read without body (HEAD) too')
    await expectCode(t, async () => await bucket.read('sealed', { ssecKey: OTHER_HEX, body: false }), MISMATCH, 'read', 'and with another key')
    await expectCode(t, async () => await bucket.get('sealed', { onlyIf: { etagMatches: 'nope' } }), REQUIRED, 'get', 'the key is judged before the conditions')
    t.equal((await bucket.read('sealed', { ssecKey: KEY_HEX, body: false })).status, 'found', 'a HEAD with the key')
    t.equal(await bucket.get('missing', { ssecKey: KEY_HEX }), null, 'a missing object is null, key or not')
  })

  t.test('ssec: malformed keys are the hosted binding\'s errors', async t => {
    const { bucket } = await place(t)
    const cases: Array<[string, unknown, RegExp]> = [
      ['not hex', 'zz'.repeat(32), /SSE-C Key has invalid format/],
      ['uppercase hex', KEY_HEX.toUpperCase(), /SSE-C Key has invalid format/],
      ['63 digits', KEY_HEX.slice(1), /SSE-C Key must be 32 bytes in length/],
      ['31 bytes', new ArrayBuffer(31), /SSE-C Key must be 32 bytes in length/],
      ['a number', 42, /SSE-C Key has invalid format/]
    ]
    for (const [name, key, message] of cases) {
      for (const call of [async () => await bucket.put('k', 'v', { ssecKey: key as string }), async () => await bucket.get('k', { ssecKey: key as string }), async () => await bucket.createMultipartUpload('k', { ssecKey: key as string }).then(() => null)]) {
        await t.rejects(call, message, `${name}: refused`)
      }
    }
    t.equal(await bucket.head('k'), null, 'nothing was written')
  })

  t.test('ssec: a multipart upload under a key completes into an object readable across its parts', async t => {
    const minPartSize = 4 * 1024
    const { bucket, reopen } = await place(t, { minPartSize })
    const upload = await bucket.createMultipartUpload('mp', { ssecKey: KEY_HEX })
    const parts = [plaintext(minPartSize, 1), plaintext(minPartSize, 2), plaintext(1000, 3)]
    await expectCode(t, async () => await upload.uploadPart(1, parts[0]), REQUIRED, 'uploadPart', 'a part without the key')
    await expectCode(t, async () => await upload.uploadPart(1, parts[0], { ssecKey: OTHER_HEX }), MISMATCH, 'uploadPart', 'a part with another key')
    // Part 2 uploaded twice: the second body replaces the first.
    await upload.uploadPart(2, plaintext(minPartSize, 99), { ssecKey: KEY_HEX })
    const resumed = bucket.resumeMultipartUpload('mp', upload.uploadId)
    const uploaded = await Promise.all(parts.map(async (bytes, i) => await resumed.uploadPart(i + 1, bytes, { ssecKey: KEY })))
    t.not(uploaded[0].etag, createHash('md5').update(parts[0]).digest('hex'), 'a part\'s etag is not the MD5 of its data')
    const done = await upload.complete(uploaded)
    t.equal(done.ssecKeyMd5, createHash('md5').update(KEY).digest('hex'), 'the object reports the key\'s MD5')
    t.match(done.etag, /-3$/, 'a multipart etag')
    const whole = Buffer.concat(parts)
    const again = await reopen()
    t.same(await bytesOf(await again.get('mp', { ssecKey: KEY_HEX })), whole, 'read back whole through a second handle')
    let mismatches = 0
    const edges = [0, 15, 16, minPartSize - 1, minPartSize, minPartSize + 17, 2 * minPartSize - 1, 2 * minPartSize, whole.length - 1]
    for (const offset of edges) {
      for (const end of edges.filter(e => e >= offset)) {
        const got = await bytesOf(await again.get('mp', { ssecKey: KEY_HEX, range: { offset, length: end - offset + 1 } }))
        if (!got.equals(whole.subarray(offset, end + 1))) mismatches++
      }
    }
    t.equal(mismatches, 0, 'each range across parts reads exactly its bytes')
    await expectCode(t, async () => await again.get('mp'), REQUIRED, 'get', 'the object needs the key')

    const plain = await bucket.createMultipartUpload('mp-plain')
    await expectCode(t, async () => await plain.uploadPart(1, 'x', { ssecKey: KEY_HEX }), NOT_APPLICABLE, 'uploadPart', 'a key for a part of a plain upload')
    await expectCode(t, async () => await plain.listParts({ ssecKey: KEY_HEX }), NOT_APPLICABLE, 'listParts', 'a key to list the parts of a plain upload')
  })

  t.test('ssec: the parts of an upload under a key are listed with their checksums only with the key', async t => {
    const { bucket } = await place(t)
    const upload = await bucket.createMultipartUpload('sums', { ssecKey: KEY_HEX, checksumAlgorithm: 'crc32', checksumType: 'FULL_OBJECT' })
    await upload.uploadPart(1, plaintext(100, 5), { ssecKey: KEY_HEX })
    const keyless = await upload.listParts()
    t.same(keyless.parts.map(p => [p.partNumber, p.checksums]), [[1, {}]], 'without the key: the part, no digest of its data')
    const keyed = await upload.listParts({ ssecKey: KEY })
    t.match(keyed.parts[0].checksums.crc32, /^[0-9a-f]{8}$/, 'with the key: the part\'s CRC32')
    await expectCode(t, async () => await upload.listParts({ ssecKey: OTHER_HEX }), MISMATCH, 'listParts', 'another key')
  })

  t.test('ssec: copies decipher their source with its key and encrypt under theirs', async t => {
    const { bucket } = await place(t)
    const data = plaintext(20_000, 5)
    await bucket.put('src', data, { ssecKey: KEY_HEX })
    await expectCode(t, async () => await bucket.copy('src', 'dst'), REQUIRED, 'copy', 'a copy without the source key')
    await expectCode(t, async () => await bucket.copy('src', 'dst', { sourceSsecKey: OTHER_HEX }), MISMATCH, 'copy', 'with another source key')
    const plainCopy = await bucket.copy('src', 'plain', { sourceSsecKey: KEY_HEX })
    t.equal(plainCopy.status, 'copied', 'copied out plain')
    t.same(await bytesOf(await bucket.get('plain')), data, 'the plain copy reads without a key')
    t.equal(await bytesOf(await bucket.get('plain')).then(b => createHash('md5').update(b).digest('hex')), (await bucket.head('plain'))?.etag, 'and its etag is its MD5 again')
    const rekeyed = await bucket.copy('src', 'rekeyed', { sourceSsecKey: KEY_HEX, ssecKey: OTHER_HEX })
    t.equal(rekeyed.status === 'copied' ? rekeyed.object.ssecKeyMd5 : undefined, createHash('md5').update(Buffer.from(OTHER_HEX, 'hex')).digest('hex'), 'a copy under another key')
    t.same(await bytesOf(await bucket.get('rekeyed', { ssecKey: OTHER_HEX })), data, 'reads with its own key')
    await expectCode(t, async () => await bucket.get('rekeyed', { ssecKey: KEY_HEX }), MISMATCH, 'get', 'and not with the source\'s')
    await bucket.copy('plain', 'sealed-copy', { ssecKey: KEY_HEX })
    t.same(await bytesOf(await bucket.get('sealed-copy', { ssecKey: KEY_HEX })), data, 'a plain object copied under a key')
    await expectCode(t, async () => await bucket.copy('plain', 'x', { sourceSsecKey: KEY_HEX }), NOT_APPLICABLE, 'copy', 'a source key for a plain source')
  })

  t.test('ssec: neither the key nor the plaintext is anywhere in the store\'s directory', async t => {
    const minPartSize = 4 * 1024
    const { bucket, dir } = await place(t, { minPartSize })
    await bucket.put('small', plaintext(200, 1), { ssecKey: KEY_HEX })
    await bucket.put('big', plaintext(50_000, 2), { ssecKey: KEY_HEX })
    const upload = await bucket.createMultipartUpload('mp', { ssecKey: KEY_HEX })
    const uploaded = [await upload.uploadPart(1, plaintext(minPartSize, 3), { ssecKey: KEY_HEX }), await upload.uploadPart(2, plaintext(500, 4), { ssecKey: KEY_HEX })]
    const pending = await bucket.createMultipartUpload('pending', { ssecKey: KEY_HEX })
    await pending.uploadPart(1, plaintext(minPartSize, 5), { ssecKey: KEY_HEX })
    await upload.complete(uploaded)
    await bucket.copy('big', 'copied', { sourceSsecKey: KEY_HEX, ssecKey: KEY_HEX })
    const needles = [Buffer.from(MARKER), KEY, Buffer.from(KEY_HEX), Buffer.from(KEY.toString('base64'))]
    const found: string[] = []
    for (const file of filesUnder(dir)) {
      const bytes = readFileSync(file)
      for (const needle of needles) if (bytes.includes(needle)) found.push(`${path.relative(dir, file)}: ${needle.toString('latin1').slice(0, 12)}`)
    }
    t.same(found, [], 'no file holds the key or the plaintext')
    t.notOk(existsSync(path.join(dir, 'small')) || existsSync(path.join(dir, 'big')), 'the readable view shows no SSE-C object')
  })
}
