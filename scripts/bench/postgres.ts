/**
 * The PostgreSQL column of the library benchmark (section `pg` of
 * library.ts): the same bucket operations with the catalog in a throwaway
 * PostgreSQL server (the tests' helper, with the server's durability kept:
 * fsync and synchronous commit on) beside the SQLite catalog, and HTTP
 * gateways sharing that catalog, two beside one.
 *
 *   1 KiB objects   durable put, get, head with one call in flight, and
 *                   durable put with PG_IN_FLIGHT calls in flight; baseline:
 *                   the same on a SQLite bucket. Goal: durable put
 *                   >= 1,000/s (in flight).
 *   gateways        `fsbucket serve --catalog` processes, PUT then GET of
 *                   1 KiB over HTTP with PG_IN_FLIGHT requests in flight,
 *                   spread over two gateways; baseline: one gateway.
 *   list            pages of 1,000 through the store from BENCH_KEYS rows
 *                   shaped like the list section's keys; the rows are
 *                   inserted with SQL (generate_series, no body files: a list
 *                   reads rows only), then every page goes through the
 *                   bucket. Baseline: the same pages from a SQLite bucket of
 *                   PG_SQLITE_KEYS keys filled with puts. Goal: <= 10 ms
 *                   (median) from 1,000,000 keys.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { openBucket, openRegistry, type Bucket, type BucketObjectBody } from '../../src/index.js'
import { PgCatalog } from '../../src/stores/pg/catalog.js'
import { startPostgres } from '../../test/stores/pg/server.js'

/** What library.ts lends this section: its table, its timing and its list helpers. */
export interface BenchTools {
  row: (what: string, value: string, baseline?: string, ratio?: string, goal?: string, met?: string) => void
  progress: (message: string) => void
  fmt: (n: number, digits?: number) => string
  verdict: (ok: boolean) => string
  opsPerSecond: (op: () => Promise<unknown>) => Promise<number>
  interleaved: (measures: Record<string, () => Promise<number>>, rounds?: number) => Promise<Record<string, number>>
  roundSeconds: number
  keys: number
  listKey: (i: number, dirDigits: number) => string
  digitsFor: (n: number) => number
  fill: (bucket: Bucket, from: number, to: number, dirDigits: number) => Promise<number>
  timePages: (bucket: Bucket, options: () => Record<string, unknown>) => Promise<{ median: number, p90: number, cpu: number, entries: number }>
  mulberry32: (seed: number) => () => number
}

/** Calls (or requests) in flight for the throughput rows. */
const IN_FLIGHT = 32
const KEYS_PER_DIR = 100
const TOKEN = 'bench-token'

/** Runs `op` from `width` callers at once for `seconds`; returns completed calls per second. */
async function throughput (width: number, seconds: number, op: (n: number) => Promise<unknown>): Promise<number> {
  const end = performance.now() + seconds * 1000
  let n = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: width }, async () => {
    while (performance.now() < end) await op(n++)
  }))
  return n / ((performance.now() - started) / 1000)
}

async function readAll (object: BucketObjectBody): Promise<void> {
  await object.arrayBuffer()
}

