/**
 * The filesystem store's catalog from before parts kept their upload time
 * (no `uploaded` column in `parts`): opening it adds the column, its parts
 * list with their upload's creation time, and new parts keep their own.
 */
import path from 'node:path'
import t from 'tap'
import { FsStore } from '../../../src/stores/fs/store.js'
import { Database } from '../../../src/stores/fs/sqlite.js'
import type { StoredPart } from '../../../src/bucket/port.js'
import { chunksOf } from '../../conformance/store.js'
import { testdir } from '../../testdir.js'

t.test('a catalog without part times gains the column, old parts listing with the upload\'s creation time', async t => {
  const dir = path.join(testdir(t), 'bucket')
  const upload = { uploadId: 'upload-0123456789abcdef', key: 'old', created: 1_700_000_000_000, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
  const first = await FsStore.open(dir, { fsync: false })
  await first.createUpload('old', upload)
  t.equal(await first.putPart(upload.uploadId, { partNumber: 1, etag: 'e1', size: 3, uploaded: 1_700_000_005_000 }, await first.stage(chunksOf(Buffer.from('one')))), true)
  await first.close()

  // As an older fsbucket made it: a parts table without the column.
  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'))
  db.exec('ALTER TABLE parts DROP COLUMN uploaded')
  t.notOk((db.pragma('table_info(parts)') as Array<{ name: string }>).some(c => c.name === 'uploaded'), 'an old catalog')
  db.close()

  const again = await FsStore.open(dir, { fsync: false })
  t.teardown(async () => { await again.close() })
  t.same(await again.listParts(upload.uploadId, 0, 10), [{ partNumber: 1, etag: 'e1', size: 3, uploaded: upload.created }], 'the old part lists with the upload\'s creation time')
  t.equal(await again.putPart(upload.uploadId, { partNumber: 2, etag: 'e2', size: 3, uploaded: 1_700_000_009_000 }, await again.stage(chunksOf(Buffer.from('two')))), true)
  t.same((await again.listParts(upload.uploadId, 0, 10))?.map(p => p.uploaded), [upload.created, 1_700_000_009_000], 'a new part keeps its time in the added column')
  let given: StoredPart[] = []
  const object = { key: 'old', version: 'v'.repeat(32), size: 6, etag: 'x-2', uploaded: 1_700_000_010_000, storageClass: 'Standard' as const, httpMetadata: {}, customMetadata: {}, checksums: {} }
  t.ok(await again.completeUpload(upload.uploadId, 'old', (_u, parts) => {
    given = [...parts.values()].sort((a, b) => a.partNumber - b.partNumber)
    return { object, partNumbers: [1, 2] }
  }), 'the upload completes')
  t.same(given.map(p => p.uploaded), [upload.created, 1_700_000_009_000], 'completion sees the same times')
})
