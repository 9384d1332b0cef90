/**
 * The notification rules as data (src/bucket/notifications.ts), by tables:
 * overlap, parsing, matching and message bodies; and the queues over the
 * memory store, whose clock drives retention and leases.
 */
import t, { type Test } from 'tap'
import { addRules, openMemoryRegistry, parseRuleInputs, Queues, RuleRefusal } from '../../src/index.js'
import { eventBody, messagesFor, removeRules, rulesOverlap } from '../../src/bucket/notifications.js'

/** Why `fn` was refused: 'invalid', 'overlap', or 'none' when it was not. */
function refusalOf (fn: () => unknown): string {
  try {
    fn()
    return 'none'
  } catch (err) {
    return err instanceof RuleRefusal ? err.reason : String(err)
  }
}

t.test('rulesOverlap', async t => {
  const put = ['PutObject' as const]
  const del = ['DeleteObject' as const]
  const cases: Array<[string, [string, string], [string, string], boolean, boolean?]> = [
    ['same prefix', ['img/', ''], ['img/', ''], true],
    ['one prefix starts the other', ['img/', ''], ['img/cats/', ''], true],
    ['disjoint prefixes', ['img/', ''], ['doc/', ''], false],
    ['empty prefix overlaps any', ['', ''], ['doc/', ''], true],
    ['one suffix ends the other', ['', '.jpg'], ['', 'cat.jpg'], true],
    ['disjoint suffixes', ['', '.jpg'], ['', '.png'], false],
    ['prefix and suffix both compatible', ['img/', ''], ['', '.jpg'], true],
    ['prefixes clash though suffixes agree', ['img/', '.jpg'], ['doc/', '.jpg'], false],
    ['no shared action', ['img/', ''], ['img/', ''], false, true]
  ]
  for (const [name, [pa, sa], [pb, sb], expected, otherAction] of cases) {
    const a = { prefix: pa, suffix: sa, actions: put }
    const b = { prefix: pb, suffix: sb, actions: otherAction === true ? del : put }
    t.equal(rulesOverlap(a, b), expected, name)
    t.equal(rulesOverlap(b, a), expected, `${name} (either way round)`)
  }
})

t.test('parseRuleInputs', async t => {
  t.same(parseRuleInputs({ rules: [{ actions: ['PutObject', 'PutObject'] }] }), [{ prefix: '', suffix: '', actions: ['PutObject'] }], 'defaults, actions once')
  t.same(parseRuleInputs({ rules: [{ prefix: 'a', suffix: null, actions: ['DeleteObject'], description: 'd' }] }), [{ prefix: 'a', suffix: '', actions: ['DeleteObject'], description: 'd' }])
  for (const [name, body] of [
    ['no rules', {}], ['empty rules', { rules: [] }], ['a rule not an object', { rules: [1] }], ['no actions', { rules: [{}] }],
    ['empty actions', { rules: [{ actions: [] }] }], ['unknown action', { rules: [{ actions: ['GetObject'] }] }],
    ['prefix not a string', { rules: [{ prefix: 3, actions: ['PutObject'] }] }],
    ['a control character in a prefix', { rules: [{ prefix: 'a\nb/', actions: ['PutObject'] }] }],
    ['a NUL in a suffix', { rules: [{ suffix: '\u0000', actions: ['PutObject'] }] }],
    ['a control character in a description', { rules: [{ description: 'x\u001b[2J', actions: ['PutObject'] }] }],
    ['a prefix longer than a key', { rules: [{ prefix: 'é'.repeat(513), actions: ['PutObject'] }] }],
    ['a description of 1,025 characters', { rules: [{ description: 'd'.repeat(1025), actions: ['PutObject'] }] }]
  ] as Array<[string, unknown]>) {
    t.equal(refusalOf(() => parseRuleInputs(body)), 'invalid', name)
  }
})

