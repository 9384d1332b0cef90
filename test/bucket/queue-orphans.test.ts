/**
 * Messages of a queue deleted while another process still wrote under its
 * rules (each process caches a bucket's rules for a second) are dropped by
 * the sweeper's `dropOrphans`: nothing would ever read or expire them. The
 * messages of queues that exist stay.
 */
import t from 'tap'
import { addRules, openRegistry, Queues } from '../../src/index.js'
import { testdir } from '../testdir.js'

t.test('a message committed for a queue after its deletion is dropped; a live queue\'s are kept', async t => {
  const dataDir = testdir(t)
  const a = await openRegistry(dataDir, { fsync: false })
  const b = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await a.close(); await b.close() })
  await a.create('photos')
  const queues = new Queues(a)
  const doomed = (await queues.create('doomed'))!
  const kept = (await queues.create('kept'))!
  for (const queue of [doomed, kept]) {
    await a.changeNotifications('photos', current => addRules(current, queue.queue_id, 'b'.repeat(32), [{ prefix: queue.queue_name, suffix: '', actions: ['PutObject'] }], new Date()))
  }
  const other = (await b.open('photos'))!
  // The other process reads (and caches) the rules, then the queue is deleted here, then it writes under the cached rules.
  // Each put names its storage class, as the doors' puts do: one without reads the bucket's settings afresh for its default.
  const standard = { storageClass: 'Standard' } as const
  await other.put('doomed/warm', 'x', standard)
  await other.put('kept/one', 'x', standard)
  t.ok(await queues.delete(doomed.queue_id))
  await other.put('doomed/late', 'x', standard)
  const outbox = (await a.outbox('photos'))!
  t.ok((await outbox.queues()).includes(doomed.queue_id), 'the late message waits for a queue that is gone')
  t.equal(await queues.dropOrphans(), 1, 'dropped by the sweeper')
  t.same(await outbox.queues(), [kept.queue_id], 'only the live queue has messages')
  t.equal(await queues.backlog(kept.queue_id), 1, 'its message kept')
  t.equal(await queues.dropOrphans(), 0, 'nothing more to drop')
})
