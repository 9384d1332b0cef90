/**
 * ListObjects (V1) and ListObjectsV2 over the binding's `list`.
 *
 * The binding lists in UTF-8 byte order (of the keys' NFC form, though each
 * shows the form it was last written in) with delimited prefixes rolled up,
 * as S3 does. V2's continuation token is the binding's cursor, handed out
 * and taken back unchanged; `start-after` is the binding's `startAfter`.
 *
 * V1's `marker` is a key (or, with a delimiter, possibly a CommonPrefix this
 * door returned as NextMarker). With a delimiter, a marker (or V2's
 * start-after) that is a common prefix, or lies within one (`a/` or `a/1`
 * for `a/`), lists nothing more of that prefix, as S3 answers it: the keys
 * under it that sort after the marker would roll up into it again, so the
 * page starts at the binding's cursor past it. Pages never repeat a prefix.
 * NextMarker is the last key or prefix of a truncated page (S3 sends it
 * only with a delimiter; sending it always is harmless and saves clients a
 * step).
 *
 * `max-keys` above 1,000 is 1,000 (as S3); 0 answers an empty page.
 * `encoding-type=url` percent-encodes what S3 encodes (list-encoding.ts):
 * Key, Prefix (the request's and each CommonPrefix), Delimiter, Marker and
 * NextMarker (V1), StartAfter (V2); never the continuation tokens, which
 * are opaque. An empty `continuation-token` is none (the first page), as S3
 * takes it.
 */
import { compareIds, keptForm, MAX_LIST_LIMIT, type BucketObject } from '../bucket/index.js'
import { has, openNamedBucket, OWNER, param, sendXml, type S3Context } from './context.js'
import { S3Error } from './errors.js'
import { s3StorageClass } from './headers.js'
import { listEncoder } from './list-encoding.js'

function maxKeysFrom (ctx: S3Context): number {
  const raw = param(ctx, 'max-keys')
  if (raw === undefined) return MAX_LIST_LIMIT
  if (!/^\d+$/.test(raw)) throw new S3Error('InvalidArgument', 'Provided max-keys not an integer or within integer range')
  return Math.min(Number(raw), MAX_LIST_LIMIT)
}

function encoderFrom (ctx: S3Context): (value: string) => string {
  return listEncoder(param(ctx, 'encoding-type'))
}

function contents (object: BucketObject, encode: (value: string) => string, owner: boolean): Record<string, unknown> {
  return {
    Key: encode(object.key),
    LastModified: object.uploaded.toISOString(),
    ETag: object.httpEtag,
    Size: object.size,
    StorageClass: s3StorageClass(object.storageClass),
    ...(owner ? { Owner: OWNER } : {})
  }
}

type Entry = { object: BucketObject } | { prefix: string }

function entryName (entry: Entry): string {
  return 'prefix' in entry ? entry.prefix : entry.object.key
}

/**
 * The common prefix a marker (V1's marker, V2's start-after) stands in, or undefined: with delimiter `/`, `a/` for
 * the marker `a/` and for `a/1`, in the form the binding rolls prefixes up in (its keys' NFC form).
 */
function markerPrefix (prefix: string, delimiter: string | undefined, marker: string | undefined): string | undefined {
  if (delimiter === undefined || marker === undefined) return undefined
  const [within, cut, at] = [keptForm(prefix), keptForm(delimiter), keptForm(marker)]
  if (!at.startsWith(within)) return undefined
  const end = at.indexOf(cut, within.length)
  return end < 0 ? undefined : at.slice(0, end + cut.length)
}

