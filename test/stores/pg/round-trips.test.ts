/**
 * Round trips to the PostgreSQL catalog per request, counted over real
 * sockets on two gateways: every statement a connection sends is counted,
 * and each kind of request is held to its budget (so a change that adds a
 * statement to the hot path fails here). With the budgets, read-your-writes
 * across the gateways: an object written on one is read on the other, and
 * a bucket made public, then private again, on one is served accordingly by
 * the other's next request.
 */
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildApp } from '../../../src/app.js'
import { testdir } from '../../testdir.js'
import { countStatements, startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

const TOKEN = 'round-trip-token'
const ACCOUNT = '/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets'

const counter = countStatements()
t.teardown(counter.restore)

interface Answer { status: number, text: string, etag: string | null }

async function call (base: string, method: string, path: string, body?: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }): Promise<Answer> {
  const res = await fetch(base + path, { method, body, headers })
  return { status: res.status, text: await res.text(), etag: res.headers.get('etag') }
}

/** The answer to one request and the statements it took. */
async function counted (base: string, method: string, path: string, body?: string, headers?: Record<string, string>): Promise<Answer & { statements: number }> {
  const before = counter.count
  const answer = await call(base, method, path, body, headers)
  return { ...answer, statements: counter.count - before }
}

const dataDir = testdir(t)

async function gateway (): Promise<string> {
  const app = await buildApp({
    dataDir, host: '127.0.0.1', token: TOKEN, publicBuckets: [], routes: [], fsync: false, logLevel: false, catalog: server.url()
  })
  t.teardown(async () => { await app.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const A = await gateway()
const B = await gateway()

t.test('statements per request, each within its budget', async t => {
  t.equal((await call(A, 'POST', ACCOUNT, JSON.stringify({ name: 'counted' }), { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' })).status, 200)
  // The first request of each gateway reads the bucket's settings and opens its store: not the steady state.
  await call(A, 'GET', '/counted/warm')
  await call(B, 'GET', '/counted/warm')

  const budgets: Array<[what: string, budget: number, run: () => Promise<Answer & { statements: number }>]> = [
    ['PUT of a new key', 2, async () => await counted(A, 'PUT', '/counted/a', 'one')],
    ['PUT over an existing key', 2, async () => await counted(B, 'PUT', '/counted/a', 'two')],
    ['GET', 2, async () => await counted(A, 'GET', '/counted/a')],
    ['HEAD', 2, async () => await counted(B, 'HEAD', '/counted/a')],
    ['list page', 2, async () => await counted(A, 'GET', '/counted?limit=100')],
    ['list page with a delimiter', 6, async () => await counted(B, 'GET', '/counted?delimiter=/&limit=100')],
    ['create-only PUT (If-None-Match: *)', 3, async () => await counted(A, 'PUT', '/counted/b', 'new', { authorization: `Bearer ${TOKEN}`, 'if-none-match': '*' })],
    ['DELETE', 2, async () => await counted(B, 'DELETE', '/counted/b')]
  ]
  for (const [what, budget, run] of budgets) {
    const { status, statements } = await run()
    t.ok(status >= 200 && status < 300, `${what}: ${status}`)
    t.ok(statements <= budget, `${what}: ${statements} statements (budget ${budget})`)
  }
  const read = await call(A, 'GET', '/counted/a')
  const cas = await counted(B, 'PUT', '/counted/a', 'three', { authorization: `Bearer ${TOKEN}`, 'if-match': read.etag as string })
  t.equal(cas.status, 200)
  t.ok(cas.statements <= 3, `compare-and-set PUT (If-Match): ${cas.statements} statements (budget 3)`)
  const stale = await counted(A, 'PUT', '/counted/a', 'lost', { authorization: `Bearer ${TOKEN}`, 'if-match': read.etag as string })
  t.equal(stale.status, 412, 'a compare-and-set on a replaced object is refused')
  t.equal((await call(A, 'GET', '/counted/a')).text, 'three')
})

t.test('read-your-writes across the gateways, objects and settings', async t => {
  for (let i = 0; i < 20; i++) {
    const [writer, reader] = i % 2 === 0 ? [A, B] : [B, A]
    t.equal((await call(writer, 'PUT', '/counted/ryw', `value ${i}`)).status, 200)
    const read = await call(reader, 'GET', '/counted/ryw')
    if (read.text !== `value ${i}`) t.fail(`write ${i} not seen on the other gateway: ${read.text}`)
  }
  const managed = `${ACCOUNT}/counted/domains/managed`
  for (let i = 0; i < 6; i++) {
    const [writer, reader] = i % 2 === 0 ? [A, B] : [B, A]
    const open = i % 3 !== 2
    const set = await call(writer, 'PUT', managed, JSON.stringify({ enabled: open }), { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' })
    t.equal(set.status, 200, set.text)
    const anonymous = await call(reader, 'GET', '/counted/ryw', undefined, {})
    t.equal(anonymous.status === 200, open, `made ${open ? 'public' : 'private'} on one gateway: the other's next anonymous read answers ${anonymous.status}`)
  }
})
