/**
 * Every list of the management API reads its query the same way: `page` an
 * integer from 1 to 1,000,000, `per_page` a positive integer clamped into
 * the list's range, a single-valued parameter given twice refused (1198),
 * and a listing cursor that the listing never returned refused (10040).
 */
import t from 'tap'
import { accountId, buildApp, call, createZone } from './helpers.js'

const buckets = `/accounts/${accountId}/r2/buckets`

t.test('paged lists agree on page and per_page', async t => {
  const { app } = await buildApp(t)
  const zone = await createZone(app, 'example.test')
  await call(app, 'POST', `/zones/${zone.id}/dns_records`, { type: 'A', name: 'www', content: '192.0.2.1', ttl: 1 })
  const queue = (await call(app, 'POST', `/accounts/${accountId}/queues`, { queue_name: 'paged' })).body.result.queue_id as string
  const lists: Array<[string, number]> = [
    ['/user/invites', 50],
    [`/accounts/${accountId}/queues/${queue}/consumers`, 1000],
    ['/zones', 50],
    [`/zones/${zone.id}/dns_records`, 5000],
    [`/zones/${zone.id}/ssl/certificate_packs`, 50],
    ['/accounts', 50],
    ['/memberships', 50],
    ['/user/tokens', 50]
  ]
  for (const [url, max] of lists) {
    const far = await call(app, 'GET', `${url}?page=1000000`)
    t.equal(far.status, 200, `${url}: the last page answered`)
    t.same(far.body.result, [], `${url}: past the end, an empty page`)
    t.equal(far.body.result_info.page, 1000000, `${url}: the page echoed as it was asked`)
    for (const page of ['99999999999999999999', '1000001', '0', '-1', '1.5', '1e3', 'x']) {
      const res = await call(app, 'GET', `${url}?page=${page}`)
      t.same([res.status, res.body.errors[0]?.code], [400, 1198], `${url}: page=${page}`)
    }
    for (const perPage of ['0', '-5', '2.5', 'all']) {
      const res = await call(app, 'GET', `${url}?per_page=${perPage}`)
      t.same([res.status, res.body.errors[0]?.code], [400, 1198], `${url}: per_page=${perPage}`)
    }
    const large = await call(app, 'GET', `${url}?per_page=99999999999999999999`)
    t.equal(large.body.result_info.per_page, max, `${url}: a large per_page is clamped to ${max}`)
    for (const repeated of ['per_page=5&per_page=50', 'page=1&page=2', 'direction=asc&direction=desc', 'match=all&match=any']) {
      const res = await call(app, 'GET', `${url}?${repeated}`)
      t.same([res.status, res.body.errors[0]?.code], [400, 1198], `${url}: ${repeated}`)
    }
  }
  t.same((await call(app, 'GET', '/zones?order=name&order=status')).body.errors[0].code, 1198, 'a repeated order')
  t.same((await call(app, 'GET', `/zones/${zone.id}/dns_records?proxied=true&proxied=false`)).body.errors[0].code, 1198, 'a repeated boolean filter')
  t.same((await call(app, 'GET', `/zones/${zone.id}/dns_records?search=www&search=mail`)).body.errors[0].code, 1198, 'a repeated search')
  t.same((await call(app, 'GET', `/zones/${zone.id}/ssl/certificate_packs?status=all&status=active`)).body.errors[0].code, 1198, 'a repeated status')
  const types = await call(app, 'GET', `/zones/${zone.id}/dns_records?type=A&type=AAAA`)
  t.equal(types.body.result.length, 1, 'a repeatable filter still takes several values')
})

