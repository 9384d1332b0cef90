/**
 * What the server promises about one connection, below the routes.
 *
 * Order. Node parses pipelined requests as they arrive and would run their
 * handlers side by side, so `PUT k` then `DELETE k` written back to back
 * could delete first and store second, while both answers say success.
 * Here a request of a connection starts only once the one before it on that
 * connection has been answered (or failed): the requests of one connection
 * take effect in the order they were sent. Connections stay independent.
 * An answer that closes its connection (`Connection: close`) is the last:
 * the requests Node already parsed behind it never start.
 *
 * Idle clients. A connection that sends and receives nothing for the idle
 * timeout is dealt with by `onIdleConnection`: a request whose body stopped
 * arriving is answered 408 (code 40800), the connection closed and the body
 * failed, so the engine discards the partial upload (its file and handle,
 * as when the client goes away); an answer the client stopped reading
 * is cut; a request whose body has fully arrived is left alone (the server
 * is the slow one, committing a large write, and its answer must not lie).
 * The headers of a request must arrive within the same time (Node's
 * `headersTimeout`, which the client-error handler answers 408; headers
 * that stop arriving altogether meet the idle timer first, which answers
 * them the same way). An idle kept-alive connection is closed quietly.
 *
 * Shutdown. Node's `server.close()` closes the connections idle at that
 * moment and waits for the others, but a kept-alive connection whose request
 * was still running stays open after its answer until the idle timeout, and
 * `close()` waits with it. Once a server closes (`connectionsOf(...).end`),
 * each of its connections ends after the answers to the requests it has
 * (requests in flight and pipelined finish): its last answer says
 * `Connection: close` when it has not begun yet, and the connection is
 * closed once that answer went out; one with no request is closed at once,
 * or, as `serve` drains, unless one comes within a grace (serve.ts says why).
 *
 * The S3 listener gets the same promises: the composition root hands
 * `inConnectionOrder` and `idleConnectionListener` (with the S3 answer) to
 * it, and ends the connections of both ports (gateway.ts), so both ports keep
 * them the same way.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { endWith, rawAnswer, type BareAnswer } from '../doors/bare-answer.js'
import { markCutOff } from '../doors/cut-off.js'
import { handshakesOf } from '../doors/handshakes.js'
import { DoorErrors, failure } from '../http/errors.js'

interface Pending {
  request: IncomingMessage
  response: ServerResponse
  /** Fastify's reply, once Fastify runs the request (a read answered beside it has none: http/fast-read.ts). */
  reply?: FastifyReply
  /** Lets the request start; absent once it has started. */
  start?: () => void
}

/** The requests of a connection not yet answered, oldest first: the first is the one running. */
const connections = new WeakMap<Socket, Pending[]>()
/** What waits for a connection's requests to be answered (see `whenAnswered`). */
const waiting = new WeakMap<Socket, Array<() => void>>()
/** Bytes a connection had received when its last answer ended: more at the idle timeout are a request's headers that stopped. */
const answeredAt = new WeakMap<Socket, number>()
/** Connections of a closing server: each answer says `Connection: close`, and the connection ends after its last. */
const ending = new WeakSet<Socket>()

/**
 * Runs `then` once every request of the socket's connection has been
 * answered, at once when none is pending. The answer to a malformed
 * request pipelined behind a good one waits so: the good one takes effect
 * and is answered first, and its client is never told it failed. A request
 * whose body has not fully arrived never will (the parser failed on the
 * connection's bytes, or the client went away): then `then` runs at once,
 * and the request fails with its connection, storing nothing.
 */
export function whenAnswered (socket: Socket, then: () => void): void {
  const pending = connections.get(socket)
  if (pending === undefined || pending.length === 0 || pending.some(p => !p.request.complete)) {
    then()
    return
  }
  const list = waiting.get(socket)
  if (list === undefined) waiting.set(socket, [then])
  else list.push(then)
}

/** Whether a request of the socket's connection is still receiving its body (its handler runs, or waits for the ones before it). */
export function receivingBody (socket: Socket): boolean {
  return connections.get(socket)?.some(p => !p.request.complete) ?? false
}

/**
 * An onRequest hook: lets a request start when the requests before it on
 * its connection have been answered. Callback-style and with one listener
 * per request, because it runs for every request. A read begun beside
 * Fastify and handed to it (`beginAlone`) keeps the place it already has.
 */
export function inConnectionOrder (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const socket = request.raw.socket
  const first = connections.get(socket)?.[0]
  if (first !== undefined && first.request === request.raw) {
    first.reply = reply
    done()
    return
  }
  enqueue(socket, { request: request.raw, response: reply.raw, reply }, done)
}

/**
 * Takes a request's place in its connection's order when no request of
 * that connection is pending, so it may run at once; false (nothing taken)
 * otherwise. For a read answered beside Fastify (http/fast-read.ts), which
 * hands the request to Fastify when it cannot answer it itself.
 */
