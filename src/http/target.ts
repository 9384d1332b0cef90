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
 * Routing is decided here rather than by Fastify's router because the same
 * path means different things depending on Host and on settings that change
 * while the server runs.
 */
import { hostName, isValidBucketName } from '../bucket/index.js'
import { DoorError } from './errors.js'

export interface PublicRoute {
  /** Lowercase host name without port, or null for any host. */
  host: string | null
  /** Path prefix starting and ending with `/` ("/" for the whole host). */
  pathPrefix: string
  bucket: string
}

export type RequestTarget =
  | { kind: 'root' }
  | { kind: 'bucket', bucket: string }
  | { kind: 'object', bucket: string, key: string }
  | { kind: 'public', bucket: string, key: string }

/** Parses `host=bucket`, `/prefix/=bucket` or `host/prefix/=bucket`. */
export function parseRouteSpec (spec: string): PublicRoute {
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
  return { host: host === '' ? null : hostName(host), pathPrefix, bucket }
}

/** Route specs from a comma- or whitespace-separated list (the FSBUCKET_ROUTES form). */
export function parseRouteList (list: string): PublicRoute[] {
  return list.split(/[\s,]+/).filter(s => s !== '').map(parseRouteSpec)
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

/** The path of a request URL, still percent-encoded. */
export function rawPath (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/** A configured public route for (host, path), with the key it names. */
export function matchPublicRoute (routes: PublicRoute[], host: string, path: string): { bucket: string, key: string } | null {
  for (const route of routes) {
    if (route.host !== null && route.host !== host) continue
    if (!path.startsWith(route.pathPrefix)) continue
    return { bucket: route.bucket, key: decodeOnce(path.slice(route.pathPrefix.length)) }
  }
  return null
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
