/**
 * Which bucket and key a request names.
 *
 * Path style (the contract): `/{bucket}/{key}`, where the key is everything
 * after the bucket segment, percent-decoded once and otherwise untouched
 * (`a/b/../c`, `%2F`, `//` are all keys of their own; curl sends `..`
 * segments as given with `--path-as-is`).
 *
 * Public routes expose one bucket read-only, the way a CDN origin does:
 *
 *     cdn.localhost=site           every path on Host cdn.localhost is a key of "site"
 *     /assets/=site                /assets/<key> on any Host
 *     cdn.localhost/img/=site      /img/<key> on Host cdn.localhost
 *
 * A host-bound route beats a route for any host; among those, the longest
 * path prefix wins. Custom domains from the registry behave like a host
 * route with no prefix and are consulted after the configured routes.
 *
 * A route also serves a static site (website.ts): options follow the bucket,
 * separated by `;`:
 *
 *     /docs/=site;index=index.html;error=404.html;listing=on
 *
 * `index` names the document answered for a path ending in `/` (default
 * `index.html`, `off` for none), `error` the key answered with status 404
 * when nothing else is found (default none), `listing` turns on an HTML
 * listing of a "directory" without an index document (default off). A path
 * prefix therefore cannot contain `;` (write `%3B`).
 *
 * Routing is decided here rather than by Fastify's router because the same
 * path means different things depending on Host and on settings that change
 * while the server runs.
 */
import { hostName, isValidBucketName } from '../bucket/index.js'
import { DoorError } from './errors.js'

/** How a route serves a static site (spec options `index=`, `error=`, `listing=`). */
export interface SiteOptions {
  /** Object name answered for `<path>/`, or null for none. */
  indexDocument: string | null
  /** Key answered with status 404 when nothing else is found, or null. */
  errorDocument: string | null
  /** An HTML listing for `<path>/` when it has no index document. */
  listing: boolean
}

/** Routes without options, and custom domains, serve `index.html` and nothing else. */
export const defaultSite: SiteOptions = Object.freeze({ indexDocument: 'index.html', errorDocument: null, listing: false })

export interface PublicRoute {
  /** Lowercase host name without port, or null for any host. */
  host: string | null
  /** Path prefix starting and ending with `/` ("/" for the whole host). */
  pathPrefix: string
  bucket: string
  /** Site options given in the spec; `defaultSite` when absent. */
  site?: SiteOptions
}

export type RequestTarget =
  | { kind: 'root' }
  | { kind: 'bucket', bucket: string }
  | { kind: 'object', bucket: string, key: string }
  /** `ownHost`: served on a host of its own (a host route or a custom domain), not the console's. */
  | ({ kind: 'public' } & PublicTarget)

/** Longest object name accepted as an index or error document (the binding's key limit). */
const maxDocumentName = 1024

/** Parses the `;name=value` options that follow a route's bucket. */
export function parseSiteOptions (spec: string, options: string[]): SiteOptions {
  const site: SiteOptions = { ...defaultSite }
  for (const option of options) {
    const equals = option.indexOf('=')
    const name = option.slice(0, equals).trim()
    const value = option.slice(equals + 1).trim()
    const bad = (why: string): TypeError => new TypeError(`Invalid route "${spec}": ${why}`)
    if (equals === -1) throw bad(`option "${option}" is not name=value`)
    if (name === 'index') {
      if (value === '' || value.includes('/') || value.length > maxDocumentName) throw bad('index must be a file name without "/" (or off)')
      site.indexDocument = value === 'off' ? null : value
    } else if (name === 'error') {
      if (value === '' || value.length > maxDocumentName) throw bad('error must be the key of the error document')
      site.errorDocument = value
    } else if (name === 'listing') {
      if (value !== 'on' && value !== 'off') throw bad('listing must be on or off')
      site.listing = value === 'on'
    } else {
      throw bad(`unknown option "${name}" (index, error, listing)`)
    }
  }
  return site
}

