/**
 * The HTTP routes' JSON bodies draw on the process's body budget: a bulk
 * delete whose chunk would pass it is answered 503 (50300) with
 * Retry-After before more is read, and the budget is back to zero after
 * every kind of end (answered, refused, malformed, aborted, timed out). An
 * object PUT streams and takes nothing from it.
 */
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { BODY_BUDGET_BYTES, bodyBudget } from '../../src/doors/body-budget.js'
import { auth, gateway, token } from './gateway-fixture.js'
import { budgetHolds, exchange, requestHead, stalledBody } from '../doors/stalled-bodies.js'

const budget = 64 * 1024
const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }

t.test('a bulk delete past the budget is 503 50300 with Retry-After; the budget returns to zero after every end', async t => {
  bodyBudget.resize(budget)
  t.teardown(() => { bodyBudget.resize(BODY_BUDGET_BYTES) })
  // Long enough for a loaded machine's pauses not to cut the stalled body mid-test; its cut is the last step.
  const { app } = await gateway(t, { idleTimeout: 4 })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  await app.inject({ method: 'PUT', url: '/photos/a', headers: auth, payload: 'a' })

  const keys = JSON.stringify({ keys: ['a'] })
  const answered = await exchange(port, requestHead('POST', '/photos?delete', json, keys.length) + keys)
  t.equal(answered.status, 200, 'a bulk delete within the budget')
  t.equal(bodyBudget.held, 0, 'answered: nothing held')

  const malformed = await exchange(port, requestHead('POST', '/photos?delete', json, 10) + '{"keys": [')
  t.equal(malformed.status, 400)
  t.equal(bodyBudget.held, 0, 'malformed: nothing held')

  const length = 60_000
  const part = `{"keys":["${'k'.repeat(40_000)}`
  const stalled = await stalledBody(port, requestHead('POST', '/photos?delete', json, length), part)
  const body = `{"keys":["${'k'.repeat(30_000 - 12)}"]}`
  const refused = await exchange(port, requestHead('POST', '/photos?delete', json, body.length) + body)
  t.equal(refused.status, 503, 'the second body would pass the budget')
  t.equal((JSON.parse(refused.body) as { errors: Array<{ code: number }> }).errors[0].code, 50300)
  t.match(refused.head, /\r\nretry-after: 1\r\n/)
  t.match(refused.head, /\r\nconnection: close\r\n/)
  t.ok(refused.closed, 'the connection is closed rather than the rest of the body read')
  t.equal(bodyBudget.held, part.length, 'the refused body gave back what it took; the stalled one still holds its part')

  stalled.destroy()
  t.ok(await budgetHolds(held => held === 0), 'aborted: nothing held')

  const object = 'o'.repeat(200_000)
  const put = await exchange(port, requestHead('PUT', '/photos/big', { authorization: `Bearer ${token}` }, object.length) + object)
  t.equal(put.status, 200, 'an object PUT larger than the whole budget streams past it')

  const idle = await stalledBody(port, requestHead('POST', '/photos?delete', json, length), part)
  t.ok(await budgetHolds(held => held === 0, 12_000), 'timed out (--idle-timeout): nothing held')
  idle.destroy()
})

t.test('a form\'s field values draw on the budget: past it, 503 50300 and nothing stored; the budget returns to zero', async t => {
  bodyBudget.resize(budget)
  t.teardown(() => { bodyBudget.resize(BODY_BUDGET_BYTES) })
  // Long enough for a loaded machine's pauses not to cut the stalled body mid-test; its cut is the last step.
  const { app } = await gateway(t, { idleTimeout: 4 })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  const boundary = 'budgetboundary'
  const form = (fieldBytes: number, key: string): string =>
    `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${'n'.repeat(fieldBytes)}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\n${key}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`
  const headers = { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }

  const fits = form(1000, 'fits')
  t.equal((await exchange(port, requestHead('POST', '/photos', headers, fits.length) + fits)).status, 200, 'a form within the budget')
  t.equal(bodyBudget.held, 0, 'answered: nothing held')

  // Most of the budget held by a stalled JSON body, the form's 40,000-byte field finds no room.
  const length = 60_000
  const part = `{"keys":["${'k'.repeat(40_000)}`
  const stalled = await stalledBody(port, requestHead('POST', '/photos?delete', json, length), part)
  const over = form(40_000, 'over')
  const refused = await exchange(port, requestHead('POST', '/photos', headers, over.length) + over)
  t.equal(refused.status, 503)
  t.equal((JSON.parse(refused.body) as { errors: Array<{ code: number }> }).errors[0].code, 50300)
  t.match(refused.head, /\r\nretry-after: 1\r\n/)
  t.equal((await app.inject({ method: 'GET', url: '/photos/over', headers: auth })).statusCode, 404, 'nothing stored')
  t.equal(bodyBudget.held, part.length, 'the refused form gave back what it took')
  stalled.destroy()
  t.ok(await budgetHolds(held => held === 0), 'nothing held once the stalled body is gone')
})