export async function postgresColumn (work: string, tools: BenchTools): Promise<void> {
  const { row, fmt, verdict, progress } = tools
  const server = await startPostgres({ durable: true, settings: { shared_buffers: '256MB' } })
  const gateways: ChildProcess[] = []
  try {
    const url = server.url()
    const dataDir = path.join(work, 'pg-data')
    const registry = await openRegistry(dataDir, { catalog: url })
    await registry.create('small')
    const pg = (await registry.open('small'))!
    const sqlite = await openBucket(path.join(work, 'pg-sqlite-small'))
    const value = randomBytes(1024)
    const readable = 1000
    for (let i = 0; i < readable; i++) {
      await pg.put(`read/${i}`, value)
      await sqlite.put(`read/${i}`, value)
    }
    const pick = (): string => `read/${Math.floor(Math.random() * readable)}`
    const counters = { pg: 0, sqlite: 0 }
    const r = await tools.interleaved({
      pgPut: async () => await tools.opsPerSecond(async () => await pg.put(`put/${counters.pg++}`, value)),
      sqlitePut: async () => await tools.opsPerSecond(async () => await sqlite.put(`put/${counters.sqlite++}`, value)),
      pgPuts: async () => await throughput(IN_FLIGHT, tools.roundSeconds, async () => await pg.put(`put/${counters.pg++}`, value)),
      sqlitePuts: async () => await throughput(IN_FLIGHT, tools.roundSeconds, async () => await sqlite.put(`put/${counters.sqlite++}`, value)),
      pgGet: async () => await tools.opsPerSecond(async () => { await readAll(await pg.get(pick()) as BucketObjectBody) }),
      sqliteGet: async () => await tools.opsPerSecond(async () => { await readAll(await sqlite.get(pick()) as BucketObjectBody) }),
      pgHead: async () => await tools.opsPerSecond(async () => await pg.head(pick())),
      sqliteHead: async () => await tools.opsPerSecond(async () => await sqlite.head(pick()))
    })
    const ops = (n: number): string => `${fmt(n)} ops/s`
    const sql = (n: number): string => `SQLite catalog ${ops(n)}`
    row('PostgreSQL: put 1 KiB, fsync on', ops(r.pgPut), sql(r.sqlitePut), fmt(r.pgPut / r.sqlitePut, 2))
    row(`PostgreSQL: put 1 KiB, fsync on, ${IN_FLIGHT} in flight`, ops(r.pgPuts), sql(r.sqlitePuts), fmt(r.pgPuts / r.sqlitePuts, 2),
      '>= 1,000/s', verdict(r.pgPuts >= 1000))
    row('PostgreSQL: get 1 KiB', ops(r.pgGet), sql(r.sqliteGet), fmt(r.pgGet / r.sqliteGet, 2))
    row('PostgreSQL: head 1 KiB', ops(r.pgHead), sql(r.sqliteHead), fmt(r.pgHead / r.sqliteHead, 2))
    await sqlite.close()

    progress('pg: gateways')
    const bases = await Promise.all([0, 1].map(async () => await startGateway(dataDir, url, gateways)))
    const http = await httpRates(bases, tools)
    row(`PostgreSQL, HTTP: PUT 1 KiB, ${IN_FLIGHT} in flight, 2 gateways`, ops(http.put2), `1 gateway ${ops(http.put1)}`, fmt(http.put2 / http.put1, 2),
      '>= 1,000/s', verdict(http.put2 >= 1000))
    row(`PostgreSQL, HTTP: GET 1 KiB, ${IN_FLIGHT} in flight, 2 gateways`, ops(http.get2), `1 gateway ${ops(http.get1)}`, fmt(http.get2 / http.get1, 2))
    for (const child of gateways) child.kill('SIGTERM')

    progress(`pg: list, ${fmt(tools.keys)} rows`)
    await listPages(work, registry, url, tools)
    await registry.close()
  } finally {
    for (const child of gateways) child.kill('SIGKILL')
    await server.destroy()
  }
}

/** Starts `fsbucket serve --catalog` on the shared directory; resolves with its base URL. */
async function startGateway (dataDir: string, url: string, children: ChildProcess[]): Promise<string> {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'fsbucket.js')
  const child = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', '0', '--workers', '1', '--token', TOKEN, '--sweep-interval', '0', '--s3-port', '0'],
    { env: { ...process.env, FSBUCKET_CATALOG: url }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  return await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(out)
      if (m !== null) resolve(m[1])
    })
    child.stderr?.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.once('exit', code => { reject(new Error(`a gateway exited (${String(code)}): ${out}`)) })
  })
}

async function httpRates (bases: string[], tools: BenchTools): Promise<{ put1: number, put2: number, get1: number, get2: number }> {
  const value = randomBytes(1024)
  const headers = { authorization: `Bearer ${TOKEN}` }
  const put = async (base: string, key: string): Promise<void> => {
    const res = await fetch(`${base}/small/${key}`, { method: 'PUT', body: value, headers })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`PUT ${key}: ${res.status}`)
  }
  const get = async (base: string, key: string): Promise<void> => {
    const res = await fetch(`${base}/small/${key}`, { headers })
    const body = await res.arrayBuffer()
    if (res.status !== 200 || body.byteLength !== 1024) throw new Error(`GET ${key}: ${res.status}`)
  }
  let n = 0
  const rate = async (width: number, op: (base: string) => Promise<void>): Promise<number> =>
    await throughput(IN_FLIGHT, tools.roundSeconds * 2, async i => await op(bases[i % width]))
  await rate(2, async base => await put(base, `http/warm/${n++}`))
  const r = await tools.interleaved({
    put1: async () => await rate(1, async base => await put(base, `http/${n++}`)),
    put2: async () => await rate(2, async base => await put(base, `http/${n++}`)),
    get1: async () => await rate(1, async base => await get(base, `read/${n++ % 1000}`)),
    get2: async () => await rate(2, async base => await get(base, `read/${n++ % 1000}`))
  })
  return { put1: r.put1, put2: r.put2, get1: r.get1, get2: r.get2 }
}

