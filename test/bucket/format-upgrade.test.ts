/**
 * Buckets written before small bodies were kept in catalog rows (format 1:
 * no `body` column, every body a file) open, read and take writes; opening
 * upgrades them to format 2 in place. A format this fsbucket does not know
 * is refused rather than misread.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { openBucket } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { Database } from '../../src/stores/fs/sqlite.js'

t.test('a format 1 bucket reads, takes small and large writes, and is upgraded', async t => {
  const dir = testdir(t)
  const format = path.join(dir, '.fsbucket', 'format.json')
  const catalog = path.join(dir, '.fsbucket', 'catalog.db')
  const large = Buffer.alloc(200_000, 7)
  {
    const bucket = await openBucket(dir)
    await bucket.put('old/large', large)
    await bucket.close()
  }
  // Make it what an earlier fsbucket left: no body column, format 1.
  const db = new Database(catalog)
  t.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM objects WHERE body IS NOT NULL').get()?.n, 0, 'a large body is a file')
  db.exec('ALTER TABLE objects DROP COLUMN body')
  db.close()
  await writeFile(format, JSON.stringify({ format: 'fsbucket-bucket', version: 1 }))

  const bucket = await openBucket(dir)
  t.teardown(async () => await bucket.close())
  t.same(JSON.parse(await readFile(format, 'utf8')), { format: 'fsbucket-bucket', version: 2 }, 'upgraded on open')
  const got = await bucket.get('old/large')
  t.same(got !== null && 'body' in got ? Buffer.from(await got.arrayBuffer()) : null, large, 'the old object reads')
  await bucket.put('old/large', 'now small')
  await bucket.put('new/small', 'small')
  for (const [key, text] of [['old/large', 'now small'], ['new/small', 'small']]) {
    const object = await bucket.get(key)
    t.equal(object !== null && 'body' in object ? await object.text() : null, text, `${key} reads back`)
  }
})

t.test('a bucket of an unknown format is refused', async t => {
  const dir = testdir(t)
  await (await openBucket(dir)).close()
  await writeFile(path.join(dir, '.fsbucket', 'format.json'), JSON.stringify({ format: 'fsbucket-bucket', version: 3 }))
  await t.rejects(openBucket(dir), /unsupported bucket format fsbucket-bucket version 3/)
})
