/**
 * A completion asked again (`repeatable`) after it succeeded is judged as
 * the first was: the checksum it names (whole-object, or COMPOSITE with its
 * part count) must be the object's, of the object's algorithm; the checksum
 * type it names, the object's. A retry with a wrong checksum is refused,
 * never answered as a success.
 */
import t from 'tap'
import zlib from 'node:zlib'
import { BucketEngine, type BucketUploadedPart } from '../../src/bucket/index.js'
import { MemoryStore } from '../../src/stores/memory/store.js'

const crc32 = (data: Buffer): Buffer => { const b = Buffer.alloc(4); b.writeUInt32BE(zlib.crc32(data)); return b }

t.test('a completion asked again is held to the checksum it names', async t => {
  const engine = new BucketEngine(new MemoryStore(), { minPartSize: 5 })
  t.teardown(async () => { await engine.close() })
  const bodies = [Buffer.from('hello!'), Buffer.from('world')]
  const whole = crc32(Buffer.concat(bodies))

  const full = await engine.createMultipartUpload('full', { checksumAlgorithm: 'crc32', checksumType: 'FULL_OBJECT' })
  const fullParts: BucketUploadedPart[] = []
  for (const [i, body] of bodies.entries()) fullParts.push(await full.uploadPart(i + 1, body))
  const first = await full.complete(fullParts, { repeatable: true, checksum: { crc32: whole } })
  const again = await full.complete(fullParts, { repeatable: true, checksum: { crc32: whole } })
  t.equal(again?.version, first?.version, 'the right checksum: the object made')
  await t.rejects(full.complete(fullParts, { repeatable: true, checksum: { crc32: Buffer.alloc(4) } }), { code: 10037 }, 'a wrong value: BadDigest')
  await t.rejects(full.complete(fullParts, { repeatable: true, checksum: { crc32c: Buffer.alloc(4) } }), { name: 'TypeError', message: /expected checksum Type: crc32, actual checksum Type: crc32c/ }, 'another algorithm')
  await t.rejects(full.complete(fullParts, { repeatable: true, checksumType: 'COMPOSITE' }), { code: 10037 }, 'another checksum type')

  const composite = await engine.createMultipartUpload('composite', { checksumAlgorithm: 'crc32' })
  const parts: BucketUploadedPart[] = []
  for (const [i, body] of bodies.entries()) parts.push(await composite.uploadPart(i + 1, body, { crc32: crc32(body) }))
  const named = parts.map(p => ({ partNumber: p.partNumber, etag: p.etag, checksums: p.checksums }))
  const value = crc32(Buffer.concat(bodies.map(crc32)))
  await composite.complete(named, { repeatable: true, compositeChecksum: { algorithm: 'crc32', value, parts: 2 } })
  t.ok(await composite.complete(named, { repeatable: true, compositeChecksum: { algorithm: 'crc32', value, parts: 2 } }), 'the right composite checksum')
  await t.rejects(composite.complete(named, { repeatable: true, compositeChecksum: { algorithm: 'crc32', value, parts: 3 } }), { code: 10037 }, 'another part count')
  await t.rejects(composite.complete(named, { repeatable: true, compositeChecksum: { algorithm: 'crc32', value: Buffer.alloc(4), parts: 2 } }), { code: 10037 }, 'a wrong composite value')
  await t.rejects(composite.complete(named, { repeatable: true, checksum: { crc32: whole } }), { code: 10037 }, 'a whole-object value of a COMPOSITE object')
})
