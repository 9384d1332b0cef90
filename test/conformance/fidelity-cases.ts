/**
 * Conformance cases for the corners where the hosted binding coerces,
 * refuses or reports something a reader of the types alone would not guess.
 * Called from the conformance suite (`bucket.ts`), so every store runs
 * them. Each case names the hosted behaviour it pins.
 */
import path from 'node:path'
import type { Test } from 'tap'
import type { Bucket, BucketObject, BucketObjectBody, BucketRange, OpenBucketOptions } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { expectCode, md5Hex, patternBytes, TestClock, type OpenBucket } from './bucket.js'

const KiB = 1024

function hasBody (object: BucketObject | BucketObjectBody | null): object is BucketObjectBody {
  return object !== null && 'body' in object
}

async function textOf (object: BucketObject | BucketObjectBody | null): Promise<string> {
  if (!hasBody(object)) throw new Error('expected an object with a body')
  return await object.text()
}

/** Awaits a call that must throw `kind` (exactly that class, no catalogue code). */
async function expectThrown (t: Test, call: () => Promise<unknown> | unknown, kind: ErrorConstructor, message: string, text?: string): Promise<void> {
  try {
    await call()
  } catch (err) {
    const exact = kind === Error ? !(err instanceof TypeError || err instanceof RangeError) : true
    t.ok(err instanceof kind && exact && (err as Error).name === kind.name, `${message}: a ${kind.name} (got ${String(err)})`)
    t.equal((err as { code?: unknown }).code, undefined, `${message}: no catalogue code`)
    if (text !== undefined) t.equal((err as Error).message, text, `${message}: message`)
    return
  }
  t.fail(`${message}: expected a ${kind.name}`)
}

