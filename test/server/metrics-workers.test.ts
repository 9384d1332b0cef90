/**
 * The counters `/_metrics` sums over the workers never go down
 * (src/server/metrics.ts): not when a worker dies and is replaced (its
 * counts stay in the sum), not when one misses the gather (counted at its
 * last report). Prometheus would read either drop as a counter reset.
 * And a worker stopped the clean way (a SIGTERM to it alone: it drains,
 * the primary starts another) hands the primary its final counts, so what
 * it counted since its last report, or ever when it was never asked, stays.
 */
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { testdir } from '../testdir.js'
import { call, freePort, run, within } from './serve-process.js'

const port = await freePort()

/** The sum of every sample of `name` (of the series whose line matches `only`, when given). */
function total (text: string, name: string, only = /./): number {
  let sum = 0
  for (const line of text.split('\n')) {
    if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && only.test(line)) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

/** A scrape, on connections that give up after `ms` (one may land on a stopped worker), until one answers. */
async function scrape (ms = 4000): Promise<string> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const text = await new Promise<string | null>(resolve => {
      const req = request({ host: '127.0.0.1', port, path: '/_metrics', agent: false, timeout: ms }, res => {
        let body = ''
        res.on('data', chunk => { body += String(chunk) })
        res.on('end', () => { resolve(res.statusCode === 200 ? body : null) })
      })
      req.on('timeout', () => { req.destroy(); resolve(null) })
      req.on('error', () => { resolve(null) })
      req.end()
    })
    if (text !== null) return text
  }
  throw new Error('no scrape answered')
}

function workersOf (pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
}

