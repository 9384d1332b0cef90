/**
 * Buckets written by earlier formats open, read and take writes, and
 * opening upgrades them to format 3 in place: format 1 kept every body in a
 * file (no `body` column), format 2 kept small bodies in the object rows
 * (no `bodies` table). A format this fsbucket does not know is refused
 * rather than misread.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { openBucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'
import { Database } from '../../../src/stores/fs/sqlite.js'

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
  // Make it what an earlier fsbucket left: no body columns, format 1.
  const db = new Database(catalog)
  t.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM bodies').get()?.n, 0, 'a large body is a file')
  db.exec(`DROP TRIGGER objects_body_replaced; DROP TRIGGER objects_body_deleted; DROP TABLE bodies;
    ALTER TABLE objects DROP COLUMN body_ref; ALTER TABLE objects DROP COLUMN body`)
  db.close()
  await writeFile(format, JSON.stringify({ format: 'fsbucket-bucket', version: 1 }))

  const bucket = await openBucket(dir)
  t.teardown(async () => await bucket.close())
  t.same(JSON.parse(await readFile(format, 'utf8')), { format: 'fsbucket-bucket', version: 3 }, 'upgraded on open')
  const got = await bucket.get('old/large')
  t.same(got !== null && 'body' in got ? Buffer.from(await got.arrayBuffer()) : null, large, 'the old object reads')
  await bucket.put('old/large', 'now small')
  await bucket.put('new/small', 'small')
  for (const [key, text] of [['old/large', 'now small'], ['new/small', 'small']]) {
    const object = await bucket.get(key)
    t.equal(object !== null && 'body' in object ? await object.text() : null, text, `${key} reads back`)
  }
})

t.test('a format 2 bucket (small bodies in the object rows) reads them, and lets each go when its key is written again', async t => {
  const dir = testdir(t)
  const format = path.join(dir, '.fsbucket', 'format.json')
  const catalog = path.join(dir, '.fsbucket', 'catalog.db')
  {
    const bucket = await openBucket(dir)
    for (const key of ['kept', 'replaced', 'deleted', 'copied', 'grown']) await bucket.put(key, `old ${key}`, { customMetadata: { key } })
    await bucket.close()
  }
  // Make it what a format 2 fsbucket left: each small body in its row's `body` column, no `bodies` table.
  const db = new Database(catalog)
  db.exec(`UPDATE objects SET body = (SELECT bytes FROM bodies WHERE ref = objects.body_ref);
    DROP TRIGGER objects_body_replaced; DROP TRIGGER objects_body_deleted; DROP TABLE bodies; ALTER TABLE objects DROP COLUMN body_ref`)
  t.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM objects WHERE body IS NOT NULL').get()?.n, 5)
  db.close()
  await writeFile(format, JSON.stringify({ format: 'fsbucket-bucket', version: 2 }))

  const bucket = await openBucket(dir)
  t.teardown(async () => await bucket.close())
  t.same(JSON.parse(await readFile(format, 'utf8')), { format: 'fsbucket-bucket', version: 3 }, 'upgraded on open')
  for (const key of ['kept', 'replaced', 'deleted', 'copied', 'grown']) {
    const object = await bucket.get(key)
    t.equal(object !== null && 'body' in object ? await object.text() : null, `old ${key}`, `${key}: the body kept in its row reads`)
  }
  t.equal(await (await bucket.get('kept', { range: { offset: 4 } }) as { text: () => Promise<string> }).text(), 'kept', 'and its ranges')
  await bucket.put('replaced', 'new replaced')
  await bucket.delete('deleted')
  await bucket.copy('copied', 'copy of copied')
  await bucket.put('grown', Buffer.alloc(100_000, 1))
  const got = async (key: string): Promise<string | null> => {
    const object = await bucket.get(key)
    return object !== null && 'body' in object ? await object.text() : null
  }
  t.equal(await got('replaced'), 'new replaced')
  t.equal(await got('deleted'), null)
  t.equal(await got('kept'), 'old kept')
  t.equal((await got('grown'))?.length, 100_000)
  t.equal(await got('copy of copied'), 'old copied', 'a body kept in its row copies')
  const after = new Database(catalog, { readonly: true })
  t.teardown(() => after.close())
  t.same(after.prepare('SELECT key FROM objects WHERE body IS NOT NULL ORDER BY key').all(), [{ key: 'copied' }, { key: 'kept' }],
    'a key written again no longer keeps its old body in its row')
  t.same(after.prepare('SELECT key FROM objects JOIN bodies ON ref = body_ref ORDER BY key').all(), [{ key: 'copy of copied' }, { key: 'replaced' }],
    'new small bodies are in `bodies`')
  t.equal(after.prepare<[], { n: number }>('SELECT count(*) AS n FROM bodies').get()?.n, 2, 'and nothing else is')
})

t.test('a bucket of an unknown format is refused', async t => {
  const dir = testdir(t)
  await (await openBucket(dir)).close()
  await writeFile(path.join(dir, '.fsbucket', 'format.json'), JSON.stringify({ format: 'fsbucket-bucket', version: 4 }))
  await t.rejects(openBucket(dir), /unsupported bucket format fsbucket-bucket version 4/)
})
