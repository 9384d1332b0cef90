/**
 * What the server promises about one connection, below the routes.
 *
 * Order. Node parses pipelined requests as they arrive and would run their
 * handlers side by side, so `PUT k` then `DELETE k` written back to back
 * could delete first and store second, while both answers say success.
 * Here a request of a connection starts only once the one before it on that
 * connection has been answered (or failed): the requests of one connection
 * take effect in the order they were sent. Connections stay independent.
 *
 * Idle clients. A connection that sends and receives nothing for the idle
 * timeout is dealt with by `onIdleConnection`: a request whose body stopped
 * arriving is answered 408 (code 40800) and the connection closed, so the
 * engine discards the partial upload; an answer the client stopped reading
 * is cut; a request whose body has fully arrived is left alone (the server
 * is the slow one, committing a large write, and its answer must not lie).
 * The headers of a request must arrive within the same time (Node's
 * `headersTimeout`; the client-error handler answers 408).
 *
 * The S3 listener gets the same two promises: the composition root hands
 * `inConnectionOrder` and `idleConnectionListener` (with the S3 answer) to
 * it, so both ports keep them the same way.
 */
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DoorErrors, failure } from './errors.js'

interface ConnectionState {
  /** Settles when the latest request of the connection has been answered. */
  tail: Promise<void>
  /** Requests not yet answered, oldest first. */
  pending: FastifyReply[]
}

const connections = new WeakMap<Socket, ConnectionState>()

function answered (reply: FastifyReply): Promise<void> {
  return new Promise(resolve => {
    reply.raw.once('finish', resolve)
    reply.raw.once('close', resolve)
  })
}

/** An onRequest hook: waits until the connection's earlier requests have been answered. */
export async function inConnectionOrder (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const socket = request.raw.socket
  let state = connections.get(socket)
  if (state === undefined) {
    state = { tail: Promise.resolve(), pending: [] }
    connections.set(socket, state)
  }
  const earlier = state.tail
  const done = answered(reply)
  const own = state
  own.pending.push(reply)
  own.tail = done
  void done.then(() => {
    const at = own.pending.indexOf(reply)
    if (at !== -1) own.pending.splice(at, 1)
  })
  await earlier
}

/** What a request whose body stopped arriving is answered before its connection closes. */
export interface IdleAnswer {
  status: number
  contentType: string
  body: string
}

/** A server's 'timeout' listener (Node's socket inactivity timer, set to the idle timeout) answering `answer`. */
export function idleConnectionListener (answer: IdleAnswer): (socket: Socket) => void {
  return socket => {
    const reply = connections.get(socket)?.pending[0]
    if (reply === undefined || reply.raw.headersSent || reply.request.raw.complete) {
      if (reply === undefined || reply.raw.headersSent) socket.destroy()
      return
    }
    reply.hijack()
    reply.raw.writeHead(answer.status, { 'content-type': answer.contentType, 'content-length': Buffer.byteLength(answer.body), connection: 'close' })
    reply.raw.end(answer.body, () => { socket.destroy() })
  }
}

/** The gateway's 'timeout' listener: 408 with code 40800. */
export const onIdleConnection = idleConnectionListener({
  status: DoorErrors.RequestTimeout.status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(failure(DoorErrors.RequestTimeout.code, DoorErrors.RequestTimeout.message))
})
