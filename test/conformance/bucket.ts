/**
 * The conformance suite of the bucket binding.
 *
 * Written from the binding's contract alone (the seed document, issue 2's
 * "Semantics" section and, where both are silent, the hosted service's
 * documented behaviour), and only against the public API: `open(dir, options)`
 * returning a `Bucket`, and errors carrying a numeric `code`. Any storage
 * implementation can run it: call `bucketConformance(t, open)` from a test
 * file. Every subtest works in its own test directory and closes what it opens.
 *
 * The suite asserts what a user relies on: return shapes, bytes, etags,
 * error codes and message forms, and the argument mistakes a JavaScript
 * runtime would reject with TypeError or RangeError.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import { Readable } from 'node:stream'
import type { Test } from 'tap'
import type {
  Bucket,
  BucketObject,
  BucketObjectBody,
  BucketRange,
  BucketUploadedPart,
  OpenBucketOptions
} from '../../src/index.js'
import { testdir } from '../testdir.js'
import { checksumConformance } from './bucket-checksums.js'
import { closeConformance } from './bucket-close.js'
import { copyConformance } from './bucket-copy.js'
import { ssecConformance } from './bucket-ssec.js'
import { uploadListingConformance } from './bucket-uploads.js'
import { fidelityCases } from './fidelity-cases.js'

/** The engine's options, and `fsync`, which stores without a disk ignore. */
export type SuiteOptions = OpenBucketOptions & { fsync?: boolean }

export type OpenBucket = (dir: string, options?: SuiteOptions) => Promise<Bucket>

const KiB = 1024

export function md5Hex (bytes: Uint8Array | string): string {
  return createHash('md5').update(bytes).digest('hex')
}

function hashHex (algorithm: string, bytes: Uint8Array | string): string {
  return createHash(algorithm).update(bytes).digest('hex')
}

function hexOf (buffer: ArrayBuffer | undefined): string | undefined {
  return buffer === undefined ? undefined : Buffer.from(buffer).toString('hex')
}

/** Bytes that differ at every offset, so a shifted or mixed body shows. */
export function patternBytes (size: number, seed: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size)
  let x = (seed * 2654435761 + 1) >>> 0
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    bytes[i] = x >>> 24
  }
  return bytes
}

/** The etag of a completed multipart upload: MD5 of the binary part MD5s, then `-N`. */
export function multipartEtag (parts: Uint8Array[]): string {
  const digests = parts.map(part => createHash('md5').update(part).digest())
  return `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${parts.length}`
}

function hasBody (object: BucketObject | BucketObjectBody | null): object is BucketObjectBody {
  return object !== null && 'body' in object
}

async function bytesOf (object: BucketObject | BucketObjectBody | null): Promise<Buffer> {
  if (!hasBody(object)) throw new Error('expected an object with a body')
  return Buffer.from(await object.arrayBuffer())
}

/** Awaits a call that must fail with a catalogue error of the given code. */
export async function expectCode (
  t: Test, call: () => Promise<unknown> | unknown, code: number, method?: string, message?: string
): Promise<Error | undefined> {
  let result: unknown
  try {
    result = await call()
  } catch (err) {
    t.ok(err instanceof Error, `${message ?? `error ${code}`}: is an Error`)
    const { code: actual } = err as { code?: unknown }
    t.equal(actual, code, message ?? `error code ${code}`)
    const text = (err as Error).message
    const form = method === undefined ? /^\w+: [\s\S]+ \((\d+)\)$/ : new RegExp(`^${method}: [\\s\\S]+ \\((\\d+)\\)$`)
    t.match(text, form, `message reads "<method>: <message> (<code>)": ${text}`)
    t.ok(text.endsWith(`(${code})`), 'message ends with the code')
    return err as Error
  }
  t.fail(`${message ?? `expected error ${code}`}, got ${String(result)}`)
  return undefined
}

/** Awaits a call that must fail the way a JavaScript runtime rejects a wrong argument. */
async function expectArgumentError (
  t: Test, call: () => Promise<unknown> | unknown, message: string, kinds: Array<typeof TypeError> = [TypeError, RangeError]
): Promise<void> {
  try {
    await call()
  } catch (err) {
    t.ok(kinds.some(kind => err instanceof kind), `${message}: ${kinds.map(k => k.name).join(' or ')} (got ${String(err)})`)
    t.equal(typeof (err as { code?: unknown }).code, 'undefined', `${message}: no catalogue code`)
    return
  }
  t.fail(`${message}: expected ${kinds.map(k => k.name).join(' or ')}`)
}

async function expectRejection (t: Test, call: () => Promise<unknown> | unknown, message: string): Promise<void> {
  try {
    await call()
  } catch (err) {
    t.ok(err instanceof Error, `${message}: rejected with ${String(err)}`)
    return
  }
  t.fail(`${message}: expected a rejection`)
}

/** A ReadableStream that does not announce its length. */
function streamOf (...chunks: Array<Uint8Array | string>): ReadableStream<Uint8Array> {
  const queue = chunks.map(chunk => typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk)
  return new ReadableStream<Uint8Array>({
    pull (controller) {
      const next = queue.shift()
      if (next === undefined) controller.close()
      else controller.enqueue(next)
    }
  })
}

/** A settable clock for the bucket. */
export class TestClock {
  now: number
  constructor (start: number) { this.now = start }
  read = (): Date => new Date(this.now)
}

