/**
 * Lifecycle over the S3 port, with the AWS SDK over a real socket:
 * `x-amz-expiration` on PutObject, HeadObject, GetObject and
 * CompleteMultipartUpload when an enabled expiry rule matches (the SDK
 * reads it into `Expiration`), and the rules set by
 * PutBucketLifecycleConfiguration carried out by a sweep.
 */
import t from 'tap'
import {
  CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetBucketLifecycleConfigurationCommand, GetObjectCommand, HeadObjectCommand,
  PutBucketLifecycleConfigurationCommand, PutObjectCommand, UploadPartCommand
} from '@aws-sdk/client-s3'
import { lifecycleConfigurationBytes, MAX_LIFECYCLE_CONFIGURATION_BYTES, MAX_LIFECYCLE_RULES, parseLifecycleRules } from '../../src/bucket/index.js'
import { raw, s3Server, rejection } from './fixture.js'

const DAY_MS = 86_400_000

/** The next midnight UTC at or after `ms`, as an HTTP date (AWS rounds an Age rule's expiry so). */
function midnightAfter (ms: number): string {
  return new Date(Math.ceil(ms / DAY_MS) * DAY_MS).toUTCString()
}

t.test('x-amz-expiration names the expiry date and rule of an object', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  await s3.send(new PutBucketLifecycleConfigurationCommand({
    Bucket: 'photos',
    LifecycleConfiguration: {
      Rules: [
        { ID: 'logs-30d', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
        { ID: 'old-date', Status: 'Enabled', Filter: { Prefix: 'old/' }, Expiration: { Date: new Date('2030-01-01T00:00:00Z') } },
        { ID: 'off', Status: 'Disabled', Filter: { Prefix: 'off/' }, Expiration: { Days: 1 } },
        { ID: 'ia-only', Status: 'Enabled', Filter: { Prefix: 'ia/' }, Transitions: [{ Days: 1, StorageClass: 'STANDARD_IA' }] }
      ]
    }
  }))
  const bucket = await registry.open('photos')
  const uploadedOf = async (key: string): Promise<number> => (await bucket?.head(key))?.uploaded.getTime() ?? NaN

  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'logs/a.log', Body: 'a log line' }))
  const expected = `expiry-date="${midnightAfter(await uploadedOf('logs/a.log') + 30 * DAY_MS)}", rule-id="logs-30d"`
  t.equal(put.Expiration, expected, 'PutObject')
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'logs/a.log' }))).Expiration, expected, 'HeadObject')
  const got = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'logs/a.log' }))
  t.equal(got.Expiration, expected, 'GetObject')
  await got.Body?.transformToString()

  const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'logs/joined.log' }))
  const part = await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'logs/joined.log', UploadId: upload.UploadId, PartNumber: 1, Body: 'hello' }))
  const completed = await s3.send(new CompleteMultipartUploadCommand({
    Bucket: 'photos', Key: 'logs/joined.log', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] }
  }))
  t.equal(completed.Expiration, `expiry-date="${midnightAfter(await uploadedOf('logs/joined.log') + 30 * DAY_MS)}", rule-id="logs-30d"`, 'CompleteMultipartUpload')

  const dated = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'old/b', Body: 'b' }))
  t.equal(dated.Expiration, 'expiry-date="Tue, 01 Jan 2030 00:00:00 GMT", rule-id="old-date"', 'a Date rule names its date')
  for (const key of ['other', 'off/c', 'ia/d']) {
    const answer = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: key }))
    t.equal(answer.Expiration, undefined, `${key}: no header where no enabled expiry rule matches`)
    t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: key }))).Expiration, undefined, `${key}: nor on HEAD`)
  }

  // What the header announces, the sweep carries out (never later than the date).
  const report = await registry.sweep({ now: new Date(Date.now() + 31 * DAY_MS) })
  t.equal(report.expiredObjects, 2, 'the two logs/ objects expire')
  t.equal(report.transitionedObjects, 1, 'ia/d moves to InfrequentAccess')
  t.equal((await rejection(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'logs/a.log' })))).$metadata.httpStatusCode, 404)
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'ia/d' }))).StorageClass, 'STANDARD_IA')
  t.equal((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'off/c' }))).StorageClass, undefined, 'the disabled rule left off/c alone')
})

