/**
 * How a list page is assembled from a store's ordered ids, once for every
 * store: objects and delimited prefixes in UTF-8 byte order, at most `limit`
 * entries, and whether more remain.
 *
 * The algorithm is synchronous so that a store can run a whole page inside
 * one read transaction. With a delimiter, every delimited prefix is found
 * with one id-only seek and skipped past (`prefix + 0xFF`), so a page of
 * 1,000 prefixes costs 1,000 index seeks, not the reading of every key under
 * them.
 */
import { pastPrefix } from './keys.js'
import type { ListEntry, ListPage, ListQuery, StoredObject } from './records.js'

/** What a store offers the page assembly: ordered seeks over the ids with the query's prefix. */
export interface PageSource {
  /** The first id above `after` (all ids when undefined), or undefined. */
  nextId (after: Uint8Array | undefined): string | undefined
  /** Up to `limit` records above `after`, in id order. */
  records (after: Uint8Array | undefined, limit: number): Array<{ id: string, object: StoredObject }>
}

/** Records read at a time while a delimited listing meets objects. */
const DELIMITED_BATCH = 64

export function assembleListPage (source: PageSource, query: ListQuery): ListPage {
  const { prefix, delimiter, limit } = query
  const entries: ListEntry[] = []
  let after = query.after
  const delimitedAt = (id: string): number => delimiter === undefined ? -1 : id.indexOf(delimiter, prefix.length)
  for (;;) {
    if (delimiter !== undefined) {
      const id = source.nextId(after)
      if (id === undefined) return { entries, truncated: false }
      const cut = delimitedAt(id)
      if (cut >= 0) {
        if (entries.length === limit) return { entries, truncated: true }
        const common = id.slice(0, cut + delimiter.length)
        entries.push({ prefix: common })
        after = pastPrefix(common)
        continue
      }
    }
    const want = limit - entries.length + 1
    const asked = delimiter === undefined ? want : Math.min(want, DELIMITED_BATCH)
    const batch = source.records(after, asked)
    let metPrefix = false
    for (const { id, object } of batch) {
      if (delimitedAt(id) >= 0) {
        metPrefix = true // the next seek turns it into a delimited prefix
        break
      }
      if (entries.length === limit) return { entries, truncated: true }
      entries.push({ id, object })
      after = Buffer.from(id, 'utf8')
    }
    if (!metPrefix && batch.length < asked) return { entries, truncated: false }
  }
}
