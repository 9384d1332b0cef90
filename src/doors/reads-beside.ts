/**
 * Plain object reads answered beside Fastify, for the doors that serve them
 * (the HTTP routes: http/fast-read.ts; the S3 port: s3/fast-read.ts).
 *
 * A GET or HEAD of one object with no query, no Origin and no body is most
 * of what a busy read-only client sends, and Fastify's life of a request
 * (routing, hooks, request and reply objects) cost such a read more than
 * the engine's whole read. So a door puts this listener in front of
 * Fastify's on its server: the door says which requests it takes (`take`,
 * synchronous and cheap) and answers them (`answer`) with the pieces its
 * route uses (the engine decides conditions and ranges); this module keeps
 * what every request gets, whoever answers it: its place in its
 * connection's order (server/connection.ts's `beginAlone`, handed in: it
 * starts only when nothing else of the connection is pending, and holds its
 * place while it runs), the request log's line with a request id, the
 * metrics' counts, and Fastify's answer while the server closes.
 *
 * Anything else is Fastify's, unchanged: every request `take` declines, and
 * a taken read whose `answer` declines or fails before writing anything (a
 * missing bucket or key, a refusal, a 412 or 416, a store failure) is
 * handed to Fastify, which reads again and answers it: reads change
 * nothing, so reading twice is safe, and every error, refusal and failure's
 * log line is the route's own.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import { isRecyclingStream, type RecyclingStream } from '../bucket/index.js'
import { bodyFailure, pipeRecycling } from './recycling-body.js'
import { cutShortLine, leftLine, requestLine, type RequestLogFields } from './request-log.js'
import type { DoorName, PortMeter } from './request-meter.js'

/** What an answer beside Fastify tells the log and the metrics. */
export interface Answered {
  /** The answer's Content-Length, for the log line's bytes. */
  length?: string
}

export interface ReadsBesideOptions<T> {
  /** What a request reads, when it is one this door answers itself; null: Fastify's. */
  take: (request: IncomingMessage) => T | null
  /**
   * Answers it, filling `answered`; false (nothing written) when it is
   * Fastify's to answer after all, as is a throw. An answer made at once
   * (in the turn its request came, nothing to wait for) says so without a
   * promise. `requestId` makes the id on first call.
   */
  answer: (request: IncomingMessage, response: ServerResponse, taken: T, requestId: () => string, answered: Answered) => boolean | Promise<boolean>
  /** What the log line names. */
  fields: (taken: T) => RequestLogFields
  door: DoorName
  /** The request's id, as the door's Fastify app makes it (`genReqId`). */
  requestId: () => string
  /** The app's logger, for the request line; null: no logging. */
  log: Logger | null
  meter: PortMeter | null
  /** Takes the request's place in its connection's order when nothing else of it is pending; false: Fastify's. */
  beginAlone: (request: IncomingMessage, response: ServerResponse) => boolean
  /** True once the server is closing: then Fastify answers (it closes each connection after its answer). */
  closing: () => boolean
}

/** Longest URL read beside Fastify; longer ones are its own (which bounds a route's parameter). */
const MAX_URL = 2048

/**
 * The raw path of a request that may be a plain read: GET or HEAD, an
 * origin-form URL without query or fragment, a Host, and no Origin, Expect
 * or body; else null. A path that does not decode is Fastify's to refuse:
 * each door's target parsing decodes it, and declines the read when it throws.
 */
export function plainReadPath (request: IncomingMessage): string | null {
  const { method, url, headers } = request
  if ((method !== 'GET' && method !== 'HEAD') || url === undefined || url.length > MAX_URL || url.charCodeAt(0) !== 47) return null
  if (url.includes('?') || url.includes('#')) return null
  if (headers.host === undefined || headers.origin !== undefined || headers.expect !== undefined) return null
  if (headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')) return null
  return url
}

/** A body a read beside Fastify can send: bytes, none, or a store's stream that lends its chunks. */
export type SendableBody = Buffer | RecyclingStream | undefined

/** Whether `body` is one (an error envelope, or a stream of a store that lends no chunks, is the route's to send). */
export function isSendable (body: unknown): body is SendableBody {
  return body === undefined || Buffer.isBuffer(body) || isRecyclingStream(body)
}

/** Sends the answer: status and headers, then the bytes in the same write (at once: nothing to wait for), or the stream chunk by chunk. */
export function sendAnswer (response: ServerResponse, status: number, headers: Record<string, string>, body: SendableBody, answered: Answered): Promise<void> | undefined {
  answered.length = headers['content-length']
  if (body === undefined || Buffer.isBuffer(body)) {
    response.writeHead(status, headers)
    response.end(body)
    return undefined
  }
  return pipeRecycling(response, body, () => { response.writeHead(status, headers) })
}

/**
 * Sends a door's answer when its body is one a read beside Fastify sends
 * (`sendAnswer`): true once written (a promise while a stream flows);
 * false, nothing written, for any other (an error envelope, a stream of a
 * store that lends no chunks, destroyed here), which the route then sends.
 */
export function sendIfSendable (response: ServerResponse, status: number, headers: Record<string, string>, body: unknown, answered: Answered): boolean | Promise<boolean> {
  if (!isSendable(body)) {
    const stream = body as { destroy?: unknown } | null
    if (typeof stream?.destroy === 'function') (stream as { destroy: () => void }).destroy()
    return false
  }
  const sending = sendAnswer(response, status, headers, body, answered)
  return sending === undefined ? true : sending.then(() => true)
}

/** The server's 'request' listener: the reads `take` takes here, the rest to `fastify` (Fastify's own listener). */
export function readsBeside<T> (fastify: RequestListener, options: ReadsBesideOptions<T>): RequestListener {
  return (request, response) => {
    const taken = options.closing() ? null : options.take(request)
    if (taken === null || !options.beginAlone(request, response)) {
      fastify(request, response)
      return
    }
    const began = performance.now()
    // Made when the answer or the log line needs it (the routes' answers name no id).
    let id: string | undefined
    const requestId = (): string => (id ??= options.requestId())
    const answered: Answered = {}
    let handed = false
    options.meter?.began()
    // A response closes once.
    response.on('close', () => {
      if (handed) return
      const ms = performance.now() - began
      const operation = request.method === 'GET' ? 'GetObject' : 'HeadObject'
      options.meter?.answered(response, request.socket, options.door, operation, ms / 1000)
      // A body cut short after its headers is logged as such, at error.
      const failure = bodyFailure(response)
      if (options.log === null || (failure === undefined && !options.log.isLevelEnabled('info'))) return
      const line = requestLine(request.method ?? 'GET', options.fields(taken), undefined, response.statusCode, answered.length, ms)
      if (failure !== undefined) options.log.child({ reqId: requestId() }).error(cutShortLine(line, failure), 'request')
      else options.log.child({ reqId: requestId() }).info(leftLine(line, response), 'request')
    })
    const handOver = (): void => {
      // A body that failed after its headers went out: the connection is cut, as Fastify does (the client sees a short body).
      if (response.headersSent) {
        response.destroy()
        return
      }
      handed = true
      options.meter?.dropped()
      fastify(request, response)
    }
    let done: boolean | Promise<boolean>
    try {
      done = options.answer(request, response, taken, requestId, answered)
    } catch {
      done = false
    }
    if (done === false) handOver()
    else if (done !== true) done.then(answeredIt => { if (!answeredIt) handOver() }, handOver)
  }
}
