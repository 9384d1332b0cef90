/** The table of binding errors in docs/errors.md and the catalogue say the same thing. */
import t from 'tap'
import { BucketErrors } from '../../src/bucket/errors.js'
import { docsSection } from '../docs.js'

t.test('the error table of docs/errors.md matches the catalogue', async t => {
  const section = await docsSection('errors.md', '## Errors of the binding (the catalogue)')
  t.ok(section, 'the section exists')
  const documented = new Map<string, { code: number, status: number }>()
  for (const m of section.matchAll(/^\| (\d+) \| (\d+) \| (\w+) \|/gm)) {
    documented.set(m[3], { code: Number(m[1]), status: Number(m[2]) })
  }
  const catalogue = new Map(Object.entries(BucketErrors).map(([name, def]) => [name, { code: def.code, status: def.status }]))
  t.same(Object.fromEntries(documented), Object.fromEntries(catalogue))
})
