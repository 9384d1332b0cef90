/**
 * Static sites on public routes and custom domains: what a GET or HEAD of
 * a route path answers, as a `ReadResult` the route hands to the reply.
 *
 * - `<path>/` (and the route's root) answers the object `<path>/<index>`
 *   (`index.html` unless the route says otherwise), with the usual
 *   conditionals and ranges.
 * - `<path>` that is no object but has `<path>/<index>` (or, with listing on,
 *   anything under `<path>/`) redirects (302) to `<path>/`, as static hosts do, so
 *   relative links in the page resolve. The `Location` is relative
 *   (`./name/`), so no request can turn it into a redirect to another site.
 * - A `<path>/` with neither an index document nor a listing answers the
 *   object named `<path>/` itself when there is one.
 * - With listing on, `<path>/` without an index document answers an HTML
 *   page listing the folders and objects under it, 1,000 per page with a
 *   link to the next. Every key is escaped, every link is built from the
 *   key's own segment with encodeURIComponent, and the page is sent with a
 *   Content-Security-Policy that runs no script at all.
 * - Anything else not found answers the route's error document with status
 *   404 when it has one (and the usual JSON 404 when that is missing too);
 *   so does `<path>/` with listing on when nothing is stored under it.
 *
 * Keys named `.` or `..` (or an empty segment, from `//`) cannot be reached
 * by a relative link, since browsers collapse dot segments; listings show
 * them as text without a link.
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { MAX_KEY_BYTES, MAX_LIST_LIMIT, type Bucket } from '../bucket/index.js'
import { DoorError, DoorErrors } from './errors.js'
import { readObject, type ReadResult } from './read.js'
import { rawPath, type SiteOptions } from './target.js'

/** One page of a listing: the binding's largest list page. */
const listingPageSize = MAX_LIST_LIMIT

const listingStyle = 'body{font:14px/1.5 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}' +
  'td,th{padding:.2em 1em .2em 0;text-align:left}td.size{text-align:right}'
const listingStyleHash = createHash('sha256').update(listingStyle).digest('base64')

/** Scripts, frames, forms, plugins and remote anything: none. Only the page's own style. */
export const listingPolicy = `default-src 'none'; style-src 'sha256-${listingStyleHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

const htmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, c => htmlEscapes[c])
}

/** A relative link to one path segment, or null when no relative link can name it. */
function segmentLink (segment: string, folder: boolean): string | null {
  if (segment === '' || segment === '.' || segment === '..') return null
  return `./${encodeURIComponent(segment)}${folder ? '/' : ''}`
}

function isNoSuchKey (err: unknown): boolean {
  return err instanceof DoorError && err.code === DoorErrors.NoSuchKey.code
}

/** Whether `key` could name an object: a longer path is simply not found on a site, not a malformed request. */
function canBeKey (key: string): boolean {
  return Buffer.byteLength(key) <= MAX_KEY_BYTES
}

/** The object's read, or null when there is no such key. */
async function readIfExists (bucket: Bucket, key: string, method: 'GET' | 'HEAD', headers: IncomingHttpHeaders, query: Record<string, unknown>): Promise<ReadResult | null> {
  if (!canBeKey(key)) return null
  try {
    return await readObject(bucket, key, method, headers, query)
  } catch (err) {
    if (isNoSuchKey(err)) return null
    throw err
  }
}

/**
 * Where a folder's path without its slash is sent: `./<last segment>/`,
 * relative (no request can make it lead to another site), built from the
 * segment as the URL wrote it (`/docs%2Fguide` is sent to `./docs%2Fguide/`,
 * where a decoded key's last segment would lose `docs`), the query kept.
 */
export function folderLocation (url: string): string {
  const query = url.indexOf('?')
  const path = rawPath(url)
  return `./${path.slice(path.lastIndexOf('/') + 1)}/${query === -1 ? '' : url.slice(query)}`
}

function redirectToFolder (url: string): ReadResult {
  // 302, not 301: a browser would remember a permanent redirect even after an object of that name appears.
  return { status: 302, headers: { location: folderLocation(url), 'cache-control': 'no-cache' } }
}

/** Whether anything is stored under `prefix` (a folder key ending in `/`). */
async function hasEntries (bucket: Bucket, prefix: string): Promise<boolean> {
  if (!canBeKey(prefix)) return false
  const listed = await bucket.list({ prefix, delimiter: '/', limit: 1 })
  return listed.objects.length > 0 || listed.delimitedPrefixes.length > 0
}

async function isFolder (bucket: Bucket, key: string, site: SiteOptions): Promise<boolean> {
  const index = site.indexDocument === null ? null : `${key}/${site.indexDocument}`
  if (index !== null && canBeKey(index) && await bucket.head(index) !== null) return true
  return site.listing && await hasEntries(bucket, `${key}/`)
}

function formatSize (bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

function row (name: string, link: string | null, size: string, uploaded: string): string {
  const label = escapeHtml(name)
  const cell = link === null ? label : `<a href="${escapeHtml(link)}">${label}</a>`
  return `<tr><td>${cell}</td><td class="size">${size}</td><td>${uploaded}</td></tr>`
}

/** The HTML listing of `prefix` (a folder key ending in `/`, or '' for the route's root). */
export async function listingPage (bucket: Bucket, prefix: string, method: 'GET' | 'HEAD', cursor: string | undefined): Promise<ReadResult> {
  const listed = await bucket.list({ prefix, delimiter: '/', cursor, limit: listingPageSize })
  const rows: string[] = []
  if (prefix !== '') rows.push(row('../', '../', '', ''))
  for (const folder of listed.delimitedPrefixes) {
    const segment = folder.slice(prefix.length, -1)
    rows.push(row(`${segment}/`, segmentLink(segment, true), '', ''))
  }
  for (const object of listed.objects) {
    const segment = object.key.slice(prefix.length)
    if (segment === '') continue // the object named like the folder itself
    rows.push(row(segment, segmentLink(segment, false), formatSize(object.size), object.uploaded.toISOString()))
  }
  const title = `Index of /${escapeHtml(prefix)}`
  const next = listed.truncated && listed.cursor !== undefined
    ? `<p><a href="?cursor=${escapeHtml(encodeURIComponent(listed.cursor))}">Next page</a></p>`
    : ''
  const html = '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><style>${listingStyle}</style></head>` +
    `<body><h1>${title}</h1><table><thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Uploaded</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>${next}</body></html>`
  const body = Buffer.from(html, 'utf8')
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(body.length),
      'content-security-policy': listingPolicy,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-cache'
    },
    body: method === 'HEAD' ? undefined : body
  }
}

