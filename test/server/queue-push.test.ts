/**
 * Push delivery (`serve --queue-push`): the `<queue>=<url>` specs, the
 * back-off, and a real receiver on loopback that fails the first batch
 * (500), then accepts: the batch comes again after its back-off with its
 * attempts counted, is acknowledged by the 2xx, and is not sent again;
 * and a two-worker `serve` whose primary pushes.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { addRules, openRegistry, Queues, type BucketRegistry, type QueueRecord } from '../../src/index.js'
import { parseQueuePush, pushBackoffSeconds, pushStopGraceMs, startQueuePush, pushFailureLogger, type StopQueuePush } from '../../src/server/queue-push.js'
import { buildCli } from '../../src/main.js'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within } from './serve-process.js'

t.test('parseQueuePush', async t => {
  t.same(parseQueuePush('photo-events=http://127.0.0.1:3000/hook'), { queue: 'photo-events', url: 'http://127.0.0.1:3000/hook' })
  for (const bad of ['photo-events', '=http://x/', 'Photo=http://x/', 'q=not a url', 'q=ftp://x/']) {
    t.throws(() => parseQueuePush(bad), `refused: ${bad}`)
  }
})

t.test('parseQueuePush refuses credentials in the URL (fetch would never send them), and no refusal repeats them', async t => {
  t.throws(() => parseQueuePush('evq=http://app:SECRET@127.0.0.1:3000/hook'),
    { message: 'queue "evq": the URL must not hold credentials (user:password@): fetch refuses to send them, so no batch could be delivered' })
  t.throws(() => parseQueuePush('evq=http://app@127.0.0.1:3000/hook'), /must not hold credentials/, 'a user name alone too')
  for (const bad of ['evq=http://app:SECRET@[bad', 'http://app:SECRET@127.0.0.1/hook', 'evq=ftp://app:SECRET@x/', 'Q=http://app:SECRET@x/']) {
    let message = ''
    try { parseQueuePush(bad) } catch (err) { message = (err as Error).message }
    t.ok(message !== '' && !message.includes('SECRET'), `refused, not repeated: ${bad} (${message})`)
  }
})

t.test('pushBackoffSeconds doubles up to 5 minutes', async t => {
  t.same([1, 2, 3, 4, 10, 20].map(pushBackoffSeconds), [1, 2, 4, 8, 300, 300])
})

t.test('serve takes --queue-push, repeatable', async t => {
  const serve = buildCli().commands.find(c => c.name() === 'serve')!
  serve.action(() => {})
  await serve.parseAsync(['--queue-push', 'a=http://127.0.0.1:1/x', '--queue-push', 'b=http://127.0.0.1:2/y'], { from: 'user' })
  t.same(serve.opts().queuePush, [{ queue: 'a', url: 'http://127.0.0.1:1/x' }, { queue: 'b', url: 'http://127.0.0.1:2/y' }])
})

/** A registry with bucket `photos` whose PutObject events go to the queue `photo-events`. */
async function photoEvents (t: Test): Promise<{ registry: BucketRegistry, queues: Queues, queue: QueueRecord }> {
  const registry = await openRegistry(await photoEventsDirectory(t), { fsync: false })
  t.teardown(async () => { await registry.close() })
  const queues = new Queues(registry)
  return { registry, queues, queue: (await queues.byName('photo-events'))! }
}

/** A data directory whose bucket `photos` sends its PutObject events to the queue `photo-events`, closed (a server opens it). */
async function photoEventsDirectory (t: Test): Promise<string> {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const queue = (await new Queues(registry).create('photo-events'))!
  await registry.changeNotifications('photos', current => addRules(current, queue.queue_id, 'b'.repeat(32), [{ prefix: '', suffix: '', actions: ['PutObject'] }], new Date()))
  await registry.close()
  return dataDir
}

