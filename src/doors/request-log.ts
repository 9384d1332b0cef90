/**
 * One log line per request, for every door that serves HTTP (the gateway,
 * the S3 port, the management API): method, bucket, key, status, bytes and
 * time.
 *
 * Fastify's own "incoming request" / "request completed" pair is replaced
 * through its log controller, so there is exactly one line and it never
 * carries request headers (credentials live in them). A door names what
 * the request was about in `request.logFields` once it knows; a request
 * that never got that far is named by its URL, with the values of the query
 * parameters that carry credentials hidden (`redactedUrl`: a presigned
 * URL's signature, an SSE-C key, a `?token=`), whichever door it came to.
 * `bytes` is the body sent (Content-Length of the answer) or, for uploads,
 * the bytes stored. An error answer's line has its `code`, as the door
 * answered it (the routes' and the management API's number, S3's `Code`),
 * which its error handler notes (`noteAnswerCode`). An answer whose body
 * failed after its headers went out (a body file cut short:
 * doors/recycling-body.ts) is logged at `error` with `incomplete: true`,
 * the bytes handed to the socket before the failure, and the failure as
 * `err`; one whose client went away before it finished, at `info` with
 * `incomplete: true` and the bytes handed over by then.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { handedFrom } from './handed-on.js'
import { redactedUrl } from './redacted-url.js'
import type { PortMeter } from './request-meter.js'

/** What a request log line names, filled in by the door. */
export interface RequestLogFields {
  bucket?: string
  key?: string
  /** Body bytes stored (an object, a form's files, a part of declared length); otherwise the answer's Content-Length counts. */
  bytes?: number
}

declare module 'fastify' {
  interface FastifyRequest {
    logFields: RequestLogFields | null
  }
}

export interface RequestLogOptions {
  /** Where the port's requests are counted for the metrics (doors/request-meter.ts); none when absent. */
  meter?: PortMeter | null
}

/** The code of each error answer, by request, noted by the door that answered it. */
const answerCodes = new WeakMap<IncomingMessage, number | string>()

/** Notes the error code `request` is answered with, for its log line. */
export function noteAnswerCode (request: IncomingMessage, code: number | string): void {
  answerCodes.set(request, code)
}

export class RequestLog extends LogController {
  readonly #meter: PortMeter | null

  constructor (options: RequestLogOptions = {}) {
    super()
    this.#meter = options.meter ?? null
  }

  // Called by Fastify for every request it reads, routed or not: where the metrics start counting one.
  override incomingRequest (_request: FastifyRequest, reply: FastifyReply): void {
    this.#meter?.started(reply)
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // A request handed on to another app (handed-on.ts) is logged there, timed from when this app took it.
    const port = handedFrom(request.raw)
    if (port?.request === request) return
    // Below the info level a request's line is not even made.
    if (error == null && (request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') === false) return
    const line = routeLine(request, reply, port?.elapsedTime ?? reply.elapsedTime)
    if (error != null) request.log.error(Object.assign(line, { err: error }), 'request')
    else request.log.info(line, 'request')
  }
}

/** The line of a request Fastify answered: its fields (else its URL: an app that never set them names the request so) and its code. */
function routeLine (request: FastifyRequest, reply: FastifyReply, ms = reply.elapsedTime): Record<string, unknown> {
  const fields = request.logFields ?? null
  const line = requestLine(request.method, fields, fields === null ? redactedUrl(request.url) : undefined, reply.statusCode, reply.getHeader('content-length'), ms)
  const code = answerCodes.get(request.raw)
  if (code !== undefined) line.code = code
  return line
}

/** A request's line: what it was about (`fields`, else its `url`), its status, the body bytes and the milliseconds it took. */
export function requestLine (method: string, fields: RequestLogFields | null, url: string | undefined, status: number, contentLength: unknown, ms: number): Record<string, unknown> {
  return {
    method,
    url,
    bucket: fields?.bucket,
    key: fields?.key,
    status,
    // A HEAD answer sends no body, whatever Content-Length it announces.
    bytes: fields?.bytes ?? (contentLength === undefined || method === 'HEAD' ? 0 : Number(contentLength)),
    ms: Math.round(ms * 100) / 100
  }
}

/** How an answer whose body failed after its headers went out ended (doors/recycling-body.ts). */
export interface BodyFailure {
  /** The body stream's error. */
  err: Error
  /** Body bytes handed to the socket before it. */
  sent: number
}

/** Body bytes handed to the socket of each streamed response whose client went away before the body's end (doors/recycling-body.ts). */
const leftByClient = new WeakMap<ServerResponse, number>()

/** Notes that the client of `res` went away after `sent` body bytes were handed to its socket. */
export function noteLeftByClient (res: ServerResponse, sent: number): void {
  leftByClient.set(res, sent)
}

/**
 * `line`, the line of the request answered by `res` (its 'close' passed),
 * saying that its client went away when the answer never finished:
 * `incomplete`, with the body bytes handed to the socket (all of them when
 * the client left while the last were on their way).
 */
export function leftLine (line: Record<string, unknown>, res: ServerResponse): Record<string, unknown> {
  if (res.writableFinished) return line
  const sent = leftByClient.get(res)
  return Object.assign(line, sent === undefined ? {} : { bytes: sent }, { incomplete: true })
}

/**
 * The line of a request answered through Fastify whose client went away
 * before the answer finished: Fastify, whose reply was taken over, writes
 * none.
 */
export function logLeftRequest (request: FastifyRequest, reply: FastifyReply): void {
  request.log.info(leftLine(routeLine(request, reply), reply.raw), 'request')
}

/** `line`, a request's line, saying that its answer was cut short by `failure`. */
export function cutShortLine (line: Record<string, unknown>, failure: BodyFailure): Record<string, unknown> {
  return Object.assign(line, { bytes: failure.sent, incomplete: true, err: failure.err })
}

/**
 * The line of a request answered through Fastify whose body failed after
 * its headers went out: Fastify, whose reply was taken over, never sees
 * such a response finish and writes none.
 */
export function logCutShortRequest (request: FastifyRequest, reply: FastifyReply, failure: BodyFailure): void {
  request.log.error(cutShortLine(routeLine(request, reply), failure), 'request')
}

/**
 * The line of a request refused before any route ran (Fastify's
 * `frameworkErrors`: a URL it cannot decode, say), whose answer Fastify does
 * not follow to its end: written by the door as it sends the answer, its
 * URL redacted as every request line's.
 */
export function logRefusedRequest (request: FastifyRequest, status: number, bytes: number, code: number | string): void {
  // As requestLine counts them: the error document of a refused HEAD is never sent.
  request.log.info({ method: request.method, url: redactedUrl(request.url), status, bytes: request.method === 'HEAD' ? 0 : bytes, code }, 'request')
}
