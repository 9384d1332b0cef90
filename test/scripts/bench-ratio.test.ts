/**
 * The benchmarks' arithmetic (scripts/bench/ratio.ts): a ratio prints
 * rounded down, so it never reads as a goal it missed, and a median of an
 * even number of rounds is the mean of the middle two, never the better one.
 */
import t from 'tap'
import { median, ratioText } from '../../scripts/bench/ratio.js'

t.test('a ratio is rounded down', async t => {
  t.equal(ratioText(497, 1000), '0.49', 'not the 0.50 a goal asks for')
  t.equal(ratioText(29, 100), '0.29', 'binary fractions do not lose a hundredth')
  t.equal(ratioText(3, 2, 1), '1.5')
})

t.test('the median of rounds', async t => {
  t.equal(median([3]), 3)
  t.equal(median([5, 1, 3]), 3, 'the middle of an odd count')
  t.equal(median([0.97, 1.14]), 1.055, 'two rounds: their mean, not the better')
  t.equal(median([4, 1, 3, 2]), 2.5)
  const values = [2, 1]
  median(values)
  t.same(values, [2, 1], 'the rounds are left as they were')
})
