/**
 * The README's "Error codes of the HTTP door" table and the door's tables
 * agree: every code the door can answer with is documented, and every
 * documented code exists, with the same status.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BucketErrors } from '../../src/bucket/index.js'
import { DoorErrors } from '../../src/http/errors.js'

const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../README.md')

t.test('the README documents exactly the codes the HTTP door answers with', async t => {
  const text = await readFile(readme, 'utf8')
  const section = text.split('### Error codes of the HTTP door')[1]?.split(/\n#{2,3} /)[0]
  t.ok(section, 'the section exists')
  const documented = new Map<number, number>()
  for (const match of (section ?? '').matchAll(/^\| (\d+) \| (\d{3}) \|/gm)) documented.set(Number(match[1]), Number(match[2]))

  const answered = new Map<number, number>()
  for (const def of [...Object.values(BucketErrors), ...Object.values(DoorErrors)]) answered.set(def.code, def.status)

  for (const [code, status] of answered) t.equal(documented.get(code), status, `code ${code} documented with status ${status}`)
  for (const code of documented.keys()) t.ok(answered.has(code), `documented code ${code} exists`)
})
