/**
 * Answers written outside a route, by either door: a request Node's parser
 * refused, one whose body or headers stopped arriving, an `Expect` that
 * cannot be met. Each closes its connection (what follows on it cannot be
 * trusted to be a request).
 *
 * HTTP-level like expect-continue.ts, and kept here for the same reason:
 * every door makes these answers and none imports another.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http'
import type { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import { handshakesOf } from './handshakes.js'

/** The message of the answer to plain HTTP sent to a TLS port, each door's own envelope around it. */
export const plainHttpMessage = 'This port speaks HTTPS only: send the request to its https:// URL, not http://.'

export interface BareAnswer {
  status: number
  contentType: string
  body: string
  /** More headers (the S3 port's request id). */
  headers?: Record<string, string>
}

/**
 * Whether a parser's error on `socket` needs no answer, the connection
 * settled here: the client reset it or it is gone already, or the client
 * ended its side in the middle of a request's body (that request fails as
 * cut off, counted `aborted` by its door, and is the only one: no one
 * reads a second answer, and none is counted). Both ports' parser
 * handlers ask it first.
 */
export function settledWithoutAnswer (err: NodeJS.ErrnoException, socket: Socket, receivingBody: (socket: Socket) => boolean): boolean {
  if (err.code === 'ECONNRESET' || socket.destroyed) return true
  if (err.code !== 'HPE_INVALID_EOF_STATE' || !receivingBody(socket)) return false
  socket.destroy()
  return true
}

/** The answer as the bytes of an HTTP/1.1 response, for a socket no response object owns. */
export function rawAnswer ({ status, contentType, body, headers = {} }: BareAnswer): string {
  let more = ''
  for (const name in headers) more += `${name}: ${headers[name]}\r\n`
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: ${contentType}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${more}Connection: close\r\n\r\n${body}`
}

/** The answer through a response object; `then` runs once it is written. */
export function endWith (response: ServerResponse, { status, contentType, body, headers = {} }: BareAnswer, then?: () => void): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), connection: 'close', ...headers })
  response.end(body, then)
}

/** The handshake errors of a client that spoke plain HTTP to a TLS port: OpenSSL knows a GET, HEAD, POST or PUT (3.5 also a DELETE, PATCH, OPTIONS or TRACE), and a proxy's CONNECT. */
const plainHttpErrors = new Set(['ERR_SSL_HTTP_REQUEST', 'ERR_SSL_HTTPS_PROXY_REQUEST'])

/**
 * On a TLS port, answers a client that spoke plain HTTP to it (an
 * `http://` URL for an `https://` port, which OpenSSL finds at the
 * handshake when the request is a GET, HEAD, POST, PUT or CONNECT, and
 * with OpenSSL 3.5, Node 24's, a DELETE, PATCH, OPTIONS or TRACE too) with
 * `answer`, in the clear, as nginx does, instead of a reset the client
 * cannot explain; the request's method is not known by then, so a HEAD
 * gets the body too, which the connection's close bounds. Other failed
 * handshakes (other methods among them: OpenSSL cannot tell them from a
 * wrong TLS version) end as Node ends them. The answer is written on the
 * raw connection (doors/handshakes.ts). Node closes it right
 * after the handshake's failure; the answer, written at once on a
 * connection whose send buffer holds nothing else, is out by then.
 */
export function answerPlainHttp (server: EventEmitter, answer: () => BareAnswer): void {
  const handshakes = handshakesOf(server)
  server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const raw = handshakes.rawOf(socket)
    socket.destroy()
    if (!plainHttpErrors.has(err.code ?? '') || raw === undefined || raw.destroyed || !raw.writable) return
    raw.on('error', () => { raw.destroy() })
    raw.end(rawAnswer(answer()))
  })
}

/**
 * Takes back a socket Node handed to 'connect': Node took its error, drain
 * and timeout listeners off, and its refusal may wait for an answer
 * pipelined before it. A reset meanwhile would be an error nothing hears
 * (the process would end), the answer would stop at the first full socket
 * buffer, and a stalled one would be cut by no idle timeout. So errors end
 * the connection, a drain goes on to the answer in flight (as Node's own
 * listener passes it), and silence goes to the server's 'timeout'
 * listeners, the port's own idle rule (or, without one, ends it).
 */
export function adoptConnectSocket (socket: Socket, idleMs: number, server: EventEmitter): void {
  socket.on('error', () => { socket.destroy() })
  socket.on('drain', () => { (socket as Socket & { _httpMessage?: EventEmitter | null })._httpMessage?.emit('drain') })
  if (idleMs > 0) socket.setTimeout(idleMs, () => { if (!server.emit('timeout', socket)) socket.destroy() })
}
