import t from 'tap'
import { ReadCache } from '../../../src/stores/fs/read-cache.js'
import type { StoredObject } from '../../../src/bucket/port.js'

function row (key: string): { object: StoredObject, segments: Array<[string, number]> } {
  const object: StoredObject = {
    key, version: `v-${key}`, size: 1, etag: 'e', uploaded: 0, storageClass: 'Standard', checksums: {}, httpMetadata: {}, customMetadata: {}
  }
  return { object, segments: [[`blobs/${key}`, 1]] }
}

t.test('rows: kept while the data version holds, forgotten when it moves', async t => {
  const cache = new ReadCache()
  cache.validate(1)
  cache.setRow('a', row('a'))
  cache.setRow('missing', null)
  cache.validate(1)
  t.equal(cache.row('a')?.object.key, 'a', 'a row is served while nothing changed')
  t.equal(cache.row('missing'), null, 'a known miss is remembered')
  t.equal(cache.row('other'), undefined, 'an id never read is not cached')
  cache.validate(2)
  t.equal(cache.row('a'), undefined, 'another connection committed: rows are forgotten')
  t.equal(cache.row('missing'), undefined, 'misses too')
  cache.setRow('a', row('a'))
  cache.clearRows()
  t.equal(cache.row('a'), undefined, 'clearRows forgets after a write of our own')
  cache.setRow('a', row('a'))
  cache.forgetRow('a')
  t.equal(cache.row('a'), undefined, 'forgetRow forgets one id')
})

t.test('rows: the oldest is evicted at the limit', async t => {
  const cache = new ReadCache({ rows: 3 })
  for (const key of ['a', 'b', 'c', 'd']) cache.setRow(key, row(key))
  t.same(['a', 'b', 'c', 'd'].map(k => cache.row(k)?.object.key), [undefined, 'b', 'c', 'd'])
})

t.test('bodies: by version, within a byte budget, surviving row changes', async t => {
  const cache = new ReadCache({ bodyBytes: 10 })
  cache.setBody('v1', Buffer.from('12345'))
  cache.setBody('v2', Buffer.from('1234'))
  cache.validate('moved')
  cache.clearRows()
  t.equal(cache.body('v1')?.toString(), '12345', 'a body outlives row invalidation: versions are immutable')
  cache.setBody('v3', Buffer.from('123'))
  t.equal(cache.body('v1'), undefined, 'over budget: the oldest body goes')
  t.equal(cache.body('v2')?.toString(), '1234')
  t.equal(cache.body('v3')?.toString(), '123')
  cache.setBody('huge', Buffer.alloc(11))
  t.equal(cache.body('huge'), undefined, 'a body larger than the budget is not kept')
  t.equal(cache.body('v3')?.toString(), '123', 'and evicts nothing')
})
