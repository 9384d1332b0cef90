/**
 * The S3 port's public origin, which share links name (the management
 * API's `share-links`, src/mgmt/routes/share-links.ts): `--s3-endpoint`
 * (FSBUCKET_S3_ENDPOINT) when the operator gave one (a proxy or a public
 * name in front of the S3 port), else the name the request reached the
 * gateway by (its Host header, without the port) with the S3 port, in the
 * server's scheme: a browser that reached the console by some name reaches
 * the S3 port by the same name. A server without an S3 port has no origin
 * to give (null).
 *
 * A name the S3 port reads as a virtual host (`photos.localhost`, a
 * sub-domain of an `--s3-domain`) would make the link's path-style path a
 * key of that bucket (`/photos/a.txt` on `photos.localhost` is the key
 * `photos/a.txt` of `photos`): the link names the domain itself instead,
 * where the path is read as the bucket and key it was signed for.
 *
 * The Host header is the caller's to choose, and so is the link it gets
 * back: nobody else's answer depends on it.
 */
import type { ShareEndpoint } from '../mgmt/index.js'

export interface ShareEndpointOptions {
  /** `--s3-endpoint`: an origin (`https://s3.example.test`), already checked. */
  configured?: string
  scheme: 'http' | 'https'
  /** The S3 port listened on (known once it listens: port 0 picks one); null: none. */
  s3Port: () => number | null
  /** The listening address, for a request without a usable Host. */
  host: string
  /** The S3 port's virtual-host domains (`localhost` and the `--s3-domain`s, as host names). */
  domains: string[]
}

/** `host` as a URL's host part: an IPv6 address in brackets, a wildcard address reached on loopback. */
function urlHost (host: string): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable
}

/** The name of a Host header (`example.test:8787` → `example.test`, `[::1]:8787` → `[::1]`), or null when it is none. */
function hostName (header: string | undefined): string | null {
  if (header === undefined || header === '') return null
  try {
    const url = new URL(`http://${header}`)
    // Anything past the authority (a path, credentials) makes the header no host at all.
    return url.username === '' && url.pathname === '/' && url.search === '' && url.hash === '' && url.hostname !== '' ? url.hostname : null
  } catch {
    return null
  }
}

export function shareEndpointOf (options: ShareEndpointOptions): ShareEndpoint {
  return requestHost => {
    const port = options.s3Port()
    if (port === null) return null
    if (options.configured !== undefined) return new URL(options.configured)
    const name = hostName(requestHost)
    // As the S3 port reads a host: a final dot does not count.
    const domain = name === null ? undefined : options.domains.find(d => name.replace(/\.$/, '').endsWith(`.${d}`))
    return new URL(`${options.scheme}://${domain ?? name ?? urlHost(options.host)}:${port}`)
  }
}
