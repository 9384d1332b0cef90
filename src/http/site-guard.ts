/**
 * What keeps a hostile web page out of a server that runs without
 * credentials on loopback (no token; or a management API with none).
 *
 * A page the user visits can make the browser send requests to
 * 127.0.0.1: simple ones (a form POST, `text/plain` bodies) need no CORS
 * preflight, and a DNS rebinding attack makes the attacker's own host name
 * resolve to 127.0.0.1 so that even its reads look same-origin. So, in that
 * mode only:
 *
 * - `Host` must be a loopback name (`localhost`, `*.localhost`, or an IP
 *   literal in 127.0.0.0/8, `::1` or `::ffff:127.0.0.0/104`, judged by
 *   `node:net`, not by matching strings), one of the door's own names (the
 *   S3 port's `--s3-domain`), a configured route host, or a bucket's custom
 *   domain. Anything else answers 421: a rebound name is none of those.
 * - A route host or a custom domain serves its public bucket, read-only:
 *   GET, HEAD and OPTIONS of the paths its routes serve (no bucket path
 *   style beside a route bound to a prefix), never the management API or
 *   the console (those two not with credentials either: `siteHostHook`).
 *   Whoever controls such a name's DNS could rebind it to this machine, so
 *   it gets no more than the public reads it was made for (421 otherwise).
 *   A route host or a custom domain under `.localhost` too: its pages are
 *   the site's, not the user's.
 *   Paths are judged decoded, as the router matches them (`/%63lient/v4`).
 * - A request that may change something (any method but GET, HEAD and
 *   OPTIONS) must come from the server's own origin: an `Origin` header, when
 *   sent, must be `http://<Host>` (`https://<Host>` over TLS), and `Sec-Fetch-Site`, when sent, must be
 *   `same-origin` or `none` (typed by the user). Otherwise 403. Browsers send
 *   `Origin` on every such request, so a page on another origin (another
 *   port of localhost included) is refused; a page served by the gateway
 *   itself, and clients that are not browsers, pass.
 * - A read a page could see the answer of (GET or HEAD with an `Origin`:
 *   `fetch` and XHR send one across origins) must come from a page on a
 *   loopback name that is neither a route host nor a custom domain (a
 *   development server on another port passes), else 403. A bucket's CORS
 *   rules, even `*`, would otherwise let any site the user visits read
 *   every private bucket of this open server. Reads without `Origin` (images, scripts, links) pass: their
 *   bodies stay opaque to the page. Public reads meant for other sites go
 *   through route hosts and custom domains, which this rule does not touch
 *   (a path route such as `/pub/` on a loopback name is not one of them).
 * - A CORS preflight (OPTIONS with `Origin` and
 *   `Access-Control-Request-Method`) is judged as the request it asks for:
 *   refused where that request would be, never granted for it.
 */
import { BlockList, isIP } from 'node:net'
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { hostName, mayBeCustomDomain, type BucketRegistry } from '../bucket/index.js'
import { boundedLookup, isProbePath } from '../doors/health.js'
import { corsVary } from '../doors/request-metadata.js'
import { DoorError } from './errors.js'
import { rawPath } from './target.js'

const loopback = new BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')
// IPv4-mapped addresses (::ffff:127.0.0.1) are matched by BlockList through the IPv4 rule.

/** True for an IP address (without brackets) of the loopback ranges. */
export function isLoopbackAddress (address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  return loopback.check(address, family === 6 ? 'ipv6' : 'ipv4')
}

/** Host names already judged (a few per server: every request names one); bounded, so foreign names cannot grow it. */
const judged = new Map<string, boolean>()

/** True for a host name (as `hostName` gives it) that names this machine's loopback interface. */
export function isLoopbackName (host: string): boolean {
  const known = judged.get(host)
  if (known !== undefined) return known
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const answer = host === 'localhost' || host.endsWith('.localhost') || isLoopbackAddress(bare)
  if (judged.size >= 64) judged.clear()
  judged.set(host, answer)
  return answer
}

export interface SiteGuardOptions {
  /** Host names of the configured public routes. */
  routeHosts: ReadonlySet<string>
  /**
   * Whether one of the public routes, or the custom domain `host` is
   * (`customDomain`), serves `url` on `host` here (a route host's other
   * paths are not its site; a door that serves no site answers false).
   */
  isRouted: (host: string, url: string, customDomain: boolean) => boolean
  /** Whether a host is some bucket's custom domain (read at request time: domains change while serving). */
  isCustomDomain: (host: string) => Promise<boolean>
  /** Host names the door answers as fully as loopback ones (the S3 port's virtual-host domains); none by default. */
  isOwnHost?: (host: string) => boolean
  /** False for a door that serves no public site (the S3 port): a route host or a custom domain is then as foreign as any other name. */
  servesSites?: boolean
}

