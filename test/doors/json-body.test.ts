/** JSON request bodies: nesting bounded by one linear pass, by table; and deep nesting costs no more than a benign body. */
import t from 'tap'
import { MAX_JSON_DEPTH, parseJsonBody } from '../../src/doors/json-body.js'

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`

t.test('nesting deeper than MAX_JSON_DEPTH is a SyntaxError; strings do not nest', async t => {
  t.same(parseJsonBody('{"keys": ["a", "b"]}'), { keys: ['a', 'b'] })
  t.same(parseJsonBody(nested(MAX_JSON_DEPTH)), JSON.parse(nested(MAX_JSON_DEPTH)), `${MAX_JSON_DEPTH} levels are read`)
  const refused: string[] = [nested(MAX_JSON_DEPTH + 1), `{"a":${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`, '{"keys": [', '{"a": 1}}', '']
  for (const text of refused) t.throws(() => parseJsonBody(text), SyntaxError, text.slice(0, 40))
  const strings: Array<[string, unknown]> = [
    [`{"k": "${'['.repeat(1000)}"}`, { k: '['.repeat(1000) }],
    [`["\\"${'{'.repeat(100)}", "\\\\"]`, [`"${'{'.repeat(100)}`, '\\']],
    ['["\\\\", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]', ['\\', '['.repeat(37)]]
  ]
  for (const [text, value] of strings) t.same(parseJsonBody(text), value, text.slice(0, 40))
})

t.test('a deeply nested body is refused in time linear in its size', async t => {
  const size = 2 * 1024 * 1024
  const benign = JSON.stringify({ keys: Array.from({ length: size / 20 }, (_, i) => `photos/${i}`.padEnd(16, 'x')) })
  const time = (text: string): number => {
    let best = Infinity
    for (let r = 0; r < 3; r++) {
      const start = performance.now()
      try { parseJsonBody(text) } catch {}
      best = Math.min(best, performance.now() - start)
    }
    return best
  }
  const baseline = time(benign)
  for (const [name, body] of [['arrays', nested(benign.length / 2)], ['objects', `${'{"a":'.repeat(benign.length / 6)}1${'}'.repeat(benign.length / 6)}`]] as const) {
    const taken = time(body)
    t.ok(taken <= 10 * baseline + 50, `${name}: ${taken.toFixed(1)} ms, benign ${baseline.toFixed(1)} ms`)
  }
})
