/**
 * Keys given to the binding as other values than strings: converted as
 * workerd converts its `kj::String` parameters (JavaScript's ToString), then
 * judged by the key rules as any string key is. Run on the memory and the
 * filesystem store.
 */
import t, { type Test } from 'tap'
import { BucketEngine, openBucket, type Bucket } from '../../src/index.js'
import { MemoryStore } from '../../src/stores/memory/store.js'
import { testdir } from '../testdir.js'

/** A value the binding's type does not allow, as a script without types passes it. */
const loose = (value: unknown): string => value as string

const stores: Array<[string, (t: Test) => Promise<Bucket>]> = [
  ['memory', async () => new BucketEngine(new MemoryStore())],
  ['fs', async t => await openBucket(testdir(t), { fsync: false })]
]

for (const [name, open] of stores) {
  t.test(`${name}: head, get, put and delete convert a key to a string`, async t => {
    const bucket = await open(t)
    t.teardown(async () => { await bucket.close() })

    const put = await bucket.put(loose(123), 'one two three')
    t.equal(put?.key, '123', 'put(123) stores under "123"')
    t.equal(typeof put?.key, 'string', 'and answers the key as a string')
    t.equal((await bucket.head('123'))?.key, '123', 'head of the string finds it')
    t.equal((await bucket.head(loose(123)))?.size, 13, 'head(123) finds it')
    const got = await bucket.get(loose(123))
    t.ok(got !== null && 'body' in got, 'get(123) finds it')
    if (got !== null && 'body' in got) t.equal(await got.text(), 'one two three')

    const converted: Array<[string, unknown, string]> = [
      ['null', null, 'null'],
      ['undefined', undefined, 'undefined'],
      ['true', true, 'true'],
      ['a bigint', 10n, '10'],
      ['a float', 1.5, '1.5'],
      ['an array', ['a', 'b'], 'a,b'],
      ['a plain object', {}, '[object Object]'],
      ['an object with toString', { toString: () => 'made/by-toString' }, 'made/by-toString'],
      ['a String object', new String('boxed'), 'boxed']
    ]
    for (const [what, key, expected] of converted) {
      t.equal((await bucket.put(loose(key), what))?.key, expected, `put of ${what}: the key is ${JSON.stringify(expected)}`)
      t.equal((await bucket.head(expected))?.size, what.length, `${what}: stored under ${JSON.stringify(expected)}`)
    }

    await bucket.put('1', 'x')
    await bucket.put('2', 'x')
    await bucket.put('3', 'x')
    await bucket.delete(loose([1, 2]))
    t.equal(await bucket.head('1'), null, 'delete([1, 2]) deletes "1"')
    t.equal(await bucket.head('2'), null, 'and "2"')
    await bucket.delete(loose(3))
    t.equal(await bucket.head('3'), null, 'delete(3) deletes "3"')

    const copied = await bucket.copy(loose(123), loose(456))
    t.equal(copied.status, 'copied', 'copy (beyond the binding) converts its keys as the binding does')
    t.equal((await bucket.head('456'))?.size, 13)
  })

  t.test(`${name}: multipart uploads convert the key and the upload id`, async t => {
    const bucket = await open(t)
    t.teardown(async () => { await bucket.close() })

    const upload = await bucket.createMultipartUpload(loose(5))
    t.equal(upload.key, '5', 'createMultipartUpload(5): the upload is for "5"')
    const part = await upload.uploadPart(1, 'five')
    const resumed = bucket.resumeMultipartUpload(loose(5), loose({ toString: () => upload.uploadId }))
    t.equal(resumed.key, '5', 'resumeMultipartUpload(5, …): the key is "5"')
    t.equal(resumed.uploadId, upload.uploadId, 'and the upload id is converted too')
    const object = await resumed.complete([part])
    t.equal(object.key, '5')
    t.equal((await bucket.head('5'))?.size, 4, 'the object is stored under "5"')
  })

  t.test(`${name}: the key rules judge the converted string`, async t => {
    const bucket = await open(t)
    t.teardown(async () => { await bucket.close() })

    const tooLong = { toString: () => 'k'.repeat(1025) }
    const empty = { toString: () => '' }
    for (const [what, key] of [['a key of 1,025 bytes', tooLong], ['an empty key', empty]] as const) {
      await t.rejects(bucket.put(loose(key), 'x'), { code: 10020, message: /^put: / }, `put of ${what}: 10020`)
      await t.rejects(bucket.head(loose(key)), { code: 10020, message: /^head: / }, `head of ${what}: 10020`)
      await t.rejects(bucket.get(loose(key)), { code: 10020 }, `get of ${what}: 10020`)
      await t.rejects(bucket.delete(loose([key])), { code: 10020 }, `delete of ${what}: 10020`)
      await t.rejects(bucket.createMultipartUpload(loose(key)), { code: 10020 }, `createMultipartUpload of ${what}: 10020`)
      t.throws(() => bucket.resumeMultipartUpload(loose(key), 'id'), { code: 10020 }, `resumeMultipartUpload of ${what}: 10020`)
    }
    await t.rejects(bucket.put(loose({ toString: () => 'a\u0000' }), 'x'), { code: 10020 }, 'no new object under U+0000, converted or not')

    // A Symbol has no ToString: V8, and so workerd, throws a TypeError.
    const symbol = Symbol('key')
    await t.rejects(bucket.put(loose(symbol), 'x'), { name: 'TypeError', message: /^put: / }, 'put(Symbol()): TypeError')
    await t.rejects(bucket.head(loose(symbol)), TypeError, 'head(Symbol()): TypeError')
    await t.rejects(bucket.delete(loose(['a', symbol])), TypeError, 'delete([…, Symbol()]): TypeError')
    t.throws(() => bucket.resumeMultipartUpload('k', loose(symbol)), TypeError, 'an upload id that is a Symbol: TypeError')
    const refused = new Error('no string for you')
    await t.rejects(bucket.get(loose({ toString: () => { throw refused } })), refused, 'what toString throws is thrown')
    t.same((await bucket.list()).objects, [], 'nothing was stored')
  })
}