t.test('summed counters never go down when a worker is replaced or misses the gather', async t => {
  const served = run(['serve', '--data', testdir(t), '--port', String(port), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'info'])
  const stopped: number[] = []
  t.teardown(() => {
    for (const pid of stopped) { try { process.kill(pid, 'SIGCONT') } catch {} }
    if (served.child.exitCode === null) served.child.kill('SIGKILL')
  })
  await within((async () => { while (!served.stdout().includes('"msg":"serving"')) await new Promise(resolve => setTimeout(resolve, 50)) })(), 60_000, 'serving')
  const primary = served.child.pid ?? 0

  for (let i = 0; i < 60; i++) t.equal((await call(port, 'GET', '/_health/live')).status, 200)
  const first = await scrape()
  const health = (text: string): number => total(text, 'fsbucket_requests_total', /operation="Health"/)
  t.equal(health(first), 60, 'every probe counted')

  const [killed] = workersOf(primary)
  process.kill(killed, 'SIGKILL')
  await within((async () => {
    while (workersOf(primary).length < 2 || workersOf(primary).includes(killed)) await new Promise(resolve => setTimeout(resolve, 50))
  })(), 30_000, 'the worker replaced')
  await new Promise(resolve => setTimeout(resolve, 1500))
  const afterRestart = await scrape()
  t.ok(health(afterRestart) >= health(first), `the probes the dead worker counted stay (${health(first)} then ${health(afterRestart)})`)
  t.ok(total(afterRestart, 'fsbucket_requests_total') >= total(first, 'fsbucket_requests_total'), 'requests_total does not go down')
  t.ok(total(afterRestart, 'fsbucket_request_duration_seconds_count') >= total(first, 'fsbucket_request_duration_seconds_count'), 'nor a histogram')
  t.ok(total(afterRestart, 'process_cpu_seconds_total') >= total(first, 'process_cpu_seconds_total'), 'nor the CPU time')

  // Both workers report once more, then one stops answering.
  let previous = await scrape()
  const [stuck] = workersOf(primary)
  stopped.push(stuck)
  process.kill(stuck, 'SIGSTOP')
  for (let i = 0; i < 3; i++) {
    const now = await scrape()
    t.ok(total(now, 'fsbucket_requests_total') >= total(previous, 'fsbucket_requests_total'),
      `a worker stopped, scrape ${i + 1}: ${total(previous, 'fsbucket_requests_total')} then ${total(now, 'fsbucket_requests_total')}`)
    t.ok(total(now, 'process_cpu_seconds_total') >= total(previous, 'process_cpu_seconds_total'), `scrape ${i + 1}: the CPU time does not go down`)
    previous = now
  }
  process.kill(stuck, 'SIGCONT')
  const resumed = await scrape()
  t.ok(total(resumed, 'fsbucket_requests_total') >= total(previous, 'fsbucket_requests_total'), 'resumed: no drop either')

  // A worker that leaves while a gather waits for it ends the wait then, not at the gather's timeout (2 s).
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  const onAgent = async (path: string): Promise<string> => await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, res => {
      let body = ''
      res.on('data', chunk => { body += String(chunk) })
      res.on('end', () => { resolve(body) })
    }).on('error', reject).end()
  })
  const lines = served.stdout().split('\n').length
  await onAgent('/_health/live')
  /** The worker that answered the probe, from its log line (written once the answer is). */
  const probeLine = async (): Promise<string> => {
    for (;;) {
      const line = served.stdout().split('\n').slice(lines - 1).find(line => line.includes('/_health/live'))
      if (line !== undefined) return line
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
  const answering = Number(/"pid":(\d+),/.exec(await within(probeLine(), 10_000, 'the probe\'s log line'))?.[1])
  const [leaving] = workersOf(primary).filter(pid => pid !== answering)
  t.ok(workersOf(primary).includes(answering) && leaving !== undefined, `the agent's connection is worker ${answering}'s, the other is ${leaving}`)
  stopped.push(leaving)
  process.kill(leaving, 'SIGSTOP')
  const began = Date.now()
  const killing = setTimeout(() => { process.kill(leaving, 'SIGKILL') }, 300)
  const left = await onAgent('/_metrics')
  clearTimeout(killing)
  t.ok(Date.now() - began < 1500, `the scrape answered ${Date.now() - began} ms after it was asked, its gather ending as the worker left`)
  t.ok(total(left, 'fsbucket_requests_total') >= total(resumed, 'fsbucket_requests_total'), 'and the leaving worker\'s counts stay in the sum')

  // A worker killed holding a connection the primary handed it and it never took: Node says no 'disconnect' of it,
  // and the primary must still replace it (worker-channel.ts).
  // Both listening: with the other one still starting, the hung one would be the port's last listener, and its death would close the port until the replacement listens.
  const listening = (pid: number): boolean => served.stdout().split('\n').some(line => line.includes(`"pid":${pid},`) && line.includes('gateway listening'))
  await within((async () => { while (workersOf(primary).length < 2 || !workersOf(primary).every(listening)) await new Promise(resolve => setTimeout(resolve, 50)) })(), 30_000, 'two workers listening again')
  const [hung] = workersOf(primary)
  stopped.push(hung)
  process.kill(hung, 'SIGSTOP')
  const sockets = Array.from({ length: 6 }, () => connect(port, '127.0.0.1', function (this: Socket) { this.write('GET /_health/live HTTP/1.1\r\nHost: x\r\n\r\n') }).on('error', () => {}))
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  await new Promise(resolve => setTimeout(resolve, 300))
  process.kill(hung, 'SIGKILL')
  await within((async () => {
    while (workersOf(primary).length < 2 || workersOf(primary).includes(hung)) await new Promise(resolve => setTimeout(resolve, 50))
  })(), 10_000, 'the worker killed with a connection it never took is replaced')
  t.equal((await call(port, 'GET', '/_health/live')).status, 200, 'serving')
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0, 'and the stop finds no worker left behind')
})

