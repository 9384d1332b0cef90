/**
 * The page assembly reads what the page needs, not what the bucket holds:
 * with a delimiter, each prefix costs one seek however many keys it groups.
 */
import t from 'tap'
import { assembleListPage, assembleListPageAsync, type AsyncPageSource, type PageSource } from '../../src/bucket/list-page.js'
import type { StoredObject } from '../../src/bucket/port.js'

function countingSource (ids: string[]): PageSource & { rowsRead: number, seeks: number } {
  const sorted = ids.map(id => [Buffer.from(id), id] as const).sort((a, b) => Buffer.compare(a[0], b[0]))
  const above = (after: Uint8Array | undefined): string[] =>
    sorted.filter(([bytes]) => after === undefined || Buffer.compare(bytes, after) > 0).map(([, id]) => id)
  const source = {
    rowsRead: 0,
    seeks: 0,
    nextId (after: Uint8Array | undefined) { source.seeks++; return above(after)[0] },
    records (after: Uint8Array | undefined, limit: number) {
      source.seeks++
      const rows = above(after).slice(0, limit).map(id => ({ id, object: { key: id } as StoredObject }))
      source.rowsRead += rows.length
      return rows
    }
  }
  return source
}

const keys = Array.from({ length: 200 }, (_, d) => Array.from({ length: 500 }, (_, f) => `dir${String(d).padStart(3, '0')}/f${f}`)).flat()

t.test('a delimited page of 100 prefixes out of 100,000 keys', async t => {
  const source = countingSource(keys)
  const page = assembleListPage(source, { prefix: '', delimiter: '/', limit: 100, withMetadata: false })
  t.equal(page.entries.length, 100)
  t.ok(page.truncated)
  t.same(page.entries[99], { prefix: 'dir099/' })
  t.ok(source.seeks <= 102, `${source.seeks} seeks`)
  t.equal(source.rowsRead, 0, 'no record is read for a prefix')
})

t.test('objects and prefixes interleaved, in byte order', async t => {
  const source = countingSource(['a', 'b/1', 'b/2', 'c', 'd/x/y', 'e', 'é', 'f/'])
  const page = assembleListPage(source, { prefix: '', delimiter: '/', limit: 10, withMetadata: false })
  t.same(page.entries.map(e => 'prefix' in e ? e.prefix : e.id), ['a', 'b/', 'c', 'd/', 'e', 'f/', 'é'])
  t.equal(page.truncated, false)
  const two = assembleListPage(countingSource(['a', 'b/1', 'c']), { prefix: '', delimiter: '/', limit: 2, withMetadata: false })
  t.same(two, { entries: [{ id: 'a', object: { key: 'a' } }, { prefix: 'b/' }], truncated: true })
})

t.test('without a delimiter one read fills the page', async t => {
  const source = countingSource(keys)
  const page = assembleListPage(source, { prefix: '', limit: 1000, withMetadata: false })
  t.equal(page.entries.length, 1000)
  t.ok(page.truncated)
  t.equal(source.seeks, 1)
  t.equal(source.rowsRead, 1001, 'one extra row tells whether more remain')
})

/** The same source, answering each seek after a turn of the event loop, as a catalog server would. */
function awaited (source: PageSource): AsyncPageSource {
  const later = async <T> (value: T): Promise<T> => await new Promise(resolve => setImmediate(() => resolve(value)))
  return {
    nextId: async after => await later(source.nextId(after)),
    records: async (after, limit) => await later(source.records(after, limit))
  }
}

t.test('an awaited source gives the same pages with the same seeks', async t => {
  const ids = ['a', 'b/1', 'b/2', 'c', 'd/x/y', 'e', 'é', 'f/', ...keys.slice(0, 3000)]
  const queries = [
    { prefix: '', delimiter: '/', limit: 3, withMetadata: false },
    { prefix: '', delimiter: '/', limit: 1000, withMetadata: false },
    { prefix: 'dir001/', delimiter: '/', limit: 7, withMetadata: false, after: Buffer.from('dir001/f3') },
    { prefix: '', limit: 50, withMetadata: false },
    { prefix: 'dir00', limit: 2000, withMetadata: false }
  ]
  for (const query of queries) {
    const sync = countingSource(ids)
    const async = countingSource(ids)
    const expected = assembleListPage(sync, query)
    t.same(await assembleListPageAsync(awaited(async), query), expected, JSON.stringify(query))
    t.equal(async.seeks, sync.seeks, 'as many seeks')
    t.equal(async.rowsRead, sync.rowsRead, 'as many rows read')
  }
  const slow = countingSource(keys)
  const page = await assembleListPageAsync(awaited(slow), { prefix: '', delimiter: '/', limit: 100, withMetadata: false })
  t.same(page.entries[99], { prefix: 'dir099/' })
  t.ok(page.truncated)
  t.ok(slow.seeks <= 102, `${slow.seeks} seeks`)
})
