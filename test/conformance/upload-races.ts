/**
 * Races of multipart uploads at the body files, for the stores that keep
 * parts as files (filesystem and PostgreSQL): a part placed while its upload
 * is completed or aborted, whose directory goes with it, and a completion
 * whose parts go while it links them. Each answers NoSuchUpload (10024), as
 * when the upload was gone before, never a bare file-system error. And a
 * completion whose key is written while it links the parts: the last
 * writer wins, as for puts.
 *
 * node:fs's `rename` and `link` are wrapped to run the racing request at
 * the chosen moment.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { Test } from 'tap'
import type { Bucket, BucketObjectBody } from '../../src/index.js'
import { testdir } from '../testdir.js'

export type OpenStoreBucket = (dir: string) => Promise<Bucket>

/** Runs `race` before the first call of `fs.promises[name]` whose target `where` accepts; true once it ran. */
function raceBefore (t: Test, name: 'rename' | 'link', where: (target: string) => boolean, race: () => Promise<unknown>): () => boolean {
  const promises = fsp as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  const original = promises[name]
  let ran = false
  promises[name] = async (...args: unknown[]) => {
    if (!ran && where(String(args[1]))) {
      ran = true
      await race()
    }
    return await original(...args)
  }
  t.teardown(() => { promises[name] = original })
  return () => ran
}

const inUpload = (uploadId: string) => (target: string): boolean => path.dirname(target).endsWith(path.join('uploads', uploadId))

async function expectNoSuchUpload (t: Test, call: Promise<unknown>, message: string): Promise<void> {
  await t.rejects(call, { code: 10024 }, message)
}

export function partPlacementRaces (t: Test, open: OpenStoreBucket): void {
  t.test('a part placed while its upload is completed is NoSuchUpload; the object is whole', async t => {
    const bucket = await open(testdir(t))
    t.teardown(async () => { await bucket.close() })
    const upload = await bucket.createMultipartUpload('key')
    const first = await upload.uploadPart(1, 'first part')
    const raced = raceBefore(t, 'rename', inUpload(upload.uploadId), async () => await upload.complete([first]))
    await expectNoSuchUpload(t, upload.uploadPart(2, 'second part'), 'the upload is gone')
    t.ok(raced(), 'the completion ran while the part was placed')
    t.equal(await ((await bucket.get('key')) as BucketObjectBody).text(), 'first part', 'the completed object')
  })

  t.test('a part placed while its upload is aborted is NoSuchUpload', async t => {
    const bucket = await open(testdir(t))
    t.teardown(async () => { await bucket.close() })
    const upload = await bucket.createMultipartUpload('key')
    await upload.uploadPart(1, 'first part')
    const raced = raceBefore(t, 'rename', inUpload(upload.uploadId), async () => await upload.abort())
    await expectNoSuchUpload(t, upload.uploadPart(2, 'second part'), 'the upload is gone')
    t.ok(raced(), 'the abort ran while the part was placed')
    t.same((await bucket.listMultipartUploads()).uploads, [])
  })
}

/** For stores whose completion links the parts outside any lock an abort waits for (the filesystem store). */
export function completionLinkRaces (t: Test, open: OpenStoreBucket): void {
  t.test('a completion whose key is written while it links the parts, again and again, still completes; a conditional one is judged on the object there now', async t => {
    const bucket = await open(testdir(t))
    t.teardown(async () => { await bucket.close() })
    const upload = await bucket.createMultipartUpload('key')
    const part = await upload.uploadPart(1, 'only part')
    const promises = fsp as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
    const link = promises.link
    t.teardown(() => { promises.link = link })
    let writes = 0
    promises.link = async (...args: unknown[]) => {
      if (String(args[1]).includes(`${path.sep}blobs${path.sep}`)) await bucket.put('key', `written ${++writes}`)
      return await link(...args)
    }
    const guarded = await bucket.put('key', 'before')
    t.equal(await upload.complete([part], { onlyIf: { etagMatches: guarded!.etag } }), null, 'the object it was conditioned on was replaced meanwhile')
    const done = await upload.complete([part])
    t.equal(writes, 2, 'the key was written while each completion linked its part')
    t.equal(done.size, 9)
    t.equal(await ((await bucket.get('key')) as BucketObjectBody).text(), 'only part', 'the completion replaced the object written meanwhile')
  })

  t.test('a completion whose upload is aborted while it links the parts is NoSuchUpload', async t => {
    const bucket = await open(testdir(t))
    t.teardown(async () => { await bucket.close() })
    const upload = await bucket.createMultipartUpload('key')
    const part = await upload.uploadPart(1, 'only part')
    const raced = raceBefore(t, 'link', target => target.includes(`${path.sep}blobs${path.sep}`), async () => await upload.abort())
    await expectNoSuchUpload(t, upload.complete([part]), 'the upload is gone')
    t.ok(raced(), 'the abort ran while the parts were linked')
    t.equal(await bucket.head('key'), null, 'no object')
  })
}

/** For every store that keeps parts as files: create-only completions of two uploads of one new key, the second run while the first links its parts. */
export function createOnlyCompletionRaces (t: Test, open: OpenStoreBucket): void {
  t.test('two create-only completions of one new key: exactly one wins, the other is refused and overwrites nothing', async t => {
    const bucket = await open(testdir(t))
    t.teardown(async () => { await bucket.close() })
    const first = await bucket.createMultipartUpload('key')
    const second = await bucket.createMultipartUpload('key')
    const firstPart = await first.uploadPart(1, 'first upload')
    const secondPart = await second.uploadPart(1, 'second upload')
    let won: unknown = null
    const raced = raceBefore(t, 'link', target => target.includes(`${path.sep}blobs${path.sep}`), async () => {
      won = await second.complete([secondPart], { onlyIf: { etagDoesNotMatch: '*' } })
    })
    const lost = await first.complete([firstPart], { onlyIf: { etagDoesNotMatch: '*' } })
    t.ok(raced(), 'the second completed while the first linked its part')
    t.not(won, null, 'the second, done first, created the key')
    t.equal(lost, null, 'the first is refused: the key exists now')
    t.equal(await ((await bucket.get('key')) as BucketObjectBody).text(), 'second upload', 'the winner\'s bytes stand')
  })
}
