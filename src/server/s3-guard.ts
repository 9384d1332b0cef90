/**
 * The site guard (http/site-guard.ts) on the S3 port. In development mode
 * (no key pair, no gateway token, loopback only) the S3 API accepts unsigned
 * requests, so a web page could send it simple cross-site requests (a
 * multi-object delete is a POST with any body), and a DNS-rebound page could
 * use it as its own origin. The same Host and Origin rules as the gateway's
 * apply there, answered as S3 answers a refusal: 403 AccessDenied in XML.
 * Virtual-host names under `localhost` and the `--s3-domain` domains are the
 * server's own.
 */
import type { FastifyInstance } from 'fastify'
import { siteGuardHook, type SiteGuardOptions } from '../http/site-guard.js'

function xmlText (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** Whether `host` is one of the S3 virtual-host domains or a sub-domain of one. */
export function underDomains (host: string, domains: string[]): boolean {
  return domains.some(domain => {
    const lower = domain.toLowerCase()
    return host === lower || host.endsWith(`.${lower}`)
  })
}

export function guardS3Site (s3: FastifyInstance, guard: SiteGuardOptions): void {
  s3.addHook('onRequest', siteGuardHook(guard, () => true, (reply, err) => {
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${xmlText(err.message)}</Message></Error>`
    void reply.code(403).type('application/xml').send(body)
  }))
}