t.test('a failing receiver gets the batch again after its back-off, then acknowledges it', async t => {
  const { registry, queues, queue } = await photoEvents(t)

  const received: Array<{ at: number, batch: any }> = []
  const server = http.createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => { text += chunk })
    req.on('end', () => {
      received.push({ at: Date.now(), batch: JSON.parse(text) })
      res.statusCode = received.length === 1 ? 500 : 204
      res.end()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`

  await (await registry.open('photos'))!.put('cats/tom.jpg', 'meow')
  const failures: string[] = []
  const stop = startQueuePush(registry, [{ queue: 'photo-events', url }], { pollMs: 50, onFailure: (_push, reason) => failures.push(reason) })
  t.teardown(stop)
  const deadline = Date.now() + 10_000
  while (received.length < 2 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  // A few more polls: an acknowledged batch is not sent again.
  await new Promise(resolve => setTimeout(resolve, 300))
  await stop()

  t.equal(received.length, 2, 'sent twice: once refused, once accepted')
  const [first, second] = received
  t.equal(first.batch.queue, 'photo-events')
  t.match(first.batch.messages, [{ id: /^[0-9a-f]{32}$/, attempts: 1, body: { action: 'PutObject', bucket: 'photos', object: { key: 'cats/tom.jpg', size: 4 } } }])
  t.equal(second.batch.messages[0].id, first.batch.messages[0].id, 'the same message again')
  t.equal(second.batch.messages[0].attempts, 2, 'its attempts counted')
  t.ok(second.at - first.at >= 900, `retried after its back-off of 1 s (${second.at - first.at} ms)`)
  t.same(failures, ['answered 500'], 'the failure was reported')
  t.equal(await queues.backlog(queue.queue_id), 0, 'the accepted batch was acknowledged')
})

/** A PutObject event pushed to an app answering with `app`, once the app has been asked: the push's stop, and how often it was asked. */
async function pushInFlight (t: Test, app: http.RequestListener, stopGraceMs: number): Promise<{ registry: BucketRegistry, queues: Queues, queue: QueueRecord, stop: StopQueuePush, asked: () => number }> {
  const { registry, queues, queue } = await photoEvents(t)
  let asked = 0
  const server = http.createServer((req, res) => { asked++; app(req, res) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  await (await registry.open('photos'))!.put('cats/tom.jpg', 'meow')
  const stop = startQueuePush(registry, [{ queue: 'photo-events', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events` }], { pollMs: 50, stopGraceMs })
  const deadline = Date.now() + 10_000
  while (asked === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  return { registry, queues, queue, stop, asked: () => asked }
}

t.test('stopping cuts a delivery in flight to an app that does not answer: the stop is prompt and the batch waits for a retry', async t => {
  const { queues, queue, stop, asked } = await pushInFlight(t, () => {}, 300)
  t.equal(asked(), 1, 'the batch is in flight')
  const started = Date.now()
  await stop()
  t.ok(Date.now() - started >= 250 && Date.now() - started < 2000, `stopped in ${Date.now() - started} ms: after its grace of 300 ms for an answer, not the app's 30 s`)
  t.equal(await queues.backlog(queue.queue_id), 1, 'the message is kept for a retry')
  const { messages } = await queues.pull(queue, 10, 60_000)
  t.equal(messages.length, 1, 'visible again at once: the cut is not a failure of the app that earns a back-off')
  t.equal(messages[0].attempts, 1, 'this delivery is its first: the cut one counts no attempt (with max_retries 0 it would have retired the message)')
})

t.test('a forced stop cuts a delivery in flight at once, a grace already running too: the batch is released, not left leased', async t => {
  const { queues, queue, stop } = await pushInFlight(t, () => {}, 60_000)
  const graceful = stop()
  await new Promise(resolve => setTimeout(resolve, 100))
  const started = Date.now()
  await within(stop(true), 3000, 'the forced stop')
  await graceful
  t.ok(Date.now() - started < 2000, `stopped in ${Date.now() - started} ms, not after the grace of 60 s`)
  const { messages } = await queues.pull(queue, 10, 60_000)
  t.same(messages.map(m => m.attempts), [1], 'visible again at once, the cut delivery not counted')
})

t.test('a batch a pushing process left leased (it died without a stop) comes back 60 s after it was pulled, that delivery counted', async t => {
  const { registry, queue, stop } = await pushInFlight(t, () => {}, 0)
  t.teardown(stop)
  const at = (ms: number): Queues => new Queues(registry, () => new Date(Date.now() + ms))
  t.same((await at(59_000).pull(queue, 10, 60_000)).messages, [], 'still leased after 59 s')
  const { messages } = await at(61_000).pull(queue, 10, 60_000)
  t.same(messages.map(m => m.attempts), [2], 'handed out again after 60 s (twice the app\'s 30 s to answer), its second attempt')
})

t.test('a stop\'s grace for a push in flight is half the drain timeout, at most 5 s', async t => {
  t.same([pushStopGraceMs(), pushStopGraceMs(10), pushStopGraceMs(4), pushStopGraceMs(1), pushStopGraceMs(0)], [5000, 5000, 2000, 500, 0])
})

t.test('a delivery in flight when the stop comes is answered within the grace: acknowledged, not cut', async t => {
  const { queues, queue, stop } = await pushInFlight(t, (req, res) => { req.resume(); setTimeout(() => { res.statusCode = 204; res.end() }, 300) }, 5000)
  await stop()
  t.equal(await queues.backlog(queue.queue_id), 0, 'the app\'s answer came within the grace: the batch is acknowledged')
})

