/**
 * Small bodies kept in the catalog (the filesystem store's `bodies` table):
 * a small object costs little more than its bytes in the catalog, and
 * every way a row goes (replaced by a small or a large body, deleted,
 * completed over by a multipart upload) takes its kept body with it, while
 * copies get bodies of their own.
 */
import path from 'node:path'
import t from 'tap'
import { openBucket } from '../../../src/index.js'
import { Database } from '../../../src/stores/fs/sqlite.js'
import { testdir } from '../../testdir.js'

t.test('a thousand 1 KiB objects take about 1.6 KiB of catalog each, not a 4 KiB page', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: false })
  const body = Buffer.alloc(1024, 7)
  for (let i = 0; i < 1000; i++) await bucket.put(`photos/${String(i).padStart(4, '0')}.jpg`, body)
  await bucket.close()
  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'))
  t.teardown(() => db.close())
  db.pragma('wal_checkpoint(TRUNCATE)')
  const pages = db.pragma('page_count', { simple: true }) as number
  const pageSize = db.pragma('page_size', { simple: true }) as number
  const perObject = pages * pageSize / 1000
  // Kept in the WITHOUT ROWID object rows, each body spilled to an overflow page of its own: about 4.7 KiB per object.
  t.ok(perObject < 2048, `catalog bytes per 1 KiB object: ${perObject.toFixed(0)}`)
})

t.test('kept bodies go with their rows, and only with them', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: false, minPartSize: 5 })
  t.teardown(async () => await bucket.close())
  const expected = new Map<string, string>()
  const put = async (key: string, value: string): Promise<void> => {
    await bucket.put(key, value)
    expected.set(key, value)
  }
  for (let i = 0; i < 40; i++) await put(`k${i}`, `small ${i}`)
  for (let i = 0; i < 10; i++) await put(`k${i}`, `small again ${i}`)
  for (let i = 10; i < 15; i++) await put(`k${i}`, 'L'.repeat(20_000 + i))
  for (let i = 15; i < 20; i++) {
    await bucket.delete(`k${i}`)
    expected.delete(`k${i}`)
  }
  for (let i = 20; i < 25; i++) {
    await bucket.copy(`k${i}`, `copy${i}`)
    expected.set(`copy${i}`, expected.get(`k${i}`)!)
  }
  await bucket.copy('k25', 'k26')
  expected.set('k26', expected.get('k25')!)
  const upload = await bucket.createMultipartUpload('k27')
  await upload.complete([await upload.uploadPart(1, 'multi'), await upload.uploadPart(2, 'part')])
  expected.set('k27', 'multipart')
  await bucket.delete(['k28', 'k29', 'copy20'])
  for (const key of ['k28', 'k29', 'copy20']) expected.delete(key)
  for (let i = 10; i < 12; i++) await put(`k${i}`, `small once more ${i}`)

  for (const [key, value] of expected) {
    const object = await bucket.get(key)
    t.equal(object !== null && 'body' in object ? await object.text() : null, value, key)
  }
  t.equal((await bucket.list()).objects.length, expected.size, 'nothing else is listed')
  const db = new Database(path.join(dir, '.fsbucket', 'catalog.db'), { readonly: true })
  t.teardown(() => db.close())
  const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n
  // Kept: the small bodies of single puts and their copies (a multipart object's bytes are its part files).
  const small = [...expected].filter(([key, v]) => key !== 'k27' && v.length < 1000).length
  t.equal(count('SELECT count(*) AS n FROM objects WHERE body_ref IS NOT NULL'), small, 'every small body is named by its row')
  t.equal(count('SELECT count(*) AS n FROM bodies'), small, 'and no other body is kept')
  t.equal(count('SELECT count(*) AS n FROM objects WHERE body_ref IS NOT NULL AND body_ref NOT IN (SELECT ref FROM bodies)'), 0, 'no row names a missing body')
})