t.test('CreateMultipartUpload names the abort date and rule of an upload a lifecycle rule will abort', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const abort = (days: number): { DaysAfterInitiation: number } => ({ DaysAfterInitiation: days })
  await s3.send(new PutBucketLifecycleConfigurationCommand({
    Bucket: 'photos',
    LifecycleConfiguration: {
      Rules: [
        { ID: 'tmp-2d', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, AbortIncompleteMultipartUpload: abort(2) },
        { ID: 'tmp-fast-1d', Status: 'Enabled', Filter: { Prefix: 'tmp/fast/' }, AbortIncompleteMultipartUpload: abort(1) },
        { ID: 'off', Status: 'Disabled', Filter: { Prefix: 'off/' }, AbortIncompleteMultipartUpload: abort(1) }
      ]
    }
  }))
  const before = Date.now()
  const slow = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'tmp/a.bin' }))
  t.equal(slow.AbortRuleId, 'tmp-2d')
  t.equal(slow.AbortDate?.toUTCString(), midnightAfter(before + 2 * DAY_MS), 'its age, rounded up to midnight UTC')
  const fast = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'tmp/fast/b.bin' }))
  t.equal(fast.AbortRuleId, 'tmp-fast-1d', 'the earliest of the rules that match')
  for (const key of ['off/c.bin', 'other.bin']) {
    const none = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: key }))
    t.equal(none.AbortRuleId, undefined, `${key}: no rule, no header`)
    t.equal(none.AbortDate, undefined)
  }
})

t.test('dates of rules set through the management API read back through S3 as instants the SDK parses', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  // As the management API stores them (its PUT .../lifecycle): a date alone, and a date and time with an offset.
  const lifecycle = parseLifecycleRules([
    { id: 'day', enabled: true, conditions: { prefix: 'a/' }, deleteObjectsTransition: { condition: { type: 'Date', date: '2027-01-01' } } },
    { id: 'offset', enabled: true, conditions: { prefix: 'b/' }, deleteObjectsTransition: { condition: { type: 'Date', date: '2027-01-01T01:00:00+01:00' } } }
  ])
  await registry.updateSettings('photos', { lifecycle: { rules: lifecycle } })
  const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'photos' }))
  t.same(got.Rules?.map(rule => [rule.ID, rule.Expiration?.Date?.toISOString()]), [
    ['day', '2027-01-01T00:00:00.000Z'],
    ['offset', '2027-01-01T00:00:00.000Z']
  ], 'midnight UTC, both')
  t.same(lifecycle.map(rule => rule.deleteObjectsTransition?.condition), [{ type: 'Date', date: '2027-01-01T00:00:00.000Z' }, { type: 'Date', date: '2027-01-01T00:00:00.000Z' }], 'kept in one form')
  // And the document read back is one S3 takes again.
  await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: got.Rules } }))
  t.same(((await registry.info('photos'))?.settings.lifecycle as { rules: typeof lifecycle }).rules.map(rule => rule.deleteObjectsTransition?.condition), [{ type: 'Date', date: '2027-01-01T00:00:00.000Z' }, { type: 'Date', date: '2027-01-01T00:00:00.000Z' }])
})