export function fidelityCases (t: Test, open: OpenBucket): void {
  async function fresh (tt: Test, options?: OpenBucketOptions): Promise<Bucket> {
    const bucket = await open(path.join(testdir(tt), 'bucket'), options)
    tt.teardown(() => bucket.close())
    return bucket
  }

  t.test('fidelity: a whole-object read reports its range', async t => {
    const bucket = await fresh(t)
    await bucket.put('ten', '0123456789')
    await bucket.put('empty', '')
    t.same((await bucket.head('ten'))?.range, { offset: 0, length: 10 }, 'head')
    t.same((await bucket.get('ten'))?.range, { offset: 0, length: 10 }, 'get')
    t.same((await bucket.head('empty'))?.range, { offset: 0, length: 0 }, 'head of an empty object')
    const refused = await bucket.get('ten', { onlyIf: { etagMatches: md5Hex('other') } })
    t.notOk(hasBody(refused), 'a failed condition gives no body')
    t.same(refused?.range, { offset: 0, length: 10 }, 'and the whole range')
    t.same((await bucket.get('ten', { range: { offset: 2, length: 3 } }))?.range, { offset: 2, length: 3 }, 'a ranged get reports its range')
  })

  t.test('fidelity: put options the hosted binding coerces or refuses', async t => {
    const bucket = await fresh(t)
    await expectThrown(t, () => bucket.put('k', 'x', { httpMetadata: { cacheExpiry: '2030-01-01T00:00:00Z' as unknown as Date } }), TypeError, 'cacheExpiry as a string')
    await expectThrown(t, () => bucket.put('k', 'x', { customMetadata: null as unknown as Record<string, string> }), TypeError, 'customMetadata: null')
    await expectThrown(t, () => bucket.createMultipartUpload('k', { customMetadata: null as unknown as Record<string, string> }), TypeError, 'customMetadata: null on create')
    t.equal(await bucket.head('k'), null, 'nothing was stored')

    const put = await bucket.put('k', 'x', { httpMetadata: new Headers({ Expires: 'not a date', 'Content-Type': 'text/plain' }) })
    t.equal(put?.httpMetadata.cacheExpiry?.getTime(), 0, 'an Expires that is not a date is stored as the epoch')
    const head = await bucket.head('k')
    t.equal(head?.httpMetadata.cacheExpiry?.toISOString(), '1970-01-01T00:00:00.000Z', 'and read back as 1970-01-01')
    t.equal(head?.httpMetadata.contentType, 'text/plain', 'the other headers are kept')
    const headers = new Headers()
    head?.writeHttpMetadata(headers)
    t.equal(headers.get('expires'), 'Thu, 01 Jan 1970 00:00:00 GMT', 'written as the epoch')
    t.equal((await bucket.put('k', 'x', { customMetadata: undefined }))?.size, 1, 'customMetadata left undefined is fine')
  })

  t.test('fidelity: onlyIf dates are Date objects or numbers (ms); a string is a TypeError; an invalid Date fails its condition', async t => {
    const clock = new TestClock(Date.UTC(2025, 0, 1, 0, 0, 0))
    const bucket = await fresh(t, { clock: clock.read })
    await bucket.put('d', 'dated')
    clock.now += 60_000
    const iso = new Date(clock.now).toISOString()
    await expectThrown(t, () => bucket.get('d', { onlyIf: { uploadedBefore: iso as unknown as Date } }), TypeError, 'uploadedBefore as an ISO string')
    await expectThrown(t, () => bucket.get('d', { onlyIf: { uploadedAfter: iso as unknown as Date } }), TypeError, 'uploadedAfter as an ISO string')
    await expectThrown(t, () => bucket.put('d', 'x', { onlyIf: { uploadedBefore: iso as unknown as Date } }), TypeError, 'put: uploadedBefore as an ISO string')

    const invalid = new Date('not a date')
    const before = await bucket.get('d', { onlyIf: { uploadedBefore: invalid } })
    t.ok(before !== null && !hasBody(before), 'an invalid uploadedBefore fails (metadata, no body)')
    const after = await bucket.get('d', { onlyIf: { uploadedAfter: invalid } })
    t.ok(after !== null && !hasBody(after), 'an invalid uploadedAfter fails')
    t.equal(await bucket.put('d', 'replaced', { onlyIf: { uploadedBefore: invalid } }), null, 'a put with an invalid date is refused')
    t.equal(await textOf(await bucket.get('d')), 'dated', 'and stores nothing')

    // A number is milliseconds since the epoch, as the hosted runtime takes it.
    const later = await bucket.get('d', { onlyIf: { uploadedBefore: clock.now as unknown as Date } })
    t.ok(later !== null && hasBody(later), 'uploadedBefore as a number after the upload passes')
    const earlier = await bucket.get('d', { onlyIf: { uploadedAfter: clock.now as unknown as Date } })
    t.ok(earlier !== null && !hasBody(earlier), 'uploadedAfter as a number after the upload fails')
    t.equal(await bucket.put('d', 'replaced', { onlyIf: { uploadedAfter: clock.now as unknown as Date } }), null, 'a put judges it alike')
    t.ok(await bucket.put('d', 'replaced', { onlyIf: { uploadedBefore: clock.now as unknown as Date } }), 'and writes when it passes')
  })

  t.test('fidelity: etags compared literally in object form, quoted in Headers form', async t => {
    const bucket = await fresh(t)
    const put = await bucket.put('e', 'etagged')
    const etag = put?.etag ?? ''
    const weak = await bucket.get('e', { onlyIf: { etagMatches: `W/"${etag}"` } })
    t.ok(weak !== null && !hasBody(weak), 'etagMatches W/"E" is a literal string, not the weak form of E')
    t.ok(hasBody(await bucket.get('e', { onlyIf: { etagDoesNotMatch: `W/"${etag}"` } })), 'etagDoesNotMatch W/"E" does not match E')
    await expectThrown(t, () => bucket.get('e', { onlyIf: { etagMatches: `"${etag}"` } }), TypeError, 'a quoted etag in object form')

    await expectThrown(t, () => bucket.get('e', { onlyIf: new Headers({ 'If-Match': etag }) }), Error, 'an unquoted If-Match', 'Invalid ETag in if-match header')
    await expectThrown(t, () => bucket.get('e', { onlyIf: new Headers({ 'If-None-Match': etag }) }), Error, 'an unquoted If-None-Match', 'Invalid ETag in if-none-match header')
    await expectThrown(t, () => bucket.put('e', 'x', { onlyIf: new Headers({ 'If-Match': etag }) }), Error, 'put: an unquoted If-Match', 'Invalid ETag in if-match header')
    t.ok(hasBody(await bucket.get('e', { onlyIf: new Headers({ 'If-Match': `"${etag}"` }) })), 'a quoted If-Match matches')
    t.equal(await textOf(await bucket.get('e')), 'etagged', 'nothing was replaced')
  })

  t.test('fidelity: range {} is the whole object; fractions are RangeErrors', async t => {
    const bucket = await fresh(t)
    await bucket.put('digits', '0123456789')
    const whole = await bucket.get('digits', { range: {} as unknown as BucketRange })
    t.equal(await textOf(whole), '0123456789', 'range: {} returns the whole object')
    t.same(whole?.range, { offset: 0, length: 10 }, 'and reports the whole range')
    await expectThrown(t, () => bucket.get('digits', { range: { offset: 1.5 } }), RangeError, 'a fractional offset')
    await expectThrown(t, () => bucket.get('digits', { range: { offset: 1, length: 2.5 } }), RangeError, 'a fractional length')
    await expectThrown(t, () => bucket.get('digits', { range: { suffix: 0.5 } }), RangeError, 'a fractional suffix')
  })

  t.test('fidelity: list limit -1 means no limit given', async t => {
    const bucket = await fresh(t)
    await Promise.all(['a', 'b', 'c'].map(async key => await bucket.put(key, key)))
    const listed = await bucket.list({ limit: -1 })
    t.same(listed.objects.map(o => o.key), ['a', 'b', 'c'], 'limit -1 gives the default page')
    t.equal(listed.truncated, false)
    for (const limit of [0, -2, 1001]) await expectCode(t, () => bucket.list({ limit }), 10022, 'list', `limit ${limit}`)
  })

  t.test('fidelity: uploadPart needs a value; complete wants ascending parts', async t => {
    const minPartSize = 4 * KiB
    const bucket = await fresh(t, { minPartSize })
    const upload = await bucket.createMultipartUpload('mp')
    await expectThrown(t, () => upload.uploadPart(1, null as unknown as string), TypeError, 'uploadPart(n, null)')
    const p1 = await upload.uploadPart(1, patternBytes(minPartSize, 1))
    const p2 = await upload.uploadPart(2, patternBytes(100, 2))
    await expectCode(t, () => upload.complete([p2, p1]), 10048, 'completeMultipartUpload', 'parts in descending order')
    t.equal(await bucket.head('mp'), null, 'nothing completed')
    t.equal((await upload.complete([p1, p2])).size, minPartSize + 100, 'the same parts in ascending order complete')
  })

  t.test('fidelity: a multipart handle is bound to its key', async t => {
    const minPartSize = 4 * KiB
    const bucket = await fresh(t, { minPartSize })
    const a = await bucket.createMultipartUpload('a')
    const part = await a.uploadPart(1, 'first part of a')
    const wrong = bucket.resumeMultipartUpload('b', a.uploadId)
    await expectCode(t, () => wrong.abort(), 10024, 'abortMultipartUpload', 'aborting a\'s upload through a handle on b')
    await expectCode(t, () => wrong.uploadPart(2, 'x'), 10024, 'uploadPart', 'uploading a part through a handle on b')
    await expectCode(t, () => wrong.complete([part]), 10024, 'completeMultipartUpload', 'completing through a handle on b')
    t.equal(await bucket.head('b'), null, 'nothing was written under b')
    const completed = await a.complete([part])
    t.equal(completed.key, 'a', 'a\'s upload survived and completes')
    t.equal(await textOf(await bucket.get('a')), 'first part of a')

    await expectCode(t, () => bucket.resumeMultipartUpload('a', 'no-such-upload').abort(), 10024, 'abortMultipartUpload', 'aborting an unknown id')
    t.equal(await a.abort(), undefined, 'aborting through the handle that completed the upload does nothing')
    t.equal(await textOf(await bucket.get('a')), 'first part of a', 'and keeps the object')
  })
}
