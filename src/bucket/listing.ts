/**
 * Listing objects: the engine's `list` over a store's pages. Owns the
 * argument checks (limit, include, cursor, startAfter), the opaque cursors,
 * and the metadata budget of one page; the page itself comes from the
 * store (assembled by list-page.ts).
 *
 * A listed object carries `httpMetadata` and `customMetadata` only when
 * `include` names them; the other is undefined, not `{}`, as workerd
 * builds a listed R2Object (r2-bucket.c++, parseObjectMetadata: a field
 * the service did not send is left unset unless it was asked for). Local
 * wrangler (miniflare) sends both fields always, so scripts tried there
 * see `{}`; the hosted service sends only what `include` asks for.
 */
import { ArgumentRangeError as RangeError, ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'
import { listText, pastPrefix } from './keys.js'
import { keylessView, ListedObject } from './object.js'
import type { BucketStore } from './port.js'
import { MAX_LIST_LIMIT } from './limits.js'
import type { BucketListedObject, BucketListOptions, BucketObjects } from './types.js'

/**
 * With `include`, a list page stops once the metadata it carries passes this
 * many bytes (at least one object always comes back): the hosted service
 * caps the data of one list call the same way, so callers already page on
 * `truncated`, never on the count. It keeps what a page holds in memory, and
 * what a slow reader's connection buffers, bounded.
 */
export const LIST_METADATA_BUDGET_BYTES = 512 * 1024
type ListInclude = 'httpMetadata' | 'customMetadata'


function parseListLimit (limit: unknown): number {
  // -1 is how the hosted runtime's bindings say "no limit given".
  if (limit === undefined || limit === -1) return MAX_LIST_LIMIT
  const n = Math.trunc(Number(limit))
  if (!Number.isFinite(n) || n < 1 || n > MAX_LIST_LIMIT) throw new BucketError('InvalidMaxKeys', 'list')
  return n
}

/** What a listed object's key and included metadata weigh (UTF-16 lengths: close enough for a cap). */
function listedMetadataBytes (key: string, record: { httpMetadata: object, customMetadata: Record<string, string> }, include: Set<ListInclude>): number {
  let bytes = key.length
  const add = (values: object): void => {
    for (const [name, value] of Object.entries(values)) bytes += name.length + String(value).length
  }
  if (include.has('customMetadata')) add(record.customMetadata)
  if (include.has('httpMetadata')) add(record.httpMetadata)
  return bytes
}

/** As workerd reads `include`: an array of strings (else a TypeError), each a field it knows (else a RangeError). */
function parseInclude (include: unknown): Set<ListInclude> {
  if (include === undefined) return new Set()
  if (!Array.isArray(include)) throw new TypeError('list: include must be an array.')
  for (const item of include) {
    if (typeof item !== 'string') throw new TypeError('list: include must be an array of strings.')
    if (item !== 'httpMetadata' && item !== 'customMetadata') {
      throw new RangeError(`list: Unsupported include value ${item} (include may contain "httpMetadata" and "customMetadata").`)
    }
  }
  return new Set(include as ListInclude[])
}

/** Cursors are opaque: `k` + the last key returned, or `p` + the last delimited prefix. */
function encodeCursor (kind: 'k' | 'p', id: string): string {
  return Buffer.from(kind + id, 'utf8').toString('base64url')
}

function decodeCursor (cursor: unknown): Uint8Array | undefined {
  if (cursor === undefined || cursor === '') return undefined
  if (typeof cursor !== 'string') throw new TypeError('list: cursor must be a string.')
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const kind = text[0]
  if ((kind !== 'k' && kind !== 'p') || encodeCursor(kind, text.slice(1)) !== cursor) {
    throw new TypeError('list: cursor is not a cursor returned by list.')
  }
  const id = text.slice(1)
  return kind === 'k' ? Buffer.from(id, 'utf8') : pastPrefix(id)
}

function laterBound (a: Uint8Array | undefined, b: Uint8Array | undefined): Uint8Array | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  return Buffer.compare(a, b) >= 0 ? a : b
}

/** One page of `list`, `opts` checked here. */
export async function listObjects (store: BucketStore, opts: Partial<BucketListOptions>): Promise<BucketObjects> {
  const limit = parseListLimit(opts.limit)
  const include = parseInclude(opts.include)
  const prefix = opts.prefix === undefined ? '' : listText('list', 'prefix', opts.prefix)
  const delimiter = opts.delimiter === undefined || opts.delimiter === '' ? undefined : listText('list', 'delimiter', opts.delimiter)
  const startAfter = opts.startAfter === undefined ? undefined : Buffer.from(listText('list', 'startAfter', opts.startAfter), 'utf8')
  const after = laterBound(decodeCursor(opts.cursor), startAfter)
  const withMetadata = include.size > 0
  const carried = { httpMetadata: include.has('httpMetadata'), customMetadata: include.has('customMetadata') }

  const page = await store.list({ prefix, delimiter, after, limit, withMetadata })
  const objects: BucketListedObject[] = []
  const delimitedPrefixes: string[] = []
  let last: string | undefined
  let metadataBytes = 0
  let cut = false
  for (const entry of page.entries) {
    if (withMetadata && metadataBytes >= LIST_METADATA_BUDGET_BYTES) {
      cut = true
      break
    }
    if ('prefix' in entry) {
      delimitedPrefixes.push(entry.prefix)
      last = encodeCursor('p', entry.prefix)
      continue
    }
    const record = entry.object
    if (withMetadata) metadataBytes += listedMetadataBytes(entry.id, record, include)
    // A listed SSE-C object carries no checksum value (object.ts): a list takes no key.
    objects.push(new ListedObject(keylessView(record), undefined, carried))
    last = encodeCursor('k', entry.id)
  }
  return page.truncated || cut
    ? { objects, truncated: true, cursor: last, delimitedPrefixes }
    : { objects, truncated: false, delimitedPrefixes }
}
