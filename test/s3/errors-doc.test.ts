/**
 * The "Error codes of the S3 API" table of docs/errors.md and the S3 door's
 * table agree, in both directions, and every catalogue error of the binding
 * has a translation, documented beside the S3 code it answers with.
 */
import t from 'tap'
import { BucketErrors } from '../../src/bucket/index.js'
import { S3Errors, fromCatalogue } from '../../src/s3/errors.js'
import { docsSection } from '../docs.js'

t.test('docs/errors.md documents exactly the S3 codes the door answers with', async t => {
  const section = await docsSection('errors.md', '## Error codes of the S3 API')
  t.ok(section, 'the section exists')
  const documented = new Map<string, { status: number, catalogue: number[] }>()
  for (const m of section.matchAll(/^\| (\w+) \| (\d{3}) \| ([\d, ]*)\|$/gm)) {
    documented.set(m[1], { status: Number(m[2]), catalogue: m[3].split(',').map(s => s.trim()).filter(s => s !== '').map(Number).sort() })
  }
  const expected = new Map<string, { status: number, catalogue: number[] }>()
  for (const [code, def] of Object.entries(S3Errors)) expected.set(code, { status: def.status, catalogue: [] })
  for (const [name, code] of Object.entries(fromCatalogue)) expected.get(code)!.catalogue.push(BucketErrors[name as keyof typeof BucketErrors].code)
  for (const entry of expected.values()) entry.catalogue.sort()
  t.same(Object.fromEntries(documented), Object.fromEntries(expected))
  t.same(Object.keys(fromCatalogue).sort(), Object.keys(BucketErrors).sort(), 'every catalogue error is translated')
})
