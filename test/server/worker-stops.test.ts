/**
 * Stops that reach workers of `serve --workers 2`: a SIGTERM to the whole
 * process group (what systemd sends without `KillMode`), which a worker
 * may hear after the primary's word to drain; a worker still starting when
 * it comes; one already draining on a signal of its own when the group's
 * comes; and a worker replaced under load, whose kept-alive
 * connections must not meet a reset for a request sent as it stops.
 */
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { Agent, request } from 'node:http'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within, type Served } from './serve-process.js'

function workersOf (primary: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' }).trim().split('\n').filter(s => s !== '').map(Number)
  } catch {
    return []
  }
}

async function serving (t: Test, port: number): Promise<Served> {
  const served = run(['serve', '--data', testdir(t), '--port', String(port), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'info'], { detached: true })
  t.teardown(() => { if (served.child.exitCode === null && served.child.signalCode === null) process.kill(-(served.child.pid ?? 0), 'SIGKILL') })
  await answering(port, served)
  await within((async () => { while (!served.stdout().includes('"msg":"serving"')) await new Promise(resolve => setTimeout(resolve, 50)) })(), 60_000, 'serving')
  return served
}

/** A PUT whose body of `size` bytes comes in ten pieces over `ms`: its status, or the error that cut it. */
async function slowPut (port: number, key: string, size: number, ms: number): Promise<number | string> {
  return await new Promise(resolve => {
    const req = request({ host: '127.0.0.1', port, method: 'PUT', path: `/default/${key}`, agent: false, headers: { 'content-length': String(size) } }, res => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('error', err => { resolve(err.message) })
    const piece = Buffer.alloc(size / 10, 'x')
    let sent = 0
    const timer = setInterval(() => {
      req.write(piece)
      if (++sent === 10) {
        clearInterval(timer)
        req.end()
      }
    }, ms / 10)
  })
}

/**
 * GETs of `/default/k` from `clients` loops (on `agent`, or a new connection
 * each with false), `warmMs` before `during` and 300 ms after it: each
 * answer's status, or the error that cut it.
 */
async function underLoad (port: number, agent: Agent | false, clients: number, warmMs: number, during: () => Promise<void>): Promise<Array<number | string>> {
  const get = async (): Promise<number | string> => await new Promise(resolve => {
    request({ host: '127.0.0.1', port, path: '/default/k', agent }, res => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    }).on('error', err => { resolve(err.message) }).end()
  })
  let running = true
  const outcomes: Array<number | string> = []
  const loops = Array.from({ length: clients }, async () => { while (running) outcomes.push(await get()) })
  await new Promise(resolve => setTimeout(resolve, warmMs))
  await during()
  await new Promise(resolve => setTimeout(resolve, 300))
  running = false
  await Promise.all(loops)
  return outcomes
}

/**
 * Four uploads taking `uploadMs` each over the two workers, then a SIGTERM
 * to one worker alone, once they are under way: returned once that worker
 * drains (its replacement listens), with the uploads' outcomes to come.
 */
async function drainingAlone (port: number, served: Served, uploadMs: number): Promise<{ first: number, uploads: Promise<Array<number | string>> }> {
  const uploads = Promise.all(['a', 'b', 'c', 'd'].map(async key => await slowPut(port, key, 100_000, uploadMs)))
  await new Promise(resolve => setTimeout(resolve, 300))
  const [first] = workersOf(served.child.pid ?? 0)
  process.kill(first, 'SIGTERM')
  const draining = new RegExp(`"pid":${first},[^\\n]*"reason":"SIGTERM"[^\\n]*"msg":"draining: `)
  await within((async () => { while (!draining.test(served.stdout())) await new Promise(resolve => setTimeout(resolve, 20)) })(), 30_000, 'the first worker draining')
  return { first, uploads }
}

t.test('a SIGTERM reaching a worker after the primary\'s word to drain is the same stop, not a second signal: uploads in flight finish, exit 0', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  const uploads = [slowPut(port, 'a', 100_000, 1500), slowPut(port, 'b', 100_000, 1500), slowPut(port, 'c', 100_000, 1500)]
  await new Promise(resolve => setTimeout(resolve, 300))
  // As a group signal lands when the primary's word reached the workers first.
  const workers = workersOf(primary)
  process.kill(primary, 'SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 150))
  for (const worker of workers) process.kill(worker, 'SIGTERM')
  t.same(await Promise.all(uploads), [200, 200, 200], 'every upload in flight finished')
  t.equal(await within(served.exited, 30_000, 'exit'), 0, 'exit 0')
  t.notMatch(served.stdout(), /second signal: exiting now/)
})

t.test('a group SIGTERM reaching a worker already draining on a signal of its own is the same stop: its uploads finish, exit 0', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  const { uploads } = await drainingAlone(port, served, 4000)
  process.kill(-primary, 'SIGTERM')
  t.same(await uploads, [200, 200, 200, 200], 'every upload in flight finished')
  t.equal(await within(served.exited, 30_000, 'exit'), 0, 'exit 0')
  t.notMatch(served.stdout(), /second signal: exiting now/)
})