export function beginAlone (request: IncomingMessage, response: ServerResponse): boolean {
  const socket = request.socket
  const pending = connections.get(socket)
  if ((pending !== undefined && pending.length > 0) || closed(socket)) return false
  enqueue(socket, { request, response }, () => {})
  return true
}

/** Whether the connection can carry no more answers: ended or destroyed (an injected request's stand-in socket has no such state). */
function closed (socket: Socket): boolean {
  return socket.writable === false
}

function enqueue (socket: Socket, own: Pending, done: () => void): void {
  let pending = connections.get(socket)
  if (pending === undefined) {
    pending = []
    connections.set(socket, pending)
  }
  const queue = pending
  queue.push(own)
  if (ending.has(socket)) closeAfter(queue)
  // 'close' follows the end of every answer, and a connection's end.
  own.response.once('close', () => {
    const at = queue.indexOf(own)
    if (at === -1) return
    queue.splice(at, 1)
    if (queue.length === 0) {
      answeredAt.set(socket, socket.bytesRead)
      const then = waiting.get(socket)
      if (then !== undefined) {
        waiting.delete(socket)
        for (const run of then) run()
      }
      return
    }
    if (at !== 0) return
    if (closed(socket)) {
      // None of those behind will start.
      for (const behind of queue.slice()) {
        if (behind.start === undefined) continue
        behind.start = undefined
        closeUnsent(behind.response)
      }
      return
    }
    const next = queue[0]
    const start = next?.start
    if (start !== undefined) {
      next.start = undefined
      start()
    }
  })
  // After an answer that closed the connection (`Connection: close`: a refusal whose body went unread, a request
  // without Host; Node ends the socket as that answer ends) or once it is gone, nothing more of it runs (RFC 9112
  // 9.6): no answer could reach its client. Node may still parse what was pipelined behind, as the unread body passes.
  if (closed(socket)) {
    closeUnsent(own.response)
    return
  }
  if (queue.length === 1) done()
  else own.start = done
}

/**
 * Closes the answer of a request that will never start, for what waits on
 * its end (the metrics count the request cut short; Fastify listens only
 * for a 'finish' that never comes). Node 20 closes an answer when its
 * connection closes, but only one it gave the connection to: those queued
 * behind an answer that closed the connection never get it. Newer Nodes
 * destroy those too as the connection closes, and a destroyed answer
 * without a connection closes on the next tick: whichever comes first
 * closes it, once (the answer is marked destroyed here, which such a Node's
 * `destroy` then leaves alone).
 */
function closeUnsent (response: ServerResponse): void {
  if (response.socket != null || response.destroyed) return
  response.destroyed = true
  response.emit('close')
}

/** Whether `response` told its client the connection closes after it (Node's own `Connection: close`, or `closeAfter`'s). */
function saidClose (response: ServerResponse): boolean {
  return !response.shouldKeepAlive || /close/i.test(String(response.getHeader('connection') ?? ''))
}

/**
 * Makes the last answer of a closing server's connection say `Connection:
 * close`, and only the last: Node sends nothing after such an answer, so the
 * requests pipelined before it must keep theirs to be answered.
 */
function closeAfter (queue: Pending[]): void {
  const last = queue.at(-1)?.response
  if (last === undefined || last.headersSent) return
  last.setHeader('connection', 'close')
  const before = queue.at(-2)?.response
  if (before !== undefined && !before.headersSent) before.removeHeader('connection')
}

/**
 * Keeps the open connections of a server that has yet to listen (`tls`: it
 * serves HTTPS, whose requests come on the socket of 'secureConnection', not
 * the raw one of 'connection'); `end`, called as the server closes, ends
 * each after the answers to the requests it has, and closes those that are
 * idle (every request Node parsed on it answered) once `idleGraceMs` pass
 * without a request (at once for 0).
 *
 * It takes the server's `closeIdleConnections` over, which `server.close()`
 * calls: Node's counts a connection idle as soon as its last answer is
 * ended, and destroys it with that answer still unsent (a large read whose
 * client reads slowly was cut at a few MiB), while a connection that never
 * sent a byte, which it does not count, held `close()` until the headers
 * timeout. Here an answer is done when it went out (its 'close'), counted
 * for every request Node parsed, whichever door answered it (a URL Fastify
 * cannot decode is answered before any hook). Bytes of a request whose
 * headers have not all arrived when the server closes are not waited for.
 * A TLS connection still in its handshake (a client's request on its way,
 * a port scanner, a stalled client) has no request yet: it is closed as an
 * idle one is, once the grace has passed without its handshake ending (its
 * handshake is timed out after the idle timeout meanwhile: the apps'
 * `handshakeTimeout`).
 */
