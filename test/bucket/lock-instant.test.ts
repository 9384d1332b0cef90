/**
 * The instant a bucket lock is judged at comes from the engine: its clock
 * (the `clock` option, which also stamps `uploaded`) for puts, completions
 * and deletes, and a sweep's `now` for the lifecycle expiries it carries
 * out. The stores' side of it is in the store conformance suite
 * (test/conformance/store-locks.ts).
 */
import t, { type Test } from 'tap'
import { BucketEngine } from '../../src/bucket/index.js'
import { MemoryStore } from '../../src/stores/memory/store.js'
import { code } from '../conformance/store.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** A bucket in memory whose clock reads `clock.now`, with an Age lock of an hour on every key. */
async function lockedForAnHour (t: Test, now: number): Promise<{ bucket: BucketEngine, clock: { now: number } }> {
  const clock = { now }
  const bucket = new BucketEngine(new MemoryStore(), { clock: () => new Date(clock.now) })
  t.teardown(async () => { await bucket.close() })
  await bucket.setLockRules([{ id: 'hour', enabled: true, condition: { type: 'Age', maxAgeSeconds: 3600 } }])
  return { bucket, clock }
}

t.test('the clock option: an hour of retention runs out an hour later by the clock, whatever the real time', async t => {
  const { bucket, clock } = await lockedForAnHour(t, Date.now())
  await bucket.put('deleted', 'v')
  await bucket.put('overwritten', 'v')
  clock.now += 2 * HOUR
  await bucket.delete('deleted')
  t.equal(await bucket.head('deleted'), null, 'deleted two hours later by the clock')
  t.equal((await bucket.put('overwritten', 'w'))?.uploaded.getTime(), clock.now, 'overwritten too')
})

t.test('the clock option: an object uploaded a minute ago by the clock is retained, though the real time is hours later', async t => {
  const { bucket, clock } = await lockedForAnHour(t, Date.now() - 2 * HOUR)
  await bucket.put('k', 'v')
  const upload = await bucket.createMultipartUpload('k')
  const part = await upload.uploadPart(1, 'part')
  clock.now += 60_000
  t.equal(await code(bucket.delete('k')), 10913, 'delete is refused')
  t.equal(await code(bucket.put('k', 'w')), 10913, 'so is an overwrite')
  t.equal(await code(upload.complete([part])), 10913, 'and a completion onto it')
  const kept = await bucket.get('k')
  t.equal(kept !== null && 'body' in kept ? await kept.text() : null, 'v', 'the object stays')
  clock.now += HOUR
  await bucket.delete('k')
  t.equal(await bucket.head('k'), null, 'an hour after its upload by the clock, it goes')
})

t.test("sweep's now: the rules are judged at it, a lock at the earlier of it and the clock", async t => {
  const real = Date.now()
  let clock = real
  const bucket = new BucketEngine(new MemoryStore(), { clock: () => new Date(clock) })
  t.teardown(async () => { await bucket.close() })
  await bucket.put('logs/a', 'a')
  await bucket.put('keep/a', 'a')
  await bucket.setLockRules([
    { id: 'logs-1d', enabled: true, prefix: 'logs/', condition: { type: 'Age', maxAgeSeconds: 86_400 } },
    { id: 'keep-5d', enabled: true, prefix: 'keep/', condition: { type: 'Age', maxAgeSeconds: 5 * 86_400 } }
  ])
  const lifecycle = { rules: [{ id: 'expire-2d', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 2 * 86_400 } } }] }
  // Looking three days ahead (`fsbucket sweep --now`) with the clock at today: the rule is due, but no lock is released early.
  const ahead = await bucket.sweep({ lifecycle, now: real + 3 * DAY })
  t.equal(ahead.expiredObjects, 0, 'a sweep that looks ahead keeps what the locks hold today')
  t.not(await bucket.head('logs/a'), null)
  // The clock three days on: the lock of one day is over, the one of five days still holds.
  clock = real + 3 * DAY
  const report = await bucket.sweep({ lifecycle, now: real + 3 * DAY })
  t.equal(report.expiredObjects, 1, 'three days on by the clock, the expiry of two days deletes what a lock of one day held')
  t.equal(await bucket.head('logs/a'), null)
  t.not(await bucket.head('keep/a'), null, 'and keeps what a lock of five days still holds then')
})
