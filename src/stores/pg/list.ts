/**
 * List pages of the PostgreSQL store: the page assembly of
 * src/bucket/list-page.ts (same entries, same truncation), over seeks that
 * are queries to the catalog and so asynchronous. A page with a delimiter
 * takes several seeks; they run in one read-only REPEATABLE READ
 * transaction, so the page is one snapshot, as on SQLite.
 */
import type { ListEntry, ListPage, ListQuery, StoredObject } from '../../bucket/port.js'

/** Ordered seeks over the ids with the query's prefix (PageSource of list-page.ts, awaited). */
export interface AsyncPageSource {
  nextId (after: Uint8Array | undefined): Promise<string | undefined>
  records (after: Uint8Array | undefined, limit: number): Promise<Array<{ id: string, object: StoredObject }>>
}

/** Records read at a time while a delimited listing meets objects. */
const DELIMITED_BATCH = 64

/** Above every id starting with `prefix` (UTF-8 never holds the byte 0xFF). */
export function pastPrefix (prefix: string): Buffer {
  return Buffer.concat([Buffer.from(prefix, 'utf8'), Buffer.from([0xff])])
}

export async function assembleListPageAsync (source: AsyncPageSource, query: ListQuery): Promise<ListPage> {
  const { prefix, delimiter, limit } = query
  const entries: ListEntry[] = []
  let after = query.after
  const delimitedAt = (id: string): number => delimiter === undefined ? -1 : id.indexOf(delimiter, prefix.length)
  for (;;) {
    if (delimiter !== undefined) {
      const id = await source.nextId(after)
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
    const batch = await source.records(after, asked)
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
