/**
 * The sweeper's 7-day rule (issue 2, "Sweeper"), proved with an injected
 * clock: an upload not completed 7 days after it was created is aborted by
 * `sweep()`, one a millisecond younger is left alone, completed objects are
 * never touched, and a shorter `uploadMaxAgeMs` is honoured. The sweep of
 * a data directory removes what bucket deletes cut short left
 * (../deleted-buckets.ts).
 */
import { promises as fsp } from 'node:fs'
import { link, mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { BucketErrors, openBucket, openRegistry, type Bucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'
import { lockFile } from '../../../src/stores/fs/file-lock.js'
import { deletedBucketLeftovers } from '../deleted-buckets.js'

const day = 24 * 60 * 60 * 1000
const start = Date.UTC(2024, 3, 1, 9, 30, 0, 250)
const minPartSize = 1024

class Clock {
  now = start
  read = (): Date => new Date(this.now)
}

/** A bucket in the test's directory holding `key`, closed at the test's end. */
async function bucketWith (t: Test, key: string, text: string): Promise<{ dir: string, bucket: Bucket }> {
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir)
  t.teardown(() => bucket.close())
  await bucket.put(key, text)
  return { dir, bucket }
}

async function expectNoSuchUpload (t: Test, call: () => Promise<unknown>, message: string): Promise<void> {
  try {
    await call()
    t.fail(`${message}: expected error 10024`)
  } catch (err) {
    t.equal((err as { code?: unknown }).code, 10024, `${message}: error 10024`)
  }
}

async function text (bucket: Bucket, key: string): Promise<string | undefined> {
  const got = await bucket.get(key)
  return got !== null && 'body' in got ? await got.text() : undefined
}

t.test('an upload lives 7 days, then sweep aborts it', async t => {
  const clock = new Clock()
  const bucket = await openBucket(path.join(testdir(t), 'bucket'), { clock: clock.read, minPartSize })
  t.teardown(() => bucket.close())

  await bucket.put('plain', 'a plain object')
  const done = await bucket.createMultipartUpload('completed')
  await done.complete([await done.uploadPart(1, 'a completed upload')])
  const pending = await bucket.createMultipartUpload('pending')
  const first = await pending.uploadPart(1, 'x'.repeat(minPartSize))

  clock.now = start + 7 * day - 1
  const early = await bucket.sweep()
  t.equal(early.abortedUploads, 0, 'nothing aborted a millisecond before 7 days')
  const second = await pending.uploadPart(2, 'tail')
  t.equal(second.partNumber, 2, 'the upload is still usable at T + 7 days - 1 ms')

  clock.now = start + 7 * day + 1
  const late = await bucket.sweep()
  t.equal(late.abortedUploads, 1, 'one upload aborted a millisecond after 7 days')
  await expectNoSuchUpload(t, () => pending.uploadPart(3, 'more'), 'uploadPart after the sweep')
  await expectNoSuchUpload(t, () => pending.complete([first, second]), 'complete after the sweep')
  t.equal(await bucket.head('pending'), null, 'no object appeared')

  t.equal(await text(bucket, 'plain'), 'a plain object', 'a plain object is untouched')
  t.equal(await text(bucket, 'completed'), 'a completed upload', 'a completed upload is untouched')
  t.same((await bucket.list()).objects.map(o => o.key), ['completed', 'plain'])

  clock.now = start + 400 * day
  t.equal((await bucket.sweep()).abortedUploads, 0, 'a later sweep finds nothing more to abort')
  t.equal(await text(bucket, 'plain'), 'a plain object', 'objects outlive any number of sweeps')
})

t.test('uploadMaxAgeMs is honoured, from the bucket options and from sweep', async t => {
  const clock = new Clock()
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir, { clock: clock.read, minPartSize, uploadMaxAgeMs: 60_000 })
  t.teardown(() => bucket.close())

  const upload = await bucket.createMultipartUpload('short-lived')
  await upload.uploadPart(1, 'part')
  clock.now = start + 59_999
  t.equal((await bucket.sweep()).abortedUploads, 0, 'kept just before uploadMaxAgeMs')
  await upload.uploadPart(2, 'part')
  clock.now = start + 60_001
  t.equal((await bucket.sweep()).abortedUploads, 1, 'aborted just after uploadMaxAgeMs')
  await expectNoSuchUpload(t, () => upload.uploadPart(3, 'part'), 'uploadPart after the sweep')

  // Another handle on the same directory, with the default lifetime, sweeping with an explicit age.
  const other = await openBucket(dir, { clock: clock.read, minPartSize })
  t.teardown(() => other.close())
  const created = clock.now
  const elsewhere = await bucket.createMultipartUpload('swept-elsewhere')
  clock.now = created + 1000
  t.equal((await other.sweep({ uploadMaxAgeMs: 1001 })).abortedUploads, 0, 'sweep({ uploadMaxAgeMs }) keeps a younger upload')
  clock.now = created + 1002
  t.equal((await other.sweep({ uploadMaxAgeMs: 1001 })).abortedUploads, 1, 'sweep({ uploadMaxAgeMs }) aborts an older one, created by another handle')
  await expectNoSuchUpload(t, () => elsewhere.uploadPart(1, 'part'), 'the creating handle sees the abort')
})

