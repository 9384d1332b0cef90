/**
 * How many part checksums a COMPOSITE object keeps for reads of one part:
 * all of them up to MAX_KEPT_PART_CHECKSUM_BYTES, none beyond (records are
 * read whole by lists and kept by read caches, so they stay small).
 */
import { createHash } from 'node:crypto'
import t from 'tap'
import { completedObject, MAX_KEPT_PART_CHECKSUM_BYTES } from '../../src/bucket/multipart.js'
import type { StoredPart, StoredUpload } from '../../src/bucket/port.js'

const upload: StoredUpload = { uploadId: 'u', key: 'k', created: 0, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard', checksum: { algorithm: 'sha256', type: 'COMPOSITE' } }

function completion (count: number): ReturnType<typeof completedObject> {
  const stored = new Map<number, StoredPart>()
  const named = []
  for (let n = 1; n <= count; n++) {
    const sha256 = createHash('sha256').update(String(n)).digest('hex')
    const etag = createHash('md5').update(String(n)).digest('hex')
    stored.set(n, { partNumber: n, etag, size: 5, checksums: { sha256 } })
    named.push({ partNumber: n, etag, checksums: { sha256 } })
  }
  return completedObject(upload, stored, named, { key: 'k', version: 'v', uploaded: 0, minPartSize: 5, expected: {}, keyless: false })
}

t.test('a composite object keeps its parts\' checksums up to the bound, none beyond', async t => {
  const most = MAX_KEPT_PART_CHECKSUM_BYTES / 32
  t.equal(most, 96, '96 SHA-256 parts fit')
  const kept = completion(most)
  t.equal(Buffer.from(kept.checksums.multipart?.partChecksums ?? '', 'base64').length, most * 32, 'every part\'s SHA-256 is kept')
  t.equal(Buffer.from(kept.checksums.multipart?.partChecksums ?? '', 'base64').subarray(32, 64).toString('hex'), createHash('sha256').update('2').digest('hex'), 'in part order')
  const over = completion(most + 1)
  t.equal(over.checksums.multipart?.partChecksums, undefined, 'one more part: none kept')
  t.equal(over.checksums.multipart?.composite?.algorithm, 'sha256', 'the composite checksum is kept all the same')
})
