/**
 * Answers to requests Node's HTTP parser refuses before any route runs
 * (malformed request lines or headers, headers over 16 KiB, headers that did
 * not arrive within the headers timeout), in the door's JSON envelope.
 *
 * Fastify's default handler logs the parser's error with its `rawPacket`,
 * the request's raw bytes, Authorization header included; this one logs the
 * error's code only.
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { whenAnswered } from './connection.js'
import { DoorErrors, failure, type DoorErrorName } from './errors.js'

function errorFor (code: string | undefined): DoorErrorName {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'RequestTimeout'
  if (code === 'HPE_HEADER_OVERFLOW') return 'HeadersTooLarge'
  return 'InvalidRequest'
}

/** Fastify's `clientErrorHandler` option (called with the instance as `this`). */
export function answerClientError (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const { code, status, message } = DoorErrors[errorFor(err.code)]
  this.log.debug({ code: err.code }, 'client error')
  const body = JSON.stringify(failure(code, message))
  answerLast(socket, `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

/**
 * Writes a parser refusal after the answers of the requests pipelined
 * before it (they were whole and take effect), then closes the connection.
 */
export function answerLast (socket: Socket, answer: string): void {
  whenAnswered(socket, () => {
    if (socket.writable) socket.write(answer)
    socket.destroy()
  })
}
