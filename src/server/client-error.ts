/**
 * Answers to requests Node's HTTP parser refuses before any route runs
 * (malformed request lines or headers, headers over 16 KiB, headers that did
 * not arrive within the headers timeout), in the door's JSON envelope.
 *
 * A CONNECT, which Node would drop unanswered, is answered 405 here too.
 *
 * Two refusals Node would make itself with an empty body are made here in
 * the envelope too, closing the connection as Node does: an HTTP/1.1
 * request without `Host` (400, code 40007; app.ts turns Node's own check
 * off) and an `Expect` other than 100-continue (417, code 41700, answered
 * before the body is read; Node answers 100-continue itself). A transfer
 * coding other than chunked, refused by doors/request-head.ts, is answered
 * 501 (code 50101).
 *
 * None of these reaches Fastify, so no door counts them for the metrics:
 * each is counted here, under `other`, when its answer is written
 * (doors/request-meter.ts's `refused`).
 *
 * Fastify's default handler logs the parser's error with its `rawPacket`,
 * the request's raw bytes, Authorization header included; this one logs the
 * error's code only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { adoptConnectSocket, endWith, rawAnswer, settledWithoutAnswer, type BareAnswer } from '../doors/bare-answer.js'
import type { PortMeter } from '../doors/request-meter.js'
import { UNSUPPORTED_TRANSFER_CODING } from '../doors/request-head.js'
import { receivingBody, whenAnswered } from './connection.js'
import { DoorErrors, failure, type DoorErrorName } from '../http/errors.js'
import { objectMethods } from '../http/route-scope.js'

function errorFor (code: string | undefined): DoorErrorName {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'RequestTimeout'
  if (code === 'HPE_HEADER_OVERFLOW') return 'HeadersTooLarge'
  if (code === UNSUPPORTED_TRANSFER_CODING) return 'UnsupportedTransferCoding'
  return 'InvalidRequest'
}

/** Fastify's `clientErrorHandler` option (called with the instance as `this`), counting each refusal on `meter`. */
export function clientErrorAnswer (meter: PortMeter | null): (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket) => void {
  return function (err, socket) {
    if (settledWithoutAnswer(err, socket, receivingBody)) return
    this.log.debug({ code: err.code }, 'client error')
    const answer = envelopeAnswer(errorFor(err.code))
    answerLast(socket, rawAnswer(answer), () => { meter?.refused(socket, answer.status) })
  }
}

/** The HTTP port's answer to plain HTTP sent to it while it serves HTTPS (doors/bare-answer.ts). */
export function plainHttpAnswer (): BareAnswer {
  return envelopeAnswer('PlainHttpToTls')
}

function envelopeAnswer (name: DoorErrorName): BareAnswer {
  const { code, status, message } = DoorErrors[name]
  return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(failure(code, message)) }
}

/**
 * Writes a parser refusal after the answers of the requests pipelined
 * before it (they were whole and take effect), then closes the connection.
 * `written` runs once the answer is queued, before the close (the socket's
 * byte counts include it then).
 */
export function answerLast (socket: Socket, answer: string, written?: () => void): void {
  whenAnswered(socket, () => {
    if (socket.writable) {
      socket.write(answer)
      written?.()
    }
    socket.destroy()
  })
}

/**
 * An onRequest hook: an HTTP/1.1 request without `Host` (RFC 9112 3.2) is
 * answered 400 (40007) in the envelope, and its connection closed.
 * Callback-style, because it runs for every request.
 */
export function requireHost (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (request.headers.host !== undefined || request.raw.httpVersion !== '1.1') {
    done()
    return
  }
  const { code, status, message } = DoorErrors.InvalidRequest
  void reply.code(status).header('connection', 'close').type('application/json')
    .send(failure(code, `${message} An HTTP/1.1 request must have a Host header.`))
}

/**
 * The server's 'connect' listener: Node hands a CONNECT (a proxy's method)
 * to no request listener, and without one drops its connection unanswered.
 * It is 405 (40500) in the envelope, with `Allow`, the connection closed.
 */
export function connectListener (meter: PortMeter | null, idleMs: number, server: EventEmitter): (request: IncomingMessage, socket: Socket) => void {
  return (_request, socket) => {
    adoptConnectSocket(socket, idleMs, server)
    const answer = Object.assign(envelopeAnswer('MethodNotAllowed'), { headers: { allow: objectMethods } })
    answerLast(socket, rawAnswer(answer), () => { meter?.refused(socket, answer.status) })
  }
}


/**
 * The server's 'checkExpectation' listener (Node emits it for an `Expect`
 * other than 100-continue): 417 (41700) in the envelope, the body unread,
 * and the connection closed after the answer (Node writes it after the
 * answers of the requests pipelined before it).
 */
export function expectationListener (log: FastifyBaseLogger, meter: PortMeter | null = null): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    log.debug({ expect: request.headers.expect }, 'expectation refused')
    const answer = envelopeAnswer('ExpectationFailed')
    endWith(response, answer, () => { meter?.refused(request.socket, answer.status) })
  }
}
