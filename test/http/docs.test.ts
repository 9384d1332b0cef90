/**
 * The "Error codes of the HTTP door" table of docs/errors.md and the door's
 * tables agree: every code the door can answer with is documented, and every
 * documented code exists, with the same status.
 */
import t from 'tap'
import { BucketErrors } from '../../src/bucket/index.js'
import { DoorErrors } from '../../src/http/errors.js'
import { docsSection } from '../docs.js'

t.test('docs/errors.md documents exactly the codes the HTTP door answers with', async t => {
  const section = await docsSection('errors.md', '## Error codes of the HTTP door')
  t.ok(section, 'the section exists')
  const documented = new Map<number, number>()
  for (const match of section.matchAll(/^\| (\d+) \| (\d{3}) \|/gm)) documented.set(Number(match[1]), Number(match[2]))

  const answered = new Map<number, number>()
  for (const def of [...Object.values(BucketErrors), ...Object.values(DoorErrors)]) answered.set(def.code, def.status)

  for (const [code, status] of answered) t.equal(documented.get(code), status, `code ${code} documented with status ${status}`)
  for (const code of documented.keys()) t.ok(answered.has(code), `documented code ${code} exists`)
})
