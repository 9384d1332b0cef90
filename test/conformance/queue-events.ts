/**
 * Event notifications end to end, over real sockets, for any registry
 * storage: a queue and its http_pull consumer made through the management
 * API, a rule for every action, then changes made through each door (the
 * library binding, the HTTP routes, the S3 port, a lifecycle deletion)
 * and refused writes; a consumer's pull loop must see exactly the events
 * of the committed changes, with the hosted message body. Then the
 * delivery rules: a lease hides a message until its visibility timeout,
 * a retry brings it back, an acknowledgement removes it, a stale lease
 * settles nothing.
 */
import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { CopyObjectCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { buildApp } from '../../src/app.js'
import { Queues, type BucketEngine, type BucketRegistry } from '../../src/index.js'
import { buildS3App, DEVELOPMENT_CREDENTIAL, s3AccessPolicy } from '../../src/s3/index.js'

const TOKEN = 'queue-events-token-0123456789'
export const ACCOUNT = '5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a'

export interface QueueApi {
  base: string
  call: (method: string, path: string, body?: unknown) => Promise<{ status: number, body: any }>
}

/** The gateway (routes and management API) and the S3 port over `registry`, listening on loopback. */
export async function listen (t: Test, registry: BucketRegistry, dataDir: string): Promise<QueueApi & { s3: S3Client }> {
  const app = await buildApp({
    dataDir, host: '127.0.0.1', token: TOKEN, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry,
    management: { tokens: [TOKEN], keys: [] }
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const s3app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: false })
  await s3app.listen({ host: '127.0.0.1', port: 0 })
  const s3 = new S3Client({
    endpoint: `http://127.0.0.1:${(s3app.server.address() as AddressInfo).port}`,
    region: 'auto',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: DEVELOPMENT_CREDENTIAL.accessKeyId, secretAccessKey: DEVELOPMENT_CREDENTIAL.secretAccessKey }
  })
  t.teardown(async () => { s3.destroy(); await s3app.close(); await app.close() })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const call: QueueApi['call'] = async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    })
    const text = await res.text()
    let parsed: any = text
    try { parsed = JSON.parse(text) } catch {}
    return { status: res.status, body: parsed }
  }
  return { base, call, s3 }
}