t.test('sweep removes leftovers of interrupted writes once they are past the grace period', async t => {
  const { dir, bucket } = await bucketWith(t, 'kept', 'a stored object')
  // What a writer killed mid-body leaves behind: a temporary file nobody names.
  const leftover = path.join(dir, '.fsbucket', 'tmp', 'interrupted-write')
  await writeFile(leftover, 'half a body')
  t.same((await bucket.list()).objects.map(o => o.key), ['kept'], 'leftovers never appear in list')

  const young = await bucket.sweep()
  t.ok(await exists(leftover), 'a fresh leftover is kept: a live writer may still own it')
  t.equal(young.removedLeftovers, 0)
  const swept = await bucket.sweep({ leftoverGraceMs: 0 })
  t.notOk(await exists(leftover), 'with no grace period the leftover is removed')
  t.ok(swept.removedLeftovers >= 1, 'and counted in the report')
  t.equal(await text(bucket, 'kept'), 'a stored object', 'stored objects are untouched')
})

t.test('sweep removes the readable view\'s temporary files a crash left, once past the grace period, and nothing else of the view', async t => {
  const { dir, bucket } = await bucketWith(t, 'photos/2024/a.txt', 'shown in the view')
  // What a publisher killed between making its temporary name and renaming it leaves: a link to a body, or a written copy.
  const linked = path.join(dir, 'photos', '2024', '.0123456789abcdef.view')
  await link(path.join(dir, 'photos', '2024', 'a.txt'), linked)
  const written = path.join(dir, '.fedcba987654z1.view') // a process tag and a base-36 counter
  await writeFile(written, 'a small body')
  // Not the view's: other names, and the store's own directory.
  const mine = path.join(dir, 'photos', 'notes.view')
  await writeFile(mine, 'a person\'s file')
  const inside = path.join(dir, '.fsbucket', '.00112233445566ff.view')
  await writeFile(inside, 'not the view')

  t.equal((await bucket.sweep()).removedLeftovers, 0, 'fresh temporaries are kept: a live publisher may still rename them')
  t.ok(await exists(linked))
  const swept = await bucket.sweep({ leftoverGraceMs: 0 })
  t.notOk(await exists(linked), 'a temporary link deep in the view is removed')
  t.notOk(await exists(written), 'and a temporary written copy at its top')
  t.equal(swept.removedLeftovers, 2, 'both counted')
  t.ok(await exists(mine), 'other files of the view stay')
  t.ok(await exists(inside), 'nothing inside .fsbucket is taken for the view')
  t.ok(await exists(path.join(dir, 'photos', '2024', 'a.txt')), 'the view\'s entry stays')
  t.equal(await text(bucket, 'photos/2024/a.txt'), 'shown in the view', 'and the object')
})