export function connectionsOf (server: Server | HttpsServer, tls: boolean): { end: (idleGraceMs: number) => void } {
  const open = new Set<Socket>()
  /** Requests Node parsed on each connection and not yet answered. */
  const answering = new WeakMap<Socket, number>()
  let closing = false
  const endAfterAnswers = (socket: Socket): void => {
    ending.add(socket)
    const pending = connections.get(socket)
    if (pending !== undefined) closeAfter(pending)
  }
  /** How long an idle connection may still bring a request once the server closes (`end`'s). */
  let graceMs = 0
  /** Closes `socket` once `graceMs` have passed (at once for none), unless it has a request by then (which closes it after its answer); `answered`: after what it sent has gone. */
  const closeIfStillIdle = (socket: Socket, answered = false): void => {
    const idle = (): void => {
      if ((answering.get(socket) ?? 0) !== 0) return
      if (answered) socket.destroySoon()
      else socket.destroy()
    }
    if (graceMs === 0) idle()
    else setTimeout(idle, graceMs).unref()
  }
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    answering.set(socket, (answering.get(socket) ?? 0) + 1)
    response.once('close', () => {
      const left = (answering.get(socket) ?? 1) - 1
      answering.set(socket, left)
      // Its server is closing: the connection ends once its last answer went out, instead of idling until the idle timeout;
      // an answer that had begun saying keep-alive (before the server closed) leaves its client the grace to send one more.
      if (left === 0 && ending.has(socket)) {
        if (saidClose(response) || graceMs === 0) socket.destroySoon()
        else closeIfStillIdle(socket, true)
      }
    })
  })
  const handshakes = tls ? handshakesOf(server) : null
  let graceBegun = false
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => { open.delete(socket) })
    // Accepted after `end` and before the listener closed.
    if (closing) {
      endAfterAnswers(socket)
      closeIfStillIdle(socket)
    }
  })
  const cutHandshakes = (): void => { for (const raw of handshakes?.all() ?? []) raw.destroy() }
  server.closeIdleConnections = () => {
    // A handshake is a request on its way: it has the idle connections' grace to finish and send one.
    if (graceMs === 0) cutHandshakes()
    else setTimeout(cutHandshakes, graceMs).unref()
    if (graceBegun) return
    graceBegun = true
    for (const socket of open) if ((answering.get(socket) ?? 0) === 0) closeIfStillIdle(socket)
  }
  return {
    end: (idleGraceMs: number) => {
      graceMs = idleGraceMs
      closing = true
      for (const socket of open) endAfterAnswers(socket)
      server.closeIdleConnections()
    }
  }
}

/**
 * A server's 'timeout' listener (Node's socket inactivity timer, set to the
 * idle timeout) answering what `answer` makes for the stalled request (none
 * when its headers stopped arriving).
 */
export function idleConnectionListener (answer: (request?: FastifyRequest) => BareAnswer, refused?: (socket: Socket, status: number) => void): (socket: Socket) => void {
  return socket => {
    const running = connections.get(socket)?.[0]
    if (running === undefined) {
      // No request: an idle kept-alive connection closes quietly; headers that stopped arriving are answered first.
      if (socket.bytesRead > (answeredAt.get(socket) ?? 0) && socket.writable) {
        const stalled = answer()
        socket.write(rawAnswer(stalled))
        // No door saw this request: `refused` counts it for the metrics (doors/request-meter.ts).
        refused?.(socket, stalled.status)
      }
      socket.destroy()
      return
    }
    if (running.response.headersSent || running.request.complete) {
      if (running.response.headersSent) socket.destroy()
      return
    }
    // A request whose body is still arriving is Fastify's (a read beside it has none).
    const reply = running.reply
    if (reply === undefined) {
      socket.destroy()
      return
    }
    const stalled = answer(reply.request)
    reply.hijack()
    const request = running.request
    markCutOff(request)
    endWith(reply.raw, stalled, () => {
      socket.destroy()
      // The body must fail where the engine reads it, so the engine discards the partial upload and closes its file
      // (a client's going away does so). Node fails a body only when its connection closes with the answer unsent,
      // and this one was just sent: the request is failed here, after the answer, since failing it closes the socket.
      request.destroy(stalledBody())
    })
  }
}

/** What a request whose body stopped arriving fails with, as a client's going away does (Node's 'aborted', ECONNRESET). */
function stalledBody (): NodeJS.ErrnoException {
  return Object.assign(new Error('The request body stopped arriving for the idle timeout.'), { code: 'ECONNRESET' })
}

const gatewayIdleAnswer: BareAnswer = {
  status: DoorErrors.RequestTimeout.status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(failure(DoorErrors.RequestTimeout.code, DoorErrors.RequestTimeout.message))
}

/** The gateway's 'timeout' listener: 408 with code 40800; `refused` counts a request whose headers stopped arriving. */
export function gatewayIdleListener (refused?: (socket: Socket, status: number) => void): (socket: Socket) => void {
  return idleConnectionListener(() => gatewayIdleAnswer, refused)
}