/** Pulls and acknowledges until the queue is empty; the message bodies, parsed. */
export async function drain (api: QueueApi, queueId: string): Promise<any[]> {
  const bodies: any[] = []
  for (;;) {
    const pulled = await api.call('POST', `/client/v4/accounts/${ACCOUNT}/queues/${queueId}/messages/pull`, { batch_size: 100, visibility_timeout_ms: 60_000 })
    if (pulled.status !== 200) throw new Error(`pull: ${JSON.stringify(pulled.body)}`)
    const messages = pulled.body.result.messages as Array<{ lease_id: string, body: string }>
    if (messages.length === 0) return bodies
    bodies.push(...messages.map(m => JSON.parse(m.body)))
    const acked = await api.call('POST', `/client/v4/accounts/${ACCOUNT}/queues/${queueId}/messages/ack`, { acks: messages.map(m => ({ lease_id: m.lease_id })) })
    if (acked.body.result.ackCount !== messages.length) throw new Error(`ack: ${JSON.stringify(acked.body)}`)
  }
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex')

/** The suite; `registry` holds no buckets yet and allows 5-byte parts. */
export async function queueEventSuite (t: Test, registry: BucketRegistry, dataDir: string): Promise<void> {
  await registry.create('photos')
  const api = await listen(t, registry, dataDir)
  const { call, s3 } = api
  const v4 = `/client/v4/accounts/${ACCOUNT}`

  let queueId = ''
  await t.test('a queue with a pull consumer and rules', async t => {
    const created = await call('POST', `${v4}/queues`, { queue_name: 'photo-events' })
    t.equal(created.status, 200)
    const id = queueId = created.body.result.queue_id as string
    t.match(id, /^[0-9a-f]{32}$/, 'a queue id of 32 hex digits')
    t.equal((await call('POST', `${v4}/queues`, { queue_name: 'photo-events' })).body.errors[0].code, 11009, 'a taken name is refused')
    t.equal((await call('POST', `${v4}/queues`, { queue_name: 'Bad Name' })).body.errors[0].code, 11003, 'a bad name is refused')
    // Renames at once to one name: one wins, the others are refused in their own transaction.
    const ids: string[] = []
    for (let i = 0; i < 8; i++) ids.push((await call('POST', `${v4}/queues`, { queue_name: `rename-${i}` })).body.result.queue_id)
    const renamed = await Promise.all(ids.map(async queue => await call('PATCH', `${v4}/queues/${queue}`, { queue_name: 'renamed' })))
    t.same(renamed.map(r => r.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409].sort(), 'one rename wins')
    t.ok(renamed.filter(r => r.status !== 200).every(r => r.body.errors[0].code === 11009), 'the others are 11009')
    const named = (await call('GET', `${v4}/queues`)).body.result.filter((q: { queue_name: string }) => q.queue_name === 'renamed')
    t.equal(named.length, 1, 'one queue of that name')
    for (const queue of ids) t.equal((await call('DELETE', `${v4}/queues/${queue}`)).status, 200)
    const noConsumer = await call('POST', `${v4}/queues/${id}/messages/pull`, {})
    t.equal(noConsumer.status, 404, 'no pull without an http_pull consumer')
    t.equal(noConsumer.body.errors[0].code, 11006)
    t.equal((await call('POST', `${v4}/queues/${id}/consumers`, { type: 'http_pull' })).status, 200)
    t.equal((await call('POST', `${v4}/queues/${id}/consumers`, { type: 'http_pull' })).body.errors[0].code, 11005, 'one consumer per queue')

    const rule = await call('PUT', `${v4}/event_notifications/r2/photos/configuration/queues/${id}`,
      { rules: [{ prefix: '', suffix: '', actions: ['PutObject', 'CopyObject', 'CompleteMultipartUpload', 'DeleteObject', 'LifecycleDeletion'] }] })
    t.equal(rule.status, 200, 'a rule for every action')
    const overlap = await call('PUT', `${v4}/event_notifications/r2/photos/configuration/queues/${id}`, { rules: [{ prefix: 'lib/', actions: ['DeleteObject'] }] })
    t.equal(overlap.status, 409, 'an overlapping rule is refused')
    t.equal(overlap.body.errors[0].code, 10091, 'with its code')
    const bad = await call('PUT', `${v4}/event_notifications/r2/photos/configuration/queues/${id}`, { rules: [{ actions: ['GetObject'] }] })
    t.equal(bad.body.errors[0].code, 10090, 'an unknown action is refused')
    t.equal((await call('PUT', `${v4}/event_notifications/r2/nobucket/configuration/queues/${id}`, { rules: [{ actions: ['PutObject'] }] })).body.errors[0].code, 10006, 'no such bucket')
    t.equal((await call('PUT', `${v4}/event_notifications/r2/photos/configuration/queues/${'0'.repeat(32)}`, { rules: [{ actions: ['PutObject'] }] })).body.errors[0].code, 11000, 'no such queue')
    const config = await call('GET', `${v4}/event_notifications/r2/photos/configuration`)
    t.equal(config.body.result.bucketName, 'photos')
    t.equal(config.body.result.queues.length, 1)
    t.equal(config.body.result.queues[0].queueName, 'photo-events', 'the configuration names the queue')
    t.equal(config.body.result.queues[0].rules[0].actions.length, 5)
  })

  await t.test('each door emits exactly the events of its committed changes', async t => {
    const bucket = await registry.open('photos') as unknown as BucketEngine
    // The library binding.
    await bucket.put('lib/a', 'hello')
    // A refused conditional write and a delete of nothing emit nothing.
    t.equal(await bucket.put('lib/a', 'other', { onlyIf: { etagMatches: 'nope' } }), null, 'a refused put')
    await bucket.delete('lib/missing')
    // The HTTP routes.
    const http = async (method: string, path: string, body?: string): Promise<number> =>
      (await fetch(`${api.base}${path}`, { method, body, headers: { authorization: `Bearer ${TOKEN}` } })).status
    t.equal(await http('PUT', '/photos/http/b', 'abc'), 200)
    t.equal(await http('DELETE', '/photos/http/b'), 204)
    t.equal(await http('PUT', '/photos/http/c', 'x', ), 200)
    // The S3 port.
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 's3/c', Body: 'sea' }))
    await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 's3/d', CopySource: 'photos/s3/c' }))
    // A copy from another bucket (its bytes read there and written here) is a copy all the same.
    await registry.create('albums')
    await (await registry.open('albums'))!.put('a.txt', 'album')
    await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 's3/from-albums', CopySource: 'albums/a.txt' }))
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 's3/m' }))
    const one = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 's3/m', UploadId: upload.UploadId, PartNumber: 1, Body: 'part-one' }))
    const two = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 's3/m', UploadId: upload.UploadId, PartNumber: 2, Body: 'two' }))
    await s3.send(new CompleteMultipartUploadCommand({
      Bucket: 'photos', Key: 's3/m', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: one.ETag }, { PartNumber: 2, ETag: two.ETag }] }
    }))
    // A copy of a multipart object (its bytes read and written again as one part) is a copy too.
    await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 's3/m-copy', CopySource: 'photos/s3/m' }))
    await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 's3/c' }))
    // A lifecycle expiry deletes through the same path, with its cause.
    await bucket.deleteEach(['lib/a'], { cause: 'lifecycle' })
    // A lifecycle transition changes an object's class: neither a new object nor a deletion, so no event.
    const ia = { id: 'ia', enabled: true, conditions: { prefix: 'http/c' }, storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Age', maxAge: 1 } }] }
    t.equal((await bucket.sweep({ lifecycle: { rules: [ia] }, now: Date.now() + 86_400_000 })).transitionedObjects, 1, 'a transition')

    const events = await drain(api, queueId)
    const seen = events.map(e => `${e.action} ${e.object.key}`)
    t.same(seen.slice().sort(), [
      'CompleteMultipartUpload s3/m', 'CopyObject s3/d', 'CopyObject s3/from-albums', 'CopyObject s3/m-copy', 'DeleteObject http/b', 'DeleteObject s3/c', 'LifecycleDeletion lib/a',
      'PutObject http/b', 'PutObject http/c', 'PutObject lib/a', 'PutObject s3/c'
    ], 'one event per committed change, none for the refused ones')
    t.same(seen.filter(s => s.endsWith(' http/b')), ['PutObject http/b', 'DeleteObject http/b'], 'in commit order')
    for (const event of events) {
      t.equal(event.account, ACCOUNT, 'the account of the rule')
      t.equal(event.bucket, 'photos')
      t.ok(!Number.isNaN(Date.parse(event.eventTime)) && event.eventTime.endsWith('Z'), 'an ISO event time')
      const deletion = event.action === 'DeleteObject' || event.action === 'LifecycleDeletion'
      t.equal('size' in event.object || 'eTag' in event.object, !deletion, `${event.action}: size and eTag only for writes`)
      t.equal('copySource' in event, event.action === 'CopyObject', `${event.action}: copySource only for copies`)
    }
    const put = events.find(e => e.action === 'PutObject' && e.object.key === 'lib/a')
    t.same(put.object, { key: 'lib/a', size: 5, eTag: md5('hello') }, 'a put names size and eTag')
    const copy = events.find(e => e.action === 'CopyObject' && e.object.key === 's3/d')
    t.same(copy.copySource, { bucket: 'photos', object: 's3/c' }, 'a copy names its source')
    t.same(copy.object, { key: 's3/d', size: 3, eTag: md5('sea') })
    const across = events.find(e => e.action === 'CopyObject' && e.object.key === 's3/from-albums')
    t.same(across.copySource, { bucket: 'albums', object: 'a.txt' }, 'a copy from another bucket names that bucket')
    t.same(across.object, { key: 's3/from-albums', size: 5, eTag: md5('album') })
    t.same(events.find(e => e.object.key === 's3/m-copy').copySource, { bucket: 'photos', object: 's3/m' }, 'a copy written anew names its source')
    const completed = events.find(e => e.action === 'CompleteMultipartUpload')
    t.equal(completed.object.size, 11)
    t.match(completed.object.eTag, /^[0-9a-f]{32}-2$/, 'the multipart etag')
  })

  await t.test('leases, retries and acknowledgements', async t => {
    const bucket = await registry.open('photos')
    await bucket!.put('lease/x', 'x')
    const pull = async (visibility: number): Promise<any> =>
      (await call('POST', `${v4}/queues/${queueId}/messages/pull`, { batch_size: 10, visibility_timeout_ms: visibility })).body.result
    const backlog = async (): Promise<unknown> => (await call('GET', `${v4}/queues/${queueId}/metrics`)).body.result
    t.same(await backlog(), { backlog_count: 1 }, 'the metrics count a waiting message')
    const first = await pull(300)
    t.same(await backlog(), { backlog_count: 1 }, 'and a leased one')
    t.equal(first.messages.length, 1)
    t.equal(first.messages[0].attempts, 1)
    t.equal(first.message_backlog_count, 1, 'the backlog counts a leased message')
    t.match(first.messages[0], { id: /^[0-9a-f]{32}$/, lease_id: String, timestamp_ms: Number, metadata: { 'CF-Content-Type': 'json' } })
    t.equal((await pull(300)).messages.length, 0, 'a leased message is invisible')
    await new Promise(resolve => setTimeout(resolve, 400))
    const again = await pull(60_000)
    t.equal(again.messages.length, 1, 'it comes back after its visibility timeout')
    t.equal(again.messages[0].id, first.messages[0].id)
    t.equal(again.messages[0].attempts, 2)
    const stale = await call('POST', `${v4}/queues/${queueId}/messages/ack`, { acks: [{ lease_id: first.messages[0].lease_id }, { lease_id: 'not-a-lease' }] })
    t.same(stale.body.result, { ackCount: 0, retryCount: 0, warnings: [] }, 'a stale or unknown lease settles nothing')
    const retried = await call('POST', `${v4}/queues/${queueId}/messages/ack`, { retries: [{ lease_id: again.messages[0].lease_id, delay_seconds: 0 }] })
    t.equal(retried.body.result.retryCount, 1)
    const third = await pull(60_000)
    t.equal(third.messages[0].attempts, 3, 'a retried message is handed out again')
    // As a push cut by a stop settles its batch (server/queue-push.ts): visible at once, the delivery not counted.
    const queues = new Queues(registry)
    const released = await queues.settle((await queues.byName('photo-events'))!, [], [{ leaseId: third.messages[0].lease_id, delaySeconds: 0, uncounted: true }])
    t.equal(released.retried, 1)
    const fourth = await pull(60_000)
    t.equal(fourth.messages[0].attempts, 3, 'a release that counts no attempt hands the message out again with the same count')
    const acked = await call('POST', `${v4}/queues/${queueId}/messages/ack`, { acks: [{ lease_id: fourth.messages[0].lease_id }] })
    t.equal(acked.body.result.ackCount, 1)
    const after = await pull(60_000)
    t.equal(after.messages.length, 0)
    t.equal(after.message_backlog_count, 0, 'an acknowledged message is gone')
    t.same(await backlog(), { backlog_count: 0 }, 'not an acknowledged one')
    t.equal((await call('GET', `${v4}/queues/${'0'.repeat(32)}/metrics`)).body.errors[0].code, 11000, 'the metrics of no queue')
    t.equal((await call('POST', `${v4}/queues/${queueId}/messages/pull`, { batch_size: 101 })).body.errors[0].code, 11004, 'batch_size is 1 to 100')
  })

  await t.test('a queue\'s settings: retries spent go to the dead-letter queue, a delay, a pause', async t => {
    const bucket = (await registry.open('photos'))!
    const pull = async (id: string, visibility: number): Promise<any> =>
      (await call('POST', `${v4}/queues/${id}/messages/pull`, { batch_size: 10, visibility_timeout_ms: visibility })).body.result
    const ack = async (id: string, messages: Array<{ lease_id: string }>): Promise<void> => {
      await call('POST', `${v4}/queues/${id}/messages/ack`, { acks: messages.map(m => ({ lease_id: m.lease_id })) })
    }
    const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }
    const dead = (await call('POST', `${v4}/queues`, { queue_name: 'photo-dead' })).body.result.queue_id as string
    await call('POST', `${v4}/queues/${dead}/consumers`, { type: 'http_pull' })
    const consumer = (await call('GET', `${v4}/queues/${queueId}/consumers`)).body.result[0]
    const changed = await call('PUT', `${v4}/queues/${queueId}/consumers/${consumer.consumer_id as string}`,
      { type: 'http_pull', settings: { max_retries: 1 }, dead_letter_queue: 'photo-dead' })
    t.equal(changed.status, 200, 'a consumer\'s settings are changed in place')
    t.equal(changed.body.result.consumer_id, consumer.consumer_id, 'keeping its id')
    t.equal((await call('PUT', `${v4}/queues/${queueId}/consumers/${'0'.repeat(32)}`, { type: 'http_pull' })).body.errors[0].code, 11006, 'no such consumer')

    await bucket.put('dlq/x', 'x')
    const first = (await pull(queueId, 1)).messages[0]
    t.equal(first.attempts, 1)
    await sleep(30)
    t.equal((await pull(queueId, 1)).messages[0].attempts, 2, 'one retry (max_retries 1)')
    await sleep(30)
    const spent = await pull(queueId, 60_000)
    t.same([spent.messages.length, spent.message_backlog_count], [0, 0], 'after 1 + max_retries deliveries the message leaves the queue')
    const letters = await pull(dead, 60_000)
    t.same(letters.messages.map((m: any) => [JSON.parse(m.body).object.key, m.attempts]), [['dlq/x', 1]], 'into the dead-letter queue, as a new message')
    t.match(letters.messages[0].id, /^[0-9a-f]{32}$/)
    t.not(letters.messages[0].id, first.id, 'with an id of its own')
    t.ok(letters.messages[0].timestamp_ms > first.timestamp_ms, 'and its age from the move (retention counts again)')
    await ack(dead, letters.messages)

    t.equal((await call('PATCH', `${v4}/queues/${queueId}`, { settings: { delivery_paused: true } })).status, 200)
    await bucket.put('pause/x', 'x')
    const paused = await pull(queueId, 60_000)
    t.same([paused.messages.length, paused.message_backlog_count], [0, 1], 'a paused queue hands out nothing, its backlog counts')
    await call('PATCH', `${v4}/queues/${queueId}`, { settings: { delivery_paused: false } })
    const resumed = await pull(queueId, 60_000)
    t.same(resumed.messages.map((m: any) => JSON.parse(m.body).object.key), ['pause/x'], 'resumed')
    await ack(queueId, resumed.messages)
    await call('PATCH', `${v4}/queues/${queueId}`, { settings: { delivery_delay: 1 } })
    await bucket.put('delay/x', 'x')
    const early = await pull(queueId, 60_000)
    t.same([early.messages.length, early.message_backlog_count], [0, 1], 'a message younger than the delivery delay waits')
    await sleep(1100)
    const late = await pull(queueId, 60_000)
    t.same(late.messages.map((m: any) => JSON.parse(m.body).object.key), ['delay/x'], 'then it is handed out')
    await ack(queueId, late.messages)
    await call('PATCH', `${v4}/queues/${queueId}`, { settings: { delivery_delay: 0 } })
  })

  await t.test('rules removed, queue deleted', async t => {
    const config = await call('GET', `${v4}/event_notifications/r2/photos/configuration`)
    const ruleId = config.body.result.queues[0].rules[0].ruleId as string
    await (await registry.open('photos'))!.put('before-removal', 'b')
    const rulesBefore = (await call('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result.queues
    for (const body of [[], '"all"', 7]) {
      const malformed = await call('DELETE', `${v4}/event_notifications/r2/photos/configuration/queues/${queueId}`, body)
      t.match(malformed, { status: 400, body: { success: false, errors: [{ code: 10090, message: /the body must be an object/ }] } }, `a body of ${JSON.stringify(body)} is refused, not read as "every rule"`)
      t.same((await call('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result.queues, rulesBefore, 'and nothing is removed')
    }
    for (const ruleIds of [['no-such-rule'], [ruleId, 'no-such-rule']]) {
      const unknown = await call('DELETE', `${v4}/event_notifications/r2/photos/configuration/queues/${queueId}`, { ruleIds })
      t.match(unknown, { status: 404, body: { success: false, errors: [{ code: 10092, message: /"no-such-rule"/ }] } }, `an id that names no rule is refused (${ruleIds.length} ids)`)
      t.same((await call('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result.queues, rulesBefore, 'and nothing is removed')
    }
    t.equal((await call('DELETE', `${v4}/event_notifications/r2/photos/configuration/queues/${queueId}`, { ruleIds: [ruleId] })).status, 200)
    t.same((await call('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result.queues, [], 'no rules left')
    t.equal((await call('GET', `${v4}/event_notifications/r2/photos/configuration/queues/${queueId}`)).status, 404, 'nor a configuration for the queue')
    await (await registry.open('photos'))!.put('quiet', 'q')
    t.same((await drain(api, queueId)).map(e => e.object.key), ['before-removal'], 'no rule, no event; what was sent before the rule went is still delivered')
    t.equal((await call('DELETE', `${v4}/queues/${queueId}`)).status, 200)
    t.equal((await call('GET', `${v4}/queues/${queueId}`)).body.errors[0].code, 11000, 'the queue is gone')
  })

  await t.test('messages left for a queue that is gone are dropped by dropOrphans; a live queue\'s stay', async t => {
    const made = async (name: string): Promise<string> => {
      const queue = (await call('POST', `${v4}/queues`, { queue_name: name })).body.result.queue_id as string
      await call('POST', `${v4}/queues/${queue}/consumers`, { type: 'http_pull' })
      t.equal((await call('PUT', `${v4}/event_notifications/r2/photos/configuration/queues/${queue}`, { rules: [{ prefix: `${name}/`, actions: ['PutObject'] }] })).status, 200)
      return queue
    }
    const gone = await made('orphaned')
    const live = await made('living')
    const bucket = (await registry.open('photos'))!
    await bucket.put('orphaned/a', 'a')
    await bucket.put('living/a', 'a')
    // The queue's record removed alone, as a deletion racing a write under cached rules leaves it.
    await registry.state('queues').transaction(async tx => {
      const doc = await tx.load<{ queues: Array<{ queue_id: string }> }>('queues.json', { queues: [] })
      doc.queues = doc.queues.filter(q => q.queue_id !== gone)
    })
    const outbox = (await registry.outbox('photos'))!
    t.same((await outbox.queues()).sort(), [gone, live].sort(), 'the outbox holds both queues\' messages')
    t.equal(await new Queues(registry).dropOrphans(), 1, 'the one of the queue that is gone is dropped')
    t.same(await outbox.queues(), [live], 'the live queue\'s message stays')
    t.same((await drain(api, live)).map(e => e.object.key), ['living/a'])
  })
}
