/**
 * The operator's endpoints of `fsbucket serve`, over real sockets
 * (docs/operations.md): `/_health/live` and `/_health/ready` on both ports
 * without credentials, readiness turning 503 when the data directory stops
 * taking writes and back, `/_metrics` summed over two workers, and the
 * token it takes. (The catalog's failure: test/stores/pg/readiness.test.ts.)
 */
import t from 'tap'
import { chmodSync, chownSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { gateway } from '../http/gateway-fixture.js'
import { answering, call, freePort, run, within } from './serve-process.js'

const token = 'operator-token'

/** The value of one sample of a metric in the text format (0 when absent). */
function sample (text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    const inside = line.slice(line.indexOf('{') + 1, line.indexOf('}'))
    const present = inside.split(',')
    if (wanted.every(pair => present.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return 0
}

t.test('live and ready on both ports, without credentials; readiness follows the data directory', async t => {
  const root = testdir(t)
  chmodSync(root, 0o755)
  const data = path.join(root, 'data')
  mkdirSync(data)
  if (process.getuid?.() === 0) chownSync(data, 65534, 65534)
  // As root, the mode bits would not stop the server: it runs as another user, who owns the directory.
  const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}
  const port = await freePort()
  const s3Port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--s3-port', String(s3Port), '--workers', '1', '--fsync', 'off', '--log-level', 'warn', '--token', token], asOther)
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await answering(port, served)

  for (const p of [port, s3Port]) {
    for (const probe of ['live', 'ready']) {
      const answer = await call(p, 'GET', `/_health/${probe}`)
      t.equal(answer.status, 200, `${probe} on port ${p === port ? 'http' : 's3'}`)
      t.same(JSON.parse(answer.body), { status: 'ok' })
      const head = await call(p, 'HEAD', `/_health/${probe}`)
      t.same([head.status, head.body], [200, ''], `HEAD ${probe}`)
    }
  }
  t.equal((await call(port, 'POST', '/_health/live')).status, 405, 'GET and HEAD only')

  if (process.getuid?.() === 0) chownSync(data, 0, 0)
  chmodSync(data, 0o555)
  for (const p of [port, s3Port]) {
    const ready = await call(p, 'GET', '/_health/ready')
    t.equal(ready.status, 503, 'an unwritable data directory: not ready')
    t.same(JSON.parse(ready.body), { status: 'unavailable', failed: ['data-directory'] }, 'naming the check, and nothing else')
    t.equal((await call(p, 'GET', '/_health/live')).status, 200, 'still live')
  }
  t.equal((await call(port, 'HEAD', '/_health/ready')).status, 503)

  // Closed to reading too: a request that needs the directory answers its storage failure (503, 10904), not an internal error.
  const auth = { authorization: `Bearer ${token}` }
  chmodSync(data, 0o755)
  t.equal((await call(port, 'PUT', '/default/a', 'a', auth)).status, 200)
  chmodSync(data, 0o000)
  for (const [method, target] of [['GET', '/default/a'], ['PUT', '/default/b'], ['GET', '/default'], ['GET', '/']] as const) {
    let answer = await call(port, method, target, method === 'PUT' ? 'b' : undefined, auth)
    // What the worker looked at a moment ago may still be taken as it was for that moment.
    for (let tries = 0; answer.status < 300 && tries < 40; tries++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      answer = await call(port, method, target, method === 'PUT' ? 'b' : undefined, auth)
    }
    t.equal(answer.status, 503, `${method} ${target}: the storage failure's status`)
    t.equal(JSON.parse(answer.body).errors?.[0]?.code, 10904, `${method} ${target}: StoragePermissionDenied`)
  }
  t.notMatch(served.stdout() + served.stderr(), /"level":50/, 'nothing logged as an error of the server')
  chmodSync(data, 0o755)
  if (process.getuid?.() === 0) chownSync(data, 65534, 65534)
  t.equal((await call(port, 'GET', '/_health/ready')).status, 200, 'writable again: ready')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')
})

t.test('/_metrics counts the requests of two workers together, and takes the token', async t => {
  const data = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'info', '--token', token])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  const auth = { authorization: `Bearer ${token}` }
  await answering(port, served)
  // Both workers up: the primary says `serving` once every one listens.
  await within((async () => { while (!served.stdout().includes('"msg":"serving"')) await new Promise(resolve => setTimeout(resolve, 50)) })(), 60_000, 'serving')

  t.equal((await call(port, 'GET', '/_metrics')).status, 401, 'no token: 401')
  t.equal((await call(port, 'GET', '/_metrics', undefined, { authorization: 'Bearer wrong' })).status, 403, 'a wrong token: 403')
  t.equal((await call(port, 'PUT', '/default/k', 'hello', auth)).status, 200)

  const reads = 40
  for (let i = 0; i < reads; i++) t.equal((await call(port, 'GET', '/default/k', undefined, auth)).status, 200)
  const pids = new Set([...served.stdout().matchAll(/"pid":(\d+)[^\n]*"msg":"request"/g)].map(m => m[1]))
  t.equal(pids.size, 2, 'the reads were served by both workers')

  // A method no route has is one series per door, whatever the method.
  t.equal((await call(port, 'PURGE', '/default/k', undefined, auth)).status, 405)
  await call(port, 'PROPFIND', '/client/v4/user/tokens', undefined, auth)
  const scraped = await call(port, 'GET', '/_metrics', undefined, auth)
  t.equal(scraped.status, 200)
  t.equal(sample(scraped.body, 'fsbucket_request_duration_seconds_count', { door: 'http', operation: 'Unsupported' }), 1, 'PURGE: Unsupported')
  t.equal(sample(scraped.body, 'fsbucket_request_duration_seconds_count', { door: 'mgmt', operation: 'Unsupported' }), 1, 'PROPFIND on the API: Unsupported')
  t.notMatch(scraped.body, /operation="(?:PURGE|PROPFIND)/, 'no series named after a method')
  t.match(scraped.body, /^# HELP /m, 'the Prometheus text format')
  t.equal(sample(scraped.body, 'fsbucket_requests_total', { door: 'http', operation: 'GetObject', status: '200' }), reads, 'every read counted once, whichever worker served it')
  t.equal(sample(scraped.body, 'fsbucket_requests_total', { door: 'http', operation: 'PutObject', status: '200' }), 1)
  t.equal(sample(scraped.body, 'fsbucket_request_duration_seconds_count', { door: 'http', operation: 'GetObject' }), reads)
  t.ok(sample(scraped.body, 'fsbucket_sent_bytes_total', { door: 'http', operation: 'GetObject' }) >= reads * 5, 'the bytes sent')
  t.equal(sample(scraped.body, 'fsbucket_catalog_commit_batch_size_count', {}), 1, 'one commit, of one write')
  t.notMatch(scraped.body, /default|"k"|operator-token/, 'no bucket, key or token in any label')

  const head = await call(port, 'HEAD', '/_health/live')
  t.equal(head.status, 200, 'health needs no token')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')
})

t.test('without a token: a loopback-only server answers /_metrics, --metrics off answers 404', async t => {
  const port = await freePort()
  const served = run(['serve', '--data', testdir(t), '--port', String(port), '--s3-port', '0', '--workers', '1', '--fsync', 'off', '--log-level', 'warn', '--metrics', 'off'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await answering(port, served)
  t.equal((await call(port, 'GET', '/_metrics')).status, 404, 'metrics off')
  t.equal((await call(port, 'GET', '/_health/ready')).status, 200, 'health stays')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')

  const open = run(['serve', '--data', testdir(t), '--port', String(port), '--s3-port', '0', '--workers', '1', '--fsync', 'off', '--log-level', 'warn'])
  t.teardown(() => { if (open.child.exitCode === null) open.child.kill('SIGKILL') })
  await answering(port, open)
  const scraped = await call(port, 'GET', '/_metrics')
  t.equal(scraped.status, 200, 'loopback without a token: open, as the rest of the gateway')
  t.match(scraped.body, /fsbucket_requests_in_flight\{port="http"\} 1/, 'the scrape itself is in flight')
  open.child.kill('SIGTERM')
  await within(open.exited, 30_000, 'exit')
})

t.test('a server listening beyond loopback without a token refuses /_metrics (403, 40301), as it refuses private reads', async t => {
  const operator = { ready: async () => [], metrics: async () => 'fsbucket_up 1\n' }
  const { app } = await gateway(t, { host: '0.0.0.0', token: null, operator })
  const refused = await app.inject({ method: 'GET', url: '/_metrics' })
  t.equal(refused.statusCode, 403)
  t.equal(JSON.parse(refused.body).errors[0].code, 40301)
  t.equal((await app.inject({ method: 'GET', url: '/_health/live' })).statusCode, 200, 'health answers anyway')
  const { app: loopback } = await gateway(t, { token: null, operator })
  t.equal((await loopback.inject({ method: 'GET', url: '/_metrics' })).body, 'fsbucket_up 1\n', 'on loopback it answers')
})

t.test('on a route host, the paths are keys of the routed bucket', async t => {
  const { app, registry } = await gateway(t, { routes: [{ host: 'cdn.localhost', pathPrefix: '/', bucket: 'site' }] })
  await (await registry.open('site'))!.put('_health/live', 'a page of the site')
  const page = await app.inject({ method: 'GET', url: '/_health/live', headers: { host: 'cdn.localhost' } })
  t.same([page.statusCode, page.body], [200, 'a page of the site'])
  t.same(JSON.parse((await app.inject({ method: 'GET', url: '/_health/live', headers: { host: '127.0.0.1' } })).body), { status: 'ok' })
})

t.test('HEAD of an operator\'s endpoint has the headers of its GET', async t => {
  const operator = { ready: async () => ['catalog'], metrics: async () => 'fsbucket_up 1\n' }
  const { app } = await gateway(t, { token: null, operator })
  for (const url of ['/_health/live', '/_health/ready', '/_metrics']) {
    const got = await app.inject({ method: 'GET', url })
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, got.statusCode, `${url}: status`)
    t.equal(head.body, '', `${url}: HEAD has no body`)
    for (const name of ['content-type', 'content-length', 'cache-control']) t.equal(head.headers[name], got.headers[name], `${url}: ${name}`)
  }
})