t.test('serve with two workers pushes, from its primary, each message once', async t => {
  const dataDir = await photoEventsDirectory(t)

  const received: any[] = []
  const receiver = http.createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => { text += chunk })
    req.on('end', () => { received.push(JSON.parse(text)); res.statusCode = 204; res.end() })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { receiver.close() })
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`

  const port = await freePort()
  const served = run(['serve', '--data', dataDir, '--port', String(port), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'warn', '--queue-push', `photo-events=${url}`])
  t.teardown(async () => {
    served.child.kill('SIGTERM')
    await within(served.exited, 30_000, 'serve to stop')
  })
  await answering(port, served)
  for (const key of ['a.jpg', 'b.jpg', 'c.jpg']) t.equal((await call(port, 'PUT', `/photos/${key}`, 'meow')).status, 200)
  const deadline = Date.now() + 15_000
  const keys = (): string[] => received.flatMap(batch => batch.messages.map((m: any) => m.body.object.key as string)).sort()
  while (keys().length < 3 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
  // A few more polls: nothing is sent twice (one process pushes, and each batch was acknowledged).
  await new Promise(resolve => setTimeout(resolve, 1500))
  t.same(keys(), ['a.jpg', 'b.jpg', 'c.jpg'], 'each message pushed once')
  t.ok(received.every(batch => batch.queue === 'photo-events'))
})

/** A served photo-events directory whose queue is pushed to an app that never answers, once a batch is in flight to it. */
async function servedPushInFlight (t: Test, workers: string, drainTimeout: string): Promise<{ dataDir: string, served: ReturnType<typeof run> }> {
  const dataDir = await photoEventsDirectory(t)
  let asked = 0
  const silent = http.createServer(() => { asked++ })
  await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.closeAllConnections(); silent.close() })
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/events`
  const port = await freePort()
  const served = run(['serve', '--data', dataDir, '--port', String(port), '--s3-port', '0', '--workers', workers, '--fsync', 'off', '--log-level', 'warn', '--drain-timeout', drainTimeout, '--queue-push', `photo-events=${url}`])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  t.equal((await call(port, 'PUT', '/photos/a.jpg', 'meow')).status, 200)
  const deadline = Date.now() + 15_000
  while (asked === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  t.equal(asked, 1, 'the batch is in flight')
  return { dataDir, served }
}

t.test('serve stopping with a push in flight to an app that never answers: exit 0 within a short drain timeout, the message kept uncounted', async t => {
  const { dataDir, served } = await servedPushInFlight(t, '2', '2')
  const started = Date.now()
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 10_000, 'serve to stop'), 0, `exit 0: the push was cut within the drain timeout of 2 s (${served.stderr()})`)
  t.ok(Date.now() - started < 3000, `stopped in ${Date.now() - started} ms`)

  const after = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await after.close() })
  const queues = new Queues(after)
  const { messages } = await queues.pull((await queues.byName('photo-events'))!, 10, 60_000)
  t.same(messages.map(m => m.attempts), [1], 'the message waits, visible at once, its cut delivery not counted')
})

t.test('a failed delivery is logged by the app\'s origin alone: a webhook\'s path or query may hold its token', async t => {
  const lines: Array<{ fields: object, message: string }> = []
  const log = { warn: (fields: object, message: string) => { lines.push({ fields, message }) } }
  pushFailureLogger(log)(parseQueuePush('evq=http://127.0.0.1:9/hook?token=SECRET'), 'answered 500')
  pushFailureLogger(log)(parseQueuePush('evq=http://127.0.0.1:9/hooks/SECRET'), 'answered 500')
  t.same(lines.map(line => line.fields), [
    { queue: 'evq', origin: 'http://127.0.0.1:9', reason: 'answered 500' },
    { queue: 'evq', origin: 'http://127.0.0.1:9', reason: 'answered 500' }
  ])
  t.notMatch(JSON.stringify(lines), 'SECRET')
})

for (const workers of ['1', '2']) {
  t.test(`serve (--workers ${workers}) stopped by a second signal with a push in flight: the batch is released, visible again at once, not leased`, async t => {
    // A drain timeout of 30 s: the push's grace (5 s) is still running when the second signal comes.
    const { dataDir, served } = await servedPushInFlight(t, workers, '30')
    served.child.kill('SIGTERM')
    await new Promise(resolve => setTimeout(resolve, 300))
    const started = Date.now()
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 10_000, 'serve to stop'), 1, 'a second signal exits 1')
    t.ok(Date.now() - started < 3000, `at once (${Date.now() - started} ms)`)

    const after = await openRegistry(dataDir, { fsync: false })
    t.teardown(async () => { await after.close() })
    const queues = new Queues(after)
    const { messages } = await queues.pull((await queues.byName('photo-events'))!, 10, 60_000)
    t.same(messages.map(m => m.attempts), [1], 'the message waits, visible at once, its cut delivery not counted')
  })
}
