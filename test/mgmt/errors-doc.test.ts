import t from 'tap'
import { BucketErrors } from '../../src/bucket/index.js'
import { answeredAsCatalogued, ManagementErrors } from '../../src/mgmt/errors.js'
import { docsSection } from '../docs.js'

t.test("docs/errors.md's table of the management API and the error table list the same codes and statuses", async t => {
  const section = await docsSection('errors.md', '## Error codes of the management API')
  t.ok(section, 'docs/errors.md has a section for the management API')
  const documented = new Map<number, number>()
  for (const match of section.matchAll(/^\| (\d+) \| (\d{3}) \|/gm)) documented.set(Number(match[1]), Number(match[2]))
  // The API's own table, and the errors of the engine's catalogue it answers as they are (storage failures, a copy to retry).
  const table = new Map([...Object.values(ManagementErrors), ...answeredAsCatalogued.map(name => BucketErrors[name])].map(d => [d.code as number, d.status as number]))
  t.same([...documented.keys()].sort(), [...table.keys()].sort())
  for (const [code, status] of table) t.equal(documented.get(code), status, `status of ${code}`)
})
