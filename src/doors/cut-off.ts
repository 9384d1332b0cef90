/**
 * What fails after the idle timer answered a request whose body stopped
 * arriving (server/connection.ts answers 408 or RequestTimeout, then fails
 * the body, so the engine discards the partial upload): that failure is the
 * cut, not a fault, and the answer is already out. Left to Fastify, a
 * handler's rejection after its reply was sent is logged as an error, and a
 * body parser's is sent to the reply again, with a warning.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'

const cutOff = new WeakSet<IncomingMessage>()

/** Marks `request` as answered by the idle timer, before its body is failed. */
export function markCutOff (request: IncomingMessage): void {
  cutOff.add(request)
}

/**
 * Whether the client of `request` went away (its connection is gone): what
 * then fails is no fault of the server. The socket, not the request stream:
 * a request whose body was read whole counts as gone too. An injected
 * request's stand-in socket (light-my-request) has no such state: never gone.
 */
export function clientGone (request: IncomingMessage): boolean {
  return request.socket?.destroyed === true
}

/** Largest unread rest of a refused request's body Node may read and discard to keep its connection (as clients expect after a 412). */
const DISCARDED_BODY_BYTES = 64 * 1024

/**
 * Whether an answer to `request`, refused before or while its body streamed,
 * must close its connection: Node reads what is left of the body to find
 * the next request, which stalls the connection when the rest is large,
 * of no stated length (chunked), or may never come (a client waiting for
 * its 100 Continue). A small body is read and dropped: the connection stays.
 */
export function leavesBodyUnread (request: IncomingMessage): boolean {
  if (request.complete) return false
  if (request.headers.expect !== undefined) return true
  const length = request.headers['content-length']
  return length === undefined || !/^\d+$/.test(length) || Number(length) > DISCARDED_BODY_BYTES
}

/** Whether the idle timer answered `request` and failed its body. */
export function wasCutOff (request: IncomingMessage): boolean {
  return cutOff.has(request)
}

/**
 * Runs a route's handler. What fails once its answer went out cannot be
 * answered: the idle timer's cut is logged at debug, anything else at error
 * (as Fastify would), and neither is thrown.
 */
export async function answeredOnce (request: FastifyRequest, reply: FastifyReply, handle: () => Promise<unknown>): Promise<unknown> {
  try {
    return await handle()
  } catch (err) {
    if (!reply.sent) throw err
    if (wasCutOff(request.raw)) request.log.debug({ err }, 'failed after the idle timeout\'s answer')
    else request.log.error({ err }, 'failed after its answer')
    return undefined
  }
}
