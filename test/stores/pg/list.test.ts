/**
 * List pages of the PostgreSQL store beside the in-memory store's, on the
 * same keys: random keys of a few path segments (some with multi-byte
 * characters, some ending in the delimiter), listed whole page by page with
 * every prefix, delimiter ("/", a multi-byte one, one of two characters) and
 * page size asked; the pages must be the same. A delimited page's seeks are
 * walked many per statement (skip-scan.ts): a page of 300 common prefixes
 * takes a handful of statements, not 300.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import t from 'tap'
import { BucketEngine, type Bucket } from '../../../src/bucket/index.js'
import { PgCatalog } from '../../../src/stores/pg/catalog.js'
import { PgStore } from '../../../src/stores/pg/store.js'
import { MemoryStore } from '../../../src/stores/memory/store.js'
import { testdir } from '../../testdir.js'
import { countStatements, startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
const catalog = await PgCatalog.connect(server.url())
t.teardown(async () => { await catalog.close() })

async function pgBucket (dir: string): Promise<Bucket> {
  return new BucketEngine(await PgStore.open(catalog, randomBytes(8).toString('hex'), path.join(dir, '.fsbucket'), { fsync: false, create: true }))
}

/** Every page of a listing, as [objects' keys, delimited prefixes] per page. */
async function pages (bucket: Bucket, options: { prefix?: string, delimiter?: string, limit: number }): Promise<Array<[string[], string[]]>> {
  const out: Array<[string[], string[]]> = []
  let cursor: string | undefined
  for (let i = 0; i < 1000; i++) {
    const page = await bucket.list({ ...options, cursor })
    out.push([page.objects.map(o => o.key), page.delimitedPrefixes])
    if (!page.truncated) return out
    cursor = page.cursor
  }
  throw new Error('the listing does not end')
}

t.test('the same pages as the in-memory store, for random keys and queries', async t => {
  const memory = new BucketEngine(new MemoryStore())
  const pgb = await pgBucket(testdir(t))
  let seed = 7
  const random = (n: number): number => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n }
  const parts = ['a', 'b', 'ab', 'é', 'ü/x', 'z', '日', '日本', 'a.b', '']
  const keys = new Set<string>()
  while (keys.size < 150) {
    const depth = 1 + random(4)
    keys.add(Array.from({ length: depth }, () => parts[random(parts.length)] + String(random(5))).join(random(6) === 0 ? '日本' : '/') + (random(8) === 0 ? '/' : ''))
  }
  for (const key of keys) {
    await memory.put(key, 'x')
    await pgb.put(key, 'x')
  }
  for (const delimiter of [undefined, '/', '日本', '/a']) {
    for (const prefix of ['', 'a', 'a0/', 'é1', '日', 'nothing']) {
      for (const limit of [5, 1000]) {
        const query = { prefix, delimiter, limit }
        t.same(await pages(pgb, query), await pages(memory, query), JSON.stringify(query))
      }
    }
  }
})

t.test('a page of many common prefixes takes a few statements', async t => {
  const bucket = await pgBucket(testdir(t))
  for (let d = 0; d < 300; d++) {
    for (let f = 0; f < 3; f++) await bucket.put(`dir${String(d).padStart(3, '0')}/file${f}`, 'x')
  }
  await bucket.put('top', 'x')
  const counter = countStatements()
  let page
  try {
    page = await bucket.list({ delimiter: '/', limit: 1000 })
  } finally {
    counter.restore()
  }
  const statements = counter.count
  t.equal(page.delimitedPrefixes.length, 300)
  t.same(page.objects.map(o => o.key), ['top'])
  t.ok(statements <= 10, `${statements} statements for 300 prefixes and an object`)
})
