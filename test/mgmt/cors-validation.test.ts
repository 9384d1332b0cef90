/**
 * The management API's CORS PUT: a body that is no object (none, `null`),
 * or whose `rules` is `null`, is refused (10040) and leaves the rules alone, never read as "no rules";
 * every refused value is named with its rule and its value, and no engine
 * text (`settings.cors ...`) reaches the client.
 */
import t from 'tap'
import { accountId, auth, buildApp, call } from './helpers.js'

const cors = `/accounts/${accountId}/r2/buckets/site/cors`
const kept = { rules: [{ allowed: { origins: ['https://app.example'], methods: ['GET'] } }] }

t.test('a body that is none or null is refused, and the rules stay', async t => {
  const { app, registry } = await buildApp(t)
  t.equal((await call(app, 'POST', `/accounts/${accountId}/r2/buckets`, { name: 'site' })).status, 200)
  t.equal((await call(app, 'PUT', cors, kept)).status, 200)
  const bodies: Array<[string, Record<string, string>, string | undefined]> = [
    ['JSON null', { 'content-type': 'application/json' }, 'null'],
    ['an array', { 'content-type': 'application/json' }, '[]'],
    ['no body at all', {}, undefined]
  ]
  for (const [what, headers, payload] of bodies) {
    const res = await app.inject({ method: 'PUT', url: `/client/v4${cors}`, headers: { ...auth, ...headers }, ...(payload === undefined ? {} : { payload }) })
    t.same([res.statusCode, res.json().errors[0]?.code], [400, 10040], what)
    t.match(res.json().errors[0]?.message, /body must be an object/, what)
  }
  // `"rules": null` is no list either: it removed every rule.
  const nullRules = await call(app, 'PUT', cors, { rules: null })
  t.same([nullRules.status, nullRules.body.errors[0]?.code], [400, 10040], '"rules": null')
  t.match(nullRules.body.errors[0]?.message, /rules must be an array \(got null\)/, 'naming the field')
  t.same((await registry.info('site'))!.settings.cors, [{ allowedOrigins: ['https://app.example'], allowedMethods: ['GET'] }], 'the rules stay')
  t.equal((await call(app, 'PUT', cors, { rules: [] })).status, 200, '{"rules": []} is how to say no rules')
  t.equal((await registry.info('site'))!.settings.cors, null)
})

t.test('every refusal names the rule and the value', async t => {
  const { app, registry } = await buildApp(t)
  t.equal((await call(app, 'POST', `/accounts/${accountId}/r2/buckets`, { name: 'site' })).status, 200)
  const rule = (extra: Record<string, unknown>, allowed: Record<string, unknown> = {}): unknown => ({ rules: [kept.rules[0], { allowed: { origins: ['*'], methods: ['GET'], ...allowed }, ...extra }] })
  const cases: Array<[string, unknown, RegExp]> = [
    ['maxAgeSeconds past 2^31-1', rule({ maxAgeSeconds: 2 ** 31 }), /rules\[1\]\.maxAgeSeconds .* 0 to 2147483647 \(got 2147483648\)/],
    ['a huge maxAgeSeconds', rule({ maxAgeSeconds: 99999999999 }), /rules\[1\]\.maxAgeSeconds .*\(got 99999999999\)/],
    ['a negative maxAgeSeconds', rule({ maxAgeSeconds: -1 }), /rules\[1\]\.maxAgeSeconds .*\(got -1\)/],
    ['two wildcards in an allowed header', rule({}, { headers: ['x-*-*'] }), /rules\[1\]\.allowed\.headers\[0\] must be printable ASCII with one \* at most \(got "x-\*-\*"\)/],
    ['two wildcards in an origin', rule({}, { origins: ['https://*.*.example'] }), /rules\[1\]\.allowed\.origins\[0\] .*\(got "https:\/\/\*\.\*\.example"\)/],
    ['a control character in an exposed header', rule({ exposeHeaders: ['etag', 'x\r\ny'] }), /rules\[1\]\.exposeHeaders\[1\] must be printable ASCII \(got "x\\r\\ny"\)/],
    ['an unknown method', rule({}, { methods: ['GET', 'PATCH'] }), /rules\[1\]\.allowed\.methods\[1\] must be one of .*\(got "PATCH"\)/],
    ['an id over 255 characters', rule({ id: 'i'.repeat(256) }), /rules\[1\]\.id .*\(got "iii/],
    ['a header that is no string', rule({}, { headers: [7] }), /rules\[1\]\.allowed\.headers\[0\] must be a string \(got 7\)/]
  ]
  for (const [what, body, message] of cases) {
    const res = await call(app, 'PUT', cors, body)
    t.same([res.status, res.body.errors[0]?.code], [400, 10040], what)
    t.match(res.body.errors[0]?.message, message, what)
    t.notMatch(res.body.errors[0]?.message, /settings\.cors/, `${what}: no engine text`)
  }
  // 1e400 parses as Infinity, which the refusal wrote as null.
  const huge = await app.inject({ method: 'PUT', url: `/client/v4${cors}`, headers: { ...auth, 'content-type': 'application/json' }, payload: '{"rules":[{"allowed":{"origins":["*"],"methods":["GET"]},"maxAgeSeconds":1e400}]}' })
  t.same([huge.statusCode, huge.json().errors[0]?.code], [400, 10040], 'a maxAgeSeconds past a double\'s range')
  t.match(huge.json().errors[0]?.message, /rules\[0\]\.maxAgeSeconds .*\(got Infinity\)/, 'named as the number it became, not null')
  t.equal((await registry.info('site'))!.settings.cors, null, 'nothing was stored')
  t.equal((await call(app, 'PUT', cors, rule({ maxAgeSeconds: 2 ** 31 - 1 }, { headers: ['x-amz-*'] }))).status, 200, 'the largest values fit')
})
