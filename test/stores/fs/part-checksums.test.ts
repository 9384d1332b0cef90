/**
 * The filesystem store's catalog from before parts kept checksums (no
 * `checksums` column in `parts`): opening it adds the column, its parts read
 * as having none, and new parts keep theirs. Likewise from before uploads
 * kept their checksum algorithm and type (no `checksum` column in
 * `uploads`): its uploads read as having none.
 */
import path from 'node:path'
import t from 'tap'
import { openBucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'
import { Database } from '../../../src/stores/fs/sqlite.js'

t.test('a catalog without part checksums gains them, old parts reading as none', async t => {
  const dir = path.join(testdir(t), 'bucket')
  const first = await openBucket(dir, { minPartSize: 1 })
  const upload = await first.createMultipartUpload('old')
  const part1 = await upload.uploadPart(1, 'first part')
  await first.close()

  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'))
  db.exec('ALTER TABLE parts DROP COLUMN checksums')
  t.notOk((db.pragma('table_info(parts)') as Array<{ name: string }>).some(c => c.name === 'checksums'), 'an old catalog')
  db.close()

  const again = await openBucket(dir, { minPartSize: 1 })
  t.teardown(() => again.close())
  const resumed = again.resumeMultipartUpload('old', upload.uploadId)
  const part2 = await resumed.uploadPart(2, 'second', { crc32: 'b61f1169' })
  t.same((await resumed.listParts()).parts.map(p => p.checksums), [{}, { crc32: 'b61f1169' }], 'the old part has none; the new one its CRC32')
  const done = await resumed.complete([part1, part2])
  t.equal(done.checksums.composite, undefined, 'no object checksum from parts without a common one')
  t.equal(done.size, 16)
})

t.test('a catalog without upload checksums gains the column, old uploads reading as none', async t => {
  const dir = path.join(testdir(t), 'bucket')
  const first = await openBucket(dir, { minPartSize: 1 })
  const upload = await first.createMultipartUpload('old')
  await first.close()

  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'))
  db.exec('ALTER TABLE uploads DROP COLUMN checksum')
  db.close()

  const again = await openBucket(dir, { minPartSize: 1 })
  t.teardown(() => again.close())
  const resumed = again.resumeMultipartUpload('old', upload.uploadId)
  t.equal((await resumed.listParts()).checksum, undefined, 'the old upload has no checksum algorithm')
  const part = await resumed.uploadPart(1, 'no checksum needed')
  t.equal((await resumed.complete([part])).size, 18)
  const kept = await again.createMultipartUpload('new', { checksumAlgorithm: 'crc32c' })
  t.same((await kept.listParts()).checksum, { algorithm: 'crc32c', type: 'COMPOSITE' }, 'a new upload keeps its algorithm in the added column')
})
