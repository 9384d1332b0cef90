/**
 * The S3 port's virtual-host domains: a request to `<bucket>.<domain>`
 * names the bucket in its host (plugin.ts resolves it), and a share link
 * must not be sent to such a name (server/share-endpoint.ts). Kept apart
 * from the door so that the gateway reads it without loading the door.
 */
import { hostName } from '../bucket/index.js'

/** The virtual-host domains of the port: `localhost`, then those configured, as host names. */
export function s3Domains (configured: string[]): string[] {
  return [...new Set(['localhost', ...configured.map(d => hostName(d))])]
}
