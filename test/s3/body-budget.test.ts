/**
 * The S3 door's XML bodies draw on the process's body budget: a
 * DeleteObjects whose chunk would pass it is answered 503 SlowDown, as S3
 * asks a client to slow down, before more is read, and the budget is back
 * to zero after every kind of end (answered, refused, malformed, aborted,
 * timed out). An object PUT streams and takes nothing from it.
 */
import t from 'tap'
import { BODY_BUDGET_BYTES, bodyBudget } from '../../src/doors/body-budget.js'
import { s3Server } from './fixture.js'
import { budgetHolds, exchange, requestHead, stalledBody } from '../doors/stalled-bodies.js'

// Room for one of the bodies below (each over the 64 KiB Node reads and drops before closing: doors/cut-off.ts), not two.
const budget = 128 * 1024
const xml = { 'content-type': 'application/xml' }

t.test('a DeleteObjects past the budget is 503 SlowDown; the budget returns to zero after every end', async t => {
  bodyBudget.resize(budget)
  t.teardown(() => { bodyBudget.resize(BODY_BUDGET_BYTES) })
  const server = await s3Server(t)
  const { port } = server
  // The server's socket timeout (the serve command's --idle-timeout does the same, answering first): a stalled body is cut.
  server.app.server.setTimeout(4000)

  const document = '<Delete><Object><Key>a</Key></Object></Delete>'
  const answered = await exchange(port, requestHead('POST', '/photos?delete', xml, document.length) + document)
  t.equal(answered.status, 200, 'a DeleteObjects within the budget')
  t.equal(bodyBudget.held, 0, 'answered: nothing held')

  const malformed = await exchange(port, requestHead('POST', '/photos?delete', xml, 9) + '<Delete><')
  t.equal(malformed.status, 400)
  t.equal(bodyBudget.held, 0, 'malformed: nothing held')

  const length = 100_000
  const part = `<Delete><Object><Key>${'k'.repeat(70_000)}`
  const stalled = await stalledBody(port, requestHead('POST', '/photos?delete', xml, length), part)
  const body = `<Delete><Object><Key>${'k'.repeat(70_000)}</Key></Object></Delete>`
  t.ok(body.length < budget && body.length + part.length > budget, 'alone within the budget, with the stalled part past it')
  const refused = await exchange(port, requestHead('POST', '/photos?delete', xml, body.length) + body)
  t.equal(refused.status, 503, 'the second body would pass the budget')
  t.match(refused.body, '<Code>SlowDown</Code>')
  t.match(refused.body, '<Message>Please reduce your request rate.</Message>')
  t.match(refused.head, /\r\nretry-after: 1\r\n/)
  t.ok(refused.closed, 'the connection is closed rather than the rest of the body read')
  t.equal(bodyBudget.held, part.length, 'the refused body gave back what it took; the stalled one still holds its part')

  stalled.destroy()
  t.ok(await budgetHolds(held => held === 0), 'aborted: nothing held')

  const object = 'o'.repeat(200_000)
  const put = await exchange(port, requestHead('PUT', '/photos/big', {}, object.length) + object)
  t.equal(put.status, 200, 'an object PUT larger than the whole budget streams past it')

  const idle = await stalledBody(port, requestHead('POST', '/photos?delete', xml, length), part)
  t.ok(await budgetHolds(held => held === 0, 12_000), 'timed out: nothing held')
  idle.destroy()
})