t.test('sweeps walk the view only while its marker says temporaries may be beside keys (and once for a store never walked)', async t => {
  const { dir, bucket } = await bucketWith(t, 'docs/a.txt', 'shown')
  const marker = path.join(dir, '.fsbucket', 'view-strays')
  const stamp = path.join(dir, '.fsbucket', 'view-walked')
  t.notOk(await exists(marker), 'puts through the scratch directory leave no marker')
  await bucket.sweep({ leftoverGraceMs: 0 })
  t.ok(await exists(stamp), 'the first sweep walks the view and says so')

  // A temporary beside a key with no marker (as by hand): later sweeps do not walk for it.
  const unmarked = path.join(dir, 'docs', '.0123456789abz1.view')
  await writeFile(unmarked, 'x')
  t.equal((await bucket.sweep({ leftoverGraceMs: 0 })).removedLeftovers, 0, 'not walked: a sweep costs nothing per key')
  t.ok(await exists(unmarked))

  // What the view does before making a temporary beside a key: touch the marker.
  await writeFile(marker, '')
  t.equal((await bucket.sweep({ leftoverGraceMs: 60_000 })).removedLeftovers, 0, 'a young temporary is kept')
  t.notOk(await exists(marker), 'the sweep claimed the marker (a temporary made from then on makes a new one)')
  t.ok(await exists(`${marker}.walking`), 'and keeps the claim while a temporary is left, for the sweep that will find it old')
  t.equal((await bucket.sweep({ leftoverGraceMs: 0 })).removedLeftovers, 1, 'still marked: the view is walked and the temporary removed')
  t.notOk(await exists(unmarked))
  t.notOk(await exists(`${marker}.walking`), 'a walk that read everything and left nothing behind drops the claim')
  t.notOk(await exists(marker))
  t.equal((await bucket.sweep({ leftoverGraceMs: 0 })).removedLeftovers, 0, 'and the next sweep does not walk')
  t.equal(await text(bucket, 'docs/a.txt'), 'shown')
})

async function exists (file: string): Promise<boolean> {
  return await stat(file).then(() => true, () => false)
}

t.test('the sweeper runs on a timer when sweepIntervalMs is set', async t => {
  const clock = new Clock()
  const bucket = await openBucket(path.join(testdir(t), 'bucket'), { clock: clock.read, minPartSize, sweepIntervalMs: 20 })
  t.teardown(() => bucket.close())
  const upload = await bucket.createMultipartUpload('forgotten')
  await upload.uploadPart(1, 'part')
  clock.now = start + 7 * day + 1
  let aborted = false
  for (let waited = 0; waited < 5000 && !aborted; waited += 50) {
    await new Promise(resolve => setTimeout(resolve, 50))
    aborted = await upload.uploadPart(2, 'part').then(() => false, (err: { code?: unknown }) => err.code === BucketErrors.NoSuchUpload.code)
  }
  t.ok(aborted, 'an expired upload is aborted without anyone calling sweep()')
})

t.test('a sweep interval longer than Node\'s timers keep is refused, not run every millisecond', async t => {
  const longest = 2 ** 31 - 1
  await t.rejects(openBucket(path.join(testdir(t), 'too-long'), { sweepIntervalMs: longest + 1 }), { name: 'RangeError', message: /sweepIntervalMs must be from 1 to 2147483647 ms/ })
  const bucket = await openBucket(path.join(testdir(t), 'longest'), { sweepIntervalMs: longest })
  await bucket.close()
  const registry = await openRegistry(path.join(testdir(t), 'data'), { fsync: false })
  t.teardown(() => registry.close())
  t.throws(() => { registry.startSweeper(longest + 1) }, { name: 'RangeError' })
  let swept = 0
  registry.startSweeper(longest, undefined, () => { swept++ })
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(swept, 0, 'the longest interval does not fire at once')
})

t.test('a bucket another sweep holds is skipped, and the report says so', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  t.teardown(() => registry.close())
  await registry.create('held')
  await registry.create('free')
  await (await registry.open('held'))!.put('k', 'v')
  // The lock a sweep of another process holds (a killed one holds it until it goes stale, a minute).
  const release = await lockFile(path.join(dataDir, 'held', '.fsbucket'), { lockfilePath: path.join(dataDir, 'held', '.fsbucket', 'sweep.lock'), realpath: false })
  t.equal((await registry.sweep()).skippedBuckets, 1, 'one bucket skipped')
  await release()
  t.equal((await registry.sweep()).skippedBuckets, 0, 'none once the lock is free')
})

