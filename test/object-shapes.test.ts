/**
 * No object literal on a request path starts with a spread and goes on:
 * `{ ...a, b }`, `{ ...a, ...b }`. On Node 20 (V8 11.3), each such literal
 * gets a hidden class of its own, made anew every time: about 1 µs per
 * object instead of 30 ns, which cost a small GET an eighth of its rate.
 * Such objects are written out field by field (records.ts `withFields`), or
 * built with `Object.assign` onto a fresh literal.
 *
 * Checked in the engine, the stores and the doors that serve objects.
 * Exempt: bucket settings, merged once per change of a settings file, where
 * the spread keeps fields that a newer version wrote.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const checked = ['src/bucket', 'src/stores', 'src/http', 'src/s3']
const exempt = new Set(['src/bucket/settings.ts', 'src/bucket/registry.ts'])

/** Comments blanked out (a comment may show the pattern it warns about). */
function code (text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, m => m.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
}

/** Lines (1-based) where an object literal starts with a spread and has another member after it. */
export function leadingSpreads (text: string): number[] {
  const source = code(text)
  const lines: number[] = []
  // `{ ...x` with x running to the first top-level comma: names, calls, member access, one level of parentheses or braces.
  const pattern = /\{\s*\.\.\.(?:[^,{}()\n]|\([^()]*\)|\{[^{}]*\})+,\s*[\w'"[.]/g
  for (const match of source.matchAll(pattern)) lines.push(source.slice(0, match.index).split('\n').length)
  return lines
}

t.test('the check finds the pattern and only it', async t => {
  t.same(leadingSpreads('const a = { ...b, c }'), [1])
  t.same(leadingSpreads('x\nreturn { ...answer, body: outcome.body }'), [2])
  t.same(leadingSpreads('f({ ...g(h), i: 1 })'), [1])
  t.same(leadingSpreads('const p = { ...(n === undefined ? {} : { n }), ...rest }'), [1])
  t.same(leadingSpreads('const a = { b, ...c }'), [])
  t.same(leadingSpreads('const a = { ...c }'), [])
  t.same(leadingSpreads('f(...args, x)'), [])
  t.same(leadingSpreads('// not { ...code, here }\nconst a = 1'), [])
  t.same(leadingSpreads('/** not `{ ...record, ...changes }` */'), [])
})

t.test('request paths build their objects without a leading spread', async t => {
  for (const dir of checked) {
    const files = (await readdir(path.join(root, dir), { recursive: true })).filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    for (const file of files) {
      const name = path.join(dir, file)
      if (exempt.has(name)) continue
      const found = leadingSpreads(await readFile(path.join(root, name), 'utf8'))
      t.same(found, [], `${name}: an object literal starting with a spread, at line(s) ${found.join(', ')}`)
    }
  }
})