t.test('addRules refuses overlaps, among the new rules too', async t => {
  const now = new Date(0)
  const one = addRules([], 'q1', 'acct', [{ prefix: 'img/', suffix: '', actions: ['PutObject'] }], now)
  t.equal(one[0].rules.length, 1)
  t.equal(refusalOf(() => addRules(one, 'q2', 'acct', [{ prefix: 'img/x', suffix: '', actions: ['PutObject'] }], now)), 'overlap', 'against another queue\'s rule')
  t.equal(refusalOf(() => addRules([], 'q1', 'acct', [{ prefix: 'a', suffix: '', actions: ['PutObject'] }, { prefix: 'ab', suffix: '', actions: ['PutObject'] }], now)), 'overlap', 'within one request')
  const two = addRules(one, 'q1', 'acct', [{ prefix: 'doc/', suffix: '', actions: ['PutObject'] }], now)
  t.equal(two.length, 1, 'same queue, rules appended')
  t.equal(two[0].rules.length, 2)
  t.equal(refusalOf(() => addRules(one, 'q2', 'acct', [{ prefix: 'cafe\u0301/', suffix: '', actions: ['PutObject'] }], now)), 'none', 'disjoint')
  const cafe = addRules([], 'q1', 'acct', [{ prefix: 'caf\u00e9/', suffix: '', actions: ['PutObject'] }], now)
  t.equal(refusalOf(() => addRules(cafe, 'q2', 'acct', [{ prefix: 'cafe\u0301/', suffix: '', actions: ['PutObject'] }], now)), 'overlap', 'one prefix spelled two ways (NFC, NFD) overlaps itself')
  const many = Array.from({ length: 1000 }, (_, i) => ({ prefix: `p${i}/`, suffix: '', actions: ['PutObject' as const] }))
  const full = addRules([], 'q1', 'acct', many, now)
  t.equal(refusalOf(() => addRules(full, 'q1', 'acct', [{ prefix: 'one-more/', suffix: '', actions: ['PutObject'] }], now)), 'invalid', 'at most 1,000 rules a bucket')
})