t.test('a second SIGTERM to a worker draining on a signal of its own, with no stop of the server behind it, exits it: the primary warns its requests were cut and serves on', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  const { first, uploads } = await drainingAlone(port, served, 6000)
  const sent = Date.now()
  process.kill(first, 'SIGTERM')
  await within((async () => { while (workersOf(primary).includes(first)) await new Promise(resolve => setTimeout(resolve, 20)) })(), 10_000, 'the worker gone')
  t.ok(Date.now() - sent < 4000, 'gone within its wait for the primary\'s word, not after its drain')
  t.match(served.stdout(), /second signal: exiting now/)
  await within((async () => { while (!served.stdout().includes('worker stopped before it drained: requests in flight were cut')) await new Promise(resolve => setTimeout(resolve, 20)) })(), 10_000, 'the primary\'s warning')
  const outcomes = await uploads
  t.ok(outcomes.some(outcome => outcome !== 200), `an upload of the worker was cut: ${outcomes.join(', ')}`)
  t.equal((await call(port, 'PUT', '/default/after', 'x')).status, 200, 'the server serves on')
  process.kill(primary, 'SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

t.test('a group SIGTERM while a worker is still starting: exit 0, no worker left', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  const [first, second] = workersOf(primary)
  process.kill(first, 'SIGTERM')
  let young = 0
  await within((async () => { while ((young = workersOf(primary).find(pid => pid !== first && pid !== second) ?? 0) === 0) await new Promise(resolve => setTimeout(resolve, 5)) })(), 30_000, 'a replacement forked')
  process.kill(-primary, 'SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0, 'exit 0: the worker still starting served nothing, so nothing was cut')
  t.same(workersOf(primary), [], 'no worker left')
  t.ok(young > 0)
  t.notMatch(served.stdout(), /second signal: exiting now/, 'the worker waiting for its replacement took the group\'s signal as the stop, not as a second')
})

t.test('a worker replaced under load: kept-alive clients meet no reset, every request answered', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  t.equal((await call(port, 'PUT', '/default/k', 'x'.repeat(1024))).status, 200)
  const agent = new Agent({ keepAlive: true, maxSockets: 10 })
  t.teardown(() => { agent.destroy() })
  const outcomes = await underLoad(port, agent, 10, 500, async () => {
    const [stopping] = workersOf(primary)
    process.kill(stopping, 'SIGTERM')
    await within((async () => { while (workersOf(primary).includes(stopping)) await new Promise(resolve => setTimeout(resolve, 20)) })(), 30_000, 'the worker gone')
  })
  const failed = outcomes.filter(outcome => outcome !== 200)
  t.ok(outcomes.length > 100, `requests made: ${outcomes.length}`)
  t.same(failed, [], 'none failed')
  process.kill(primary, 'SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

t.test('every worker sent a SIGTERM of its own at once: each serves on until its replacement listens, so no connection is refused', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  t.equal((await call(port, 'PUT', '/default/k', 'x'.repeat(1024))).status, 200)
  // A new connection a request: one refused while no worker listens would show.
  const outcomes = await underLoad(port, false, 4, 300, async () => {
    const before = workersOf(primary)
    t.equal(before.length, 2)
    for (const worker of before) process.kill(worker, 'SIGTERM')
    await within((async () => { while (workersOf(primary).some(pid => before.includes(pid))) await new Promise(resolve => setTimeout(resolve, 20)) })(), 30_000, 'the old workers gone')
  })
  const failed = outcomes.filter(outcome => outcome !== 200)
  t.ok(outcomes.length > 50, `requests made: ${outcomes.length}`)
  t.same(failed, [], 'none refused or failed')
  t.equal(workersOf(primary).length, 2, 'two workers serve')
  t.match(served.stdout(), /serving on until its replacement listens/)
  process.kill(primary, 'SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

t.test('a worker waiting for its replacement to listen drains at once on the primary\'s word (the whole server stops)', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  // Each worker's own SIGTERM, then the primary's: whichever the primary hears first, no replacement ever serves.
  for (const worker of workersOf(primary)) process.kill(worker, 'SIGTERM')
  process.kill(primary, 'SIGTERM')
  const began = Date.now()
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
  const took = Date.now() - began
  t.ok(took < 5000, `stopped in ${took} ms, not after the wait for a replacement`)
  t.notMatch(served.stdout(), /second signal: /)
})

t.test('an answer begun as the server drains says keep-alive: its client may still send one more request, answered with Connection: close', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  t.equal((await call(port, 'PUT', '/default/big', Buffer.alloc(16 * 1024 * 1024, 'b'))).status, 200)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  const get = async (path: string, then?: () => void): Promise<{ status: number | string, connection?: string, bytes: number }> => await new Promise(resolve => {
    request({ host: '127.0.0.1', port, path, agent }, res => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      // Read slowly at first, so that the answer is still going out when the server drains.
      res.pause()
      setTimeout(() => { then?.(); res.resume() }, 300)
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, bytes }) })
    }).on('error', err => { resolve({ status: err.message, bytes: 0 }) }).end()
  })
  const first = await get('/default/big', () => { process.kill(primary, 'SIGTERM') })
  t.match(first, { status: 200, connection: 'keep-alive', bytes: 16 * 1024 * 1024 }, 'the answer begun before the drain, whole')
  const second = await get('/default/big')
  t.match(second, { status: 200, connection: 'close', bytes: 16 * 1024 * 1024 }, 'the next request on its connection is answered, the last')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

t.test('a scrape while a replacement worker is still starting does not wait for it (it has counted nothing)', async t => {
  const port = await freePort()
  const served = await serving(t, port)
  const primary = served.child.pid ?? 0
  // The first scrape loads the metrics' modules; this one measures the gather alone.
  t.equal((await call(port, 'GET', '/_metrics')).status, 200)
  const before = workersOf(primary)
  process.kill(before[0], 'SIGTERM')
  await within((async () => { while (!workersOf(primary).some(pid => !before.includes(pid))) await new Promise(resolve => setTimeout(resolve, 5)) })(), 30_000, 'a replacement forked')
  const began = Date.now()
  t.equal((await call(port, 'GET', '/_metrics')).status, 200)
  const took = Date.now() - began
  t.ok(took < 1500, `answered in ${took} ms, not after the gather's 2 s timeout`)
  process.kill(primary, 'SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})
