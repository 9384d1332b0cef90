/**
 * `Expect: 100-continue` answered when the body is wanted, not before. Node
 * answers 100 as soon as the headers arrive, so a client would send a
 * body the server then refuses unread (a wrong signature, a missing bucket,
 * an object over the size limit). With `deferContinue` on a server, a
 * door sends the 100 by calling `continueBody` just before it reads the
 * body; a request refused before that gets its final answer alone, and the
 * client never sends the body (RFC 9110 10.1.1).
 *
 * HTTP-level like request-metadata.ts, and kept here for the same reason:
 * every door reads bodies and none imports another.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'

const awaiting = Symbol.for('fsbucket.expect-continue')

interface Awaiting { [awaiting]?: ServerResponse }

/** Makes `server` hold the 100 of an `Expect: 100-continue` request until `continueBody` (its own 'request' listeners run as usual). */
export function deferContinue (server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    (request as IncomingMessage & Awaiting)[awaiting] = response
    server.emit('request', request, response)
  })
}

/** Sends the 100 a request is waiting for, if any: call it before reading the body. */
export function continueBody (request: IncomingMessage): void {
  const response = (request as IncomingMessage & Awaiting)[awaiting]
  if (response === undefined) return
  ;(request as IncomingMessage & Awaiting)[awaiting] = undefined
  if (!response.headersSent && !response.writableEnded) response.writeContinue()
}

/**
 * Sends the 100 a request is waiting for when its body is first read, by
 * whoever reads it: a door that hands the body to the engine as it is
 * (a part upload) lets the engine's checks (the upload exists, the key is
 * its own) refuse the request before the client sends a byte. `body` is
 * the stream the engine reads, when the door reads the request through
 * others (an aws-chunked decoder): the 100 waits for its first read.
 */
export function continueOnRead (request: IncomingMessage, body: Readable = request): void {
  if ((request as IncomingMessage & Awaiting)[awaiting] === undefined) return
  const read = body._read.bind(body)
  body._read = (size: number): void => {
    body._read = read
    continueBody(request)
    read(size)
  }
}
