/**
 * The site guard (http/site-guard.ts) on the S3 port. In development mode
 * (no key pair, no gateway token, loopback only) the S3 API accepts unsigned
 * requests, so a web page could send it simple cross-site requests (a
 * multi-object delete is a POST with any body), and a DNS-rebound page could
 * use it as its own origin. The same Host and Origin rules as the gateway's
 * apply there, answered as S3 answers a refusal: 403 AccessDenied in XML,
 * with a message that speaks of this port. Virtual-host names under
 * `localhost` and the `--s3-domain` domains (as the router reads them: no
 * port, no trailing dot) are the server's own; the gateway's route hosts
 * and custom domains are not, even under `localhost` or one of those
 * domains (this port serves no site), and a page of theirs is not a local
 * page (it is a public site's).
 */
import type { FastifyInstance } from 'fastify'
import { hostName, type BucketRegistry } from '../bucket/index.js'
import { DoorErrors } from '../http/errors.js'
import { customDomainLookup, siteGuardHook, type SiteGuardOptions } from '../http/site-guard.js'
import { errorDocument } from '../s3/index.js'
import { noteAnswerCode } from '../doors/request-log.js'

/** Whether a host name (as `hostName` gives it) is one of the `--s3-domain` domains (as given: read once, as the router reads them) or a sub-domain of one. */
export function underDomains (domains: string[]): (host: string) => boolean {
  const names = domains.map(domain => hostName(domain)).filter(name => name !== '')
  return host => names.some(name => host === name || host.endsWith(`.${name}`))
}

const unsigned = 'This S3 port has no credentials configured (development mode)'

/** The guard's refusals in this port's words, by the gateway's code (its detail follows). */
const s3Messages: Record<number, string> = {
  [DoorErrors.ForeignHost.code]: `${unsigned}, so it answers only to loopback host names and to its --s3-domain domains and their sub-domains; the gateway's routes and custom domains are served on the HTTP port.`,
  [DoorErrors.CrossSiteRequest.code]: `${unsigned}, so it refuses requests that change something unless they come from its own origin; give it a key pair (--s3-access-key-id, --s3-secret-access-key) to serve web pages of other origins, under the bucket's CORS rules.`,
  [DoorErrors.CrossSiteRead.code]: `${unsigned}, so it answers reads that carry an Origin, and their preflights, from local pages only.`
}

export interface S3GuardOptions {
  /** The gateway's route hosts: public sites, whose pages are not the user's own, and no names of this port. */
  routeHosts: ReadonlySet<string>
  /** The `--s3-domain` domains. */
  domains: string[]
  /** Where the gateway's custom domains are read (public sites too, at request time). */
  registry: Pick<BucketRegistry, 'bucketForDomain'>
}

export function guardS3Site (s3: FastifyInstance, { routeHosts, domains, registry }: S3GuardOptions): void {
  // No route serves here, and the gateway's route hosts and custom domains are not this port's: such a Host is refused.
  const guard: SiteGuardOptions = { routeHosts, isRouted: () => false, servesSites: false, isCustomDomain: customDomainLookup(registry), isOwnHost: underDomains(domains) }
  s3.addHook('onRequest', siteGuardHook(guard, () => true, (reply, err) => {
    // The S3 API's own hook has given the request its id (and the x-amz-request-id header) by now.
    const requestId = reply.request.s3RequestId
    const fields: Record<string, string> = requestId === undefined || requestId === '' ? {} : { RequestId: requestId }
    noteAnswerCode(reply.request.raw, 'AccessDenied')
    const message = s3Messages[err.code]
    void reply.code(403).type('application/xml').send(errorDocument('AccessDenied', message === undefined ? err.message : [message, err.detail].filter(Boolean).join(' '), fields))
  }))
}
