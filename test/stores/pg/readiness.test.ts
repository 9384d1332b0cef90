/**
 * `/_health/ready` of a server over a PostgreSQL catalog (docs/operations.md):
 * 503 naming the catalog while the catalog server is stopped, and while it
 * hangs (reached through a proxy that stops forwarding: connections stay
 * open, nothing answers), each within a couple of seconds; 200 again once
 * it is back. Liveness never depends on the catalog.
 */
import t from 'tap'
import { connect, createServer, type Socket } from 'node:net'
import { testdir } from '../../testdir.js'
import { answering, call, freePort, run, within } from '../../server/serve-process.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })
// One body directory for the file's servers: they share the one catalog, whose buckets must be there.
const dataDir = testdir(t)

/** A TCP proxy to the catalog server that can stop forwarding (a hung server) and resume. */
async function hangingProxy (target: number): Promise<{ port: number, hang: () => void, resume: () => void, close: () => void }> {
  let hung = false
  const held: Array<() => void> = []
  const sockets = new Set<Socket>()
  const proxy = createServer(client => {
    const upstream = connect(target, '127.0.0.1')
    sockets.add(client).add(upstream)
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', chunk => { if (hung) held.push(() => to.write(chunk)); else to.write(chunk) })
      from.on('close', () => to.destroy())
      from.on('error', () => {})
    }
    forward(client, upstream)
    forward(upstream, client)
  })
  await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve))
  const address = proxy.address()
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    hang: () => { hung = true },
    resume: () => { hung = false; for (const send of held.splice(0)) send() },
    close: () => { for (const s of sockets) s.destroy(); proxy.close() }
  }
}

async function readyWithin (port: number, status: number, ms: number): Promise<{ status: number, body: string }> {
  const deadline = Date.now() + ms
  for (;;) {
    const answer = await call(port, 'GET', '/_health/ready')
    if (answer.status === status || Date.now() > deadline) return answer
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

t.test('readiness follows the catalog: stopped, hung, back', async t => {
  const proxy = await hangingProxy(server.port)
  t.teardown(proxy.close)
  const port = await freePort()
  const s3Port = await freePort()
  const catalog = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
  const served = run(['serve', '--data', dataDir, '--catalog', catalog, '--port', String(port), '--s3-port', String(s3Port), '--workers', '1', '--fsync', 'off', '--log-level', 'warn', '--token', 'pg-token'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await answering(port, served)
  t.equal((await call(port, 'GET', '/_health/ready')).status, 200, 'ready with the catalog up')

  await server.stop()
  for (const p of [port, s3Port]) {
    const started = Date.now()
    const down = await call(p, 'GET', '/_health/ready')
    t.equal(down.status, 503, 'the catalog stopped: not ready')
    t.same(JSON.parse(down.body), { status: 'unavailable', failed: ['catalog'] })
    t.ok(Date.now() - started < 3000, `answered in ${Date.now() - started} ms`)
    t.equal((await call(p, 'GET', '/_health/live')).status, 200, 'still live')
  }
  await server.start()
  t.equal((await readyWithin(port, 200, 15_000)).status, 200, 'the catalog back: ready again')

  proxy.hang()
  for (const p of [port, s3Port]) {
    const started = Date.now()
    const hung = await call(p, 'GET', '/_health/ready')
    const ms = Date.now() - started
    t.equal(hung.status, 503, 'the catalog hangs: not ready')
    t.same(JSON.parse(hung.body), { status: 'unavailable', failed: ['catalog'] })
    t.ok(ms < 3000, `answered in ${ms} ms, not hung`)
    t.equal((await call(p, 'GET', '/_health/live', undefined, { host: 'localhost' })).status, 200, 'live, even for a Host that could be a custom domain')
  }
  proxy.resume()
  t.equal((await readyWithin(port, 200, 15_000)).status, 200, 'answering again: ready')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')
})

t.test('without a token (open loopback), the probes by the name localhost still answer while the catalog is down', async t => {
  // The foreign-Host guard looks a name like `localhost` up among the custom domains, which are in the catalog.
  const port = await freePort()
  const s3Port = await freePort()
  const catalog = `postgres://postgres@127.0.0.1:${server.port}/postgres`
  const served = run(['serve', '--data', dataDir, '--catalog', catalog, '--port', String(port), '--s3-port', String(s3Port), '--workers', '1', '--fsync', 'off', '--log-level', 'error'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await answering(port, served)
  await server.stop()
  t.teardown(async () => { await server.start() })
  for (const p of [port, s3Port]) {
    const live = await call(p, 'GET', '/_health/live', undefined, { host: `localhost:${p}` })
    t.equal(live.status, 200, `live on ${p === port ? 'the routes' : 'the S3 port'}, by the name localhost`)
    const ready = await call(p, 'GET', '/_health/ready', undefined, { host: `localhost:${p}` })
    t.equal(ready.status, 503)
    t.same(JSON.parse(ready.body), { status: 'unavailable', failed: ['catalog'] }, 'not ready, naming the catalog')
    t.equal((await call(p, 'GET', '/_health/live', undefined, { host: 'rebound.example.test' })).status, p === port ? 421 : 403, 'a foreign name is still refused')
  }
  const api = await call(port, 'GET', '/client/v4/accounts/local/r2/buckets', undefined, { host: `localhost:${port}`, authorization: 'Bearer any' })
  t.equal(api.status, 503, 'the management API: unavailable')
  t.match(JSON.parse(api.body), { success: false, errors: [{ code: 10908 }] }, 'in the v4 envelope')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')
})