t.test('removeRules removes the rules named, and refuses an id the queue has no rule of, removing nothing', async t => {
  const now = new Date(0)
  const q1 = addRules([], 'q1', 'acct', [{ prefix: 'img/', suffix: '', actions: ['PutObject'] }, { prefix: 'doc/', suffix: '', actions: ['PutObject'] }], now)
  const both = addRules(q1, 'q2', 'acct', [{ prefix: 'log/', suffix: '', actions: ['PutObject'] }], now)
  const [img, doc] = both[0].rules.map(r => r.ruleId)
  const other = both[1].rules[0].ruleId
  t.same(removeRules(both, 'q1', [img]).map(q => q.rules.map(r => r.prefix)), [['doc/'], ['log/']], 'the rule named, of that queue only')
  t.equal(refusalOf(() => removeRules(both, 'q1', ['no-such-rule'])), 'unknown', 'an id that names no rule')
  t.equal(refusalOf(() => removeRules(both, 'q1', [img, 'no-such-rule'])), 'unknown', 'one unknown id among known ones')
  t.equal(refusalOf(() => removeRules(both, 'q1', [other])), 'unknown', 'a rule of another queue')
  t.equal(refusalOf(() => removeRules(both, 'q3', [img])), 'unknown', 'a queue the bucket does not send to')
  t.throws(() => removeRules(both, 'q1', ['typo"d']), /no rule of this queue has the id "typo\\"d"/, 'the refusal names the id')
  t.same(removeRules(both, 'q1', [img, doc]).map(q => q.rules.length), [0, 1], 'every rule of the queue, named')
  t.same(removeRules(both, 'q1').map(q => q.rules.length), [0, 1], 'no ids: all the queue\'s rules')
})

t.test('a rule matches a key whichever Unicode form either was written in; the message keeps the key as written', async t => {
  const now = new Date(0)
  const nfc = addRules([], 'q1', 'acct', [{ prefix: 'caf\u00e9/', suffix: '.txt', actions: ['PutObject', 'DeleteObject'] }], now)
  const nfd = addRules([], 'q1', 'acct', [{ prefix: 'cafe\u0301/', suffix: '', actions: ['PutObject'] }], now)
  const change = (key: string): { action: 'PutObject', key: string, size: number, etag: string } => ({ action: 'PutObject', key, size: 1, etag: 'e' })
  const sent = messagesFor(nfc, 'b', change('cafe\u0301/x.txt'), now)
  t.equal(sent.length, 1, 'an NFC rule, a key sent in NFD')
  t.equal(JSON.parse(sent[0].body).object.key, 'cafe\u0301/x.txt', 'named as the change spelled it')
  t.equal(messagesFor(nfc, 'b', { action: 'DeleteObject', key: 'cafe\u0301/y.txt', size: 0, etag: '' }, now).length, 1, 'a delete too')
  t.equal(messagesFor(nfd, 'b', change('caf\u00e9/x'), now).length, 1, 'an NFD rule, a key sent in NFC')
  t.equal(messagesFor(nfc, 'b', change('cafe/x.txt'), now).length, 0, 'not another key')
})

t.test('eventBody and messagesFor', async t => {
  const at = new Date('2026-01-02T03:04:05.678Z')
  t.same(JSON.parse(eventBody('acct', 'b', { action: 'PutObject', key: 'k', size: 3, etag: 'e' }, at)),
    { account: 'acct', action: 'PutObject', bucket: 'b', object: { key: 'k', size: 3, eTag: 'e' }, eventTime: '2026-01-02T03:04:05.678Z' })
  t.same(JSON.parse(eventBody('acct', 'b', { action: 'CopyObject', key: 'k', size: 3, etag: 'e', copySource: 's' }, at)).copySource, { bucket: 'b', object: 's' })
  t.same(JSON.parse(eventBody('acct', 'b', { action: 'LifecycleDeletion', key: 'k', size: 3, etag: 'e' }, at)).object, { key: 'k' }, 'no size or eTag on deletions')
  const rules = [
    { queueId: 'q1', account: 'acct', rules: [{ ruleId: 'r1', prefix: 'img/', suffix: '.jpg', actions: ['PutObject' as const], createdAt: '' }] },
    { queueId: 'q2', account: 'acct', rules: [{ ruleId: 'r2', prefix: '', suffix: '', actions: ['PutObject' as const, 'DeleteObject' as const], createdAt: '' }] }
  ]
  const queuesOf = (action: 'PutObject' | 'DeleteObject', key: string): string[] => messagesFor(rules, 'b', { action, key }, at).map(m => m.queue)
  t.same(queuesOf('PutObject', 'img/a.jpg'), ['q1', 'q2'], 'one message per matching queue')
  t.same(queuesOf('PutObject', 'img/a.png'), ['q2'], 'the suffix must match')
  t.same(queuesOf('DeleteObject', 'img/a.jpg'), ['q2'], 'the action must match')
})

/** A memory registry with bucket `photos` and its queues, on a clock the test moves (`clock.now`). */
async function clockedQueues (t: Test): Promise<{ registry: ReturnType<typeof openMemoryRegistry>, queues: Queues, clock: { now: number } }> {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') }
  const registry = openMemoryRegistry({ clock: () => new Date(clock.now) })
  t.teardown(async () => { await registry.close() })
  await registry.create('photos')
  return { registry, queues: new Queues(registry, () => new Date(clock.now)), clock }
}

t.test('retention and leases on the memory store, by the queues\' clock', async t => {
  const { registry, queues, clock: time } = await clockedQueues(t)
  const clock = (): Date => new Date(time.now)
  const queue = (await queues.create('q', { message_retention_period: 60 }))!
  await registry.changeNotifications('photos', current => addRules(current, queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject', 'DeleteObject'] }], clock()))
  const bucket = (await registry.open('photos'))!
  await bucket.put('old', 'x')
  time.now += 30_000
  await bucket.put('new', 'y')
  await bucket.delete('new')
  t.equal(await queues.backlog(queue.queue_id), 3)
  time.now += 40_000
  const pulled = await queues.pull(queue, 10, 1000)
  t.same(pulled.messages.map(m => JSON.parse(m.body).object.key), ['new', 'new'], 'a message past its retention is dropped')
  t.equal(pulled.backlog, 2)
  t.same((await queues.pull(queue, 10, 1000)).messages, [], 'leased messages are invisible')
  time.now += 1000
  const again = await queues.pull(queue, 1, 1000)
  t.equal(again.messages.length, 1, 'the batch size is kept')
  t.equal(again.messages[0].attempts, 2, 'back after the lease')
  t.same(await queues.settle(queue, [again.messages[0].lease_id, 'bogus'], []), { acked: 1, retried: 0 })
  t.equal(await queues.backlog(queue.queue_id), 1)
})

t.test('messages dead-lettered to a queue deleted during the pull are dropped, not kept for a queue that is no more', async t => {
  const { registry, queues, clock: time } = await clockedQueues(t)
  const clock = (): Date => new Date(time.now)
  const queue = (await queues.create('q'))!
  const dead = (await queues.create('dead'))!
  queue.consumers.push({ consumer_id: 'c', type: 'http_pull', created_on: '', settings: { max_retries: 0 }, dead_letter_queue: 'dead' })
  await registry.changeNotifications('photos', current => addRules(current, queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }], clock()))
  await (await registry.open('photos'))!.put('a', 'x')
  t.equal((await queues.pull(queue, 10, 1000)).messages.length, 1, 'delivered once')
  time.now += 1000
  // The dead-letter queue is deleted after the pull found it, before its messages move.
  const byName = queues.byName.bind(queues)
  queues.byName = async name => {
    const found = await byName(name)
    if (found !== undefined && name === 'dead') await queues.delete(found.queue_id)
    return found
  }
  t.same(await queues.pull(queue, 10, 1000), { messages: [], backlog: 0 }, 'the message leaves its queue')
  t.equal(await queues.backlog(dead.queue_id), 0, 'and waits for no deleted queue')
  t.same((await registry.info('photos'))!.settings.notifications.map(q => q.queueId), [queue.queue_id], 'the bucket links no deleted queue')
})

t.test('a queue\'s delivery delay, pause and max_retries on the memory store, by the queues\' clock', async t => {
  const { registry, queues, clock: time } = await clockedQueues(t)
  const clock = (): Date => new Date(time.now)
  const queue = (await queues.create('q', { delivery_delay: 10 }))!
  const dead = (await queues.create('dead'))!
  queue.consumers.push({ consumer_id: 'c', type: 'http_pull', created_on: '', settings: { max_retries: 0 }, dead_letter_queue: 'dead' })
  await registry.changeNotifications('photos', current => addRules(current, queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }], clock()))
  const bucket = (await registry.open('photos'))!
  await bucket.put('a', 'x')
  t.same((await queues.pull(queue, 10, 1000)).messages, [], 'younger than the delay')
  time.now += 10_000
  t.equal((await queues.pull(queue, 10, 1000)).messages.length, 1, 'as old as the delay')
  time.now += 1000
  t.same(await queues.pull(queue, 10, 1000), { messages: [], backlog: 0 }, 'max_retries 0: one delivery, then it leaves')
  t.same((await queues.pull(dead, 10, 1000)).messages.map(m => [JSON.parse(m.body).object.key, m.attempts]), [['a', 1]], 'for the dead-letter queue')
  queue.consumers[0].dead_letter_queue = undefined
  queue.settings.delivery_paused = true
  await bucket.put('b', 'x')
  time.now += 10_000
  t.same(await queues.pull(queue, 10, 1000), { messages: [], backlog: 1 }, 'paused')
  queue.settings.delivery_paused = false
  t.equal((await queues.pull(queue, 10, 1000)).messages.length, 1)
  time.now += 1000
  t.same(await queues.pull(queue, 10, 1000), { messages: [], backlog: 0 }, 'without a dead-letter queue a spent message is dropped')
})