/** Parses `host=bucket`, `/prefix/=bucket` or `host/prefix/=bucket`, each optionally followed by `;name=value` site options. */
export function parseRouteSpec (fullSpec: string): PublicRoute {
  const [spec, ...options] = fullSpec.split(';')
  const equals = spec.lastIndexOf('=')
  const where = spec.slice(0, equals).trim()
  const bucket = spec.slice(equals + 1).trim()
  if (equals === -1 || where === '' || !isValidBucketName(bucket)) {
    throw new TypeError(`Invalid route "${spec}": expected host=bucket, /prefix/=bucket or host/prefix/=bucket`)
  }
  const slash = where.indexOf('/')
  const host = slash === -1 ? where : where.slice(0, slash)
  let pathPrefix = slash === -1 ? '/' : where.slice(slash)
  if (!pathPrefix.endsWith('/')) pathPrefix += '/'
  if (host !== '' && !/^[a-z0-9.-]+(:\d+)?$/i.test(host)) throw new TypeError(`Invalid route "${spec}": bad host name "${host}"`)
  const route: PublicRoute = { host: host === '' ? null : hostName(host), pathPrefix, bucket }
  if (options.length > 0) route.site = parseSiteOptions(fullSpec, options)
  return route
}

/** Whether `text` starts like a route, up to its options: `where=name`, `where` a host, a `host/prefix` or a `/prefix`, a name without `/` (a bucket's, valid or not). */
function startsLikeRoute (text: string): boolean {
  const spec = text.split(/[;\s,]/, 1)[0]
  const equals = spec.lastIndexOf('=')
  const where = spec.slice(0, equals)
  const name = spec.slice(equals + 1)
  return equals > 0 && name !== '' && !name.includes('/') && (where.startsWith('/') || /^[a-z0-9.-]+(:\d+)?(\/|$)/i.test(where))
}

/** Whether `spec` is one valid route (`parseRouteSpec` takes it). */
export function isRouteSpec (spec: string): boolean {
  try {
    parseRouteSpec(spec)
    return true
  } catch {
    return false
  }
}

/**
 * The second route in `value`, one route spec as a `--route` gives it,
 * when it holds two: text after a comma or a space that is a route or
 * starts like one (a bucket name mistyped), behind a whole route. Else
 * null. Taken whole, such a value would parse as one route no one meant
 * (`a=site;error=404.html,b=Bad_Name` as an error document named
 * `404.html,b=Bad_Name`; `/a/=x,/b/=y` as the prefix `/a/=x,/b/`), with
 * nothing in the start-up log to show it. A comma that belongs to the route
 * (`/a,b/=site`, `error=404,v2.html`) is followed by no such text.
 */
export function secondRoute (value: string): string | null {
  for (const separator of value.matchAll(/[\s,]+/g)) {
    const before = value.slice(0, separator.index).trim()
    const after = value.slice(separator.index + separator[0].length).trim()
    if (after !== '' && isRouteSpec(before) && (startsLikeRoute(after) || isRouteSpec(after))) return after
  }
  return null
}

/** The route specs of a comma- or whitespace-separated list (the FSBUCKET_ROUTES form), unparsed. */
export function splitRouteList (list: string): string[] {
  return list.split(/[\s,]+/).filter(s => s !== '')
}

/** Routes from such a list. */
export function parseRouteList (list: string): PublicRoute[] {
  return splitRouteList(list).map(parseRouteSpec)
}

/** Most specific first: host-bound routes, then longer prefixes. */
export function orderRoutes (routes: PublicRoute[]): PublicRoute[] {
  return [...routes].sort((a, b) =>
    Number(b.host !== null) - Number(a.host !== null) || b.pathPrefix.length - a.pathPrefix.length)
}

function decodeOnce (raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    throw new DoorError('InvalidUrl')
  }
}

