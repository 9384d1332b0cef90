import { readFileSync } from 'node:fs'
import t from 'tap'
import { BucketErrors, storageFailureNames } from '../../src/bucket/index.js'
import { ManagementErrors } from '../../src/mgmt/errors.js'

t.test("the README's error table and the error table list the same codes and statuses", async t => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8')
  const section = readme.split(/^## /m).find(s => s.startsWith('Management API'))
  t.ok(section, 'README has a Management API section')
  const documented = new Map<number, number>()
  for (const match of (section ?? '').matchAll(/^\| (\d+) \| (\d{3}) \|/gm)) documented.set(Number(match[1]), Number(match[2]))
  // The API's own table, and the storage failures of the engine's catalogue, which it answers as they are.
  const table = new Map([...Object.values(ManagementErrors), ...storageFailureNames.map(name => BucketErrors[name])].map(d => [d.code as number, d.status as number]))
  t.same([...documented.keys()].sort(), [...table.keys()].sort())
  for (const [code, status] of table) t.equal(documented.get(code), status, `status of ${code}`)
})