t.test('a rule added while its queue is deleted is taken back, with what it sent', async t => {
  const registry = openMemoryRegistry()
  t.teardown(async () => { await registry.close() })
  await registry.create('photos')
  const queues = new Queues(registry)
  const queue = (await queues.create('q'))!
  // The delete runs between the rule's check of the queue and its write: it finds no rule of the bucket to remove.
  const change = registry.changeNotifications.bind(registry)
  let raced = false
  registry.changeNotifications = async (name, edit) => {
    if (!raced) {
      raced = true
      t.equal(await queues.delete(queue.queue_id), true)
    }
    return await change(name, edit)
  }
  t.equal(await queues.addRules('photos', queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }]), false, 'no such queue, after all')
  t.same((await registry.info('photos'))!.settings.notifications, [], 'no rule left sending to the deleted queue')
  t.equal(await queues.addRules('photos', queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }]), false, 'nor added later')
})

t.test('pulls take turns among the buckets of a queue: a busy bucket does not hold another\'s message back', async t => {
  const registry = openMemoryRegistry()
  t.teardown(async () => { await registry.close() })
  const queues = new Queues(registry)
  const queue = (await queues.create('q'))!
  for (const name of ['aaa', 'zzz']) {
    await registry.create(name)
    t.equal(await queues.addRules(name, queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }]), true)
  }
  await (await registry.open('zzz'))!.put('lonely', 'x')
  const busy = (await registry.open('aaa'))!
  for (let i = 0; i < 30; i++) await busy.put(`k${i}`, 'x')
  const seen: string[] = []
  for (let pull = 0; pull < 2; pull++) {
    const { messages } = await queues.pull(queue, 10, 60_000)
    seen.push(...messages.map(m => JSON.parse(m.body).bucket as string))
  }
  t.ok(seen.includes('zzz'), 'the other bucket\'s message within two pulls, not after the thirty')
})

t.test('a pull reads the outboxes of the buckets linked to the queue, not every bucket', async t => {
  const registry = openMemoryRegistry()
  t.teardown(async () => { await registry.close() })
  for (const name of ['linked', 'other', 'unlinked']) await registry.create(name)
  const queues = new Queues(registry)
  const queue = (await queues.create('q'))!
  const otherQueue = (await queues.create('other-q'))!
  await registry.changeNotifications('linked', current => addRules(current, queue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }], new Date()))
  await registry.changeNotifications('other', current => addRules(current, otherQueue.queue_id, 'acct', [{ prefix: '', suffix: '', actions: ['PutObject'] }], new Date()))
  const opened: string[] = []
  const outbox = registry.outbox.bind(registry)
  registry.outbox = async name => { opened.push(name); return await outbox(name) }
  await (await registry.open('linked'))!.put('a', 'x')
  await registry.changeNotifications('linked', current => removeRules(current, queue.queue_id))
  t.same((await queues.pull(queue, 10, 1000)).messages.map(m => JSON.parse(m.body).object.key), ['a'], 'a message sent before its rule was removed')
  t.same(opened, ['linked'], 'only the linked bucket was read')
  t.equal(await queues.backlog(queue.queue_id), 1)
})