async function listPages (work: string, registry: Awaited<ReturnType<typeof openRegistry>>, url: string, tools: BenchTools): Promise<void> {
  const { row, fmt, verdict, progress } = tools
  const size = tools.keys
  const dirDigits = tools.digitsFor(Math.ceil(size / KEYS_PER_DIR))
  await registry.create('list')
  const bucket = (await registry.open('list'))!
  const catalog = await PgCatalog.connect(url)
  const started = performance.now()
  try {
    const { rows: [{ store_id: storeId }] } = await catalog.pool.query("SELECT store_id FROM fsbucket.buckets WHERE name = 'list'")
    const batch = 100_000
    for (let from = 0; from < size; from += batch) {
      const to = Math.min(size, from + batch)
      // The keys of the list section's listKey(i, dirDigits), one row each, as a put of "x" would write it.
      await catalog.pool.query(`INSERT INTO fsbucket.objects (store_id, id, key, version, size, etag, uploaded, storage_class, checksums, http_metadata, custom_metadata, segments)
        SELECT $1, convert_to(k, 'UTF8'), k, v, 1, '9dd4e461268c8034f5c8564e155c67a6', $4, 'Standard', '{"md5":"9dd4e461268c8034f5c8564e155c67a6"}', '{}', '{}',
               jsonb_build_array(jsonb_build_array('blobs/' || substr(v, 1, 2) || '/' || v, 1))
        FROM (SELECT 'dir' || lpad((i / ${KEYS_PER_DIR})::text, $5, '0') || '/file' || lpad(i::text, 7, '0') || '.txt' AS k, md5('bench' || i) AS v
              FROM generate_series($2::int, $3::int - 1) i) g`, [storeId, from, to, Date.now(), dirDigits])
      if (to % 500_000 === 0 || to === size) progress(`  pg: ${fmt(to)} rows`)
    }
    await catalog.pool.query('VACUUM ANALYZE fsbucket.objects')
  } finally {
    await catalog.close()
  }
  const fillSeconds = (performance.now() - started) / 1000
  if (tools.listKey(size - 1, dirDigits) !== (await bucket.list({ prefix: 'dir', startAfter: tools.listKey(size - 2, dirDigits), limit: 1 })).objects[0]?.key) {
    throw new Error('the rows inserted differ from the list section\'s keys')
  }

  // The baseline: a SQLite bucket of the same keys, filled with puts (fewer keys when PG_SQLITE_KEYS says so).
  const sqliteKeys = Math.min(size, Number(process.env.PG_SQLITE_KEYS ?? size))
  const sqlite = await openBucket(path.join(work, 'pg-sqlite-list'), { fsync: false })
  progress(`pg: filling the SQLite baseline to ${fmt(sqliteKeys)} keys`)
  const sqliteFill = await tools.fill(sqlite, 0, sqliteKeys, dirDigits)

  const pages = async (b: Bucket, keys: number): Promise<{ plain: Times, prefixed: Times, delimited: Times }> => {
    const dirs = Math.ceil(keys / KEYS_PER_DIR)
    const random = tools.mulberry32(keys)
    const randomInt = (n: number): number => Math.floor(random() * n)
    const dirName = (d: number): string => `dir${String(d).padStart(dirDigits, '0')}`
    const groups = Math.ceil(dirs / 100)
    const groupPrefix = (g: number): string => `dir${String(g).padStart(dirDigits - 2, '0')}`
    return {
      plain: await tools.timePages(b, () => ({ startAfter: tools.listKey(randomInt(Math.max(1, keys - 1000)), dirDigits) })),
      prefixed: await tools.timePages(b, () => ({ prefix: groupPrefix(randomInt(groups)) })),
      delimited: await tools.timePages(b, () => ({ delimiter: '/', startAfter: `${dirName(randomInt(Math.max(1, dirs - 1000)))}/` }))
    }
  }
  const pgPages = await pages(bucket, size)
  const sqlitePages = await pages(sqlite, sqliteKeys)
  await sqlite.close()

  const goal = size >= 1_000_000 ? '<= 10 ms median' : ''
  const met = (ms: number): string => goal === '' ? '' : verdict(ms <= 10)
  const ms = (t: Times): string => `${fmt(t.median, 1)} ms (p90 ${fmt(t.p90, 1)}, CPU ${fmt(t.cpu, 1)})`
  const n = fmt(size)
  const of = `SQLite, ${fmt(sqliteKeys)} keys`
  const short = (t: Times): string => t.entries < 999 ? `, ${fmt(t.entries)} entries/page` : ''
  row(`PostgreSQL: list 1,000 of ${n} keys${short(pgPages.plain)}`, ms(pgPages.plain), `${of} ${fmt(sqlitePages.plain.median, 1)} ms`,
    fmt(sqlitePages.plain.median / pgPages.plain.median, 2), goal, met(pgPages.plain.median))
  row(`PostgreSQL: list 1,000 of ${n}, prefix (10,000 keys)${short(pgPages.prefixed)}`, ms(pgPages.prefixed), `${of} ${fmt(sqlitePages.prefixed.median, 1)} ms`,
    fmt(sqlitePages.prefixed.median / pgPages.prefixed.median, 2), goal, met(pgPages.prefixed.median))
  row(`PostgreSQL: list 1,000 of ${n}, delimiter "/"${short(pgPages.delimited)}`, ms(pgPages.delimited), `${of} ${fmt(sqlitePages.delimited.median, 1)} ms`,
    fmt(sqlitePages.delimited.median / pgPages.delimited.median, 2), goal, met(pgPages.delimited.median))
  row(`PostgreSQL: ${n} rows by SQL (generate_series)`, `${fmt(fillSeconds, 1)} s`, `SQLite fill with puts ${fmt(sqliteKeys / sqliteFill)} puts/s`)
}

type Times = Awaited<ReturnType<BenchTools['timePages']>>
