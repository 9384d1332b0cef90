/**
 * A list with `include` stops at a bounded size, the way the hosted service
 * caps one list call, so that many slow readers of big pages cannot hold
 * gigabytes; paging on `truncated` and `cursor` still sees every object once.
 */
import t from 'tap'
import { auth, gateway } from './gateway-fixture.js'

interface Page {
  result: Array<{ key: string, customMetadata?: Record<string, string> }>
  result_info: { cursor: string | null, truncated: boolean }
}

t.test('pages with metadata are capped in bytes; every object is listed once', async t => {
  const { app, registry } = await gateway(t)
  const bucket = await registry.open('photos')
  if (bucket === null) throw new Error('no bucket')
  const metadata = { note: 'm'.repeat(2000) }
  const keys = Array.from({ length: 1000 }, (_, i) => `obj/${String(i).padStart(4, '0')}`)
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(keys.slice(i, i + 50).map(async key => await bucket.put(key, 'x', { customMetadata: metadata })))
  }

  const first = await app.inject({ method: 'GET', url: '/photos?include=customMetadata,httpMetadata&limit=1000', headers: auth })
  const page = first.json() as Page
  t.ok(page.result_info.truncated, 'truncated')
  t.ok(page.result.length > 0 && page.result.length < 1000, `fewer than the limit (${page.result.length})`)
  t.ok(first.body.length < 1024 * 1024, `the answer stays under 1 MiB (${first.body.length} bytes; uncapped it would be over 2 MB)`)
  t.equal(page.result[0].customMetadata?.note, metadata.note, 'with the metadata')

  const seen: string[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 100; pages++) {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
    const res = await app.inject({ method: 'GET', url: `/photos?include=customMetadata&limit=1000${query}`, headers: auth })
    const listed = res.json() as Page
    seen.push(...listed.result.map(o => o.key))
    if (!listed.result_info.truncated) break
    cursor = listed.result_info.cursor
  }
  t.same(seen, keys, 'every key once, in order')

  const plain = (await app.inject({ method: 'GET', url: '/photos?limit=1000', headers: auth })).json() as Page
  t.equal(plain.result.length, 1000, 'without include, a page holds up to the limit')
  t.notOk(plain.result_info.truncated)
})