t.test('the bucket list: per_page, repeated parameters and cursors', async t => {
  const { app } = await buildApp(t)
  for (const name of ['alpha', 'beta', 'gamma']) await call(app, 'POST', buckets, { name })
  for (const perPage of ['0', '-1', '2.5', 'x']) {
    const res = await call(app, 'GET', `${buckets}?per_page=${perPage}`)
    t.same([res.status, res.body.errors[0]?.code], [400, 1198], `per_page=${perPage}`)
  }
  // A cursor list reads `page` as every list does: a malformed one is refused, not ignored.
  for (const page of ['0', '1000001', '1e3']) {
    const res = await call(app, 'GET', `${buckets}?page=${page}`)
    t.same([res.status, res.body.errors[0]?.code], [400, 1198], `page=${page}`)
  }
  t.equal((await call(app, 'GET', `${buckets}?per_page=5000`)).body.result_info.per_page, 1000, 'a large per_page is clamped to 1000')
  for (const repeated of ['per_page=1&per_page=2', 'cursor=YWxwaGE&cursor=YmV0YQ', 'direction=asc&direction=desc', 'start_after=a&start_after=b', 'name_contains=a&name_contains=b']) {
    const res = await call(app, 'GET', `${buckets}?${repeated}`)
    t.same([res.status, res.body.errors[0]?.code], [400, 1198], repeated)
  }
  for (const cursor of ['garbage', 'Li4vLi4veA', 'QUxQSEE', 'YWxwaGE=', '%2F%2F%2F']) {
    const res = await call(app, 'GET', `${buckets}?cursor=${cursor}`)
    t.same([res.status, res.body.errors[0]?.code], [400, 10040], `cursor=${cursor}`)
  }
  const first = await call(app, 'GET', `${buckets}?per_page=1`)
  const next = await call(app, 'GET', `${buckets}?per_page=1&cursor=${first.body.result_info.cursor as string}`)
  t.same(next.body.result.buckets.map((b: any) => b.name), ['beta'], 'a cursor the listing returned still pages')
  await call(app, 'DELETE', `${buckets}/alpha`)
  const afterDelete = await call(app, 'GET', `${buckets}?per_page=1&cursor=${first.body.result_info.cursor as string}`)
  t.same(afterDelete.body.result.buckets.map((b: any) => b.name), ['beta'], 'even after the bucket it names is gone')
})

t.test('the object list: per_page clamped into 1–1000, repeated parameters refused', async t => {
  const { app, registry } = await buildApp(t)
  await call(app, 'POST', buckets, { name: 'things' })
  const bucket = await registry.open('things')
  await bucket!.put('a', 'a')
  const url = `${buckets}/things/objects`
  for (const query of ['per_page=0', 'per_page=-1', 'per_page=2.5', 'per_page=x', 'page=0', 'page=1e3']) {
    const res = await call(app, 'GET', `${url}?${query}`)
    t.same([res.status, res.body.errors[0]?.code], [400, 1198], query)
  }
  const large = await call(app, 'GET', `${url}?per_page=1001`)
  t.equal(large.status, 200)
  t.equal(large.body.result_info.per_page, 1000, 'per_page=1001 is clamped to 1000')
  t.equal((await call(app, 'GET', `${url}?per_page=1`)).body.result_info.per_page, 1)
  for (const repeated of ['per_page=1&per_page=2', 'prefix=a&prefix=b', 'delimiter=/&delimiter=-', 'cursor=x&cursor=y', 'start_after=a&start_after=b']) {
    const res = await call(app, 'GET', `${url}?${repeated}`)
    t.same([res.status, res.body.errors[0]?.code], [400, 1198], repeated)
  }
  t.equal((await call(app, 'GET', `${url}?cursor=garbage`)).body.errors[0].code, 10040, 'a cursor the listing never returned')
})

t.test('the token list pages, 20 by default, in either direction', async t => {
  const { app } = await buildApp(t)
  const made: string[] = []
  for (let i = 0; i < 23; i++) made.push((await call(app, 'POST', '/user/tokens', { name: `t${i}`, permission: 'object-read-only' })).body.result.id)
  const first = await call(app, 'GET', '/user/tokens')
  t.equal(first.body.result.length, 20)
  t.match(first.body.result_info, { page: 1, per_page: 20, count: 20, total_count: 23, total_pages: 2 })
  const second = await call(app, 'GET', '/user/tokens?page=2')
  t.same([...first.body.result, ...second.body.result].map((token: { id: string }) => token.id), made, 'oldest first, every token once')
  const newest = await call(app, 'GET', '/user/tokens?per_page=5&direction=desc')
  t.same(newest.body.result.map((token: { id: string }) => token.id), made.slice(-5).reverse(), 'newest first')
  t.equal((await call(app, 'GET', '/user/tokens?per_page=1')).body.result_info.per_page, 5, 'at least 5 a page')
})