t.test('<Days>: leading zeros read as the number, too many days refused as too many, past a 32-bit integer as malformed', async t => {
  const server = await s3Server(t)
  const rule = (days: string): string => '<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>r</ID><Status>Enabled</Status>' +
    `<Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>${days}</Days></Expiration></Rule></LifecycleConfiguration>`
  const put = async (days: string): Promise<{ status: number, body: string }> => {
    const answer = await raw(server, 'PUT', '/photos?lifecycle', { 'content-type': 'application/xml' }, rule(days))
    return { status: answer.status, body: answer.body.toString() }
  }
  t.equal((await put('0000000001')).status, 200, 'ten digits that make 1')
  for (const days of ['36501', '999999999', '1000000000', '2147483647']) {
    const answer = await put(days)
    t.equal(answer.status, 400, days)
    t.match(answer.body, /<Code>InvalidArgument<\/Code>.*at most 36500 days/s, `${days}: too many days`)
  }
  t.match((await put('1.5')).body, /<Code>MalformedXML<\/Code>/, 'not a whole number')
  t.match((await put('2147483648')).body, /<Code>MalformedXML<\/Code>/, 'past a 32-bit integer, as S3\'s schema has it')
})

t.test('a lifecycle read through S3 and put back unchanged keeps what S3 cannot say; a changed or new condition is S3\'s', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  // As the management API may store them: ages in seconds, not whole days, and a date with a time of day.
  const rules = parseLifecycleRules([
    {
      id: 'hourly',
      enabled: true,
      conditions: { prefix: 'tmp/' },
      deleteObjectsTransition: { condition: { type: 'Age', maxAge: 3600 } },
      storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Age', maxAge: 1800 } }],
      abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 7200 } }
    },
    { id: 'noon', enabled: true, conditions: { prefix: 'n/' }, deleteObjectsTransition: { condition: { type: 'Date', date: '2028-03-01T12:00:00Z' } } }
  ])
  await registry.updateSettings('photos', { lifecycle: { rules } })
  const stored = async (): Promise<unknown> => ((await registry.info('photos'))?.settings.lifecycle as { rules: unknown }).rules
  const before = await stored()
  const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'photos' }))
  t.same(got.Rules?.map(rule => [rule.ID, rule.Expiration?.Days, rule.Expiration?.Date?.toISOString()]), [['hourly', 1, undefined], ['noon', undefined, '2028-03-01T12:00:00.000Z']], 'shown as S3 can')
  await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: got.Rules } }))
  t.same(await stored(), before, 'put back unchanged: every condition as it was, to the second')

  // A rule changed through S3 takes what S3 says; a new one is held to S3's rules.
  const changed = got.Rules!.map(rule => rule.ID === 'hourly' ? { ...rule, Expiration: { Days: 2 } } : rule)
  await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: changed } }))
  const after = await stored() as Array<{ id: string, deleteObjectsTransition?: { condition: unknown }, abortMultipartUploadsTransition?: { condition: unknown } }>
  t.same(after[0].deleteObjectsTransition?.condition, { type: 'Age', maxAge: 2 * 86_400 }, 'the changed expiry is two days')
  t.same(after[0].abortMultipartUploadsTransition?.condition, { type: 'Age', maxAge: 7200 }, 'the unchanged abort kept')
  const renamed = got.Rules!.map(rule => rule.ID === 'noon' ? { ...rule, ID: 'other' } : rule)
  const refused = await rejection(s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: renamed } })))
  t.equal(refused.name, 'InvalidArgument', 'a date with a time of day in a rule of another ID is S3\'s to refuse')
})

