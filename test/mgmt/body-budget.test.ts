/**
 * The management API's JSON bodies draw on the process's body budget: one
 * whose chunk would pass it is answered 503 (10953) with Retry-After, and
 * without `x-should-retry: false` (trying again is the point), before more
 * is read; the budget is back to zero after every kind of end (answered,
 * refused, malformed, aborted, timed out). An object PUT streams and takes
 * nothing from it.
 */
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { BODY_BUDGET_BYTES, bodyBudget } from '../../src/doors/body-budget.js'
import { accountId, buildApp, token } from './helpers.js'
import { budgetHolds, exchange, requestHead, stalledBody } from '../doors/stalled-bodies.js'

const budget = 64 * 1024
const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
const buckets = `/client/v4/accounts/${accountId}/r2/buckets`

t.test('a JSON body past the budget is 503 10953 with Retry-After; the budget returns to zero after every end', async t => {
  bodyBudget.resize(budget)
  t.teardown(() => { bodyBudget.resize(BODY_BUDGET_BYTES) })
  const { app } = await buildApp(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  // A socket timeout, as the serve command's --idle-timeout: a stalled body is cut.
  app.server.setTimeout(4000)

  const create = JSON.stringify({ name: 'photos' })
  const answered = await exchange(port, requestHead('POST', buckets, json, create.length) + create)
  t.equal(answered.status, 200, 'a body within the budget')
  t.equal(bodyBudget.held, 0, 'answered: nothing held')

  const malformed = await exchange(port, requestHead('POST', buckets, json, 9) + '{"name": ')
  t.equal(malformed.status, 400)
  t.match(malformed.body, '"code":6007')
  t.equal(bodyBudget.held, 0, 'malformed: nothing held')

  const tooLarge = await exchange(port, requestHead('POST', buckets, json, 2 * 1024 * 1024) + '{"name": "')
  t.equal(tooLarge.status, 400, 'a body over the 1 MiB limit is refused as before, from its Content-Length')
  t.match(tooLarge.body, '"code":1199')

  const length = 60_000
  const part = `{"name":"${'n'.repeat(40_000)}`
  const stalled = await stalledBody(port, requestHead('POST', buckets, json, length), part)
  const body = `{"name":"${'n'.repeat(30_000)}"}`
  const refused = await exchange(port, requestHead('POST', buckets, json, body.length) + body)
  t.equal(refused.status, 503, 'the second body would pass the budget')
  t.match(refused.body, '"code":10953')
  t.match(refused.head, /\r\nretry-after: 1\r\n/)
  t.notMatch(refused.head, /x-should-retry: false/)
  t.ok(refused.closed, 'the connection is closed rather than the rest of the body read')
  t.equal(bodyBudget.held, part.length, 'the refused body gave back what it took; the stalled one still holds its part')

  stalled.destroy()
  t.ok(await budgetHolds(held => held === 0), 'aborted: nothing held')

  const object = 'o'.repeat(200_000)
  const put = await exchange(port, requestHead('PUT', `${buckets}/photos/objects/big`, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, object.length) + object)
  t.equal(put.status, 200, 'an object PUT larger than the whole budget streams past it')

  const idle = await stalledBody(port, requestHead('POST', buckets, json, length), part)
  t.ok(await budgetHolds(held => held === 0, 12_000), 'timed out: nothing held')
  idle.destroy()
})
