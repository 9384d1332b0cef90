/**
 * What a listed object carries of its metadata: `httpMetadata` and
 * `customMetadata` only when `include` names them, undefined otherwise
 * (workerd's parseObjectMetadata), `{}` when asked for and empty. Run on the
 * memory and the filesystem store.
 */
import t, { type Test } from 'tap'
import { BucketEngine, openBucket, type Bucket, type BucketListOptions } from '../../src/index.js'
import { MemoryStore } from '../../src/stores/memory/store.js'
import { testdir } from '../testdir.js'

const stores: Array<[string, (t: Test) => Promise<Bucket>]> = [
  ['memory', async () => new BucketEngine(new MemoryStore())],
  ['fs', async t => await openBucket(testdir(t), { fsync: false })]
]

for (const [name, open] of stores) {
  t.test(`${name}: a listed object carries only the metadata include names`, async t => {
    const bucket = await open(t)
    t.teardown(async () => { await bucket.close() })
    await bucket.put('bare', 'no metadata')
    await bucket.put('dressed', 'metadata', { httpMetadata: { contentType: 'text/plain' }, customMetadata: { owner: 'ada' } })

    const listed = async (include: BucketListOptions['include']): Promise<Record<string, { httpMetadata: unknown, customMetadata: unknown }>> => {
      const page = await bucket.list(include === undefined ? {} : { include })
      return Object.fromEntries(page.objects.map(o => [o.key, { httpMetadata: o.httpMetadata, customMetadata: o.customMetadata }]))
    }
    const cases: Array<[string, BucketListOptions['include'], Record<string, { httpMetadata: unknown, customMetadata: unknown }>]> = [
      ['no include', undefined, {
        bare: { httpMetadata: undefined, customMetadata: undefined },
        dressed: { httpMetadata: undefined, customMetadata: undefined }
      }],
      ['include: []', [], {
        bare: { httpMetadata: undefined, customMetadata: undefined },
        dressed: { httpMetadata: undefined, customMetadata: undefined }
      }],
      ['httpMetadata', ['httpMetadata'], {
        bare: { httpMetadata: {}, customMetadata: undefined },
        dressed: { httpMetadata: { contentType: 'text/plain' }, customMetadata: undefined }
      }],
      ['customMetadata', ['customMetadata'], {
        bare: { httpMetadata: undefined, customMetadata: {} },
        dressed: { httpMetadata: undefined, customMetadata: { owner: 'ada' } }
      }],
      ['both', ['httpMetadata', 'customMetadata'], {
        bare: { httpMetadata: {}, customMetadata: {} },
        dressed: { httpMetadata: { contentType: 'text/plain' }, customMetadata: { owner: 'ada' } }
      }]
    ]
    for (const [what, include, expected] of cases) t.strictSame(await listed(include), expected, what)

    const [onlyHttp] = (await bucket.list({ prefix: 'dressed', include: ['httpMetadata'] })).objects
    t.notOk('customMetadata' in JSON.parse(JSON.stringify(onlyHttp)), 'as JSON, a field not included is absent')
    const headers = new Headers()
    onlyHttp?.writeHttpMetadata(headers)
    t.equal(headers.get('content-type'), 'text/plain', 'writeHttpMetadata with httpMetadata included')
    const [onlyCustom] = (await bucket.list({ prefix: 'dressed', include: ['customMetadata'] })).objects
    t.throws(() => onlyCustom?.writeHttpMetadata(new Headers()), TypeError, 'writeHttpMetadata without it: TypeError, as workerd')

    const head = await bucket.head('dressed')
    t.strictSame([head?.httpMetadata, head?.customMetadata], [{ contentType: 'text/plain' }, { owner: 'ada' }], 'head carries both, always')
    t.strictSame((await bucket.head('bare'))?.customMetadata, {}, 'empty: {}')
  })
}
