import t from 'tap'
import { parseRangeHeader, resolveRange, validateRange } from '../../src/bucket/range.js'

t.test('parseRangeHeader', async t => {
  const table: Array<[string | null, unknown]> = [
    ['bytes=0-9', { offset: 0, length: 10 }],
    ['bytes=5-', { offset: 5 }],
    ['bytes=-3', { suffix: 3 }],
    ['bytes = 2 - 4', { offset: 2, length: 3 }],
    ['BYTES=1-1', { offset: 1, length: 1 }],
    ['bytes=9-2', null], // last before first
    ['bytes=-', null],
    ['bytes=0-1,4-5', null], // several ranges
    ['items=0-1', null],
    ['bytes=a-b', null],
    ['', null],
    [null, null]
  ]
  for (const [header, expected] of table) t.same(parseRangeHeader(header), expected, String(header))
})

t.test('validateRange', async t => {
  t.same(validateRange('get', { offset: 1, length: 2 }), { offset: 1, length: 2 })
  t.same(validateRange('get', { offset: 3 }), { offset: 3 })
  t.same(validateRange('get', { length: 3 }), { length: 3 })
  t.same(validateRange('get', { suffix: 4 }), { suffix: 4 })
  t.equal(validateRange('get', {}), null, 'an empty range asks for the whole object')
  const bad: Array<[unknown, ErrorConstructor]> = [
    [{ offset: -1 }, RangeError],
    [{ length: -1 }, RangeError],
    [{ suffix: -2 }, RangeError],
    [{ suffix: 2, offset: 1 }, TypeError],
    [{ suffix: 2, length: 1 }, TypeError],
    [{ offset: 1.7 }, RangeError],
    [{ length: 0.5 }, RangeError],
    [{ suffix: 2.25 }, RangeError],
    [{ offset: 'x' }, TypeError],
    ['bytes=0-1', TypeError]
  ]
  for (const [range, type] of bad) t.throws(() => validateRange('get', range), type, JSON.stringify(range))
})

t.test('resolveRange', async t => {
  const table: Array<[object, number, unknown]> = [
    [{ offset: 0 }, 10, { offset: 0, length: 10 }],
    [{ offset: 4, length: 3 }, 10, { offset: 4, length: 3 }],
    [{ offset: 4, length: 100 }, 10, { offset: 4, length: 6 }], // clamped
    [{ length: 4 }, 10, { offset: 0, length: 4 }],
    [{ suffix: 3 }, 10, { offset: 7, length: 3 }],
    [{ suffix: 30 }, 10, { offset: 0, length: 10 }], // clamped
    [{ offset: 9 }, 10, { offset: 9, length: 1 }]
  ]
  for (const [range, size, expected] of table) t.same(resolveRange(range as never, size), expected, JSON.stringify(range))
  const unsatisfiable: Array<[object, number]> = [
    [{ offset: 10 }, 10], [{ offset: 11, length: 1 }, 10], [{ offset: 0, length: 0 }, 10],
    [{ suffix: 0 }, 10], [{ offset: 0 }, 0], [{ suffix: 1 }, 0]
  ]
  for (const [range, size] of unsatisfiable) {
    t.throws(() => resolveRange(range as never, size), { code: 10039 }, `${JSON.stringify(range)} of ${size}`)
  }
})
