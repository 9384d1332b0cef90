/**
 * Two gateways over one PostgreSQL catalog and one data directory, driven
 * over real sockets: read-your-writes, delete visibility, create-only races
 * with exactly one winner, a compare-and-set counter incremented from both
 * sides with no lost update, a list of 2,000 keys written through both, a
 * multipart upload whose parts go through different gateways, a bucket and
 * a custom domain made on one and seen on the other, a gateway started
 * from the command line (`serve --catalog`) SIGKILLed while bodies stream
 * in (every acknowledged object intact), and a PostgreSQL restart while
 * they run (10908 / 503, then recovery on their own).
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { buildApp } from '../../../src/app.js'
import { openRegistry } from '../../../src/index.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

const TOKEN = 'gateway-test-token'

interface Answer { status: number, text: string, json: any, etag: string | null }

async function call (base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(base + path, { method, body, headers: { authorization: `Bearer ${TOKEN}`, ...headers } })
  const text = await res.text()
  let json: any = null
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, text, json, etag: res.headers.get('etag') }
}

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T> (items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++])
  }))
}

const dataDir = testdir(t)
const catalog = server.url()

async function gateway (): Promise<string> {
  const app = await buildApp({
    dataDir, host: '127.0.0.1', token: TOKEN, publicBuckets: [], routes: [], fsync: false, logLevel: false, catalog, minPartSize: 5
  })
  t.teardown(async () => { await app.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const A = await gateway()
const B = await gateway()

t.test('a bucket created through one gateway is served by the other', async t => {
  const created = await call(A, 'POST', '/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets', JSON.stringify({ name: 'shared' }), { 'content-type': 'application/json' })
  t.equal(created.status, 200, created.text)
  const listed = await call(B, 'GET', '/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets')
  t.same(listed.json.result.buckets.map((b: { name: string }) => b.name), ['shared'])
  t.equal((await call(B, 'PUT', '/shared/hello', 'from B')).status, 200)
  t.equal((await call(A, 'GET', '/shared/hello')).text, 'from B')
})

t.test('read-your-writes and delete visibility across gateways', async t => {
  for (let i = 0; i < 30; i++) {
    const [writer, reader] = i % 2 === 0 ? [A, B] : [B, A]
    const put = await call(writer, 'PUT', `/shared/ryw/${i}`, `value ${i}`)
    t.equal(put.status, 200, put.text)
    const read = await call(reader, 'GET', `/shared/ryw/${i}`)
    if (read.text !== `value ${i}`) t.fail(`write ${i} not seen by the other gateway: ${read.status} ${read.text}`)
    const second = await call(writer, 'PUT', `/shared/ryw/${i}`, `second ${i}`)
    t.equal(second.status, 200, second.text)
    if ((await call(reader, 'GET', `/shared/ryw/${i}`)).text !== `second ${i}`) t.fail(`overwrite ${i} not seen`)
    const removed = await call(reader, 'DELETE', `/shared/ryw/${i}`)
    t.equal(removed.status, 204, removed.text)
    const gone = await call(writer, 'GET', `/shared/ryw/${i}`)
    if (gone.status !== 404) t.fail(`delete ${i} not seen: ${gone.status}`)
  }
  t.pass('every write and delete seen at once on the other gateway')
})

t.test('create-only puts racing on two gateways: exactly one wins', async t => {
  for (let round = 0; round < 20; round++) {
    const answers = await Promise.all([A, B, A, B].map(async (base, i) =>
      await call(base, 'PUT', `/shared/race/${round}`, `writer ${i}`, { 'if-none-match': '*' })))
    const winners = answers.filter(a => a.status === 200)
    t.equal(winners.length, 1, `round ${round}: one winner`)
    t.equal(answers.filter(a => a.status === 412).length, 3, `round ${round}: the others fail their precondition`)
    const stored = await call(B, 'GET', `/shared/race/${round}`)
    t.equal(`"${winners[0].json.result.etag}"`, stored.etag, `round ${round}: the winner's body is stored`)
  }
})

t.test('a compare-and-set counter incremented from both gateways loses no update', async t => {
  t.equal((await call(A, 'PUT', '/shared/counter', '0')).status, 200)
  const perSide = 15
  let conflicts = 0
  const increment = async (base: string): Promise<void> => {
    for (let done = 0; done < perSide;) {
      const read = await call(base, 'GET', '/shared/counter')
      const put = await call(base, 'PUT', '/shared/counter', String(Number(read.text) + 1), { 'if-match': read.etag as string })
      if (put.status === 200) done++
      else if (put.status === 412) conflicts++
      else throw new Error(`unexpected ${put.status}: ${put.text}`)
    }
  }
  await Promise.all([increment(A), increment(B), increment(A), increment(B)])
  t.equal((await call(B, 'GET', '/shared/counter')).text, String(4 * perSide), `0 lost updates (${conflicts} conflicts retried)`)
})

t.test('2,000 keys written through both gateways list whole and in order on each', async t => {
  const keys = Array.from({ length: 2000 }, (_, i) => `many/${String(i).padStart(5, '0')}`)
  await inParallel(keys, 16, async key => {
    const base = Number(key.slice(5)) % 2 === 0 ? A : B
    const put = await call(base, 'PUT', `/shared/${key}`, key)
    if (put.status !== 200) throw new Error(`put ${key}: ${put.status} ${put.text}`)
  })
  for (const base of [A, B]) {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: Answer = await call(base, 'GET', `/shared?prefix=many/&limit=1000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
      t.equal(page.status, 200)
      seen.push(...page.json.result.map((o: { key: string }) => o.key))
      cursor = page.json.result_info.truncated === true ? page.json.result_info.cursor : null
    } while (cursor !== null)
    t.same(seen, keys, `${base === A ? 'A' : 'B'} lists the 2,000 keys once each, in order`)
  }
  const delimited = await call(B, 'GET', '/shared?delimiter=/&limit=1000')
  t.ok(delimited.json.result_info.delimitedPrefixes.includes('many/'), 'a delimited listing groups them')
})

t.test('a multipart upload whose parts go through different gateways', async t => {
  const created = await call(A, 'POST', '/shared/big?action=mpu-create')
  t.equal(created.status, 200, created.text)
  const uploadId = created.json.result.uploadId as string
  const parts = ['a'.repeat(1000), 'b'.repeat(1000), 'c'.repeat(10)]
  const etags: Array<{ partNumber: number, etag: string }> = []
  for (const [i, part] of parts.entries()) {
    const base = i % 2 === 0 ? B : A
    const put = await call(base, 'PUT', `/shared/big?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=${i + 1}`, part)
    t.equal(put.status, 200, put.text)
    etags.push({ partNumber: i + 1, etag: put.json.result.etag })
  }
  const done = await call(B, 'POST', `/shared/big?action=mpu-complete&uploadId=${uploadId}`, JSON.stringify({ parts: etags }), { 'content-type': 'application/json' })
  t.equal(done.status, 200, done.text)
  t.equal((await call(A, 'GET', '/shared/big')).text, parts.join(''), 'the other gateway reads the whole object')
  t.equal((await call(A, 'GET', '/shared/big', undefined, { range: 'bytes=995-1004' })).text, 'aaaaabbbbb', 'and ranges across parts')
  const again = await call(A, 'PUT', `/shared/big?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=1`, 'late')
  t.equal(again.status, 404, 'a completed upload takes no more parts, on either gateway')
})

t.test('settings and custom domains changed through one registry are seen by the other', async t => {
  const one = await openRegistry(dataDir, { catalog, fsync: false })
  const two = await openRegistry(dataDir, { catalog, fsync: false })
  t.teardown(async () => { await one.close(); await two.close() })
  t.equal(await two.bucketForDomain('cdn.example.test'), null)
  await one.updateSettings('shared', { domains: ['cdn.example.test'] })
  t.equal(await two.bucketForDomain('cdn.example.test'), 'shared', 'the domain routes on the other at once')
  await one.create('second')
  t.ok(await two.info('second'), 'a bucket created on one is known to the other')
  await two.delete('second')
  t.equal(await one.info('second'), null, 'and its deletion too')
  t.equal((await call(A, 'PUT', '/second/x', 'y')).status, 404, 'writes to the deleted bucket fail on the gateways')
})

t.test('a gateway SIGKILLed mid-upload: every acknowledged object intact, the leftovers swept', async t => {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'bin', 'fsbucket.js')
  const child = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', '0', '--workers', '1', '--token', TOKEN, '--sweep-interval', '0', '--s3-port', '0'],
    { env: { ...process.env, FSBUCKET_CATALOG: catalog }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const C = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(out)
      if (m !== null) resolve(m[1])
    })
    child.once('exit', code => { reject(new Error(`the gateway exited (${code}): ${out}`)) })
  })
  const acknowledged = new Map<string, string>()
  for (let i = 0; i < 20; i++) {
    const value = `kept ${i} `.repeat(100 * (i + 1))
    const put = await call(C, 'PUT', `/shared/killed/${i}`, value)
    t.equal(put.status, 200, put.text)
    acknowledged.set(`killed/${i}`, value)
  }
  const upload = await call(C, 'POST', '/shared/killed/mpu?action=mpu-create')
  const uploadId = upload.json.result.uploadId as string
  // Two bodies in flight when the process dies: an overwrite of an acknowledged key and a part.
  const inFlight = ['/shared/killed/0', `/shared/killed/mpu?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=1`].map(async target => {
    const request = http.request(C + target, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-length': String(8 * 1024 * 1024) } })
    const failed = new Promise<void>(resolve => { request.on('error', () => resolve()); request.on('response', () => resolve()) })
    request.write(Buffer.alloc(1024 * 1024, 'z'))
    return { request, failed }
  })
  const requests = await Promise.all(inFlight)
  await new Promise(resolve => setTimeout(resolve, 300))
  child.kill('SIGKILL')
  for (const { failed } of requests) await failed
  for (const [key, value] of acknowledged) {
    const read = await call(A, 'GET', `/shared/${key}`)
    if (read.text !== value) t.fail(`${key} changed by the killed gateway`)
  }
  t.pass('every object acknowledged by the killed gateway reads whole, through another gateway')
  const registry = await openRegistry(dataDir, { catalog, fsync: false })
  t.teardown(async () => { await registry.close() })
  const swept = await (await registry.open('shared'))!.sweep({ leftoverGraceMs: 0, uploadMaxAgeMs: 0 })
  t.ok(swept.removedLeftovers >= 1, `the interrupted bodies are swept (${swept.removedLeftovers} leftovers)`)
  t.equal(swept.abortedUploads >= 1, true, 'and the upload in progress aborted when expired')
  t.equal((await call(B, 'GET', '/shared/killed/0')).text, acknowledged.get('killed/0'), 'the overwrite in flight never became visible')
})

t.test('PostgreSQL restarting: 503 with code 10908 at once, then recovery without a restart of the gateways', async t => {
  await server.stop()
  const started = Date.now()
  for (const [base, method, path] of [[A, 'GET', '/shared/hello'], [B, 'PUT', '/shared/during'], [A, 'GET', '/shared?limit=5']] as const) {
    const answer = await call(base, method, path, method === 'PUT' ? 'x' : undefined)
    t.equal(answer.status, 503, `${method} ${path} answers 503`)
    t.equal(answer.json?.errors?.[0]?.code, 10908, 'with the catalog code')
  }
  t.ok(Date.now() - started < 15_000, 'fast, not hanging')
  await server.start()
  let recovered = false
  for (let attempt = 0; attempt < 50 && !recovered; attempt++) {
    recovered = (await call(A, 'GET', '/shared/hello')).status === 200 && (await call(B, 'PUT', '/shared/after', 'back')).status === 200
    if (!recovered) await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.ok(recovered, 'both gateways serve again')
  t.equal((await call(A, 'GET', '/shared/after')).text, 'back')
  t.equal((await call(B, 'GET', '/shared/counter')).text, '60', 'what was stored before the restart is intact')
  t.equal((await call(B, 'GET', '/shared/killed/19')).status, 200)
})
