/**
 * PutBucketCors and GetBucketCors: every value the engine would refuse is
 * refused at the door with S3's code (no engine text reaches the client),
 * and the size limit is one measure on every door, so that what any door
 * stores GetBucketCors gives back in a body PutBucketCors takes.
 */
import t from 'tap'
import { MAX_CORS_CONFIGURATION_BYTES, corsConfigurationBytes, type CorsRule } from '../../src/bucket/index.js'
import { raw, s3Server } from './fixture.js'

function rule (inner: string): string {
  return `<CORSConfiguration><CORSRule>${inner}</CORSRule></CORSConfiguration>`
}

const origin = '<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>'

t.test('PutBucketCors refuses what the engine cannot store, with S3\'s codes', async t => {
  const server = await s3Server(t)
  const cases: Array<[string, string, string, RegExp]> = [
    ['two wildcards in an origin', rule('<AllowedOrigin>https://*.*.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod>'), 'InvalidRequest', /AllowedOrigin &quot;https:\/\/\*\.\*\.example&quot; can not have more than one wildcard/],
    ['two wildcards in an allowed header', rule(`${origin}<AllowedHeader>x-*-*</AllowedHeader>`), 'InvalidRequest', /AllowedHeader &quot;x-\*-\*&quot; can not have more than one wildcard/],
    ['a non-ASCII origin', rule('<AllowedOrigin>https://é.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod>'), 'InvalidRequest', /contains invalid character/],
    ['a control character in a header', rule(`${origin}<AllowedHeader>x-a&#9;b</AllowedHeader>`), 'InvalidRequest', /AllowedHeader .* contains invalid character/],
    ['a non-ASCII exposed header', rule(`${origin}<ExposeHeader>x-ü</ExposeHeader>`), 'InvalidRequest', /ExposeHeader .* contains invalid character/],
    ['an ID over 255 characters', rule(`<ID>${'i'.repeat(256)}</ID>${origin}`), 'InvalidRequest', /at most 255 characters/],
    ['MaxAgeSeconds past 2^31-1', rule(`${origin}<MaxAgeSeconds>2147483648</MaxAgeSeconds>`), 'MalformedXML', /MaxAgeSeconds &quot;2147483648&quot; is not a valid value/]
  ]
  for (const [what, body, code, message] of cases) {
    const res = await raw(server, 'PUT', '/photos?cors', { 'content-type': 'application/xml' }, body)
    t.equal(res.status, 400, what)
    t.match(res.body, `<Code>${code}</Code>`, what)
    t.match(res.body, message, what)
    t.notMatch(res.body, /settings\.cors/, `${what}: no engine text`)
  }
  t.equal((await server.registry.info('photos'))!.settings.cors, null, 'nothing was stored')
  const fits = await raw(server, 'PUT', '/photos?cors', {}, rule(`<ID>${'i'.repeat(255)}</ID>${origin}<AllowedHeader>x-amz-*</AllowedHeader><MaxAgeSeconds>2147483647</MaxAgeSeconds>`))
  t.equal(fits.status, 200, 'the largest values fit')
})

t.test('the size is GetBucketCors\'s body, and what one door stores round-trips through the S3 port', async t => {
  const server = await s3Server(t)
  const read = async (): Promise<string> => {
    const res = await raw(server, 'GET', '/photos?cors')
    t.equal(res.status, 200)
    return res.body
  }
  const escaped: CorsRule[] = [{ id: 'a&b<c>"d\'é', allowedOrigins: ['https://a.test', '*'], allowedMethods: ['GET', 'HEAD'], allowedHeaders: ['x-&'], exposeHeaders: ['etag'], maxAgeSeconds: 3600 }]
  await server.registry.updateSettings('photos', { cors: escaped })
  t.equal(Buffer.byteLength(await read()), corsConfigurationBytes(escaped), 'measured byte for byte, escapes and declaration included')

  // Exactly at the limit, as the management API or the engine takes it.
  const base = corsConfigurationBytes([{ allowedOrigins: ['*'], allowedMethods: ['GET'], allowedHeaders: [''] }])
  const largest: CorsRule[] = [{ allowedOrigins: ['*'], allowedMethods: ['GET'], allowedHeaders: ['h'.repeat(MAX_CORS_CONFIGURATION_BYTES - base)] }]
  t.equal(corsConfigurationBytes(largest), MAX_CORS_CONFIGURATION_BYTES)
  await server.registry.updateSettings('photos', { cors: largest })
  const document = await read()
  t.equal(Buffer.byteLength(document), MAX_CORS_CONFIGURATION_BYTES, 'GetBucketCors writes no more than the limit')
  await server.registry.updateSettings('photos', { cors: null })
  const back = await raw(server, 'PUT', '/photos?cors', { 'content-type': 'application/xml' }, document)
  t.equal(back.status, 200, 'PutBucketCors takes back what GetBucketCors gave')
  t.same((await server.registry.info('photos'))!.settings.cors, largest)

  // A body within the cap (no declaration, no namespace) whose rules measure a byte over it: refused, before the engine.
  const tooMany = rule(`<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>${'h'.repeat(MAX_CORS_CONFIGURATION_BYTES - base + 1)}</AllowedHeader>`)
  t.ok(Buffer.byteLength(tooMany) <= MAX_CORS_CONFIGURATION_BYTES, 'the body itself fits the cap')
  const refused = await raw(server, 'PUT', '/photos?cors', {}, tooMany)
  t.equal(refused.status, 400)
  t.match(refused.body, /<Code>MaxMessageLengthExceeded<\/Code>/)
  t.notMatch(refused.body, /settings\.cors/)
})
