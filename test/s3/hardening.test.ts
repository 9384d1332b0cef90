/**
 * Requests S3 refuses and a lenient server would act on: unsigned x-amz-*
 * headers, encryption and Object Lock it cannot honour, conditions on the
 * object a copy replaces, lifecycle filters it cannot apply, XML that is not
 * well-formed. Each answer is S3's, and nothing is stored or changed.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'
import pino from 'pino'
import {
  CopyObjectCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, UploadPartCopyCommand
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { openRegistry, type BucketObjectBody } from '../../src/index.js'
import { BucketError } from '../../src/bucket/index.js'
import { buildS3App, s3AccessPolicy } from '../../src/s3/index.js'
import { redactedUrl } from '../../src/doors/redacted-url.js'
import { testdir } from '../testdir.js'
import { devCredentials, raw, rejection, s3Server, type S3Server } from './fixture.js'

async function bodyOf (server: S3Server, key: string): Promise<string | null> {
  const object = await (await server.registry.open('photos'))!.get(key)
  return object === null ? null : await (object as BucketObjectBody).text()
}

t.test('an x-amz-* header the signature does not cover is AccessDenied, naming it', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy(devCredentials, null, true) })
  const s3 = server.client({ requestChecksumCalculation: 'WHEN_REQUIRED' })
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'private/payroll.csv', Body: 'salaries' }))
  // A presigned upload URL handed to a user: adding x-amz-copy-source would make it a copy of any object.
  const url = new URL(await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'photos', Key: 'uploads/avatar.png' }), { expiresIn: 60 }))
  const copy = await raw(server, 'PUT', url.pathname + url.search, { 'x-amz-copy-source': 'photos/private/payroll.csv' })
  t.equal(copy.status, 403)
  t.match(copy.body, /<Code>AccessDenied<\/Code>/)
  t.match(copy.body, /<HeadersNotSigned>x-amz-copy-source<\/HeadersNotSigned>/)
  t.equal(await bodyOf(server, 'uploads/avatar.png'), null, 'nothing copied')
  const meta = await raw(server, 'PUT', url.pathname + url.search, { 'x-amz-meta-owner': 'mallory', 'x-amz-storage-class': 'STANDARD_IA' }, 'png')
  t.equal(meta.status, 403)
  t.match(meta.body, /<HeadersNotSigned>x-amz-meta-owner, x-amz-storage-class<\/HeadersNotSigned>/)
  t.equal(await bodyOf(server, 'uploads/avatar.png'), null, 'nothing stored')
  // The URL as issued works, with an unsigned x-amz-content-sha256 too (it only names the payload's form).
  const upload = await raw(server, 'PUT', url.pathname + url.search, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, 'png')
  t.equal(upload.status, 200)
  t.equal(await bodyOf(server, 'uploads/avatar.png'), 'png')
})

t.test('a session token this server did not make is InvalidToken, even beside a good key pair', async t => {
  const server = await s3Server(t, { policy: s3AccessPolicy(devCredentials, null, true) })
  const s3 = server.client({ credentials: { ...devCredentials, sessionToken: 'FwoGZXIvYXdzEJr' } })
  const refused = await rejection(s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'k', Body: 'v' })))
  t.equal(refused.name, 'InvalidToken')
  t.equal(refused.$metadata.httpStatusCode, 400)
  t.equal(await bodyOf(server, 'k'), null)
})

t.test('SSE-KMS, Object Lock, object tags and website redirects are NotImplemented, never silently ignored', async t => {
  const server = await s3Server(t)
  const cases: Array<[string, Record<string, string>]> = [
    ['kms', { 'x-amz-server-side-encryption': 'aws:kms' }],
    ['kms-key', { 'x-amz-server-side-encryption-aws-kms-key-id': 'arn:aws:kms:us-east-1:1:key/x' }],
    ['lock', { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2099-01-01T00:00:00Z' }],
    ['hold', { 'x-amz-object-lock-legal-hold': 'ON' }],
    ['tags', { 'x-amz-tagging': 'team=blue' }],
    ['redirect', { 'x-amz-website-redirect-location': '/elsewhere' }]
  ]
  for (const [key, headers] of cases) {
    const answer = await raw(server, 'PUT', `/photos/${key}`, headers, 'secret')
    t.equal(answer.status, 501, key)
    t.match(answer.body, /<Code>NotImplemented<\/Code>/, key)
    t.equal(await bodyOf(server, key), null, `${key}: nothing stored`)
  }
  const upload = await raw(server, 'POST', '/photos/mpu?uploads', { 'x-amz-server-side-encryption-aws-kms-key-id': 'arn:aws:kms:us-east-1:1:key/x' })
  t.equal(upload.status, 501, 'nor an upload started with them')
  const lockedBucket = await raw(server, 'PUT', '/locked', { 'x-amz-bucket-object-lock-enabled': 'true' })
  t.equal(lockedBucket.status, 501)
  t.equal(await server.registry.info('locked'), null, 'no bucket made')
  const bogus = await raw(server, 'PUT', '/photos/bogus', { 'x-amz-server-side-encryption': 'rot13' }, 'x')
  t.equal(bogus.status, 400)
  t.match(bogus.body, /<Code>InvalidArgument<\/Code>/)
  const sseS3 = await raw(server, 'PUT', '/photos/aes', { 'x-amz-server-side-encryption': 'AES256' }, 'x')
  t.equal(sseS3.status, 200, 'AES256 (SSE-S3, the answered default) is accepted')
  t.equal((await raw(server, 'PUT', '/photos/untagged', { 'x-amz-tagging': '' }, 'x')).status, 200, 'an empty x-amz-tagging asks for no tag')
})

t.test('canned ACLs and grants are accepted and ignored, as the hosted service does: the bucket\'s setting alone makes objects public', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'shared', Body: 'bytes', ACL: 'public-read' }))
  t.equal(await bodyOf(server, 'shared'), 'bytes', 'stored')
  const granted = await raw(server, 'PUT', '/photos/granted', { 'x-amz-grant-read': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }, 'g')
  t.equal(granted.status, 200)
  t.equal((await server.registry.info('photos'))?.settings.public, false, 'the bucket stays private')
})

t.test('CopyObject judges If-None-Match: * and If-Match against the object it would replace', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'precious', Body: 'PRECIOUS' }))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'other', Body: 'other' }))
  await server.registry.create('elsewhere')
  for (const source of ['photos/other', 'elsewhere/x']) {
    if (source.startsWith('elsewhere')) await s3.send(new PutObjectCommand({ Bucket: 'elsewhere', Key: 'x', Body: 'other' }))
    const absent = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'precious', CopySource: source, IfNoneMatch: '*' })))
    t.equal(absent.name, 'PreconditionFailed', `${source}: If-None-Match: *`)
    const stale = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'precious', CopySource: source, IfMatch: '"0000"' })))
    t.equal(stale.name, 'PreconditionFailed', `${source}: If-Match`)
    t.equal(await bodyOf(server, 'precious'), 'PRECIOUS', `${source}: the destination is unchanged`)
  }
  await s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'fresh', CopySource: 'photos/other', IfNoneMatch: '*' }))
  t.equal(await bodyOf(server, 'fresh'), 'other', 'a copy to a free key goes through')
})

t.test('CopyObject takes the hosted service\'s cf-copy-destination-if-* conditions, over the plain ones', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  const { ETag } = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'precious', Body: 'PRECIOUS' }))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'other', Body: 'other' }))
  await server.registry.create('elsewhere')
  await s3.send(new PutObjectCommand({ Bucket: 'elsewhere', Key: 'x', Body: 'other' }))
  const copy = async (source: string, headers: Record<string, string>): Promise<number> =>
    (await raw(server, 'PUT', '/photos/precious', { 'x-amz-copy-source': source, ...headers })).status
  for (const source of ['/photos/other', '/elsewhere/x']) {
    t.equal(await copy(source, { 'cf-copy-destination-if-none-match': '*' }), 412, `${source}: if-none-match *`)
    t.equal(await copy(source, { 'cf-copy-destination-if-match': '"0000"' }), 412, `${source}: if-match`)
    t.equal(await copy(source, { 'cf-copy-destination-if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }), 412, `${source}: if-unmodified-since`)
    t.equal(await copy(source, { 'if-none-match': '"0000"', 'cf-copy-destination-if-none-match': '*' }), 412, `${source}: the cf- header wins over the plain one`)
  }
  t.equal(await bodyOf(server, 'precious'), 'PRECIOUS', 'the destination is unchanged')
  t.equal(await copy('/photos/other', { 'cf-copy-destination-if-match': ETag! }), 200)
  t.equal(await bodyOf(server, 'precious'), 'other')
})

t.test('write conditions as the hosted service takes them: If-None-Match with etags, If-Match, and the dates, judged against the object replaced', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  const { ETag } = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'k', Body: 'one' }))
  const put = async (key: string, headers: Record<string, string>, body: string): Promise<number> => (await raw(server, 'PUT', `/photos/${key}`, headers, body)).status
  const past = 'Thu, 01 Jan 1970 00:00:00 GMT'
  const future = new Date(Date.now() + 3600_000).toUTCString()
  t.equal(await put('k', { 'if-none-match': ETag! }, 'two'), 412, 'If-None-Match naming the current etag')
  t.equal(await put('k', { 'if-none-match': ETag!.slice(1, -1) }, 'two'), 412, 'unquoted, as S3 takes it')
  t.equal(await put('k', { 'if-unmodified-since': past }, 'two'), 412, 'If-Unmodified-Since before the object')
  t.equal(await put('k', { 'if-modified-since': future }, 'two'), 412, 'If-Modified-Since after it')
  t.equal(await bodyOf(server, 'k'), 'one', 'none of them wrote')
  t.equal(await put('k', { 'if-none-match': '"0000", "1111"' }, 'two'), 200, 'If-None-Match naming other etags')
  t.equal(await put('k', { 'if-unmodified-since': future }, 'three'), 200)
  t.equal(await put('k', { 'if-modified-since': past }, 'four'), 200)
  t.equal(await bodyOf(server, 'k'), 'four')
  t.equal(await put('missing', { 'if-match': '"0000"' }, 'x'), 412, 'If-Match on a missing key fails, as the hosted service answers it')
  t.equal(await put('missing', { 'if-modified-since': past }, 'x'), 412, 'so does If-Modified-Since')
  t.equal(await put('missing', { 'if-none-match': '"0000"', 'if-unmodified-since': past }, 'x'), 200, 'the others pass')
})

t.test('UploadPartCopy with a range past the source\'s end, or not of the form bytes=first-last, is InvalidArgument, no part stored', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'src', Body: 'twelve bytes' }))
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'dst' }))
  const past = await rejection(s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'dst', UploadId, PartNumber: 1, CopySource: 'photos/src', CopySourceRange: 'bytes=4-100' })))
  t.equal(past.name, 'InvalidArgument')
  t.match(past.message, /size: 12/)
  const start = await rejection(s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'dst', UploadId, PartNumber: 1, CopySource: 'photos/src', CopySourceRange: 'bytes=12-20' })))
  t.same([start.name, start.$metadata.httpStatusCode], ['InvalidArgument', 400], 'a range starting past the end too, not the 416 of a GET')
  t.match(start.message, /size: 12/)
  for (const malformed of ['4-11', 'bytes=4-', 'bytes=-4', 'bytes=11-4', 'bytes=a-b', 'bytes=0-1,3-4']) {
    const refused = await rejection(s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'dst', UploadId, PartNumber: 1, CopySource: 'photos/src', CopySourceRange: malformed })))
    t.same([refused.name, refused.$metadata.httpStatusCode], ['InvalidArgument', 400], malformed)
    t.match(refused.message, /must be of the form bytes=first-last/, malformed)
  }
  const parts = await (await server.registry.open('photos'))!.resumeMultipartUpload('dst', UploadId!).listParts()
  t.same(parts.parts.map(p => p.partNumber), [], 'no part')
  const within = await s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'dst', UploadId, PartNumber: 1, CopySource: 'photos/src', CopySourceRange: 'bytes=4-11' }))
  t.ok(within.CopyPartResult?.ETag)
})

t.test('conditional deletes are NotImplemented and delete nothing, never an unconditional delete', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  const put = await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'keep', Body: 'precious' }))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'other', Body: 'also kept' }))
  const stale = await rejection(s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'keep', IfMatch: '"0123456789abcdef0123456789abcdef"' })))
  t.equal(stale.name, 'NotImplemented', 'If-Match naming another version')
  t.equal(stale.$metadata.httpStatusCode, 501)
  t.equal(await bodyOf(server, 'keep'), 'precious', 'nothing deleted')
  const current = await rejection(s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'keep', IfMatch: put.ETag })))
  t.equal(current.name, 'NotImplemented', 'If-Match naming the current version is refused alike: the server cannot judge it')
  t.equal(await bodyOf(server, 'keep'), 'precious')
  const others: Array<Record<string, string>> = [
    { 'x-amz-if-match-size': '3' }, { 'x-amz-if-match-last-modified-time': 'Thu, 01 Jan 2099 00:00:00 GMT' }, { 'if-unmodified-since': 'Thu, 01 Jan 2000 00:00:00 GMT' }
  ]
  for (const headers of others) {
    const answer = await raw(server, 'DELETE', '/photos/keep', headers)
    t.equal(answer.status, 501, Object.keys(headers)[0])
    t.match(answer.body, /<Code>NotImplemented<\/Code>/)
  }
  t.equal(await bodyOf(server, 'keep'), 'precious')
  const batch = await rejection(s3.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'other' }, { Key: 'keep', ETag: '"0123456789abcdef0123456789abcdef"' }] } })))
  t.equal(batch.name, 'NotImplemented', 'a DeleteObjects entry with an ETag')
  t.equal(await bodyOf(server, 'keep'), 'precious')
  t.equal(await bodyOf(server, 'other'), 'also kept', 'nor any other entry of that request')
  await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'keep' }))
  t.equal(await bodyOf(server, 'keep'), null, 'an unconditional delete still deletes')
})

t.test('a version id other than null names no version: InvalidArgument', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'v', Body: 'current' }))
  const copy = await rejection(s3.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'w', CopySource: 'photos/v?versionId=abc' })))
  t.equal(copy.name, 'InvalidArgument')
  t.equal(await bodyOf(server, 'w'), null)
  const read = await rejection(s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'v', VersionId: 'abc' })))
  t.equal(read.name, 'InvalidArgument')
  const nullVersion = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'v', VersionId: 'null' }))
  t.equal(await nullVersion.Body?.transformToString(), 'current', 'null is the one version')
  const single = await rejection(s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'v', VersionId: 'abc' })))
  t.equal(single.name, 'InvalidArgument')
  const many = await s3.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'v', VersionId: 'abc' }] } }))
  t.same(many.Deleted ?? [], [], 'a DeleteObjects entry naming a version deletes nothing, as DeleteObject')
  t.same(many.Errors?.map(e => [e.Key, e.VersionId, e.Code]), [['v', 'abc', 'InvalidArgument']])
  t.equal(await bodyOf(server, 'v'), 'current', 'the object is still there')
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'w', Body: 'other' }))
  const nullDelete = await s3.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'v', VersionId: 'null' }, { Key: 'w' }] } }))
  t.same(nullDelete.Deleted?.map(d => [d.Key, d.VersionId]), [['v', 'null'], ['w', undefined]], 'null is the object itself')
  t.equal(await bodyOf(server, 'v'), null)
  t.equal(await bodyOf(server, 'w'), null)
})

t.test('lifecycle rules this server cannot apply are refused, never widened to the whole bucket', async t => {
  const server = await s3Server(t)
  const rule = (inner: string): string => `<LifecycleConfiguration><Rule><ID>r</ID>${inner}</Rule></LifecycleConfiguration>`
  const abort = '<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>'
  const cases: Array<[string, number, string]> = [
    [rule(`<Filter><Tag><Key>tmp</Key><Value>yes</Value></Tag></Filter><Status>Enabled</Status>${abort}`), 501, 'NotImplemented'],
    [rule(`<Filter><And><Prefix>logs/</Prefix><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status>${abort}`), 501, 'NotImplemented'],
    [rule('<Filter><Prefix>a/</Prefix></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>'), 501, 'NotImplemented'],
    [rule('<Filter><Prefix>a/</Prefix></Filter><Status>Enabled</Status>'), 400, 'InvalidRequest'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Days>-1</Days></Expiration>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Days>1.5</Days></Expiration>'), 400, 'MalformedXML'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Date>1</Date></Expiration>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Date>2030-01-01T12:00:00Z</Date></Expiration>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Days>99999999999999999999999</Days></Expiration>'), 400, 'MalformedXML'],
    // Nine digits of days would put the expiry past any date the answers could show.
    [rule('<Filter/><Status>Enabled</Status><Expiration><Days>999999999</Days></Expiration>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Days>36501</Days></Expiration>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>36501</DaysAfterInitiation></AbortIncompleteMultipartUpload>'), 400, 'InvalidArgument'],
    [rule('<Filter/><Status>Enabled</Status><Expiration><Date>2027-02-30</Date></Expiration>'), 400, 'InvalidArgument'],
    [`<LifecycleConfiguration><Rule><ID>${'i'.repeat(256)}</ID><Filter/><Status>Enabled</Status>${abort}</Rule></LifecycleConfiguration>`, 400, 'InvalidArgument']
  ]
  for (const [body, status, code] of cases) {
    const answer = await raw(server, 'PUT', '/photos?lifecycle', {}, body)
    t.equal(answer.status, status, body)
    t.match(answer.body, `<Code>${code}</Code>`, body)
  }
  t.equal((await server.registry.info('photos'))?.settings.lifecycle, null, 'nothing stored')
  const midnight = await raw(server, 'PUT', '/photos?lifecycle', {}, rule('<Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00.000Z</Date></Expiration>'))
  t.equal(midnight.status, 200, 'a date at midnight UTC and a prefix are taken')
  const century = await raw(server, 'PUT', '/photos?lifecycle', {}, rule('<Filter/><Status>Enabled</Status><Expiration><Days>36500</Days></Expiration>'))
  t.equal(century.status, 200, '100 years of days are taken')
  t.equal((await raw(server, 'PUT', '/photos/old.txt', {}, 'x')).status, 200)
  const expiration = String((await raw(server, 'HEAD', '/photos/old.txt')).headers['x-amz-expiration'])
  t.match(expiration, /^expiry-date="\w{3}, \d{2} \w{3} 21\d\d 00:00:00 GMT", rule-id="r"$/, 'and announced as a date a century away')
})

t.test('CORS rules whose values could not go out in a header are refused when written', async t => {
  const server = await s3Server(t)
  const crlf = '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><ExposeHeader>ETag&#13;&#10;X-Injected: 1</ExposeHeader></CORSRule></CORSConfiguration>'
  const answer = await raw(server, 'PUT', '/photos?cors', {}, crlf)
  t.equal(answer.status, 400)
  t.equal((await server.registry.info('photos'))?.settings.cors, null)
  const wildcards = await raw(server, 'PUT', '/photos?cors', {}, '<CORSConfiguration><CORSRule><AllowedOrigin>https://*.*.test</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>')
  t.equal(wildcards.status, 400, 'one * per origin')
  const many = `<CORSConfiguration>${'<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>'.repeat(101)}</CORSConfiguration>`
  t.equal((await raw(server, 'PUT', '/photos?cors', {}, many)).status, 400, '100 rules at most')
  t.equal((await raw(server, 'GET', '/photos/none', { origin: 'https://a.test' })).status, 404, 'reads with an Origin still answer')
})

t.test('XML that is not well-formed UTF-8 XML is MalformedXML, and deletes nothing', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: '\ufffd', Body: 'replacement character' }))
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'a', Body: 'a' }))
  const bodies: Array<string | Buffer> = [
    Buffer.concat([Buffer.from('<Delete><Object><Key>'), Buffer.from([0xff]), Buffer.from('</Key></Object></Delete>')]),
    `<Delete><Object><Key>a</Key></Object>${'<x>'.repeat(101)}${'</x>'.repeat(101)}</Delete>`,
    '<Delete><Object><Key>a</Key></Object><__proto__/></Delete>',
    '<Delete><Object><Key>a&foo;</Key></Object></Delete>',
    '<Delete><Object><Key>a&#0;</Key></Object></Delete>',
    '<Delete><Object><Key>a&nbsp;</Key></Object></Delete>',
    '<Delete><Object><Key/></Object></Delete>',
    '<Delete><Object><Key><b>a</b></Key></Object></Delete>',
    '<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>'
  ]
  for (const body of bodies) {
    const answer = await raw(server, 'POST', '/photos?delete', {}, body)
    t.equal(answer.status, 400, String(body))
    t.match(answer.body, /<Code>MalformedXML<\/Code>/, String(body))
  }
  t.equal(await bodyOf(server, '\ufffd'), 'replacement character', 'the U+FFFD key is kept')
  t.equal(await bodyOf(server, 'a'), 'a')
  const cdata = await raw(server, 'POST', '/photos?delete', {}, '<Delete><Object><Key><![CDATA[a]]></Key></Object><!-- a & b --></Delete>')
  t.equal(cdata.status, 200, 'CDATA and comments are XML too')
  t.equal(await bodyOf(server, 'a'), null)
})

t.test('listings write control characters in keys as character references', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'line\r\nbreak', Body: 'x' }))
  const page = await raw(server, 'GET', '/photos?list-type=2')
  t.match(page.body, '<Key>line&#13;\nbreak</Key>')
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'photos' }))
  t.same(listed.Contents?.map(c => c.Key), ['line\r\nbreak'], 'the SDK reads the key back whole')
})

t.test('S3 answers every method, and the parser\'s refusals, as XML with a request id', async t => {
  const server = await s3Server(t)
  for (const method of ['PATCH', 'PROPFIND']) {
    const answer = await raw(server, method, '/photos/k')
    t.equal(answer.status, 405, method)
    t.match(answer.body, /<Code>MethodNotAllowed<\/Code>/, method)
    t.ok(answer.headers['x-amz-request-id'], `${method}: a request id`)
  }
  const large = await raw(server, 'GET', '/photos/k', { 'x-big': 'v'.repeat(20_000) })
  t.equal(large.status, 400)
  t.match(large.body, /<Code>RequestHeaderSectionTooLarge<\/Code>/)
  t.ok(large.headers['x-amz-request-id'])
})

t.test('several checksums, or an announced algorithm not sent, are InvalidRequest', async t => {
  const server = await s3Server(t)
  const crc32 = 'NhCmhg==' // CRC32 of "hello"
  const sha1 = 'qvTGHdzF6KLavt4PO0gs2a6pQ00='
  const both = await raw(server, 'PUT', '/photos/c', { 'x-amz-checksum-crc32': crc32, 'x-amz-checksum-sha1': sha1 }, 'hello')
  t.equal(both.status, 400)
  t.match(both.body, /<Code>InvalidRequest<\/Code>/)
  const announced = await raw(server, 'PUT', '/photos/c', { 'x-amz-sdk-checksum-algorithm': 'CRC32C' }, 'hello')
  t.equal(announced.status, 400)
  const bogus = await raw(server, 'PUT', '/photos/c', { 'x-amz-sdk-checksum-algorithm': 'ROT13', 'x-amz-checksum-crc32': crc32 }, 'hello')
  t.equal(bogus.status, 400)
  t.equal(await bodyOf(server, 'c'), null)
  const one = await raw(server, 'PUT', '/photos/c', { 'x-amz-sdk-checksum-algorithm': 'CRC32', 'x-amz-checksum-crc32': crc32 }, 'hello')
  t.equal(one.status, 200)
})

t.test('an append (x-amz-write-offset-bytes) and a rename (?renameObject) are NotImplemented, the objects untouched', async t => {
  const server = await s3Server(t)
  t.equal((await raw(server, 'PUT', '/photos/log', {}, '0123456789')).status, 200)
  const append = await raw(server, 'PUT', '/photos/log', { 'x-amz-write-offset-bytes': '10' }, 'ABC')
  t.equal(append.status, 501)
  t.match(append.body, /<Code>NotImplemented<\/Code>/)
  t.equal(await bodyOf(server, 'log'), '0123456789', 'not replaced by the bytes meant to be appended')
  t.equal((await raw(server, 'PUT', '/photos/src', {}, 'kept')).status, 200)
  const rename = await raw(server, 'PUT', '/photos/dst?renameObject', { 'x-amz-rename-source': '/photos/src' }, '')
  t.equal(rename.status, 501)
  t.match(rename.body, /<Code>NotImplemented<\/Code>/)
  t.equal(await bodyOf(server, 'dst'), null, 'no empty object made at the destination')
  t.equal(await bodyOf(server, 'src'), 'kept')
})

t.test('aws-chunked is read as framing only with a STREAMING payload: unsigned it is InvalidArgument, beside a SHA-256 it is the object\'s coding', async t => {
  const server = await s3Server(t)
  const framed = '5\r\nhello\r\n0\r\n\r\n'
  for (const [key, headers] of [['none', {}], ['unsigned', { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }], ['gzip', { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-encoding': 'gzip, aws-chunked' }]] as const) {
    const answer = await raw(server, 'PUT', `/photos/${key}`, { 'content-encoding': 'aws-chunked', ...headers }, framed)
    t.equal(answer.status, 400, key)
    t.match(answer.body, /<Code>InvalidArgument<\/Code>/, key)
    t.equal(await bodyOf(server, key), null, `${key}: the framing is not stored as the object`)
  }
  const sha256 = createHash('sha256').update('hello').digest('hex')
  const hashed = await raw(server, 'PUT', '/photos/hashed', { 'content-encoding': 'aws-chunked', 'x-amz-content-sha256': sha256 }, 'hello')
  t.equal(hashed.status, 200)
  t.equal(await bodyOf(server, 'hashed'), 'hello')
  t.equal((await (await server.registry.open('photos'))!.head('hashed'))?.httpMetadata.contentEncoding, 'aws-chunked', 'kept as sent, as S3 keeps it')
})

t.test('bucket names S3 reserves are InvalidBucketName', async t => {
  const server = await s3Server(t)
  for (const name of ['xn--abc', 'sthree-x', 'abc-s3alias', 'abc--ol-s3']) {
    const answer = await raw(server, 'PUT', `/${name}`)
    t.equal(answer.status, 400, name)
    t.match(answer.body, /<Code>InvalidBucketName<\/Code>/, name)
    t.equal(await server.registry.info(name), null)
  }
})

t.test('presigned credentials are redacted from logs however their names are encoded', async t => {
  const url = '/photos/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credentia%6C=AKIDSECRET%2F20260101&X-Amz-Signatur%65=feedbeef99&x-amz-security-token=tok3n'
  const redacted = redactedUrl(url)
  t.notMatch(redacted, /AKIDSECRET|feedbeef99|tok3n/)
  t.match(redacted, 'X-Amz-Algorithm=AWS4-HMAC-SHA256')
})

t.test('a fault after the body was read is logged at error; the door\'s own refusals are not', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const lines: Array<{ level: number, msg: string }> = []
  const capture = pino({ level: 'info' }, new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } }))
  const app = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: 'info', childLoggerFactory: (_logger, bindings) => capture.child(bindings) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const endpoint = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: devCredentials, maxAttempts: 1 })
  t.teardown(async () => { client.destroy(); await app.close(); await registry.close() })
  const bucket = (await registry.open('photos'))!
  // DeleteObjects deletes through deleteEach (it answers the keys a lock kept); the binding's delete too.
  bucket.deleteEach = async () => { throw new Error('a fault in the engine') }
  const failed = await fetch(`${endpoint}/photos?delete`, { method: 'POST', body: '<Delete><Object><Key>a</Key></Object></Delete>' })
  t.equal(failed.status, 500)
  t.ok(lines.some(l => l.level === 50 && l.msg === 'request failed'), 'the fault is logged at error')
  lines.length = 0
  const refused = await fetch(`${endpoint}/photos/k`, { method: 'PUT', body: 'x', headers: { 'x-amz-content-sha256': 'STREAMING-UNKNOWN' } })
  t.equal(refused.status, 501)
  t.notOk(lines.some(l => l.level >= 50), 'NotImplemented is not an error of the server')
  lines.length = 0
  bucket.copy = async () => { throw new BucketError('CopySourceContended', 'copy') }
  const contended = await fetch(`${endpoint}/photos/dst`, { method: 'PUT', headers: { 'x-amz-copy-source': '/photos/src' } })
  t.equal(contended.status, 503)
  t.match(await contended.text(), /<Code>ServiceUnavailable<\/Code>/)
  t.ok(lines.some(l => l.level === 40 && l.msg === 'try again later'), 'a copy whose source kept changing is logged at warn')
  t.notOk(lines.some(l => l.level >= 50), 'not as a fault')
})

t.test('an error of the binding reaches S3 clients as its sentence, without the method and catalogue code', async t => {
  const server = await s3Server(t)
  const answer = await raw(server, 'PUT', '/photos/digest', { 'content-md5': Buffer.alloc(16).toString('base64') }, 'bytes')
  t.equal(answer.status, 400)
  t.match(answer.body, /<Code>BadDigest<\/Code>/)
  const message = /<Message>([^<]*)<\/Message>/.exec(answer.body)?.[1] ?? ''
  t.ok(message.length > 0)
  t.notMatch(message, /^put: |\(10037\)$/)
})

t.test('objects are read sandboxed: an HTML object cannot use the development mode\'s unsigned requests from its own origin', async t => {
  const server = await s3Server(t)
  const photos = (await server.registry.open('photos'))!
  await photos.put('page.html', '<script>fetch("/photos/page.html", { method: "DELETE" })</script>', { httpMetadata: { contentType: 'text/html' } })
  await photos.put('note.txt', '<script>alert(1)</script>', { httpMetadata: { contentType: 'text/plain' } })
  await photos.put('paper.pdf', '%PDF-1.4', { httpMetadata: { contentType: 'application/pdf' } })
  for (const path of ['/photos/page.html', '/photos/note.txt?response-content-type=text%2Fhtml']) {
    const answer = await raw(server, 'GET', path)
    t.equal(answer.status, 200, path)
    t.match(answer.headers['content-security-policy'], /^sandbox( |$)/, `${path}: sandboxed`)
    t.notMatch(answer.headers['content-security-policy'], /allow-same-origin/, `${path}: in an opaque origin`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${path}: not sniffed`)
  }
  const pdf = await raw(server, 'GET', '/photos/paper.pdf')
  t.equal(pdf.headers['content-security-policy'], undefined, 'a PDF stays viewable')
  const image = await raw(server, 'GET', '/photos/note.txt?response-content-type=image%2Fpng')
  t.equal(image.headers['content-security-policy'], undefined, 'an inert type needs no sandbox')
  const svg = await raw(server, 'GET', '/photos/note.txt?response-content-type=image%2Fsvg%2Bxml')
  t.match(svg.headers['content-security-policy'], /^sandbox /, 'SVG is a page')
})

t.test('a response-* override no header can carry (CR, LF) is InvalidArgument naming it, never answered as something else', async t => {
  const server = await s3Server(t)
  const photos = (await server.registry.open('photos'))!
  await photos.put('note.txt', 'text', { httpMetadata: { contentType: 'text/plain' } })
  for (const [parameter, value] of [['response-content-type', 'text/html%0D%0AX-Injected:%201'], ['response-expires', 'x%0A']]) {
    const answer = await raw(server, 'GET', `/photos/note.txt?${parameter}=${value}`)
    t.equal(answer.status, 400, parameter)
    t.match(answer.body, '<Code>InvalidArgument</Code>')
    t.match(answer.body, `<ArgumentName>${parameter}</ArgumentName>`)
    t.equal(answer.headers['x-injected'], undefined)
    t.equal((await raw(server, 'HEAD', `/photos/note.txt?${parameter}=${value}`)).status, 400, `HEAD ${parameter}`)
  }
})