/** `isCustomDomain` over a registry, as the gateway's router judges a Host (an IP literal is never one). */
export function customDomainLookup (registry: Pick<BucketRegistry, 'bucketForDomain'>): (host: string) => Promise<boolean> {
  return async host => mayBeCustomDomain(host) && await registry.bucketForDomain(host) !== null
}

/** Paths a public host never reaches: the management API and the web console. */
const privatePaths = /^\/(?:client\/v4|_console)(?:[/?]|$)/

/**
 * The path as the router matches it: Fastify's router decodes escapes such
 * as `%63` before it picks a route, so `/%63lient/v4/...` reaches the
 * management API and must be judged as `/client/v4/...`; so is an
 * absolute-form target (`http://host/client/v4/...`). Decoding everything
 * (`%2F` too) can only make a public host refuse more, never less.
 */
function routedPath (url: string): string {
  // The absolute form (`GET http://host/client/v4/...`) is routed by its path too.
  const path = rawPath(url)
  // Every request in credential-free mode comes here (isManagementUrl): most paths have nothing to decode.
  if (!path.includes('%')) return path
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

/** Whether a request URL reaches the management API (`/client/v4`), however its path is escaped. */
export function isManagementUrl (url: string): boolean {
  return /^\/client\/v4(?:\/|$)/.test(routedPath(url))
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

function single (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** The server's own origin as a browser spells it, from the Host header and the connection's scheme (a default port left out). */
function ownOrigin (host: string, secure: boolean): string {
  const lower = host.trim().toLowerCase()
  const defaultPort = secure ? ':443' : ':80'
  return `${secure ? 'https' : 'http'}://${lower.endsWith(defaultPort) ? lower.slice(0, -defaultPort.length) : lower}`
}

/**
 * Whether a page of `origin` is the user's own: one served on a loopback
 * name (a development server on another port) that is not a route host nor
 * a custom domain (a public site's pages, served untouched there). `null`
 * (a sandboxed object, a local file) is not. A promise only for a name
 * that must be looked up among the custom domains.
 */
function isLocalOrigin (origin: string, options: SiteGuardOptions): boolean | Promise<boolean> {
  let host: string
  try {
    const url = new URL(origin)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
    host = url.hostname
  } catch {
    return false
  }
  if (!isLoopbackName(host) || options.routeHosts.has(host)) return false
  if (!mayBeCustomDomain(host)) return true
  return options.isCustomDomain(host).then(known => !known)
}

/** A preflight's refusal carries the preflight's `Vary`, as every refused preflight does: it tells nothing of the bucket. */
function preflightRefusal (refusal: DoorError | null): DoorError | null {
  if (refusal !== null) refusal.headers.vary = corsVary
  return refusal
}

/**
 * The refusal of a request whose Host is acceptable. A read with an
 * `Origin` (a browser's CORS-mode read, whose body the page could see) must
 * come from a local page; one that may change something must come from the
 * server's own origin.
 */
function originVerdict (method: string, headers: IncomingHttpHeaders, rawHost: string, options: SiteGuardOptions, secure: boolean): DoorError | null | Promise<DoorError | null> {
  if (method === 'OPTIONS') {
    // A preflight is judged as the request it asks for, so that it is never granted (`*` on a path route) where that request would be refused.
    const asked = single(headers['access-control-request-method'])?.toUpperCase()
    if (asked === undefined || asked === 'OPTIONS' || single(headers.origin) === undefined) return null
    const verdict = originVerdict(asked, headers, rawHost, options, secure)
    return verdict instanceof Promise ? verdict.then(preflightRefusal) : preflightRefusal(verdict)
  }
  if (safeMethods.has(method)) {
    const origin = single(headers.origin)
    if (origin === undefined) return null
    const refusal = new DoorError('CrossSiteRead', `Origin ${origin}.`)
    const local = isLocalOrigin(origin, options)
    if (typeof local === 'boolean') return local ? null : refusal
    return local.then(yes => yes ? null : refusal)
  }
  const fetchSite = single(headers['sec-fetch-site'])
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    return new DoorError('CrossSiteRequest', `Sec-Fetch-Site: ${fetchSite}.`)
  }
  const origin = single(headers.origin)
  if (origin !== undefined && origin.toLowerCase() !== ownOrigin(rawHost, secure)) {
    return new DoorError('CrossSiteRequest', 'The Origin is not this server\'s own.')
  }
  return null
}

/**
 * The DoorError a request deserves in credential-free mode, or null when it
 * may proceed; a promise of either only when a name must be looked up
 * among the custom domains (a route host or an IP literal is judged at once).
 * `secure`: the request came over TLS (its own origin is then `https:`).
 */
export function siteVerdict (method: string, url: string, headers: IncomingHttpHeaders, options: SiteGuardOptions, secure = false): DoorError | null | Promise<DoorError | null> {
  const rawHost = headers.host ?? ''
  const host = hostName(rawHost)
  const foreign = (): DoorError => new DoorError('ForeignHost', `Host "${host}" is not one of them.`)
  const sites = options.servesSites !== false
  // A route host first: one under `.localhost` is loopback too, but it serves a public site, whose pages must not drive the rest.
  if (options.routeHosts.has(host)) {
    if (!sites) return foreign()
    const routed = options.isRouted(host, url, false)
    // As the router: a path no route serves is still the host's if the host is a custom domain too.
    if (routed || !mayBeCustomDomain(host)) return publicVerdict(method, url, host, routed)
    return options.isCustomDomain(host).then(known => publicVerdict(method, url, host, known && options.isRouted(host, url, true)))
  }
  // HTTP/1.0 clients may omit Host; browsers never do. An IP literal is never a custom domain: judged at once.
  if (!mayBeCustomDomain(host)) return host === '' || isLoopbackName(host) || options.isOwnHost?.(host) === true ? originVerdict(method, headers, rawHost, options, secure) : foreign()
  // A custom domain before the loopback names and the door's own, as a route host: one under `.localhost` serves a public site too.
  return options.isCustomDomain(host).then(known => {
    if (known) return sites ? publicVerdict(method, url, host, options.isRouted(host, url, true)) : foreign()
    return isLoopbackName(host) || options.isOwnHost?.(host) === true ? originVerdict(method, headers, rawHost, options, secure) : foreign()
  })
}

/**
 * A public host's requests: reads of what its routes serve, nothing else (a
 * route host bound to a path prefix would otherwise serve every bucket path
 * style beside it).
 */
function publicVerdict (method: string, url: string, host: string, routed: boolean): DoorError | null {
  if (privatePaths.test(routedPath(url))) return siteHostError(host)
  if (safeMethods.has(method) && routed) return null
  return new DoorError('ForeignHost', `Host "${host}" serves its public routes only (GET, HEAD, OPTIONS).`)
}

function siteHostError (host: string): DoorError {
  return new DoorError('SiteHost', `Host "${host}" serves a public bucket.`)
}

/**
 * The hook of the management API and the console, in every mode: a route
 * host or a custom domain never serves them. A site's pages (any HTML
 * object of its bucket) would share their origin with a console opened on
 * that name, and read its token from the tab.
 */
export function siteHostHook (options: Pick<SiteGuardOptions, 'routeHosts' | 'isCustomDomain'>,
  refuse: (reply: FastifyReply, err: DoorError) => void): onRequestHookHandler {
  return (request, reply, done) => {
    const host = hostName(request.headers.host ?? '')
    if (options.routeHosts.has(host)) {
      refuse(reply, siteHostError(host))
      return
    }
    if (!mayBeCustomDomain(host)) {
      done()
      return
    }
    options.isCustomDomain(host).then(known => { if (known) refuse(reply, siteHostError(host)); else done() }, (err: Error) => { done(err) })
  }
}

/**
 * The guard as an onRequest hook, for the requests `applies` selects;
 * `refuse` answers a refusal in the door's own form. Callback-style: it runs
 * for every request and decides most of them at once.
 */
export function siteGuardHook (options: SiteGuardOptions, applies: (request: FastifyRequest) => boolean,
  refuse: (reply: FastifyReply, err: DoorError) => void): onRequestHookHandler {
  // A probe's Host is looked up as the router looks it up (bounded, a failure taken for no domain): `localhost` stays alive while the catalog is down.
  const forProbes: SiteGuardOptions = {
    routeHosts: options.routeHosts,
    isRouted: options.isRouted,
    isOwnHost: options.isOwnHost,
    servesSites: options.servesSites,
    isCustomDomain: async host => await boundedLookup(async () => await options.isCustomDomain(host) ? true : null) === true
  }
  return (request, reply, done) => {
    if (!applies(request)) {
      done()
      return
    }
    const path = rawPath(request.url)
    const secure = (request.raw.socket as { encrypted?: boolean } | null)?.encrypted === true
    const verdict = siteVerdict(request.method, request.url, request.headers, isProbePath(path) ? forProbes : options, secure)
    if (verdict === null) done()
    else if (verdict instanceof DoorError) refuse(reply, verdict)
    else verdict.then(v => { if (v === null) done(); else refuse(reply, v) }, (err: Error) => { done(err) })
  }
}

