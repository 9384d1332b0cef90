/**
 * Whether the server listens on loopback only, which is what lets a server
 * without a token accept writes and open the management API without
 * credentials (http/auth.ts, s3/auth.ts, mgmt/auth.ts).
 *
 * The name alone does not decide it: `localhost` and `*.localhost` name
 * loopback by convention (RFC 6761), but /etc/hosts or a resolver may map
 * `files.localhost` to a network address, and the server would then take
 * writes from the network without credentials. So the name is resolved as
 * the listen will resolve it, and a localhost name that resolves to an
 * address other than loopback is refused at start-up, with the addresses
 * in the message: it is a mistake in the setup, and the server's other
 * judges of a name (the site guard's Host rules, the console's URL) would
 * go on taking it for loopback. Any other name is not loopback only, what
 * ever it resolves to (as before: a token is needed).
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { isLoopbackHost } from '../http/auth.js'
import { isLoopbackAddress } from '../http/site-guard.js'
import { StartupError } from './preflight.js'

/** Every address a host name resolves to (dns.lookup with `all`); a test passes its own. */
export type LookupAll = (host: string) => Promise<Array<{ address: string }>>

const lookupAll: LookupAll = async host => await lookup(host, { all: true })

/**
 * True when `host` (`--host`) is loopback only: a loopback address, or a
 * localhost name every address of which is loopback. Throws a StartupError
 * for a localhost name that resolves elsewhere. A name that does not
 * resolve is left to the listen, which reports it.
 */
export async function loopbackOnlyHost (host: string, resolve: LookupAll = lookupAll): Promise<boolean> {
  if (!isLoopbackHost(host)) return false
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1')
  if (isIP(bare) !== 0) return true
  let addresses: string[]
  try {
    addresses = (await resolve(bare)).map(a => a.address)
  } catch {
    return false
  }
  const elsewhere = addresses.filter(address => !isLoopbackAddress(address))
  if (elsewhere.length > 0) {
    throw new StartupError(`--host ${host} resolves to ${elsewhere.join(', ')}, which is not loopback: a localhost name must name this machine's loopback interface; give the address to listen on instead (and --token for a network address)`)
  }
  return addresses.length > 0
}
