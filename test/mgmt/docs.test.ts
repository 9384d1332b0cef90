/**
 * docs/management-api.md against the management API: every method of every
 * row of its endpoint table is a route (answers something other than 7000,
 * "No route for that URI"), and the wrangler section lists the lock
 * commands test/mgmt/wrangler.test.ts runs rather than among those that
 * answer 7000.
 */
import t from 'tap'
import { docsSection } from '../docs.js'
import { accountId, buildApp, call } from './helpers.js'

const placeholders: Record<string, string> = {
  account_id: accountId, zone_id: 'f'.repeat(32), id: 'e'.repeat(32), name: 'docs-bucket', domain: 'cdn.example.test', key: 'a/b.txt'
}

t.test('every method and path of the endpoint table is a route', async t => {
  const section = await docsSection('management-api.md', '## Endpoints')
  const rows = section.split('\n').filter(line => /^\| [A-Z, ]+ \| `/.test(line))
  t.ok(rows.length > 20, 'the table is read')
  const { app } = await buildApp(t)
  await call(app, 'POST', `/accounts/${accountId}/r2/buckets`, { name: 'docs-bucket' })
  for (const row of rows) {
    const [, methods, template] = /^\| ([A-Z, ]+) \| `([^`]+)`/.exec(row) as RegExpExecArray
    // `[/{id}]` is the path with and without the segment.
    const paths = template.includes('[') ? [template.replace(/\[.*\]/, ''), template.replace(/[[\]]/g, '')] : [template]
    for (const method of methods.split(',').map(m => m.trim())) {
      for (const path of paths) {
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) => placeholders[name] ?? name)
        const answer = await call(app, method as 'GET', url, ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined)
        t.not(answer.body?.errors?.[0]?.code, 7000, `${method} ${path}`)
      }
    }
  }
})

t.test('the bucket locks rows name the lock endpoint and the wrangler commands the suite runs', async t => {
  const endpoints = await docsSection('management-api.md', '## Endpoints')
  t.match(endpoints, /\| GET, PUT \| `\/accounts\/\{account_id\}\/r2\/buckets\/\{name\}\/lock` \|/)
  const wrangler = await docsSection('management-api.md', '## wrangler')
  t.match(wrangler, /`r2 bucket lock add\|list\|remove\|set`/)
  t.notMatch(wrangler, /not emulate \([^)]*bucket locks/, 'bucket locks are not among what answers 7000')
})
