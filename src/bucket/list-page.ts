/**
 * How a list page is assembled from a store's ordered ids, once for every
 * store: objects and delimited prefixes in UTF-8 byte order, at most `limit`
 * entries, and whether more remain.
 *
 * The algorithm is written once, as a sequence of seeks (`pageSeeks`), and
 * driven two ways: `assembleListPage` answers the seeks synchronously, so a
 * store can run a whole page inside one read transaction (SQLite, memory);
 * `assembleListPageAsync` awaits them, for a store whose seeks are queries
 * to a server (PostgreSQL). With a delimiter, every delimited prefix is
 * found with one id-only seek and skipped past (`prefix + 0xFF`), so a page
 * of 1,000 prefixes costs 1,000 index seeks, not the reading of every key
 * under them.
 */
import { pastPrefix } from './keys.js'
import type { ListEntry, ListPage, ListQuery, StoredObject } from './records.js'

type PageRecord = { id: string, object: StoredObject }

/** What a store offers the page assembly: ordered seeks over the ids with the query's prefix. */
export interface PageSource {
  /** The first id above `after` (all ids when undefined), or undefined. */
  nextId (after: Uint8Array | undefined): string | undefined
  /** Up to `limit` records above `after`, in id order. */
  records (after: Uint8Array | undefined, limit: number): PageRecord[]
}

/** `PageSource` whose seeks are asynchronous (queries to a catalog server). */
export interface AsyncPageSource {
  nextId (after: Uint8Array | undefined): Promise<string | undefined>
  records (after: Uint8Array | undefined, limit: number): Promise<PageRecord[]>
}

/** One seek the assembly asks of the source. */
type Seek = { kind: 'nextId', after: Uint8Array | undefined } | { kind: 'records', after: Uint8Array | undefined, limit: number }
/** The source's answer to a seek: the id (or undefined) for `nextId`, the records for `records`. */
type SeekAnswer = string | undefined | PageRecord[]

/** Records read at a time while a delimited listing meets objects. */
const DELIMITED_BATCH = 64

/** The page assembly: yields the seeks it needs, receives their answers, returns the page. */
function * pageSeeks (query: ListQuery): Generator<Seek, ListPage, SeekAnswer> {
  const { prefix, delimiter, limit } = query
  const entries: ListEntry[] = []
  let after = query.after
  const delimitedAt = (id: string): number => delimiter === undefined ? -1 : id.indexOf(delimiter, prefix.length)
  for (;;) {
    if (delimiter !== undefined) {
      const id = (yield { kind: 'nextId', after }) as string | undefined
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
    const batch = (yield { kind: 'records', after, limit: asked }) as PageRecord[]
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

export function assembleListPage (source: PageSource, query: ListQuery): ListPage {
  const seeks = pageSeeks(query)
  let step = seeks.next()
  while (step.done !== true) {
    const seek = step.value
    step = seeks.next(seek.kind === 'nextId' ? source.nextId(seek.after) : source.records(seek.after, seek.limit))
  }
  return step.value
}

export async function assembleListPageAsync (source: AsyncPageSource, query: ListQuery): Promise<ListPage> {
  const seeks = pageSeeks(query)
  let step = seeks.next()
  while (step.done !== true) {
    const seek = step.value
    step = seeks.next(seek.kind === 'nextId' ? await source.nextId(seek.after) : await source.records(seek.after, seek.limit))
  }
  return step.value
}