t.test('close waits for a sweep in progress', async t => {
  const clock = new Clock()
  const bucket = await openBucket(path.join(testdir(t), 'bucket'), { clock: clock.read, minPartSize })
  for (let i = 0; i < 20; i++) {
    const upload = await bucket.createMultipartUpload(`forgotten-${i}`)
    await upload.uploadPart(1, 'part')
  }
  clock.now = start + 7 * day + 1
  let swept: number | undefined
  const sweeping = bucket.sweep().then(report => { swept = report.abortedUploads })
  await bucket.close()
  t.equal(swept, 20, 'the sweep finished, every upload aborted, before close resolved')
  await sweeping
})

t.test('a leftover hard-linked to another leftover is removed in the same sweep', async t => {
  // A completion killed after it linked an upload's parts into blobs/ and
  // after the upload's row was gone leaves two names of one body. Removing the
  // first name changes the ctime of the second; the sweep must still judge it old.
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir, { clock: () => new Date(Date.now() - 50) })
  t.teardown(() => bucket.close())
  await bucket.put('kept', 'a live object')
  const upload = path.join(dir, '.fsbucket', 'uploads', 'f'.repeat(32))
  const blob = path.join(dir, '.fsbucket', 'blobs', 'ee', `${'e'.repeat(32)}.1`)
  await mkdir(upload, { recursive: true })
  await mkdir(path.dirname(blob), { recursive: true })
  await writeFile(path.join(upload, '1'), 'part bytes')
  await link(path.join(upload, '1'), blob)
  await new Promise(resolve => setTimeout(resolve, 150))

  const report = await bucket.sweep({ leftoverGraceMs: 0 })
  t.equal(report.removedLeftovers, 2, 'the orphan upload directory and the orphan segment')
  await t.rejects(stat(upload), { code: 'ENOENT' }, 'the upload directory is gone')
  await t.rejects(stat(blob), { code: 'ENOENT' }, 'the segment linked to it is gone too')
  t.equal(await text(bucket, 'kept'), 'a live object', 'a live object is untouched')
})

t.test('a body whose put commits while a sweep judges it a leftover is not removed', async t => {
  const { dir, bucket } = await bucketWith(t, 'kept', 'a stored object')
  let release = (): void => {}
  const resumed = new Promise<void>(resolve => { release = resolve })
  // A put whose body stalls past the grace period (here: a sweep with none), then goes on.
  const putting = bucket.put('slow', (async function * () {
    yield Buffer.alloc(64 * 1024, 1) // past what the catalog keeps inline: a file in blobs/
    await resumed
    yield Buffer.alloc(64 * 1024, 2)
  })())
  const blobs = path.join(dir, '.fsbucket', 'blobs')
  const promises = fsp as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  const original = promises.stat
  t.teardown(() => { promises.stat = original })
  let judged = false
  promises.stat = async (...args: unknown[]) => {
    const found = await original(...args)
    // The sweep has just looked at the stalled body: the put goes on and commits before anything is removed.
    if (!judged && String(args[0]).startsWith(blobs)) {
      judged = true
      release()
      await putting
    }
    return found
  }
  while ((await readdir(blobs, { recursive: true })).length < 2) await new Promise(resolve => setTimeout(resolve, 5))
  await bucket.sweep({ leftoverGraceMs: -60_000 })
  t.ok(judged, 'the sweep judged the body while the put was stalled')
  const object = await putting
  t.equal(object?.size, 128 * 1024)
  const read = await bucket.get('slow')
  t.equal(read !== null && 'body' in read ? (await read.arrayBuffer()).byteLength : -1, 128 * 1024, 'its body is still there')
})

t.test('a sweep of the data directory removes what a bucket delete cut short after its move left', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await registry.close() })
  await deletedBucketLeftovers(t, registry, dataDir)
})
