/**
 * ListObjects (V1) and ListObjectsV2 over the binding's `list`.
 *
 * The binding lists in UTF-8 byte order (of the keys' NFC form, though each
 * shows the form it was last written in) with delimited prefixes rolled up,
 * as S3 does. V2's continuation token is the binding's cursor, handed out
 * and taken back unchanged; `start-after` is the binding's `startAfter`.
 *
 * V1's `marker` is a key (or, with a delimiter, possibly a CommonPrefix this
 * door returned as NextMarker). A marker that is itself a common prefix
 * would come back as the first entry of the next page, so one more entry is
 * asked for and that prefix dropped: pages never repeat. NextMarker is the
 * last key or prefix of a truncated page (S3 sends it only with a
 * delimiter; sending it always is harmless and saves clients a step).
 *
 * `max-keys` above 1,000 is 1,000 (as S3); 0 answers an empty page.
 * `encoding-type=url` percent-encodes what S3 encodes (list-encoding.ts):
 * Key, Prefix (the request's and each CommonPrefix), Delimiter, Marker and
 * NextMarker (V1), StartAfter (V2); never the continuation tokens, which
 * are opaque. An empty `continuation-token` is none (the first page), as S3
 * takes it.
 */
import { compareIds, MAX_LIST_LIMIT, type BucketObject } from '../bucket/index.js'
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

/** One page of entries in byte order, with whether more follow. */
async function page (ctx: S3Context, options: { prefix: string, delimiter?: string, cursor?: string, startAfter?: string, limit: number }): Promise<{ entries: Entry[], truncated: boolean, cursor?: string }> {
  if (options.limit === 0) return { entries: [], truncated: false }
  const { bucket } = await openNamedBucket(ctx)
  const listed = await bucket.list({
    prefix: options.prefix,
    delimiter: options.delimiter,
    cursor: options.cursor,
    startAfter: options.startAfter,
    limit: options.limit
  })
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
  const markerIsPrefix = marker !== undefined && delimiter !== undefined && marker.startsWith(prefix) &&
    marker.indexOf(delimiter, prefix.length) === marker.length - delimiter.length
  // max-keys 0 asks for an empty page, never truncated (a paginator would find no NextMarker to go on from).
  const limit = markerIsPrefix && maxKeys > 0 ? Math.min(maxKeys + 1, MAX_LIST_LIMIT) : maxKeys
  const listed = await page(ctx, { prefix, delimiter, startAfter: marker, limit })
  let entries = listed.entries
  let truncated = listed.truncated
  if (markerIsPrefix) {
    entries = entries.filter(e => !('prefix' in e && e.prefix === marker))
    if (entries.length > maxKeys) {
      entries = entries.slice(0, maxKeys)
      truncated = true
    }
    // With max-keys 1,000 the extra entry cannot be asked for (the binding's most): the page holds 999.
  }
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