t.test('a worker stopped the clean way while the server runs hands over every request it counted', async t => {
  const served = run(['serve', '--data', testdir(t), '--port', String(port), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'info'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await within((async () => { while (!served.stdout().includes('"msg":"serving"')) await new Promise(resolve => setTimeout(resolve, 50)) })(), 60_000, 'serving')
  const primary = served.child.pid ?? 0
  const health = (text: string): number => total(text, 'fsbucket_requests_total', /operation="Health"/)
  const [first, second] = workersOf(primary)
  /** SIGTERM to one worker: it drains and exits 0, and the primary, serving on, starts another. */
  /** SIGTERM to one worker, then waits for it to be gone and its replacement listening (the next stop must not leave none). */
  const stopWorker = async (pid: number): Promise<void> => {
    const others = workersOf(primary).filter(other => other !== pid)
    process.kill(pid, 'SIGTERM')
    await within((async () => {
      for (;;) {
        const now = workersOf(primary)
        const replacement = now.find(other => !others.includes(other) && other !== pid)
        if (!now.includes(pid) && replacement !== undefined &&
          served.stdout().split('\n').some(line => line.includes(`"pid":${replacement},`) && line.includes('gateway listening'))) return
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    })(), 30_000, 'the worker replaced, its replacement listening')
  }
  const servedBy = (pid: number): number => served.stdout().split('\n').filter(line => line.includes(`"pid":${pid},`) && line.includes('/_health/live')).length

  // No scrape yet: the primary has never asked the first worker, which goes with everything it counted but for its last word.
  for (let i = 0; i < 40; i++) t.equal((await call(port, 'GET', '/_health/live')).status, 200)
  t.ok(servedBy(first) > 0, `the first worker answered probes (${servedBy(first)} of 40)`)
  await stopWorker(first)
  t.equal(health(await scrape()), 40, 'the probes of a worker that was never asked are counted')

  // The second worker reported at that scrape; what it counts after goes with it too, unless it says so as it stops.
  const before = servedBy(second)
  for (let i = 0; i < 40; i++) t.equal((await call(port, 'GET', '/_health/live')).status, 200)
  await stopWorker(second)
  t.ok(servedBy(second) > before, 'the second worker answered probes after its last report')
  t.equal(health(await scrape()), 80, 'and those are counted as well')

  // A stop asked for is no death: each is replaced at once, said at info, and six within a minute are no crash loop.
  for (let i = 0; i < 4; i++) {
    const [stopping, staying] = workersOf(primary)
    await stopWorker(stopping)
    // The next stop waits for the replacement to answer, or it could leave no worker listening.
    const replacement = workersOf(primary).find(pid => pid !== staying) ?? 0
    await within((async () => { while (servedBy(replacement) === 0) t.equal((await call(port, 'GET', '/_health/live')).status, 200) })(), 30_000, 'the replacement answering')
  }
  t.equal((await call(port, 'GET', '/_health/live')).status, 200, 'still serving after six stops within a minute')
  const logged = (): Array<{ level: number, msg: string, signal?: string }> => served.stdout().split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line) as { level: number, msg: string, signal?: string })
  const replaced = logged().filter(line => line.msg === 'worker stopping on a signal of its own; starting another')
  t.equal(replaced.length, 6, 'one line for each worker stopped')
  t.ok(replaced.every(line => line.level === 30 && line.signal === 'SIGTERM'), 'at info, naming the signal')
  t.equal(logged().filter(line => line.msg === 'worker stopped').length, 6, 'and one as each is gone')

  // A worker sent its SIGTERM before it serves (loading, or waiting for its options) is a stop asked for too.
  for (let i = 0; i < 3; i++) {
    const [stopping, staying] = workersOf(primary)
    process.kill(stopping, 'SIGTERM')
    let young = 0
    await within((async () => { while ((young = workersOf(primary).find(pid => pid !== staying && pid !== stopping) ?? 0) === 0) await new Promise(resolve => setTimeout(resolve, 5)) })(), 30_000, 'a replacement forked')
    process.kill(young, 'SIGTERM')
    await within((async () => {
      while (workersOf(primary).length < 2 || workersOf(primary).includes(young) || workersOf(primary).includes(stopping)) await new Promise(resolve => setTimeout(resolve, 50))
    })(), 30_000, 'both replaced')
    const replacement = workersOf(primary).find(pid => pid !== staying) ?? 0
    await within((async () => { while (servedBy(replacement) === 0) t.equal((await call(port, 'GET', '/_health/live')).status, 200) })(), 30_000, 'the replacement answering')
  }
  t.equal((await call(port, 'GET', '/_health/live')).status, 200, 'still serving after twelve stops within a minute, six before serving')
  t.notOk(logged().some(line => /worker died|keep dying/.test(line.msg)), 'no worker said to have died')
  served.child.kill('SIGTERM')
  await within(served.exited, 30_000, 'exit')
})
