/** The README's table of binding errors and the catalogue say the same thing. */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { BucketErrors } from '../../src/bucket/errors.js'

const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'README.md')

t.test('README error table matches the catalogue', async t => {
  const text = await readFile(readme, 'utf8')
  const section = text.slice(text.indexOf('## The bucket library'), text.indexOf('### The sweeper'))
  const documented = new Map<string, { code: number, status: number }>()
  for (const m of section.matchAll(/^\| (\d+) \| (\d+) \| (\w+) \|/gm)) {
    documented.set(m[3], { code: Number(m[1]), status: Number(m[2]) })
  }
  const catalogue = new Map(Object.entries(BucketErrors).map(([name, def]) => [name, { code: def.code, status: def.status }]))
  t.same(Object.fromEntries(documented), Object.fromEntries(catalogue))
})
