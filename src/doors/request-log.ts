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
 * which its error handler notes (`noteAnswerCode`). An answer whose body failed after its headers went out
 * (a body file cut short: doors/recycling-body.ts) is logged at `error`
 * with `incomplete: true`, the bytes handed to the socket before the
 * failure, and the failure as `err`.
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
    // An app that never set them (the management API's: handed-on.ts) names the request by its URL.
    const fields = request.logFields ?? null
    const ms = port?.elapsedTime ?? reply.elapsedTime
    const line = requestLine(request.method, fields, fields === null ? redactedUrl(request.url) : undefined, reply.statusCode, reply.getHeader('content-length'), ms)
    const code = answerCodes.get(request.raw)
    if (code !== undefined) line.code = code
    leftLine(line, reply.raw)
    if (error != null) request.log.error(Object.assign(line, { err: error }), 'request')
    else request.log.info(line, 'request')
  }
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

/** Body bytes handed so far to each streamed response's socket (doors/recycling-body.ts). */
const sentBodies = new WeakMap<ServerResponse, number>()

/** Notes that `sent` body bytes of `res` are handed to its socket, for its log line should its client go away. */
export function noteBodySent (res: ServerResponse, sent: number): void {
  sentBodies.set(res, sent)
}

/** `line`, the line of the request answered by `res`, saying that its client went away mid-body when it did (the answer never finished). */
export function leftLine (line: Record<string, unknown>, res: ServerResponse): Record<string, unknown> {
  const sent = sentBodies.get(res)
  return sent === undefined || res.writableFinished ? line : Object.assign(line, { bytes: sent, incomplete: true })
}

/**
 * The line of a request answered through Fastify whose client went away
 * mid-body: Fastify, whose reply was taken over, writes none.
 */
export function logLeftRequest (request: FastifyRequest, reply: FastifyReply): void {
  const fields = request.logFields ?? null
  const line = requestLine(request.method, fields, fields === null ? redactedUrl(request.url) : undefined, reply.statusCode, reply.getHeader('content-length'), reply.elapsedTime)
  request.log.info(leftLine(line, reply.raw), 'request')
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
  const fields = request.logFields ?? null
  const line = requestLine(request.method, fields, fields === null ? redactedUrl(request.url) : undefined, reply.statusCode, reply.getHeader('content-length'), reply.elapsedTime)
  request.log.error(cutShortLine(line, failure), 'request')
}

/**
 * The line of a request refused before any route ran (Fastify's
 * `frameworkErrors`: a URL it cannot decode, say), whose answer Fastify does
 * not follow to its end: written by the door as it sends the answer, its
 * URL redacted as every request line's.
 */
export function logRefusedRequest (request: FastifyRequest, status: number, bytes: number): void {
  request.log.info({ method: request.method, url: redactedUrl(request.url), status, bytes }, 'request')
}