/**
 * Refuses a query string whose names or values do not percent-decode to
 * UTF-8 (`?prefix=%FF`, `?delimiter=%E0%A4%A`), as the path is refused: 400,
 * code 40001. Fastify's parser keeps such a value as sent, so `prefix=%FF`
 * would quietly list the keys that start with the three characters `%FF`
 * (what `prefix=%25FF` asks for). S3 refuses a URL with a bad escape
 * before anything else (400, InvalidURI), whichever parameter holds it, and
 * so does this door, parameters it does not read included.
 */
export function requireDecodableQuery (url: string): void {
  const start = url.indexOf('?')
  if (start === -1) return
  for (const pair of url.slice(start + 1).split('&')) {
    try {
      decodeURIComponent(pair)
    } catch {
      const name = pair.split('=')[0]
      throw new DoorError('InvalidUrl', `The query parameter ${JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name)} is not percent-encoded UTF-8.`)
    }
  }
}

/** The path of a request URL, still percent-encoded. */
export function rawPath (url: string): string {
  const query = url.indexOf('?')
  const path = query === -1 ? url : url.slice(0, query)
  if (path.startsWith('/')) return path
  // The absolute form (`GET http://host/bucket/key`, RFC 9112 3.2.2), which proxies send: its path.
  const absolute = /^https?:\/\/[^/]*/i.exec(path)
  return absolute === null ? path : path.slice(absolute[0].length) || '/'
}

/** The host names the routes are bound to. */
export function routeHostsOf (routes: PublicRoute[]): Set<string> {
  return new Set(routes.flatMap(r => r.host === null ? [] : [r.host]))
}

/**
 * Whether `path` on `host` is served by a public route, or by the custom
 * domain `host` is (`customDomain`): what the router answers otherwise is
 * path style. A custom domain serves every path of the origin form.
 */
export function isPublicPath (routes: PublicRoute[], host: string, path: string, customDomain: boolean): boolean {
  return matchPublicRoute(routes, host, path) !== null || (customDomain && path.startsWith('/'))
}

/** A configured public route for (host, path), with the key it names. */
export function matchPublicRoute (routes: PublicRoute[], host: string, path: string): PublicTarget | null {
  for (const route of routes) {
    if (route.host !== null && route.host !== host) continue
    const ownHost = route.host !== null
    // The route's own path without its slash (`/docs` of `/docs/`) is the route's, sent to the slash form as its folders are, never a bucket's name.
    if (path === route.pathPrefix.slice(0, -1) && path !== '') return { bucket: route.bucket, key: '', ownHost, toRoot: true }
    if (!path.startsWith(route.pathPrefix)) continue
    const key = decodeOnce(path.slice(route.pathPrefix.length))
    return route.site === undefined ? { bucket: route.bucket, key, ownHost } : { bucket: route.bucket, key, ownHost, site: route.site }
  }
  return null
}

/** What a public route's request names: its bucket and key; `toRoot` for the route's path without its slash, which is sent to it. */
export interface PublicTarget { bucket: string, key: string, ownHost: boolean, site?: SiteOptions, toRoot?: boolean }

/**
 * Whether a path-style target names what only the management API answers
 * (`/client/v4` and below): reached by a path the API's router does not
 * take as its own (`//client/v4/...`, `/client/v4%2F...`), it is still
 * never a key of a bucket named `client`.
 */
export function isManagementTarget (target: RequestTarget): boolean {
  return target.kind === 'object' && target.bucket === 'client' && (target.key === 'v4' || target.key.startsWith('v4/'))
}

/** The path-style target of a path (`/`, `/{bucket}`, `/{bucket}/`, `/{bucket}/{key}`). */
export function pathStyleTarget (path: string): RequestTarget {
  const rest = path.replace(/^\/+/, '')
  if (rest === '') return { kind: 'root' }
  const slash = rest.indexOf('/')
  const bucket = decodeOnce(slash === -1 ? rest : rest.slice(0, slash))
  const rawKey = slash === -1 ? '' : rest.slice(slash + 1)
  if (rawKey === '') return { kind: 'bucket', bucket }
  return { kind: 'object', bucket, key: decodeOnce(rawKey) }
}
