/**
 * What HTTP/1.1 refuses of a request head that Node lets through, for both
 * doors, before any route or read beside Fastify sees the request.
 *
 * - Header lines past the count Node keeps: Node keeps at most a server's
 *   `maxHeadersCount` lines and drops the rest without a word (its 16 KiB
 *   bound counts the bytes of names and values only, so 2,000 short lines
 *   pass it). A lost `If-Match` or `Content-MD5` would let through a write
 *   its own request refuses. Each door's server keeps MAX_HEADER_LINES
 *   lines, and a request that reached the count is answered as headers too
 *   large are (the door's answer to Node's `HPE_HEADER_OVERFLOW`).
 * - More than one `Host` line, or a `Host` that is no host (RFC 9112 3.2:
 *   400). Node keeps the first line; the site guard must judge the host the
 *   request names, not one of several.
 * - A request target in absolute form (`GET http://host/path`), which a
 *   proxy sends: its authority is the request's host (RFC 9112 3.2.2), so
 *   the target becomes its path and query and `Host` becomes the authority,
 *   and every check after this one (the site guard's above all) judges that.
 *   One with user information, no host or another scheme than http(s) is
 *   refused, as is the asterisk form on another method than OPTIONS.
 * - A `Transfer-Encoding` naming another coding than `chunked` (`gzip,
 *   chunked`): Node takes the chunks off and hands on the bytes still
 *   coded, which a PUT would store as the object. Refused as RFC 9112 6.1
 *   says a coding not understood is (501), as S3 refuses it.
 * - Behind a request refused here, or an `Expect` the door refuses (417),
 *   nothing pipelined on the same connection is carried out.
 *
 * A refusal is the door's own answer to a request Node's parser refuses
 * (its `clientError` handler: 431 or 400, after the answers of the
 * requests pipelined before it, then the connection closes); the requests
 * pipelined after it are not carried out.
 */
import type { IncomingMessage, RequestListener, Server } from 'node:http'
import type { Socket } from 'node:net'

export const MAX_HEADER_LINES = 2000

/**
 * `host[:port]`: a bracketed IP literal or a registered name of RFC 3986's
 * characters, and digits for a port. The name is never empty: an http(s)
 * URI has a host (RFC 9110 4.2), and a site guard must not take `Host: `
 * or `Host: :8787` for a request without one (HTTP/1.0's, which may omit it).
 */
const hostValue = /^(?:\[[0-9A-Za-z:.%]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::[0-9]*)?$/
/** `http://` or `https://`, any case, then the authority up to the path, query or end. */
const absoluteForm = /^https?:\/\/([^/?#]*)([^#]*)$/i

function refusal (code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code })
}

/** Why the request's head is refused, or null; an absolute-form target is made origin-form on the way. */
export function headRefusal (request: IncomingMessage): NodeJS.ErrnoException | null {
  const raw = request.rawHeaders
  if (raw.length >= 2 * MAX_HEADER_LINES) return refusal('HPE_HEADER_OVERFLOW', 'too many header lines')
  let hosts = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') hosts++
  if (hosts > 1) return refusal('ERR_INVALID_HOST', 'more than one Host header line')
  const url = request.url ?? ''
  if (url === '*') {
    // The asterisk form is OPTIONS's alone (RFC 9112 3.2.4).
    if (request.method !== 'OPTIONS') return refusal('ERR_INVALID_URL', 'a request target of * on another method than OPTIONS')
  } else if (url.charCodeAt(0) !== 47) {
    const absolute = absoluteForm.exec(url)
    if (absolute === null || absolute[1] === '' || absolute[1].includes('@')) return refusal('ERR_INVALID_URL', 'a request target that is neither a path nor an http(s) URL with a host')
    request.headers.host = absolute[1]
    request.url = absolute[2] === '' ? '/' : absolute[2].startsWith('?') ? `/${absolute[2]}` : absolute[2]
  }
  const host = request.headers.host
  if (host !== undefined && !hostValue.test(host)) return refusal('ERR_INVALID_HOST', 'a Host that is no host')
  const codings = request.headers['transfer-encoding']
  if (codings !== undefined && codings !== 'chunked' && !onlyChunked(codings)) return refusal(UNSUPPORTED_TRANSFER_CODING, 'a transfer coding other than chunked')
  return null
}

/** The code of the refusal of a transfer coding other than `chunked` (each door answers it 501). */
export const UNSUPPORTED_TRANSFER_CODING = 'ERR_UNSUPPORTED_TRANSFER_CODING'

/** Whether a Transfer-Encoding value (its lines joined with `, `) names no coding but `chunked` (empty list items count for nothing: RFC 9110 5.6.1). */
function onlyChunked (codings: string): boolean {
  return codings.split(',').every(coding => {
    const name = coding.trim().toLowerCase()
    return name === '' || name === 'chunked'
  })
}

/**
 * Connections whose request was refused here: Node's parser goes on with
 * the bytes pipelined behind it, but nothing after a refusal is carried out
 * (the refusal closes the connection once the answers before it are out).
 */
const refusedConnections = new WeakSet<Socket>()

/** Sets `server`'s count and puts the refusals in front of its 'request' and 'checkExpectation' listeners (call it once they are all on). */
export function guardRequestHead (server: Server): void {
  server.maxHeadersCount = MAX_HEADER_LINES
  const listeners = server.listeners('request') as RequestListener[]
  server.removeAllListeners('request')
  // An `Expect` the door refuses (417) closes the connection after its answer: nothing pipelined behind it is carried out either.
  const expectations = server.listeners('checkExpectation') as RequestListener[]
  if (expectations.length > 0) {
    server.removeAllListeners('checkExpectation')
    server.on('checkExpectation', function (this: Server, request, response) {
      refusedConnections.add(request.socket)
      for (const listener of expectations) listener.call(this, request, response)
    })
  }
  server.on('request', function (this: Server, request, response) {
    if (refusedConnections.has(request.socket)) return
    const refused = headRefusal(request)
    if (refused !== null) {
      refusedConnections.add(request.socket)
      this.emit('clientError', refused, request.socket)
      return
    }
    for (const listener of listeners) listener.call(this, request, response)
  })
}