/** One page of entries in byte order, with whether more follow. */
async function page (ctx: S3Context, options: { prefix: string, delimiter?: string, cursor?: string, startAfter?: string, limit: number }): Promise<{ entries: Entry[], truncated: boolean, cursor?: string }> {
  if (options.limit === 0) return { entries: [], truncated: false }
  const { bucket } = await openNamedBucket(ctx)
  let { cursor, startAfter } = options
  // A marker that is a common prefix or lies within one: S3 lists nothing more of it. The keys under it after the
  // marker roll up into it, the first entry after the marker; the page starts at the binding's cursor past it.
  const passed = cursor === undefined ? markerPrefix(options.prefix, options.delimiter, startAfter) : undefined
  if (passed !== undefined) {
    const first = await bucket.list({ prefix: options.prefix, delimiter: options.delimiter, startAfter, limit: 1 })
    if (first.delimitedPrefixes[0] === passed) {
      if (!first.truncated) return { entries: [], truncated: false }
      cursor = first.cursor
      startAfter = undefined
    }
  }
  const listed = await bucket.list({ prefix: options.prefix, delimiter: options.delimiter, cursor, startAfter, limit: options.limit })
  // Merged in the order the binding pages in: a key's NFC form (it shows the form last written, which may sort elsewhere).
  const entries = [
    ...listed.objects.map(object => ({ entry: { object } as Entry, id: object.key.normalize('NFC') })),
    ...listed.delimitedPrefixes.map(prefix => ({ entry: { prefix } as Entry, id: prefix }))
  ].sort((a, b) => compareIds(a.id, b.id)).map(named => named.entry)
  return { entries, truncated: listed.truncated, cursor: listed.cursor }
}

function rollUp (entries: Entry[], encode: (value: string) => string, owner: boolean): Record<string, unknown> {
  const objects = entries.filter((e): e is { object: BucketObject } => 'object' in e)
  const prefixes = entries.filter((e): e is { prefix: string } => 'prefix' in e)
  return {
    ...(objects.length === 0 ? {} : { Contents: objects.map(e => contents(e.object, encode, owner)) }),
    ...(prefixes.length === 0 ? {} : { CommonPrefixes: prefixes.map(e => ({ Prefix: encode(e.prefix) })) })
  }
}

export async function listObjectsV2 (ctx: S3Context): Promise<void> {
  const encode = encoderFrom(ctx)
  const maxKeys = maxKeysFrom(ctx)
  const prefix = param(ctx, 'prefix') ?? ''
  const delimiter = param(ctx, 'delimiter') || undefined
  const token = param(ctx, 'continuation-token') || undefined
  const startAfter = param(ctx, 'start-after')
  let listed: Awaited<ReturnType<typeof page>>
  try {
    listed = await page(ctx, { prefix, delimiter, cursor: token, startAfter, limit: maxKeys })
  } catch (err) {
    if (err instanceof TypeError && token !== undefined) throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect')
    throw err
  }
  await sendXml(ctx, 200, 'ListBucketResult', {
    Name: ctx.bucketName,
    Prefix: encode(prefix),
    ...(delimiter === undefined ? {} : { Delimiter: encode(delimiter) }),
    MaxKeys: maxKeys,
    KeyCount: listed.entries.length,
    IsTruncated: listed.truncated,
    ...(token === undefined ? {} : { ContinuationToken: token }),
    ...(listed.truncated && listed.cursor !== undefined ? { NextContinuationToken: listed.cursor } : {}),
    ...(startAfter === undefined ? {} : { StartAfter: encode(startAfter) }),
    ...(has(ctx, 'encoding-type') ? { EncodingType: 'url' } : {}),
    ...rollUp(listed.entries, encode, param(ctx, 'fetch-owner') === 'true')
  })
}

export async function listObjectsV1 (ctx: S3Context): Promise<void> {
  const encode = encoderFrom(ctx)
  const maxKeys = maxKeysFrom(ctx)
  const prefix = param(ctx, 'prefix') ?? ''
  const delimiter = param(ctx, 'delimiter') || undefined
  const marker = param(ctx, 'marker') || undefined
  // max-keys 0 asks for an empty page, never truncated (a paginator would find no NextMarker to go on from).
  const { entries, truncated } = await page(ctx, { prefix, delimiter, startAfter: marker, limit: maxKeys })
  const last = entries.at(-1)
  await sendXml(ctx, 200, 'ListBucketResult', {
    Name: ctx.bucketName,
    Prefix: encode(prefix),
    Marker: encode(marker ?? ''),
    ...(truncated && last !== undefined ? { NextMarker: encode(entryName(last)) } : {}),
    MaxKeys: maxKeys,
    ...(delimiter === undefined ? {} : { Delimiter: encode(delimiter) }),
    IsTruncated: truncated,
    ...(has(ctx, 'encoding-type') ? { EncodingType: 'url' } : {}),
    ...rollUp(entries, encode, true)
  })
}
