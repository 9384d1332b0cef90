/**
 * The seeks of a delimited list page, many per round trip: a page of 1,000
 * common prefixes asks "the first id after this bound" 1,001 times, each
 * bound being the previous prefix's end (`<common prefix>` + 0xFF) or the
 * previous id. One recursive statement walks those seeks in the catalog
 * (each step one probe of the objects' primary key) and returns the ids in
 * order; the answers are kept by bound, so the page's next seeks are
 * answered without asking again, and a seek the walk did not foresee asks
 * with a longer walk. Run inside the page's snapshot (one transaction), the
 * answers are those the seeks would have had one by one.
 */

/** Runs one statement of the page's transaction. */
export type Ask = <R extends object>(text: string, params: unknown[]) => Promise<R[]>

/** Seeks of the first walk; each walk after a miss is four times longer, up to MAX_WALK. */
const FIRST_WALK = 32
const MAX_WALK = 1024

export interface SkipScanScope {
  storeId: string
  /** The query's prefix, as UTF-8 bytes. */
  prefix: Buffer
  /** Above every id with the prefix. */
  end: Buffer
  delimiter: string
}

/**
 * `nextId` of a page source (the first id above `after`, or the prefix's
 * first id when `after` is absent or below the prefix), answered from walks.
 */
export function skipScanNextId (ask: Ask, scope: SkipScanScope): (after: Uint8Array | undefined) => Promise<string | undefined> {
  const delimiter = Buffer.from(scope.delimiter, 'utf8')
  const known = new Map<string, string | undefined>()
  let walk = FIRST_WALK
  const boundKey = (after: Uint8Array | undefined): string =>
    after !== undefined && Buffer.compare(after, scope.prefix) >= 0 ? Buffer.from(after).toString('hex') : 'start'
  /** Where the seek after `id` starts: past its common prefix when it holds the delimiter, else just past it. */
  const nextBound = (id: Buffer): string => {
    const at = id.indexOf(delimiter, scope.prefix.length)
    return at < 0 ? id.toString('hex') : Buffer.concat([id.subarray(0, at + delimiter.length), Buffer.from([0xff])]).toString('hex')
  }
  return async after => {
    const key = boundKey(after)
    if (known.has(key)) return known.get(key)
    const first = key === 'start' ? { op: '>=', start: scope.prefix } : { op: '>', start: Buffer.from(after as Uint8Array) }
    const rows = await ask<{ id: Buffer | null }>(`WITH RECURSIVE walk (id, n) AS (
        (SELECT id, 1 FROM fsbucket.objects WHERE store_id = $1 AND id ${first.op} $2 AND id < $3 ORDER BY id LIMIT 1)
        UNION ALL
        SELECT (SELECT o.id FROM fsbucket.objects o WHERE o.store_id = $1 AND o.id < $3 AND o.id > CASE
                  WHEN position($5::bytea IN substring(w.id FROM $4 + 1)) > 0
                  THEN substring(w.id FROM 1 FOR $4 + position($5::bytea IN substring(w.id FROM $4 + 1)) + length($5::bytea) - 1) || '\\xff'::bytea
                  ELSE w.id END
                ORDER BY o.id LIMIT 1), w.n + 1
        FROM walk w WHERE w.id IS NOT NULL AND w.n < $6)
      SELECT id FROM walk ORDER BY n`, [scope.storeId, first.start, scope.end, scope.prefix.length, delimiter, walk])
    walk = Math.min(MAX_WALK, walk * 4)
    known.clear()
    let bound = key
    for (const { id } of rows) {
      known.set(bound, id?.toString('utf8'))
      if (id === null) break
      bound = nextBound(id)
    }
    if (rows.length === 0) known.set(key, undefined)
    return known.get(key)
  }
}
