/**
 * The PostgreSQL catalog from before parts kept their upload time (schema
 * version 5, no `uploaded` in fsbucket.parts): connecting migrates it, its
 * parts list with their upload's creation time, and new parts keep their own.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgStore } from '../../../src/stores/pg/store.js'
import { chunksOf } from '../../conformance/store.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

t.test('a catalog without part times gains the column, old parts listing with the upload\'s creation time', async t => {
  const dir = path.join(testdir(t), 'bucket', '.fsbucket')
  const upload = { uploadId: 'upload-0123456789abcdef', key: 'old', created: 1_700_000_000_000, httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
  const first = await PgCatalog.connect(server.url())
  const before = await PgStore.open(first, 'store-1', dir, { fsync: false, create: true })
  await before.createUpload('old', upload)
  t.equal(await before.putPart(upload.uploadId, { partNumber: 1, etag: 'e1', size: 3, uploaded: 1_700_000_005_000 }, await before.stage(chunksOf(Buffer.from('one')))), true)
  await before.close()
  // As schema version 5 left it: no column, and no record of version 6.
  await first.pool.query('ALTER TABLE fsbucket.parts DROP COLUMN uploaded')
  await first.pool.query('DELETE FROM fsbucket.migrations WHERE version = 6')
  await first.close()

  const catalog = await PgCatalog.connect(server.url())
  t.teardown(async () => { await catalog.close() })
  const { rows } = await catalog.pool.query("SELECT 1 FROM information_schema.columns WHERE table_schema = 'fsbucket' AND table_name = 'parts' AND column_name = 'uploaded'")
  t.equal(rows.length, 1, 'the migration added the column')
  const store = await PgStore.open(catalog, 'store-1', dir, { fsync: false, create: true })
  t.teardown(async () => { await store.close() })
  t.same(await store.listParts(upload.uploadId, 0, 10), [{ partNumber: 1, etag: 'e1', size: 3, uploaded: upload.created }], 'the old part lists with the upload\'s creation time')
  t.equal(await store.putPart(upload.uploadId, { partNumber: 2, etag: 'e2', size: 3, uploaded: 1_700_000_009_000 }, await store.stage(chunksOf(Buffer.from('two')))), true)
  t.same((await store.listParts(upload.uploadId, 0, 10))?.map(p => p.uploaded), [upload.created, 1_700_000_009_000], 'a new part keeps its time')
})

t.test('a part put after its upload was aborted: false, and no file or directory of it stays', async t => {
  const dir = path.join(testdir(t), 'bucket', '.fsbucket')
  const catalog = await PgCatalog.connect(server.url())
  t.teardown(async () => { await catalog.close() })
  const store = await PgStore.open(catalog, 'store-aborted', dir, { fsync: false, create: true })
  t.teardown(async () => { await store.close() })
  const upload = { uploadId: 'upload-aborted-0123456789', key: 'k', created: Date.now(), httpMetadata: {}, customMetadata: {}, storageClass: 'Standard' as const }
  await store.createUpload('k', upload)
  const staged = await store.stage(chunksOf(Buffer.from('late part')))
  await store.abortUpload(upload.uploadId)
  t.equal(await store.putPart(upload.uploadId, { partNumber: 1, etag: 'e', size: 9, uploaded: Date.now() }, staged), false, 'no such upload')
  t.same(await readdir(path.join(dir, 'uploads')).catch(() => []), [], 'nothing of it under uploads/')
})