t.test('the size is GetBucketLifecycleConfiguration\'s body, and what the engine stores at the limit goes back through PutBucketLifecycleConfiguration', async t => {
  const server = await s3Server(t)
  const read = async (): Promise<string> => {
    const res = await raw(server, 'GET', '/photos?lifecycle')
    t.equal(res.status, 200)
    return res.body
  }
  const shapes = parseLifecycleRules([
    { id: 'a&b<c>"d\'é', enabled: true, conditions: { prefix: 'x&y/"' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 3600 } } },
    { id: 'whole', enabled: false, conditions: {}, storageClassTransitions: [{ storageClass: 'InfrequentAccess', condition: { type: 'Date', date: '2028-03-01' } }] },
    { id: 'uploads', enabled: true, conditions: { prefix: 'big/' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 40 * 86_400 } }, deleteObjectsTransition: { condition: { type: 'Date', date: '2029-01-01' } } }
  ])
  await server.registry.updateSettings('photos', { lifecycle: { rules: shapes } })
  t.equal(Buffer.byteLength(await read()), lifecycleConfigurationBytes(shapes), 'measured byte for byte, escapes, dates and declaration included')

  // A thousand rules of long ids and prefixes, padded to the limit exactly.
  const rule = (i: number, prefix: string): Record<string, unknown> => ({ id: `${'i'.repeat(250)}${String(i).padStart(4, '0')}`, enabled: true, conditions: { prefix }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86_400 } } })
  const base = parseLifecycleRules(Array.from({ length: MAX_LIFECYCLE_RULES }, (_, i) => rule(i, '')))
  const room = MAX_LIFECYCLE_CONFIGURATION_BYTES - lifecycleConfigurationBytes(base)
  const largest = parseLifecycleRules(Array.from({ length: MAX_LIFECYCLE_RULES }, (_, i) => rule(i, 'p'.repeat(Math.floor(room / MAX_LIFECYCLE_RULES) + (i < room % MAX_LIFECYCLE_RULES ? 1 : 0)))))
  t.equal(lifecycleConfigurationBytes(largest), MAX_LIFECYCLE_CONFIGURATION_BYTES)
  await server.registry.updateSettings('photos', { lifecycle: { rules: largest } })
  const document = await read()
  t.equal(Buffer.byteLength(document), MAX_LIFECYCLE_CONFIGURATION_BYTES, 'GetBucketLifecycleConfiguration writes no more than the limit')
  await server.registry.updateSettings('photos', { lifecycle: null })
  const back = await raw(server, 'PUT', '/photos?lifecycle', { 'content-type': 'application/xml' }, document)
  t.equal(back.status, 200, 'PutBucketLifecycleConfiguration takes back what GetBucketLifecycleConfiguration gave')
  t.same((await server.registry.info('photos'))?.settings.lifecycle, { rules: largest }, 'every rule as it was')

  const over = document.replace('<Prefix>p', '<Prefix>pp')
  const refused = await raw(server, 'PUT', '/photos?lifecycle', { 'content-type': 'application/xml' }, over)
  t.equal(refused.status, 400, 'a byte more is refused')
  t.match(refused.body, /<Code>MaxMessageLengthExceeded<\/Code>/)
})

t.test('PutBucketLifecycleConfiguration refuses what S3 could not give back: ids over 255 characters, prefixes longer than keys, two transitions', async t => {
  const server = await s3Server(t)
  const document = (rule: string): string => `<LifecycleConfiguration><Rule>${rule}<Status>Enabled</Status></Rule></LifecycleConfiguration>`
  const expire = '<Expiration><Days>1</Days></Expiration>'
  const transition = (days: number): string => `<Transition><Days>${days}</Days><StorageClass>STANDARD_IA</StorageClass></Transition>`
  const cases: Array<[string, string, string, RegExp]> = [
    ['an id over 255 characters', `<ID>${'i'.repeat(256)}</ID><Filter><Prefix></Prefix></Filter>${expire}`, 'InvalidArgument', /A rule ID is at most 255 characters of well-formed Unicode/],
    ['a prefix longer than a key', `<ID>r</ID><Filter><Prefix>${'p'.repeat(1025)}</Prefix></Filter>${expire}`, 'InvalidArgument', /A rule&apos;s Prefix is a string of well-formed Unicode without control characters, of at most 1024 bytes/],
    ['two transitions', `<ID>r</ID><Filter><Prefix></Prefix></Filter>${transition(1)}${transition(2)}`, 'InvalidArgument', /must be different for &apos;Transition&apos; actions/]
  ]
  for (const [what, rule, code, message] of cases) {
    const res = await raw(server, 'PUT', '/photos?lifecycle', { 'content-type': 'application/xml' }, document(rule))
    t.equal(res.status, 400, what)
    t.match(res.body, `<Code>${code}</Code>`, what)
    t.match(res.body, message, what)
  }
  t.equal((await server.registry.info('photos'))?.settings.lifecycle, null, 'nothing was stored')
})
