/**
 * A bucket's CORS configuration has one size limit on every door: at most
 * MAX_CORS_CONFIGURATION_BYTES as the S3 port's GetBucketCors writes it
 * (declaration, namespace and escapes included; the S3 door caps
 * PutBucketCors's body at the same number, so what it gives it takes back). The
 * management API refuses a larger one with 10040 before storing it, and the
 * engine refuses it from any caller, so no door can store what makes every
 * preflight slow.
 */
import t from 'tap'
import { MAX_CORS_CONFIGURATION_BYTES, corsConfigurationBytes, type CorsRule } from '../../src/bucket/index.js'
import { accountId, buildApp, call } from './helpers.js'

const buckets = `/accounts/${accountId}/r2/buckets`
const origins = (n: number, width = 20): string[] => Array.from({ length: n }, (_, i) => `https://${String(i).padStart(width, 'o')}.test`)

function xmlOf (rules: CorsRule[]): string {
  const el = (name: string, values: Array<string | number> | undefined): string => (values ?? []).map(v => `<${name}>${v}</${name}>`).join('')
  return '<?xml version="1.0" encoding="UTF-8"?><CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' + rules.map(r => '<CORSRule>' + el('ID', r.id === undefined ? [] : [r.id]) + el('AllowedOrigin', r.allowedOrigins) +
    el('AllowedMethod', r.allowedMethods) + el('AllowedHeader', r.allowedHeaders) + el('ExposeHeader', r.exposeHeaders) +
    el('MaxAgeSeconds', r.maxAgeSeconds === undefined ? [] : [r.maxAgeSeconds]) + '</CORSRule>').join('') + '</CORSConfiguration>'
}

t.test('the size is what the S3 port\'s GetBucketCors document of the rules is', async t => {
  t.equal(MAX_CORS_CONFIGURATION_BYTES, 64 * 1024, 'the S3 door\'s cap on a CORSConfiguration body')
  const rules: CorsRule[] = [
    { id: 'one', allowedOrigins: ['https://a.test', '*'], allowedMethods: ['GET', 'HEAD'], allowedHeaders: ['range'], exposeHeaders: ['etag'], maxAgeSeconds: 3600 },
    { allowedOrigins: origins(3), allowedMethods: ['PUT'] }
  ]
  t.equal(corsConfigurationBytes(rules), Buffer.byteLength(xmlOf(rules)))
})

t.test('the management API refuses a configuration S3 could not hold', async t => {
  const { app, registry } = await buildApp(t)
  t.equal((await call(app, 'POST', buckets, { name: 'site' })).status, 200)
  const put = async (rules: unknown[]): Promise<{ status: number, body: any }> => await call(app, 'PUT', `${buckets}/site/cors`, { rules })
  const large = [
    ['100 rules of 300 origins', Array.from({ length: 100 }, () => ({ allowed: { origins: origins(300, 12), methods: ['GET'] } }))],
    ['one allowed header of 100 KB', [{ allowed: { origins: ['*'], methods: ['GET'], headers: ['x'.repeat(100_000)] } }]],
    ['30,000 origins in one rule', [{ allowed: { origins: origins(30_000, 1), methods: ['GET'] } }]]
  ] as const
  for (const [what, rules] of large) {
    const res = await put([...rules])
    t.same([res.status, res.body.errors[0]?.code], [400, 10040], what)
    t.match(res.body.errors[0]?.message, new RegExp(`at most ${MAX_CORS_CONFIGURATION_BYTES} bytes`), what)
  }
  t.equal((await registry.info('site'))!.settings.cors, null, 'nothing was stored')
  // Exactly at the limit fits; a byte more does not.
  const rule = (header: string): CorsRule => ({ allowedOrigins: ['*'], allowedMethods: ['GET'], allowedHeaders: [header] })
  const base = corsConfigurationBytes([rule('')])
  const fits = await put([{ allowed: { origins: ['*'], methods: ['GET'], headers: ['h'.repeat(MAX_CORS_CONFIGURATION_BYTES - base)] } }])
  t.equal(fits.status, 200, 'a configuration of exactly the limit fits')
  const over = await put([{ allowed: { origins: ['*'], methods: ['GET'], headers: ['h'.repeat(MAX_CORS_CONFIGURATION_BYTES - base + 1)] } }])
  t.equal(over.status, 400, 'one byte more does not')
  // The engine refuses the same from any door (one that skipped the check would still store nothing).
  const refused = await registry.updateSettings('site', { cors: [rule('h'.repeat(MAX_CORS_CONFIGURATION_BYTES))] }).then(() => null, (err: unknown) => err)
  t.ok(refused instanceof TypeError, 'the engine refuses it from any door')
})
