/**
 * Requests whose header lines Node cut short are refused, on both doors.
 *
 * Node keeps at most a server's `maxHeadersCount` header lines of a request
 * and drops the rest without a word (its 16 KiB bound counts the bytes of
 * names and values only, so 2,000 short lines pass it). A lost `If-Match`
 * or `Content-MD5` would let through a write its own request refuses. So
 * each door's server keeps MAX_HEADER_LINES lines, and a request that
 * reached the count is answered as headers too large are: the door's own
 * answer to Node's `HPE_HEADER_OVERFLOW` (431, after the answers of the
 * requests pipelined before it, then the connection closes), before any
 * route or read beside Fastify sees it.
 */
import type { RequestListener, Server } from 'node:http'

export const MAX_HEADER_LINES = 2000

function overflow (): NodeJS.ErrnoException {
  return Object.assign(new Error('too many header lines'), { code: 'HPE_HEADER_OVERFLOW' })
}

/** Sets `server`'s count and puts the refusal in front of its 'request' listeners (call it once they are all on). */
export function refuseCutHeaders (server: Server): void {
  server.maxHeadersCount = MAX_HEADER_LINES
  const listeners = server.listeners('request') as RequestListener[]
  server.removeAllListeners('request')
  server.on('request', function (this: Server, request, response) {
    if (request.rawHeaders.length >= 2 * MAX_HEADER_LINES) {
      this.emit('clientError', overflow(), request.socket)
      return
    }
    for (const listener of listeners) listener.call(this, request, response)
  })
}
