/**
 * Whether a server without a token takes writes is the server's judgement
 * of its listening addresses (`loopbackOnly`, server/listen-host.ts), not
 * the host's name: `localhost` can resolve elsewhere.
 */
import t from 'tap'
import { gateway } from './gateway-fixture.js'

t.test('a credential-free server takes writes only when its addresses are loopback', async t => {
  for (const [loopbackOnly, writes] of [[true, 200], [false, 403]] as const) {
    const { app } = await gateway(t, { host: 'localhost', token: null, loopbackOnly })
    const put = await app.inject({ method: 'PUT', url: '/photos/a.txt', headers: { host: 'localhost' }, payload: 'A' })
    t.equal(put.statusCode, writes, `loopbackOnly ${loopbackOnly}: a write without a token answers ${writes}`)
    const api = await app.inject({ method: 'GET', url: '/client/v4/accounts/x/r2/buckets', headers: { host: 'localhost', authorization: 'Bearer anything' } })
    t.equal(api.statusCode === 200, loopbackOnly, `loopbackOnly ${loopbackOnly}: the management API ${loopbackOnly ? 'is' : 'is not'} open`)
  }
})