/** The route's error document with status 404, or the JSON 404 when it has none. */
async function notFound (bucket: Bucket, site: SiteOptions, method: 'GET' | 'HEAD'): Promise<ReadResult> {
  if (site.errorDocument !== null) {
    const page = await readIfExists(bucket, site.errorDocument, method, {}, {})
    if (page !== null) {
      const headers: Record<string, string> = { 'cache-control': 'no-cache' }
      for (const name of ['content-type', 'content-length', 'content-language', 'content-encoding']) {
        if (page.headers[name] !== undefined) headers[name] = page.headers[name]
      }
      return { status: 404, headers, body: page.body }
    }
  }
  throw new DoorError('NoSuchKey')
}

function cursorFrom (query: Record<string, unknown>): string | undefined {
  const cursor = query.cursor
  if (cursor === undefined || typeof cursor === 'string') return cursor === '' ? undefined : cursor
  throw new DoorError('InvalidQuery', '"cursor" given more than once.')
}

/** GET or HEAD of `key` on a route serving a site; `url` is the request's, as sent (a folder's redirect is made of it). */
export async function readSite (
  bucket: Bucket,
  key: string,
  site: SiteOptions,
  method: 'GET' | 'HEAD',
  headers: IncomingHttpHeaders,
  query: Record<string, unknown>,
  url: string
): Promise<ReadResult> {
  if (key === '' || key.endsWith('/')) {
    if (site.indexDocument !== null) {
      const index = await readIfExists(bucket, `${key}${site.indexDocument}`, method, headers, query)
      if (index !== null) return index
    }
    // A folder with nothing in it is not found, as its path without the slash is: no empty 200 for every made-up path,
    // a cursor or not. The query is read only for a listing: any other page is served whatever its query holds.
    if (site.listing && (key === '' || await hasEntries(bucket, key))) return await listingPage(bucket, key, method, cursorFrom(query))
    // A key ending in `/` may be an object of its own (not a folder marker the listing replaces).
    const object = key === '' ? null : await readIfExists(bucket, key, method, headers, query)
    return object ?? await notFound(bucket, site, method)
  }
  const object = await readIfExists(bucket, key, method, headers, query)
  if (object !== null) return object
  if (await isFolder(bucket, key, site)) return redirectToFolder(url)
  return await notFound(bucket, site, method)
}