export function bucketConformance (t: Test, open: OpenBucket): void {
  /** Opens a bucket in the subtest's own directory and closes it at the end. */
  async function fresh (tt: Test, options?: SuiteOptions): Promise<Bucket> {
    const dir = path.join(testdir(tt), 'bucket')
    const bucket = await open(dir, options)
    tt.teardown(() => bucket.close())
    return bucket
  }

  t.test('put returns the stored object; head and get find it', async t => {
    const clock = new TestClock(Date.UTC(2024, 2, 1, 12, 0, 0, 123))
    const bucket = await fresh(t, { clock: clock.read })
    const bytes = 'hello, bucket'
    const put = await bucket.put('greeting.txt', bytes)
    if (put === null) throw new Error('put returned null')
    t.equal(put.key, 'greeting.txt')
    t.equal(put.size, Buffer.byteLength(bytes))
    t.equal(put.etag, md5Hex(bytes), 'etag is the lowercase MD5 hex of the bytes')
    t.equal(put.httpEtag, `"${md5Hex(bytes)}"`, 'httpEtag is the etag in double quotes')
    t.match(put.version, /^[0-9a-f]{32}$/, 'version is 32 hex characters')
    t.ok(put.uploaded instanceof Date, 'uploaded is a Date')
    t.equal(put.uploaded.getTime(), clock.now, 'uploaded keeps the milliseconds of the clock')
    t.equal(put.storageClass, 'Standard')
    t.same(put.customMetadata, {})
    t.equal(hexOf(put.checksums.md5), md5Hex(bytes), 'md5 checksum present for a single put')

    const head = await bucket.head('greeting.txt')
    t.ok(head !== null && !('body' in head), 'head gives metadata without a body')
    t.equal(head?.etag, put.etag)
    t.equal(head?.version, put.version)
    t.equal(head?.size, put.size)
    t.equal(head?.uploaded.getTime(), put.uploaded.getTime())

    const got = await bucket.get('greeting.txt')
    t.ok(hasBody(got), 'get gives a body')
    t.equal(got?.version, put.version)
    t.equal((await bytesOf(got)).toString(), bytes)

    clock.now += 1500
    const again = await bucket.put('greeting.txt', 'hello again')
    t.not(again?.version, put.version, 'a new write gets a new version')
    t.equal(again?.uploaded.getTime(), clock.now)
    t.equal((await bucket.head('greeting.txt'))?.etag, md5Hex('hello again'), 'the second write replaced the first')
  })

  t.test('a caller polling for a write of its own process sees it: reads give the event loop its turns', async t => {
    const bucket = await fresh(t)
    const polls = { head: 0, get: 0, list: 0 }
    const writing = bucket.put('polled/a', 'hello')
    while ((await bucket.head('polled/a')) === null && polls.head < 20_000) polls.head++
    const second = bucket.put('polled/b', 'hello')
    while ((await bucket.get('polled/b')) === null && polls.get < 20_000) polls.get++
    const third = bucket.put('polled/c', 'hello')
    while ((await bucket.list({ prefix: 'polled/c' })).objects.length === 0 && polls.list < 20_000) polls.list++
    await Promise.all([writing, second, third])
    t.ok(polls.head < 20_000 && polls.get < 20_000 && polls.list < 20_000, `each write seen (polls: ${JSON.stringify(polls)})`)
  })

  t.test('missing keys give null', async t => {
    const bucket = await fresh(t)
    t.equal(await bucket.head('nothing-here'), null)
    t.equal(await bucket.get('nothing-here'), null)
    t.equal(await bucket.get('nothing-here', { onlyIf: { etagDoesNotMatch: '*' } }), null)
    t.equal(await bucket.get('nothing-here', { range: { offset: 0, length: 1 } }), null)
  })

  t.test('every value type put accepts', async t => {
    const bucket = await fresh(t)
    const buffer = new Uint8Array([10, 11, 12, 13, 14, 15, 16, 17]).buffer
    const cases: Array<[string, () => unknown, Uint8Array]> = [
      ['ReadableStream of unknown length', () => streamOf('ab', 'cd', new Uint8Array([0, 255])), Buffer.from([0x61, 0x62, 0x63, 0x64, 0, 255])],
      ['ArrayBuffer', () => buffer, new Uint8Array(buffer)],
      ['Uint8Array view with offset and length', () => new Uint8Array(buffer, 2, 3), new Uint8Array([12, 13, 14])],
      ['Uint16Array view', () => new Uint16Array(buffer, 4, 2), new Uint8Array([14, 15, 16, 17])],
      ['DataView with offset and length', () => new DataView(buffer, 1, 4), new Uint8Array([11, 12, 13, 14])],
      ['string as UTF-8', () => 'h\u00e9llo \u{1F600}', new TextEncoder().encode('h\u00e9llo \u{1F600}')],
      ['Blob', () => new Blob(['blob ', new Uint8Array([1, 2])]), Buffer.concat([Buffer.from('blob '), Buffer.from([1, 2])])],
      ['null as an empty object', () => null, new Uint8Array(0)],
      ['empty string', () => '', new Uint8Array(0)],
      ['Node.js Readable', () => Readable.from([Buffer.from('node '), Buffer.from('stream')]), Buffer.from('node stream')]
    ]
    for (const [name, value, expected] of cases) {
      const key = `value/${name}`
      const put = await bucket.put(key, value() as never)
      t.equal(put?.size, expected.byteLength, `${name}: size`)
      t.equal(put?.etag, md5Hex(expected), `${name}: etag`)
      t.same(await bytesOf(await bucket.get(key)), Buffer.from(expected), `${name}: bytes`)
    }
  })

  t.test('a buffer given as the value is taken when put is called: reusing it afterwards changes neither the bytes nor the ETag', async t => {
    const bucket = await fresh(t)
    for (const size of [100, 100_000, 8 * 1024 * 1024]) {
      const buffer = new Uint8Array(size).fill(0x41)
      const written = bucket.put(`reused/${size}`, buffer)
      await new Promise(resolve => setImmediate(resolve))
      buffer.fill(0x42)
      const put = await written
      const stored = await bytesOf(await bucket.get(`reused/${size}`))
      t.ok(stored.every(byte => byte === 0x41), `${size} bytes: the bytes given`)
      t.equal(put?.etag, md5Hex(stored), `${size} bytes: the ETag is the stored bytes' MD5`)
    }
  })

  t.test('a web stream already read from is refused, and the object it would overwrite stays', async t => {
    const bucket = await fresh(t)
    await bucket.put('victim', 'kept')
    const stream = streamOf('abc', 'def')
    const reader = stream.getReader()
    await reader.read()
    reader.releaseLock()
    await t.rejects(bucket.put('victim', stream), { name: 'TypeError', message: /read from already/ })
    t.equal((await bytesOf(await bucket.get('victim'))).toString(), 'kept')
  })

  t.test('an Expires in httpMetadata given as Headers is read as an HTTP-date or an ISO 8601 date; anything else is the epoch', async t => {
    const bucket = await fresh(t)
    const cases: Array<[string, number]> = [
      ['Sun, 06 Nov 1994 08:49:37 GMT', Date.UTC(1994, 10, 6, 8, 49, 37)],
      ['0', 0],
      ['2099', 0],
      ['2024-01-01T00:00:00Z', Date.UTC(2024, 0, 1)],
      ['2024-01-01', Date.UTC(2024, 0, 1)],
      ['2024-01-01T10:30:00+02:00', Date.UTC(2024, 0, 1, 8, 30)],
      ['2024-01-01T10:30', Date.UTC(2024, 0, 1, 10, 30)],
      ['2024-13-01', 0]
    ]
    for (const [expires, ms] of cases) {
      await bucket.put('expiring', 'x', { httpMetadata: new Headers({ expires }) })
      t.equal((await bucket.head('expiring'))?.httpMetadata.cacheExpiry?.getTime(), ms, JSON.stringify(expires))
    }
  })

  t.test('a put\'s arguments are checked before the store is read: a bad computeChecksums is refused whatever onlyIf finds', async t => {
    const bucket = await fresh(t)
    await bucket.put('k', 'x')
    await t.rejects(bucket.put('k', 'y', { onlyIf: { etagMatches: 'nope' }, computeChecksums: ['md4'] } as never), { name: 'TypeError' })
  })

  t.test('a source that writes its next bytes into the buffer of the chunk it gave before: the bytes stored are the bytes given', async t => {
    const bucket = await fresh(t, { minPartSize: 5 })
    // Small chunks (gathered into one write) and large ones (each a write of its own, in flight as the next arrives).
    for (const [name, size, count] of [['small chunks', 4, 5], ['large chunks', 300 * KiB, 4]] as const) {
      const expected = Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.alloc(size, i + 1)))
      const reusing = async function * (): AsyncGenerator<Uint8Array> {
        const buffer = Buffer.alloc(size)
        for (let i = 0; i < count; i++) yield buffer.fill(i + 1)
      }
      const put = await bucket.put(`reused/${name}`, reusing())
      t.same(await bytesOf(await bucket.get(`reused/${name}`)), expected, `${name}: put`)
      t.equal(put?.etag, md5Hex(expected), `${name}: the etag is the MD5 of the bytes stored`)
      let pulls = 0
      const one = new Uint8Array(size)
      const stream = new ReadableStream<Uint8Array>({
        pull (controller) {
          if (pulls === count) return controller.close()
          controller.enqueue(one.fill(++pulls))
        }
      }, { highWaterMark: 0 })
      await bucket.put(`reused/${name} stream`, stream)
      t.same(await bytesOf(await bucket.get(`reused/${name} stream`)), expected, `${name}: a stream re-enqueuing one array`)
      const upload = await bucket.createMultipartUpload(`reused/${name} parts`)
      const part = await upload.uploadPart(1, reusing())
      t.equal(part.etag, md5Hex(expected), `${name}: a part`)
      await upload.complete([part])
      t.same(await bytesOf(await bucket.get(`reused/${name} parts`)), expected, `${name}: the completed object`)
    }
  })

  t.test('a put whose stream fails stores nothing and keeps the previous object', async t => {
    const bucket = await fresh(t)
    await bucket.put('fragile', 'the previous object')
    let sent = 0
    const failing = new ReadableStream<Uint8Array>({
      pull (controller) {
        if (sent++ < 3) controller.enqueue(new Uint8Array(64 * KiB).fill(sent))
        else controller.error(new Error('the client went away'))
      }
    })
    await expectRejection(t, () => bucket.put('fragile', failing), 'put of a failing stream')
    t.equal((await bytesOf(await bucket.get('fragile'))).toString(), 'the previous object', 'the previous object is intact')
    const again = new ReadableStream<Uint8Array>({ pull (controller) { controller.error(new Error('at once')) } })
    await expectRejection(t, () => bucket.put('never-stored', again), 'put of a stream failing at once')
    t.equal(await bucket.head('never-stored'), null, 'nothing stored')
    t.same((await bucket.list()).objects.map(o => o.key), ['fragile'], 'nothing half-written is listed')
  })

  t.test('a body offers text, json, arrayBuffer, blob and the stream once', async t => {
    const bucket = await fresh(t)
    const document = { name: 'fsbucket', list: [1, 2, 3], unicode: '\u00e9\u{1F600}' }
    await bucket.put('doc.json', JSON.stringify(document), { httpMetadata: { contentType: 'application/json' } })

    const forJson = await bucket.get('doc.json')
    if (!hasBody(forJson)) throw new Error('no body')
    t.equal(forJson.bodyUsed, false, 'bodyUsed is false before reading')
    t.same(await forJson.json(), document)
    t.equal(forJson.bodyUsed, true, 'bodyUsed is true after reading')
    await expectRejection(t, () => forJson.text(), 'reading a used body again')

    const forText = await bucket.get('doc.json')
    if (!hasBody(forText)) throw new Error('no body')
    t.equal(await forText.text(), JSON.stringify(document))

    const forBuffer = await bucket.get('doc.json')
    if (!hasBody(forBuffer)) throw new Error('no body')
    const buffer = await forBuffer.arrayBuffer()
    t.ok(buffer instanceof ArrayBuffer, 'arrayBuffer gives an ArrayBuffer')
    t.equal(Buffer.from(buffer).toString(), JSON.stringify(document))

    const forBlob = await bucket.get('doc.json')
    if (!hasBody(forBlob)) throw new Error('no body')
    const blob = await forBlob.blob()
    t.equal(blob.type, 'application/json', 'the blob is typed with the stored content type')
    t.equal(await blob.text(), JSON.stringify(document))

    const forStream = await bucket.get('doc.json')
    if (!hasBody(forStream)) throw new Error('no body')
    const chunks: Uint8Array[] = []
    const reader = forStream.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
    }
    t.equal(Buffer.concat(chunks).toString(), JSON.stringify(document), 'body streams the bytes')
    t.equal(forStream.bodyUsed, true, 'bodyUsed is true after streaming the body')
  })

  t.test('http metadata: stored, given as object or Headers, written to headers', async t => {
    const bucket = await fresh(t)
    const expiry = new Date(Date.UTC(2030, 0, 2, 3, 4, 5))
    const metadata = {
      contentType: 'text/plain; charset=utf-8',
      contentLanguage: 'fr',
      contentDisposition: 'attachment; filename="a.txt"',
      contentEncoding: 'identity',
      cacheControl: 'max-age=60',
      cacheExpiry: expiry
    }
    const put = await bucket.put('meta/object', 'x', { httpMetadata: metadata })
    t.equal(put?.httpMetadata.contentType, metadata.contentType)
    const head = await bucket.head('meta/object')
    if (head === null) throw new Error('missing')
    t.equal(head.httpMetadata.contentType, metadata.contentType)
    t.equal(head.httpMetadata.contentLanguage, metadata.contentLanguage)
    t.equal(head.httpMetadata.contentDisposition, metadata.contentDisposition)
    t.equal(head.httpMetadata.contentEncoding, metadata.contentEncoding)
    t.equal(head.httpMetadata.cacheControl, metadata.cacheControl)
    t.ok(head.httpMetadata.cacheExpiry instanceof Date, 'cacheExpiry is a Date')
    t.equal(head.httpMetadata.cacheExpiry?.getTime(), expiry.getTime())

    const headers = new Headers()
    head.writeHttpMetadata(headers)
    t.equal(headers.get('content-type'), metadata.contentType)
    t.equal(headers.get('content-language'), 'fr')
    t.equal(headers.get('content-disposition'), metadata.contentDisposition)
    t.equal(headers.get('content-encoding'), 'identity')
    t.equal(headers.get('cache-control'), 'max-age=60')
    t.equal(new Date(headers.get('expires') ?? '').getTime(), expiry.getTime(), 'Expires carries cacheExpiry')

    const fromHeaders = new Headers({
      'Content-Type': 'image/png',
      'Content-Language': 'de',
      'Content-Disposition': 'inline',
      'Content-Encoding': 'gzip',
      'Cache-Control': 'no-cache',
      Expires: expiry.toUTCString()
    })
    await bucket.put('meta/headers', 'y', { httpMetadata: fromHeaders })
    const second = await bucket.head('meta/headers')
    t.equal(second?.httpMetadata.contentType, 'image/png')
    t.equal(second?.httpMetadata.contentLanguage, 'de')
    t.equal(second?.httpMetadata.contentDisposition, 'inline')
    t.equal(second?.httpMetadata.contentEncoding, 'gzip')
    t.equal(second?.httpMetadata.cacheControl, 'no-cache')
    t.equal(second?.httpMetadata.cacheExpiry?.getTime(), expiry.getTime())

    const plain = await bucket.put('meta/none', 'z')
    const none = new Headers()
    plain?.writeHttpMetadata(none)
    t.equal(none.get('content-type'), null, 'no metadata writes no headers')
  })

  t.test('custom metadata: stored, stringified, limited to 2048 bytes', async t => {
    const bucket = await fresh(t)
    await bucket.put('custom', 'x', { customMetadata: { owner: 'ada', number: 5 as unknown as string, flag: true as unknown as string } })
    t.same((await bucket.head('custom'))?.customMetadata, { owner: 'ada', number: '5', flag: 'true' }, 'values are stringified')
    await bucket.put('custom/proto', 'x', { customMetadata: JSON.parse('{"__proto__": "x", "constructor": "y", "a": "b"}') })
    const kept = (await bucket.get('custom/proto'))?.customMetadata ?? {}
    t.same(Object.entries(kept), [['__proto__', 'x'], ['constructor', 'y'], ['a', 'b']], 'a name such as __proto__ is an entry like any other')
    t.equal(Object.getPrototypeOf(kept), Object.prototype, 'and not the prototype')

    const atLimit = { k: 'v'.repeat(2047) }
    t.ok(await bucket.put('custom/at-limit', 'x', { customMetadata: atLimit }), '2048 bytes of keys and values are accepted')
    await expectCode(t, () => bucket.put('custom/over', 'x', { customMetadata: { k: 'v'.repeat(2048) } }), 10012, 'put')
    // Bytes, not characters: 1 + 1023 * 2 = 2047, then a 2-byte key pushes it to 2049.
    await expectCode(t, () => bucket.put('custom/over', 'x', { customMetadata: { k: '\u00e9'.repeat(1023), '\u00e9': '' } }), 10012, 'put')
    t.equal(await bucket.head('custom/over'), null, 'nothing stored on error')
  })

  t.test('storage classes', async t => {
    const bucket = await fresh(t)
    t.equal((await bucket.put('standard', 'x'))?.storageClass, 'Standard')
    t.equal((await bucket.put('ia', 'x', { storageClass: 'InfrequentAccess' }))?.storageClass, 'InfrequentAccess')
    t.equal((await bucket.head('ia'))?.storageClass, 'InfrequentAccess')
    t.equal((await bucket.head('standard'))?.storageClass, 'Standard')
    await expectRejection(t, () => bucket.put('glacier', 'x', { storageClass: 'Glacier' as never }), 'unknown storage class')
    t.equal(await bucket.head('glacier'), null, 'nothing stored for a rejected storage class')
  })

  t.test('checksums: md5 by default, given hashes verified and stored', async t => {
    const bucket = await fresh(t)
    const bytes = 'checksummed bytes'
    for (const algorithm of ['sha1', 'sha256', 'sha384', 'sha512'] as const) {
      const hex = hashHex(algorithm, bytes)
      const asHex = await bucket.put(`sum/${algorithm}/hex`, bytes, { [algorithm]: hex })
      t.equal(hexOf(asHex?.checksums[algorithm]), hex, `${algorithm} given as hex is stored`)
      t.equal(hexOf(asHex?.checksums.md5), md5Hex(bytes), `${algorithm}: md5 is still there`)
      const asBuffer = await bucket.put(`sum/${algorithm}/buffer`, bytes, { [algorithm]: new Uint8Array(Buffer.from(hex, 'hex')).buffer })
      t.equal(hexOf(asBuffer?.checksums[algorithm]), hex, `${algorithm} given as ArrayBuffer is stored`)
      const head = await bucket.head(`sum/${algorithm}/buffer`)
      t.equal(hexOf(head?.checksums[algorithm]), hex, `${algorithm} survives in head`)
      t.same(JSON.parse(JSON.stringify(head?.checksums)), { md5: md5Hex(bytes), [algorithm]: hex }, `${algorithm}: checksums serialise to hex`)
    }
    t.ok(await bucket.put('sum/md5', bytes, { md5: md5Hex(bytes) }), 'a correct md5 is accepted')
    t.same((await bucket.head('sum/md5'))?.checksums.toJSON(), { md5: md5Hex(bytes) })

    const wrong = hashHex('sha256', 'other bytes')
    const err = await expectCode(t, () => bucket.put('sum/bad', bytes, { sha256: wrong }), 10037, 'put')
    t.match(err?.message, /sha-?256/i, 'message names the algorithm')
    t.ok(err?.message.includes(wrong), 'message names the value given')
    t.ok(err?.message.includes(hashHex('sha256', bytes)), 'message names the value computed')
    t.equal(await bucket.head('sum/bad'), null, 'nothing stored on a mismatch')

    const wrongBuffer = new Uint8Array(Buffer.from(hashHex('sha1', 'nope'), 'hex')).buffer
    await expectCode(t, () => bucket.put('sum/bad', streamOf('checksummed', ' bytes'), { sha1: wrongBuffer }), 10037, 'put')
    await expectCode(t, () => bucket.put('sum/bad', bytes, { md5: md5Hex('nope') }), 10037, 'put')
    await bucket.put('sum/kept', 'old')
    await expectCode(t, () => bucket.put('sum/kept', bytes, { sha512: hashHex('sha512', 'nope') }), 10037, 'put')
    t.equal((await bucket.head('sum/kept'))?.etag, md5Hex('old'), 'a mismatch leaves the previous object')

    await expectArgumentError(t, () => bucket.put('sum/two', bytes, { sha1: hashHex('sha1', bytes), sha256: hashHex('sha256', bytes) }), 'sha1 and sha256 together', [TypeError])
    await expectArgumentError(t, () => bucket.put('sum/two', bytes, { md5: md5Hex(bytes), sha256: hashHex('sha256', bytes) }), 'md5 and sha256 together', [TypeError])
    t.equal(await bucket.head('sum/two'), null, 'nothing stored for two algorithms')
  })

  t.test('keys: 1024 bytes of UTF-8, NFC equivalence', async t => {
    const bucket = await fresh(t)
    const longAscii = 'k'.repeat(1024)
    t.ok(await bucket.put(longAscii, 'x'), 'a 1024-byte key is accepted')
    t.equal((await bucket.head(longAscii))?.key, longAscii)
    await expectCode(t, () => bucket.put('k'.repeat(1025), 'x'), 10020, 'put', '1025 bytes')
    const longWide = '\u20ac'.repeat(341) + 'a' // 341 * 3 + 1 = 1024 bytes
    t.ok(await bucket.put(longWide, 'x'), 'length is counted in bytes: 1024 bytes of three-byte characters')
    await expectCode(t, () => bucket.put('\u20ac'.repeat(342), 'x'), 10020, 'put', '1026 bytes in 342 characters')
    t.equal((await bucket.list({ prefix: 'kkk' })).objects.length, 1, 'the rejected key was not stored')

    const decomposed = 'cafe\u0301'
    const composed = 'caf\u00e9'
    await bucket.put(decomposed, 'first')
    const viaComposed = await bucket.get(composed)
    t.equal((await bytesOf(viaComposed)).toString(), 'first', 'a key differing only in normalization names the same object')
    await bucket.put(composed, 'second')
    const listed = (await bucket.list({ prefix: 'caf' })).objects
    t.same(listed.map(o => o.key), [composed], 'one object, listed with the spelling of the last write')
    t.equal((await bytesOf(await bucket.get(decomposed))).toString(), 'second')
    await bucket.delete(decomposed)
    t.equal(await bucket.head(composed), null, 'delete by the other spelling removes it')

    // A delimiter is matched in the NFC form too, in both listings.
    await bucket.put('caf\u00e9/x', 'a')
    await bucket.put('caf\u00e9Zy', 'a')
    await bucket.createMultipartUpload('caf\u00e9/u')
    for (const delimiter of ['\u00e9', 'e\u0301']) {
      t.same((await bucket.list({ delimiter })).delimitedPrefixes, ['caf\u00e9'], `list, delimiter ${JSON.stringify(delimiter)}`)
      t.same((await bucket.listMultipartUploads({ delimiter })).delimitedPrefixes, ['caf\u00e9'], `listMultipartUploads, delimiter ${JSON.stringify(delimiter)}`)
    }
  })

  t.test('keys: U+0000 cannot name an object on any store; lone surrogates are no key', async t => {
    const bucket = await fresh(t)
    const nul = 'a\u0000b'
    await expectCode(t, () => bucket.put(nul, 'x'), 10020, 'put')
    await expectCode(t, () => bucket.createMultipartUpload(nul), 10020, 'createMultipartUpload')
    await bucket.put('plain', 'x')
    await expectCode(t, () => bucket.copy('plain', nul), 10020, 'copy')
    t.equal(await bucket.head(nul), null, 'a lookup answers absent')
    t.equal(await bucket.get(nul), null)
    await bucket.delete(nul)
    t.same(await bucket.copy(nul, 'plain2'), { status: 'not-found' }, 'a copy from it finds no source')
    t.same((await bucket.list({ prefix: 'a' })).objects, [], 'nothing was stored')
    t.ok(await bucket.put('a\u0001\u001f\u007f', 'x'), 'other control characters are keys')
    t.equal((await bucket.list({ prefix: 'a' })).objects[0]?.key, 'a\u0001\u001f\u007f')
    for (const lone of ['\ud800', 'a\udc00b', 'z\ud83d']) {
      await expectCode(t, () => bucket.put(lone, 'x'), 10020, 'put', JSON.stringify(lone))
      await expectCode(t, () => bucket.head(lone), 10020, 'head', JSON.stringify(lone))
    }
    // No key holds one, and its UTF-8 would be U+FFFD's: a list naming one is refused, never matched against U+FFFD's keys.
    await bucket.put('\ufffdkey', 'x')
    for (const [name, options] of [['prefix', { prefix: '\ud800' }], ['startAfter', { startAfter: '\ud800' }], ['delimiter', { delimiter: 'z\udc00' }]] as const) {
      await t.rejects(bucket.list(options), { name: 'TypeError', message: `list: ${name} must be well-formed Unicode (it holds a lone surrogate).` }, `list, ${name}`)
    }
    await t.rejects(bucket.listMultipartUploads({ prefix: '\ud800' }), { name: 'TypeError' }, 'listMultipartUploads, prefix')
  })

  t.test('conditional get with BucketConditional', async t => {
    const clock = new TestClock(Date.UTC(2024, 2, 1, 12, 0, 0, 500))
    const bucket = await fresh(t, { clock: clock.read })
    const put = await bucket.put('cond', 'conditional body')
    if (put === null) throw new Error('put failed')
    const etag = put.etag
    const uploaded = clock.now
    clock.now += 10_000

    const cases: Array<[string, Record<string, unknown>, boolean]> = [
      ['etagMatches the etag', { etagMatches: etag }, true],
      ['etagMatches another etag', { etagMatches: md5Hex('other') }, false],
      ['etagMatches *', { etagMatches: '*' }, true],
      ['etagDoesNotMatch the etag', { etagDoesNotMatch: etag }, false],
      ['etagDoesNotMatch another etag', { etagDoesNotMatch: md5Hex('other') }, true],
      ['etagDoesNotMatch *', { etagDoesNotMatch: '*' }, false],
      ['uploadedBefore the upload instant (strict)', { uploadedBefore: new Date(uploaded) }, false],
      ['uploadedBefore 1 ms later', { uploadedBefore: new Date(uploaded + 1) }, true],
      ['uploadedBefore 1 ms earlier', { uploadedBefore: new Date(uploaded - 1) }, false],
      ['uploadedAfter the upload instant (strict)', { uploadedAfter: new Date(uploaded) }, false],
      ['uploadedAfter 1 ms earlier', { uploadedAfter: new Date(uploaded - 1) }, true],
      ['uploadedAfter 1 ms later', { uploadedAfter: new Date(uploaded + 1) }, false],
      ['passing etagMatches makes a failing uploadedBefore irrelevant', { etagMatches: etag, uploadedBefore: new Date(uploaded - 5000) }, true],
      ['failing etagMatches fails despite a passing uploadedBefore', { etagMatches: md5Hex('other'), uploadedBefore: new Date(uploaded + 5000) }, false],
      ['passing etagDoesNotMatch makes a failing uploadedAfter irrelevant', { etagDoesNotMatch: md5Hex('other'), uploadedAfter: new Date(uploaded + 5000) }, true],
      ['failing etagDoesNotMatch fails despite a passing uploadedAfter', { etagDoesNotMatch: etag, uploadedAfter: new Date(uploaded - 5000) }, false],
      ['uploadedBefore and uploadedAfter both pass', { uploadedAfter: new Date(uploaded - 1), uploadedBefore: new Date(uploaded + 1) }, true],
      ['empty conditional', {}, true]
    ]
    for (const [name, onlyIf, proceeds] of cases) {
      const got = await bucket.get('cond', { onlyIf })
      t.ok(got !== null, `${name}: the object's metadata comes back`)
      t.equal(hasBody(got), proceeds, `${name}: ${proceeds ? 'body' : 'no body'}`)
      t.equal(got?.etag, etag, `${name}: etag`)
      if (proceeds) t.equal((await bytesOf(got)).toString(), 'conditional body')
    }
    await expectArgumentError(t, () => bucket.get('cond', { onlyIf: { etagMatches: `"${etag}"` } }), 'etagMatches wrapped in quotes', [TypeError])
    await expectArgumentError(t, () => bucket.get('cond', { onlyIf: { etagDoesNotMatch: `"${etag}"` } }), 'etagDoesNotMatch wrapped in quotes', [TypeError])
  })

  t.test('conditional get with Headers: lists, weak etags, whole seconds', async t => {
    const clock = new TestClock(Date.UTC(2024, 2, 1, 12, 0, 0, 500))
    const bucket = await fresh(t, { clock: clock.read })
    const put = await bucket.put('cond', 'conditional body')
    if (put === null) throw new Error('put failed')
    const etag = put.etag
    const lastModified = new Date(clock.now).toUTCString() // 12:00:00, the half second dropped
    const second = (delta: number): string => new Date(Date.UTC(2024, 2, 1, 12, 0, 0) + delta * 1000).toUTCString()
    clock.now += 10_000

    const cases: Array<[string, Record<string, string>, boolean]> = [
      ['If-Match with the quoted etag', { 'If-Match': `"${etag}"` }, true],
      ['If-Match with another etag', { 'If-Match': '"0123"' }, false],
      ['If-Match with a list holding the etag', { 'If-Match': `"abc", "${etag}" , "def"` }, true],
      ['If-Match with a list without it', { 'If-Match': '"abc", "def"' }, false],
      ['If-Match with the weak etag (strong comparison)', { 'If-Match': `W/"${etag}"` }, false],
      ['If-Match *', { 'If-Match': '*' }, true],
      ['If-None-Match with the etag', { 'If-None-Match': `"${etag}"` }, false],
      ['If-None-Match with the weak etag (weak comparison)', { 'If-None-Match': `W/"${etag}"` }, false],
      ['If-None-Match with a list holding the weak etag', { 'If-None-Match': `"abc", W/"${etag}"` }, false],
      ['If-None-Match with other etags', { 'If-None-Match': '"abc", W/"def"' }, true],
      ['If-None-Match *', { 'If-None-Match': '*' }, false],
      ['If-Unmodified-Since equal to Last-Modified fails (whole seconds, strict)', { 'If-Unmodified-Since': lastModified }, false],
      ['If-Unmodified-Since one second later', { 'If-Unmodified-Since': second(1) }, true],
      ['If-Unmodified-Since one second earlier', { 'If-Unmodified-Since': second(-1) }, false],
      ['If-Modified-Since equal to Last-Modified fails', { 'If-Modified-Since': lastModified }, false],
      ['If-Modified-Since one second earlier', { 'If-Modified-Since': second(-1) }, true],
      ['If-Modified-Since one second later', { 'If-Modified-Since': second(1) }, false],
      ['passing If-Match makes If-Unmodified-Since irrelevant', { 'If-Match': `"${etag}"`, 'If-Unmodified-Since': second(-60) }, true],
      ['passing If-None-Match makes If-Modified-Since irrelevant', { 'If-None-Match': '"abc"', 'If-Modified-Since': second(60) }, true],
      ['failing If-None-Match fails despite If-Modified-Since', { 'If-None-Match': `"${etag}"`, 'If-Modified-Since': second(-60) }, false],
      ['If-Range is ignored', { 'If-Range': '"not-the-etag"' }, true]
    ]
    for (const [name, headers, proceeds] of cases) {
      const got = await bucket.get('cond', { onlyIf: new Headers(headers) })
      t.ok(got !== null, `${name}: metadata comes back`)
      t.equal(hasBody(got), proceeds, `${name}: ${proceeds ? 'body' : 'no body'}`)
    }
  })

  t.test('conditional put: failing returns null and stores nothing', async t => {
    const clock = new TestClock(Date.UTC(2024, 5, 1, 8, 0, 0, 250))
    const bucket = await fresh(t, { clock: clock.read })
    const past = new Date(clock.now - 60_000)
    const future = new Date(clock.now + 60_000)

    t.equal(await bucket.put('missing', 'x', { onlyIf: { etagMatches: md5Hex('x') } }), null, 'etagMatches fails on a missing object')
    t.equal(await bucket.put('missing', 'x', { onlyIf: { etagMatches: '*' } }), null, 'etagMatches * fails on a missing object')
    t.equal(await bucket.put('missing', 'x', { onlyIf: { uploadedAfter: past } }), null, 'uploadedAfter fails on a missing object')
    t.equal(await bucket.put('missing', 'x', { onlyIf: new Headers({ 'If-Match': '*' }) }), null, 'If-Match * fails on a missing object')
    t.equal(await bucket.head('missing'), null, 'nothing was stored')
    t.same((await bucket.list()).objects, [], 'nothing is listed')

    const created = await bucket.put('create-only', 'first', { onlyIf: { etagDoesNotMatch: '*' } })
    t.equal(created?.etag, md5Hex('first'), 'etagDoesNotMatch * creates a missing object')
    t.equal(await bucket.put('create-only', 'second', { onlyIf: { etagDoesNotMatch: '*' } }), null, 'and refuses once it exists')
    t.equal(await bucket.put('create-only', 'second', { onlyIf: new Headers({ 'If-None-Match': '*' }) }), null, 'If-None-Match * too')
    t.equal((await bytesOf(await bucket.get('create-only'))).toString(), 'first', 'the first write stays')
    t.ok(await bucket.put('before', 'x', { onlyIf: { uploadedBefore: future } }), 'uploadedBefore passes on a missing object')
    t.ok(await bucket.put('not-match', 'x', { onlyIf: { etagDoesNotMatch: md5Hex('x') } }), 'etagDoesNotMatch passes on a missing object')

    clock.now += 1000
    const current = await bucket.head('create-only')
    t.equal(await bucket.put('create-only', 'third', { onlyIf: { etagMatches: md5Hex('nope') } }), null, 'etagMatches a stale etag fails')
    t.equal((await bucket.head('create-only'))?.version, current?.version, 'the object is untouched')
    const replaced = await bucket.put('create-only', 'third', { onlyIf: { etagMatches: current?.etag } })
    t.equal(replaced?.etag, md5Hex('third'), 'etagMatches the current etag replaces')
    t.equal(await bucket.put('create-only', 'fourth', { onlyIf: new Headers({ 'If-Match': `"${current?.etag ?? ''}"` }) }), null, 'the old etag no longer matches')
    t.ok(await bucket.put('create-only', 'fourth', { onlyIf: new Headers({ 'If-Match': `"${md5Hex('third')}"` }) }), 'If-Match with the new etag')
    t.equal(await bucket.put('create-only', 'fifth', { onlyIf: { uploadedBefore: new Date(clock.now) } }), null, 'uploadedBefore the upload instant fails')
    t.ok(await bucket.put('create-only', 'fifth', { onlyIf: { uploadedBefore: new Date(clock.now + 1) } }), 'uploadedBefore a later instant passes')
    t.equal((await bytesOf(await bucket.get('create-only'))).toString(), 'fifth')
    await expectArgumentError(t, () => bucket.put('create-only', 'x', { onlyIf: { etagMatches: `"${md5Hex('fifth')}"` } }), 'quoted etag in put', [TypeError])
  })

  t.test('ranges: forms, clamping, errors', async t => {
    const bucket = await fresh(t)
    await bucket.put('digits', '0123456789')
    const cases: Array<[string, BucketRange | Headers, string, { offset: number, length: number }]> = [
      ['offset and length', { offset: 2, length: 3 }, '234', { offset: 2, length: 3 }],
      ['offset only', { offset: 7 }, '789', { offset: 7, length: 3 }],
      ['length only', { length: 4 }, '0123', { offset: 0, length: 4 }],
      ['suffix', { suffix: 3 }, '789', { offset: 7, length: 3 }],
      ['length past the end is clamped', { offset: 8, length: 10 }, '89', { offset: 8, length: 2 }],
      ['suffix past the start is clamped', { suffix: 20 }, '0123456789', { offset: 0, length: 10 }],
      ['last byte', { offset: 9, length: 1 }, '9', { offset: 9, length: 1 }],
      ['Range header with both ends', new Headers({ Range: 'bytes=2-4' }), '234', { offset: 2, length: 3 }],
      ['Range header open-ended', new Headers({ Range: 'bytes=7-' }), '789', { offset: 7, length: 3 }],
      ['Range header suffix', new Headers({ Range: 'bytes=-3' }), '789', { offset: 7, length: 3 }],
      ['Range header end past the end is clamped', new Headers({ Range: 'bytes=8-20' }), '89', { offset: 8, length: 2 }]
    ]
    for (const [name, range, body, served] of cases) {
      const got = await bucket.get('digits', { range })
      t.equal((await bytesOf(got)).toString(), body, `${name}: bytes`)
      t.same(got?.range, served, `${name}: range says what was served`)
      t.equal(got?.size, 10, `${name}: size is the whole object's`)
    }

    for (const [name, header] of [['invalid', 'bytes=abc'], ['multiple', 'bytes=0-1,4-5'], ['unsatisfiable', 'bytes=20-30'], ['other unit', 'items=0-1']]) {
      const got = await bucket.get('digits', { range: new Headers({ Range: header }) })
      t.equal((await bytesOf(got)).toString(), '0123456789', `Range header ${name} (${header}) gives the whole object`)
    }

    await expectCode(t, () => bucket.get('digits', { range: { offset: 15 } }), 10039, 'get', 'offset past the end')
    await expectCode(t, () => bucket.get('digits', { range: { offset: 11, length: 2 } }), 10039, 'get', 'offset with length past the end')
    await expectCode(t, () => bucket.get('digits', { range: { offset: 0, length: 0 } }), 10039, 'get', 'length 0')
    await expectCode(t, () => bucket.get('digits', { range: { length: 0 } }), 10039, 'get', 'length 0 alone')
    await expectCode(t, () => bucket.get('digits', { range: { suffix: 0 } }), 10039, 'get', 'suffix 0')

    await expectArgumentError(t, () => bucket.get('digits', { range: { offset: -1 } }), 'negative offset')
    await expectArgumentError(t, () => bucket.get('digits', { range: { offset: -1, length: 2 } }), 'negative offset with length')
    await expectArgumentError(t, () => bucket.get('digits', { range: { suffix: 3, offset: 1 } as never }), 'suffix with offset', [TypeError])
    await expectArgumentError(t, () => bucket.get('digits', { range: { suffix: 3, length: 1 } as never }), 'suffix with length', [TypeError])
  })

  t.test('list: order, limit, cursor, delimiter, include', async t => {
    const clock = new TestClock(Date.UTC(2024, 0, 1))
    const bucket = await fresh(t, { clock: clock.read, fsync: false })
    const keys = ['a/1', 'a/2', 'b', 'c/d/e', 'c/f', 'a\uFFFD', 'a\u{1F600}', 'A', 'a']
    for (const key of keys) {
      clock.now += 1000
      await bucket.put(key, `value of ${key}`, { httpMetadata: { contentType: 'text/plain' }, customMetadata: { of: key } })
    }
    const all = await bucket.list()
    t.same(all.objects.map(o => o.key), ['A', 'a', 'a/1', 'a/2', 'a\uFFFD', 'a\u{1F600}', 'b', 'c/d/e', 'c/f'],
      'UTF-8 byte order: U+FFFD before U+1F600, unlike JavaScript string order')
    t.equal(all.truncated, false)
    t.equal(all.cursor, undefined, 'no cursor when not truncated')
    t.same(all.delimitedPrefixes, [])

    const listed = all.objects.find(o => o.key === 'c/f')
    const head = await bucket.head('c/f')
    t.equal(listed?.etag, head?.etag, 'listed objects carry the etag')
    t.equal(listed?.httpEtag, head?.httpEtag)
    t.equal(listed?.size, head?.size, 'listed objects carry the size')
    t.equal(listed?.version, head?.version, 'listed objects carry the version')
    t.equal(listed?.uploaded.getTime(), head?.uploaded.getTime(), 'listed objects carry the upload time')
    t.equal(listed?.storageClass, 'Standard')
    // workerd (r2-bucket.c++, parseObjectMetadata) leaves a field the list did not include unset: undefined, not {}.
    t.equal(listed?.httpMetadata, undefined, 'without include: no httpMetadata')
    t.equal(listed?.customMetadata, undefined, 'without include: no customMetadata')
    t.throws(() => listed?.writeHttpMetadata(new Headers()), 'writeHttpMetadata on a listed object without include throws')

    const withHttp = (await bucket.list({ prefix: 'c/f', include: ['httpMetadata'] })).objects[0]
    t.equal(withHttp?.httpMetadata?.contentType, 'text/plain', 'include httpMetadata')
    t.equal(withHttp?.customMetadata, undefined, 'but not customMetadata')
    const headers = new Headers()
    withHttp?.writeHttpMetadata(headers)
    t.equal(headers.get('content-type'), 'text/plain', 'writeHttpMetadata works with include httpMetadata')
    const withCustom = (await bucket.list({ prefix: 'c/f', include: ['customMetadata'] })).objects[0]
    t.same(withCustom?.customMetadata, { of: 'c/f' }, 'include customMetadata')
    t.equal(withCustom?.httpMetadata, undefined, 'but not httpMetadata')
    const withBoth = (await bucket.list({ prefix: 'c/f', include: ['httpMetadata', 'customMetadata'] })).objects[0]
    t.equal(withBoth?.httpMetadata?.contentType, 'text/plain')
    t.same(withBoth?.customMetadata, { of: 'c/f' })
    // workerd: an include value it does not know is a RangeError ("Unsupported include value"); a value that is no string, a TypeError.
    await expectArgumentError(t, () => bucket.list({ include: ['everything' as never] }), 'unknown include value', [RangeError])
    await expectArgumentError(t, () => bucket.list({ include: [5 as never] }), 'an include value that is no string', [TypeError])

    t.same((await bucket.list({ prefix: 'a/' })).objects.map(o => o.key), ['a/1', 'a/2'], 'prefix')
    t.same((await bucket.list({ prefix: 'zzz' })).objects, [], 'prefix without matches')
    const rooted = await bucket.list({ delimiter: '/' })
    t.same(rooted.objects.map(o => o.key), ['A', 'a', 'a\uFFFD', 'a\u{1F600}', 'b'], 'delimiter: objects without the delimiter')
    t.same(rooted.delimitedPrefixes, ['a/', 'c/'], 'delimiter: first segments, ending with the delimiter')
    const nested = await bucket.list({ prefix: 'c/', delimiter: '/' })
    t.same(nested.objects.map(o => o.key), ['c/f'])
    t.same(nested.delimitedPrefixes, ['c/d/'], 'prefix and delimiter: the next segment after the prefix')
    t.same((await bucket.list({ startAfter: 'a/2' })).objects.map(o => o.key), ['a\uFFFD', 'a\u{1F600}', 'b', 'c/d/e', 'c/f'], 'startAfter is exclusive')

    const three = await bucket.list({ limit: '3' as unknown as number })
    t.same(three.objects.map(o => o.key), ['A', 'a', 'a/1'], 'limit "3" is coerced to 3')
    t.equal(three.truncated, true, 'truncated when more remain')
    t.type(three.cursor, 'string', 'a cursor when truncated')
    const next = await bucket.list({ limit: 3, cursor: three.cursor })
    t.same(next.objects.map(o => o.key), ['a/2', 'a\uFFFD', 'a\u{1F600}'], 'the cursor resumes strictly after the last key')
    const last = await bucket.list({ limit: 3, cursor: next.cursor })
    t.same(last.objects.map(o => o.key), ['b', 'c/d/e', 'c/f'])
    t.equal(last.truncated, false, 'the last page is not truncated')
    t.equal(last.cursor, undefined)

    const grouped: string[] = []
    let page = await bucket.list({ delimiter: '/', limit: 2 })
    const pages = [page]
    while (page.truncated) {
      page = await bucket.list({ delimiter: '/', limit: 2, cursor: page.cursor })
      pages.push(page)
      if (pages.length > 10) break
    }
    for (const p of pages) {
      t.ok(p.objects.length + p.delimitedPrefixes.length <= 2, 'delimited prefixes count toward the limit')
      grouped.push(...p.objects.map(o => o.key), ...p.delimitedPrefixes)
    }
    t.same(grouped.sort(), ['A', 'a', 'a/', 'a\uFFFD', 'a\u{1F600}', 'b', 'c/'].sort(), 'walking pages gives every object and prefix once')
    t.same(pages[1]?.objects.map(o => o.key), ['a\uFFFD'], 'after the prefix a/, the cursor skips every key under it')
    t.same(pages[1]?.delimitedPrefixes, ['a/'])

    for (const bad of [0, 1001, -2]) { // -1 means "no limit given" (fidelity-cases.ts)
      await expectCode(t, () => bucket.list({ limit: bad }), 10022, 'list', `limit ${bad}`)
    }
    t.equal((await bucket.list({ limit: 1000 })).objects.length, keys.length, 'limit 1000 is accepted')
  })

  t.test('list: the cursor sees keys written behind it later', async t => {
    const bucket = await fresh(t, { fsync: false })
    for (const key of ['b', 'd', 'f', 'h']) await bucket.put(key, key)
    const first = await bucket.list({ limit: 2 })
    t.same(first.objects.map(o => o.key), ['b', 'd'])
    await bucket.put('c', 'c') // before the cursor: not seen
    await bucket.put('e', 'e') // after the cursor: seen
    await bucket.put('d0', 'd0')
    await bucket.delete('f')
    const rest = await bucket.list({ limit: 10, cursor: first.cursor })
    t.same(rest.objects.map(o => o.key), ['d0', 'e', 'h'], 'resumes strictly after "d" with the current contents')
  })

  t.test('list: default limit is 1000; delete of 1000 keys', async t => {
    const bucket = await fresh(t, { fsync: false })
    const keys = Array.from({ length: 1001 }, (_, i) => `many/${String(i).padStart(4, '0')}`)
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map(key => bucket.put(key, '')))
    }
    const first = await bucket.list()
    t.equal(first.objects.length, 1000, 'one page holds at most 1000 objects')
    t.equal(first.truncated, true)
    const second = await bucket.list({ cursor: first.cursor })
    t.same(second.objects.map(o => o.key), ['many/1000'])
    t.equal(second.truncated, false)
    await bucket.delete(keys.slice(0, 1000))
    t.same((await bucket.list()).objects.map(o => o.key), ['many/1000'], 'delete takes 1000 keys at once')
  })

  t.test('delete: one key, many keys, missing keys', async t => {
    const bucket = await fresh(t, { fsync: false })
    for (const key of ['one', 'two', 'three', 'four']) await bucket.put(key, key)
    t.equal(await bucket.delete('one'), undefined, 'delete resolves to undefined')
    t.equal(await bucket.head('one'), null)
    t.equal(await bucket.get('one'), null)
    await bucket.delete(['two', 'three', 'never-existed'])
    t.same((await bucket.list()).objects.map(o => o.key), ['four'], 'an array of keys is deleted, missing keys ignored')
    await bucket.delete('never-existed')
    await bucket.delete([])
    t.same((await bucket.list()).objects.map(o => o.key), ['four'])
    await bucket.put('one', 'back')
    t.equal((await bytesOf(await bucket.get('one'))).toString(), 'back', 'a deleted key can be written again')
  })

  t.test('multipart: parts, etag, metadata, skipped numbers', async t => {
    const minPartSize = 4 * KiB
    const bucket = await fresh(t, { minPartSize })
    const expiry = new Date(Date.UTC(2031, 1, 1))
    const upload = await bucket.createMultipartUpload('big/file.bin', {
      httpMetadata: { contentType: 'application/octet-stream', cacheExpiry: expiry },
      customMetadata: { origin: 'multipart' },
      storageClass: 'InfrequentAccess'
    })
    t.equal(upload.key, 'big/file.bin')
    t.type(upload.uploadId, 'string')
    t.ok(upload.uploadId.length > 0, 'an upload id')

    const first = patternBytes(minPartSize, 1)
    const third = patternBytes(minPartSize, 3)
    const last = patternBytes(1000, 5)
    const stale = patternBytes(minPartSize, 99)
    const staleUpload = await upload.uploadPart(1, stale)
    t.same(staleUpload, { partNumber: 1, etag: md5Hex(stale) }, 'a part etag is the MD5 hex of the part')
    const parts: BucketUploadedPart[] = [
      await upload.uploadPart(1, first), // replaces the stale part 1
      await upload.uploadPart(3, streamOf(third.subarray(0, 100), third.subarray(100))),
      await upload.uploadPart(7.9, new Blob([last]))
    ]
    t.equal(parts[2]?.partNumber, 7, 'a part number of 7.9 is coerced to 7')
    t.equal(parts[1]?.etag, md5Hex(third), 'a part from a stream of unknown length')

    t.equal(await bucket.head('big/file.bin'), null, 'an upload in progress is invisible to head')
    t.equal(await bucket.get('big/file.bin'), null, 'and to get')
    t.same((await bucket.list()).objects, [], 'and to list')

    const object = await upload.complete(parts)
    const expectedEtag = multipartEtag([first, third, last])
    t.equal(object.etag, expectedEtag, 'etag = MD5 of the concatenated binary part MD5s, then -N')
    t.equal(object.httpEtag, `"${expectedEtag}"`)
    t.equal(object.size, first.byteLength + third.byteLength + last.byteLength)
    t.equal(object.key, 'big/file.bin')
    t.equal(object.checksums.md5, undefined, 'a multipart object carries no md5')
    t.same(object.checksums.toJSON(), {}, 'nor any checksum')
    const got = await bucket.get('big/file.bin')
    t.same(await bytesOf(got), Buffer.concat([first, third, last]), 'the parts in order, the replaced part 1 gone')
    t.equal(got?.etag, expectedEtag)
    t.equal(got?.httpMetadata.contentType, 'application/octet-stream', 'httpMetadata from create')
    t.equal(got?.httpMetadata.cacheExpiry?.getTime(), expiry.getTime())
    t.same(got?.customMetadata, { origin: 'multipart' }, 'customMetadata from create')
    t.equal(got?.storageClass, 'InfrequentAccess', 'storage class from create')
    t.same((await bucket.list()).objects.map(o => o.key), ['big/file.bin'], 'listed once completed')
    const ranged = await bucket.get('big/file.bin', { range: { offset: minPartSize - 10, length: 20 } })
    t.same(await bytesOf(ranged), Buffer.concat([first, third]).subarray(minPartSize - 10, minPartSize + 10), 'a range across a part boundary')

    await expectCode(t, () => upload.uploadPart(2, first), 10024, undefined, 'uploadPart after complete')
    await expectCode(t, () => upload.complete(parts), 10024, undefined, 'complete after complete')
  })

  t.test('multipart: size rules and part errors', async t => {
    const minPartSize = 4 * KiB
    const bucket = await fresh(t, { minPartSize })
    const full = patternBytes(minPartSize, 1)
    const full2 = patternBytes(minPartSize, 2)
    const double = patternBytes(2 * minPartSize, 3)
    const small = patternBytes(100, 4)

    const single = await bucket.createMultipartUpload('single-small')
    const only = await single.uploadPart(1, small)
    t.equal((await single.complete([only])).size, 100, 'a lone part may be smaller than the minimum')

    const tooSmall = await bucket.createMultipartUpload('too-small')
    const tooSmallParts = [await tooSmall.uploadPart(1, small), await tooSmall.uploadPart(2, small)]
    await expectCode(t, () => tooSmall.complete(tooSmallParts), 10011, undefined, 'a part but the last below the minimum')

    const uneven = await bucket.createMultipartUpload('uneven')
    const unevenParts = [await uneven.uploadPart(1, full), await uneven.uploadPart(2, double), await uneven.uploadPart(3, small)]
    await expectCode(t, () => uneven.complete(unevenParts), 10048, undefined, 'parts but the last of different sizes')

    const bigLast = await bucket.createMultipartUpload('big-last')
    const bigLastParts = [await bigLast.uploadPart(1, full), await bigLast.uploadPart(2, double)]
    await expectCode(t, () => bigLast.complete(bigLastParts), 10048, undefined, 'a last part larger than the others')

    const parts = await bucket.createMultipartUpload('part-errors')
    const p1 = await parts.uploadPart(1, full)
    const p2 = await parts.uploadPart(2, full2)
    await expectCode(t, () => parts.complete([p1, { partNumber: 3, etag: md5Hex(full) }]), 10025, undefined, 'an unknown part')
    await expectCode(t, () => parts.complete([p1, { partNumber: 2, etag: md5Hex(full) }]), 10025, undefined, 'a wrong etag')
    await expectRejection(t, () => parts.complete([p1, p1, p2]), 'duplicate part numbers')
    t.equal(await bucket.head('part-errors'), null, 'failed completions store nothing')

    const numbers = await bucket.createMultipartUpload('numbers')
    // workerd refuses a part number out of 1..10,000 (NaN and infinities convert to 0) with a TypeError, naming the method called.
    for (const bad of [0, 10001, -1, 0.5, NaN, Infinity, null, {}]) {
      await expectArgumentError(t, () => numbers.uploadPart(bad as number, small), `part number ${String(bad)}`, [TypeError])
      await t.rejects(numbers.uploadPart(bad as number, small), { message: /^uploadPart: Part number must be between 1 and 10000 \(inclusive\)/ }, `part number ${String(bad)}: workerd's sentence`)
    }
    const listed = await numbers.uploadPart(1, small)
    for (const bad of [0, 10001, NaN]) {
      await expectArgumentError(t, () => numbers.complete([{ partNumber: bad, etag: listed.etag }]), `a completion listing part ${bad}`, [TypeError])
      await t.rejects(numbers.complete([{ partNumber: bad, etag: listed.etag }]), { message: /^completeMultipartUpload: Part number must be between/ }, `a completion listing part ${bad}: named after complete`)
    }
    t.equal((await numbers.uploadPart(10000, small)).partNumber, 10000, 'part number 10000 is accepted')
    t.equal((await numbers.uploadPart(1.5, small)).partNumber, 1, 'part number 1.5 is 1')

    const empty = await bucket.createMultipartUpload('empty')
    const emptyObject = await empty.complete([])
    t.equal(emptyObject.size, 0, 'zero parts make an empty object')
    t.equal(emptyObject.etag, multipartEtag([]))
    t.equal((await bytesOf(await bucket.get('empty'))).byteLength, 0)
  })

  t.test('multipart: abort, resume, independence from delete', async t => {
    const minPartSize = 4 * KiB
    const dir = path.join(testdir(t), 'bucket')
    const bucket = await open(dir, { minPartSize })
    t.teardown(() => bucket.close())
    const part = patternBytes(minPartSize, 7)

    const aborted = await bucket.createMultipartUpload('aborted')
    await aborted.uploadPart(1, part)
    t.equal(await aborted.abort(), undefined, 'abort resolves')
    await aborted.abort()
    t.pass('abort twice is harmless')
    await expectCode(t, () => aborted.uploadPart(2, part), 10024, undefined, 'uploadPart after abort')
    await expectCode(t, () => aborted.complete([{ partNumber: 1, etag: md5Hex(part) }]), 10024, undefined, 'complete after abort')
    t.equal(await bucket.head('aborted'), null)

    const bogus = bucket.resumeMultipartUpload('some/key', 'no-such-upload-id')
    t.equal(bogus.key, 'some/key', 'resume returns a handle at once, checking nothing')
    t.equal(bogus.uploadId, 'no-such-upload-id')
    await expectCode(t, () => bogus.uploadPart(1, part), 10024, undefined, 'using a bogus upload id')
    await expectCode(t, () => bogus.complete([]), 10024, undefined, 'completing a bogus upload id')

    const original = await bucket.createMultipartUpload('shared/key', { customMetadata: { from: 'create' } })
    const other = await open(dir, { minPartSize })
    t.teardown(() => other.close())
    const resumed = other.resumeMultipartUpload('shared/key', original.uploadId)
    const r1 = await resumed.uploadPart(1, part)
    const r2 = await original.uploadPart(2, 'tail')

    await bucket.put('shared/key', 'a plain object under the same key')
    await bucket.delete('shared/key')
    t.equal(await bucket.head('shared/key'), null, 'delete removed the plain object')
    const completed = await resumed.complete([r1, r2])
    t.equal(completed.etag, multipartEtag([part, new TextEncoder().encode('tail')]), 'an upload survives a delete of its key, and another handle completes it')
    t.same((await bucket.head('shared/key'))?.customMetadata, { from: 'create' }, 'visible to the first handle\'s bucket at once')
    await expectCode(t, () => original.uploadPart(3, part), 10024, undefined, 'the first handle sees the completion')
  })

  t.test('what a read hands out cannot change what is stored', async t => {
    const bucket = await fresh(t)
    await bucket.put('kept', 'original bytes')
    for (let round = 0; round < 2; round++) {
      const object = await bucket.get('kept') as BucketObjectBody
      const reader = object.body.getReader()
      for (let read = await reader.read(); read.done !== true; read = await reader.read()) read.value.fill(0x58)
      const again = await bucket.get('kept') as BucketObjectBody
      t.equal(await again.text(), 'original bytes', `round ${round}: a reader writing into its chunks changes nothing stored`)
      const head = await bucket.head('kept')
      head!.httpMetadata!.contentType = 'changed/by-reader'
      head!.customMetadata!.added = 'by reader'
      const fresh = await bucket.head('kept')
      t.equal(fresh?.httpMetadata?.contentType, undefined, `round ${round}: nor does changing the metadata object it got`)
      t.same(fresh?.customMetadata, {}, `round ${round}: custom metadata included`)
    }
  })

  t.test('ranges of a multipart object: every start and end around the part boundaries', async t => {
    const minPartSize = 4 * KiB
    const bucket = await fresh(t, { minPartSize })
    const parts = [patternBytes(minPartSize, 11), patternBytes(minPartSize, 12), patternBytes(1000, 13)]
    const upload = await bucket.createMultipartUpload('parts.bin')
    const uploaded = await Promise.all(parts.map(async (bytes, i) => await upload.uploadPart(i + 1, bytes)))
    await upload.complete(uploaded)
    const whole = Buffer.concat(parts)
    const edges = [0, 1, minPartSize - 1, minPartSize, minPartSize + 1, 2 * minPartSize - 1, 2 * minPartSize, whole.length - 1]
    let mismatches = 0
    for (const offset of edges) {
      for (const end of edges.filter(e => e >= offset)) {
        const got = await bytesOf(await bucket.get('parts.bin', { range: { offset, length: end - offset + 1 } }))
        if (!got.equals(whole.subarray(offset, end + 1))) mismatches++
      }
    }
    t.equal(mismatches, 0, 'each range reads exactly its bytes')
    t.same(await bytesOf(await bucket.get('parts.bin', { range: { suffix: minPartSize + 1000 } })), whole.subarray(minPartSize), 'a suffix spanning two parts')
  })

  uploadListingConformance(t, fresh)
  checksumConformance(t, open)
  ssecConformance(t, open)
  copyConformance(t, fresh)
  fidelityCases(t, open)
  closeConformance(t, open)
}
