/**
 * A conditional header the binding refuses (an If-Match / If-None-Match
 * without a quoted etag) is the client's mistake: 400, never a 500.
 */
import t from 'tap'
import { auth, gateway } from './gateway-fixture.js'

t.test('an unquoted etag in If-Match or If-None-Match answers 400', async t => {
  const { app } = await gateway(t)
  const put = await app.inject({ method: 'PUT', url: '/photos/doc', headers: auth, payload: 'body' })
  const etag = put.json().result.etag as string
  for (const [method, header] of [['GET', 'if-match'], ['GET', 'if-none-match'], ['HEAD', 'if-match'], ['PUT', 'if-match']] as const) {
    const res = await app.inject({ method, url: '/photos/doc', headers: { ...auth, [header]: etag }, payload: method === 'PUT' ? 'new' : undefined })
    t.equal(res.statusCode, 400, `${method} with an unquoted ${header}`)
    if (method !== 'HEAD') {
      t.equal(res.json().errors[0].code, 40000, 'InvalidArgument')
      t.equal(res.json().errors[0].message, `Invalid ETag in ${header} header`)
    }
  }
  t.equal((await app.inject({ method: 'GET', url: '/photos/doc', headers: auth })).body, 'body', 'nothing was replaced')
  t.equal((await app.inject({ method: 'GET', url: '/photos/doc', headers: { ...auth, 'if-match': `"${etag}"` } })).statusCode, 200, 'the quoted etag matches')
})
