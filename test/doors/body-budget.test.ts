/** The process's budget for request bodies held in memory: taken chunk by chunk, refused past its limit, given back whole. */
import t from 'tap'
import { BODY_BUDGET_BYTES, BodyBudget, bodyBudget } from '../../src/doors/body-budget.js'

t.test('the process has one budget of BODY_BUDGET_BYTES, empty at rest', async t => {
  t.equal(bodyBudget.limit, BODY_BUDGET_BYTES)
  t.equal(BODY_BUDGET_BYTES, 64 * 1024 * 1024)
  t.equal(bodyBudget.held, 0)
})

t.test('holds take chunk by chunk; a chunk past the limit is refused and takes nothing', async t => {
  const budget = new BodyBudget(100)
  const a = budget.hold()
  const b = budget.hold()
  t.ok(a.take(60))
  t.ok(b.take(40), 'up to the limit exactly')
  t.equal(budget.held, 100)
  t.notOk(b.take(1), 'one byte more is refused')
  t.equal(budget.held, 100, 'a refused chunk takes nothing')
  a.release()
  t.equal(budget.held, 40, 'a release gives back what that hold took, and only that')
  t.ok(b.take(60))
  b.release()
  t.equal(budget.held, 0)
})

t.test('a release is given once: releasing again (a finally after an error handler) gives nothing twice', async t => {
  const budget = new BodyBudget(100)
  const a = budget.hold()
  const b = budget.hold()
  a.take(30)
  b.take(30)
  a.release()
  a.release()
  t.equal(budget.held, 30)
  t.ok(a.take(10), 'a released hold may take again (it then owns only the new bytes)')
  a.release()
  b.release()
  t.equal(budget.held, 0)
})

t.test('a refused hold released gives back what it took before the refusal', async t => {
  const budget = new BodyBudget(10)
  const hold = budget.hold()
  t.ok(hold.take(8))
  t.notOk(hold.take(8))
  hold.release()
  t.equal(budget.held, 0)
})

t.test('resize: a lower limit refuses the next chunks; what is held stays held until released', async t => {
  const budget = new BodyBudget(100)
  const hold = budget.hold()
  hold.take(80)
  budget.resize(50)
  t.equal(budget.limit, 50)
  t.notOk(hold.take(1))
  t.equal(budget.held, 80)
  hold.release()
  t.equal(budget.held, 0)
  t.ok(budget.hold().take(50))
})
