/**
 * Builds the Fastify app of the S3 listener (its own port, the same
 * registry as the gateway). `cli.ts` listens with it beside the gateway's
 * app; tests build it and listen on 127.0.0.1, port 0, for the AWS SDK.
 *
 * Logging: one line per request, in the gateway's shape (`method`,
 * `bucket`, `key`, `status`, `bytes`, `ms`), whose `reqId` is the
 * `x-amz-request-id` the client was answered, so an id a user reports finds
 * its line. Credentials never reach a log line: request headers are not
 * logged (the Authorization header is redacted wherever one would be), and
 * the signature and credential of a presigned URL are redacted from a
 * logged URL.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import { randomHex, type BucketRegistry } from '../bucket/index.js'
import { deferContinue } from '../doors/expect-continue.js'
import { adoptConnectSocket, answerPlainHttp, endWith, plainHttpMessage, rawAnswer, settledWithoutAnswer, type BareAnswer } from '../doors/bare-answer.js'
import type { S3AccessPolicy } from './auth.js'
import { S3Errors, s3ErrorReply, type S3ErrorCode } from './errors.js'
import { s3Reads, type S3ReadsGuard } from './fast-read.js'
import { s3Domains } from './domains.js'
import { s3Api } from './plugin.js'
import { errorDocument } from './xml.js'
import { readsBeside } from '../doors/reads-beside.js'
import { guardRequestHead, UNSUPPORTED_TRANSFER_CODING } from '../doors/request-head.js'
import { lazySchemaCompilers } from '../doors/schema-compilers.js'
import { requestForLog } from '../doors/redacted-url.js'
import { logRefusedRequest, RequestLog } from '../doors/request-log.js'
import type { OperatorEndpoints } from '../doors/health.js'
import type { PortMeter, RequestMeter } from '../doors/request-meter.js'

export interface S3AppConfig {
  registry: BucketRegistry
  policy: S3AccessPolicy
  /** Extra virtual-host domains (`--s3-domain`); `localhost` is always one. */
  domains: string[]
  /** Pino level, or false for no logging (tests). */
  logLevel: string | false
  /** The logger to write to (the gateway's, handed over by the composition root, at its own level); one at `logLevel` when absent. */
  logger?: FastifyBaseLogger
  /** The connection promises of the gateway's port, handed over by the composition root; none when absent. */
  connections?: S3Connections
  /** How a request's logger is made (the gateway's, handed over by the composition root); Fastify's own when absent. */
  childLoggerFactory?: FastifyServerOptions['childLoggerFactory']
  /** What `/_health/live` and `/_health/ready` answer from (doors/health.ts); absent: not served. */
  operator?: OperatorEndpoints
  /** Where requests are counted for the metrics (doors/request-meter.ts); none when absent. */
  meter?: RequestMeter | null
  /** Serve HTTPS with this certificate chain and key (PEM); plain HTTP when absent. */
  https?: { cert: Buffer | string, key: Buffer | string }
  /**
   * Answer plain GetObject/HeadObject beside Fastify (s3/fast-read.ts): the
   * connection's order (server/connection.ts's `beginAlone`) and the site
   * guard's rules when it applies. Absent: every request goes through Fastify.
   */
  readsBeside?: { beginAlone: (request: IncomingMessage, response: ServerResponse) => boolean, guard: S3ReadsGuard | null }
}

/**
 * Idle timeout and request order on one connection, as the HTTP port keeps
 * them (src/server/connection.ts, wired here by the composition root): a body
 * that stops arriving for `idleTimeoutMs` is answered RequestTimeout and its
 * connection closed (the partial upload is discarded: nothing stored), and
 * requests pipelined on one connection take effect in the order sent.
 */
export interface S3Connections {
  idleTimeoutMs: number
  /** An onRequest hook holding a request until the connection's earlier ones are answered (also what holds a refusal made before any hook). */
  inConnectionOrder: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void
  /** Makes the server's 'timeout' listener from what a stalled request is answered. */
  idleListener: (answer: (request?: FastifyRequest) => BareAnswer, refused?: (socket: Socket, status: number) => void) => (socket: Socket) => void
  /** Runs a function once the connection's requests have all been answered (the parser's refusals wait for them). */
  whenAnswered: (socket: Socket, then: () => void) => void
  /** Whether a request of the connection is still receiving its body. */
  receivingBody: (socket: Socket) => boolean
}

/** A request id as S3 writes one: 16 upper-case hex digits, random (unique across workers). */
function newRequestId (): string {
  return randomHex(8).toUpperCase()
}

/** An S3 error written outside a route (a stalled request, an unmet Expect), with a request id. */
function bareAnswer (code: S3ErrorCode, requestId = newRequestId(), message: string = S3Errors[code].message, header?: string): BareAnswer {
  const headers = { 'x-amz-request-id': requestId, 'x-amz-id-2': requestId }
  // `Header` names the request header that asked for what is not implemented, before the request id as S3 writes them.
  const fields: Record<string, string> = header === undefined ? { RequestId: requestId } : { Header: header, RequestId: requestId }
  return { status: S3Errors[code].status, contentType: 'application/xml', body: errorDocument(code, message, fields), headers }
}

/** The parser's refusal as S3 words it: a transfer coding other than chunked is NotImplemented, naming the header, as S3 answers one. */
function refusalAnswer (err: NodeJS.ErrnoException): BareAnswer {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return bareAnswer('RequestTimeout')
  if (err.code === 'HPE_HEADER_OVERFLOW') return bareAnswer('RequestHeaderSectionTooLarge')
  if (err.code === UNSUPPORTED_TRANSFER_CODING) return bareAnswer('NotImplemented', newRequestId(), S3Errors.NotImplemented.message, 'Transfer-Encoding')
  return bareAnswer('InvalidRequest', newRequestId(), parserMessage(err))
}

/**
 * Answers to requests Node's HTTP parser refuses before any route runs, as
 * S3's XML with a request id. Fastify's default handler would answer JSON
 * and log the request's raw bytes, its Authorization header included; this
 * one logs the parser's error code only.
 */
function clientErrorHandler (whenAnswered: S3Connections['whenAnswered'], receivingBody: S3Connections['receivingBody'], meter: PortMeter | null): (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket) => void {
  return function (err, socket) {
    if (settledWithoutAnswer(err, socket, receivingBody)) return
    this.log.debug({ code: err.code }, 'client error')
    answerLast(whenAnswered, meter, socket, refusalAnswer(err))
  }
}

/**
 * The message of a parser's refusal: what llhttp found wrong, in its own
 * fixed words ("Duplicate Content-Length", "Invalid header value char"),
 * none of the request's bytes. rclone's `--s3-use-presigned-request` sends
 * Content-Length twice with one value, which Node's parser refuses whatever
 * its options: its user is told so rather than "Invalid Request".
 */
function parserMessage (err: NodeJS.ErrnoException & { reason?: unknown }): string {
  if (typeof err.reason !== 'string' || err.reason === '') return S3Errors.InvalidRequest.message
  return `The request is not valid HTTP/1.1: ${err.reason.replace(/\.$/, '')}.`
}

/** Writes `answer` after the answers of the requests pipelined before it (they were whole and take effect), then closes. */
function answerLast (whenAnswered: S3Connections['whenAnswered'], meter: PortMeter | null, socket: Socket, answer: BareAnswer): void {
  whenAnswered(socket, () => {
    if (socket.writable) {
      socket.write(rawAnswer(answer))
      // No route saw it: counted here, under `other` (doors/request-meter.ts).
      meter?.refused(socket, answer.status)
    }
    socket.destroy()
  })
}

export async function buildS3App (config: S3AppConfig): Promise<FastifyInstance> {
  const portMeter = config.meter?.port('s3') ?? null
  // A refusal written outside a route waits for the answers pipelined before it (none to wait for without connection order).
  const whenAnswered: S3Connections['whenAnswered'] = config.connections?.whenAnswered ?? ((_socket, then) => { then() })
  const options: FastifyServerOptions & { connectionTimeout?: number, keepAliveTimeout?: number, https?: S3AppConfig['https'] & { handshakeTimeout?: number } } = {
    logController: new RequestLog({ meter: portMeter }),
    genReqId: newRequestId,
    // No route declares a schema: the compilers load only if one ever does.
    schemaController: { compilersFactory: lazySchemaCompilers as NonNullable<FastifyServerOptions['schemaController']>['compilersFactory'] },
    // Draining, a request already on an open connection is served (its connection closed after it), as on the gateway.
    return503OnClosing: false,
    ...(config.logger !== undefined
      ? { loggerInstance: config.logger.child({}, { serializers: { req: requestForLog } }) }
      : {
          logger: config.logLevel === false
            ? false
            : { level: config.logLevel, redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' }, serializers: { req: requestForLog } }
        }),
    ...(config.childLoggerFactory === undefined ? {} : { childLoggerFactory: config.childLoggerFactory }),
    // Object keys are opaque: never rewrite `//` or a trailing `/`.
    routerOptions: { ignoreDuplicateSlashes: false, ignoreTrailingSlash: false, maxParamLength: 10_000 },
    clientErrorHandler: clientErrorHandler(whenAnswered, config.connections?.receivingBody ?? (() => false), portMeter),
    frameworkErrors: (err, request, rawReply) => {
      const answer = s3ErrorReply(err)
      const reply = rawReply as unknown as FastifyReply
      const requestId = request.id
      const document = errorDocument(answer.code, answer.message, { RequestId: requestId })
      const send = (): void => {
        logRefusedRequest(request, answer.status, Buffer.byteLength(document), answer.code)
        void reply.code(answer.status).header('x-amz-request-id', requestId).header('x-amz-id-2', requestId).type('application/xml').send(document)
      }
      // Made before any hook: it takes its place in the connection's order here (behind an answer that closed it, it is never sent).
      if (config.connections === undefined) send()
      else config.connections.inConnectionOrder(request, reply, send)
    }
  }
  const connections = config.connections
  // A TLS handshake that stalls is a silent connection: closed after the idle timeout, not Node's 120 s.
  if (config.https !== undefined) options.https = connections === undefined ? config.https : Object.assign({}, config.https, { handshakeTimeout: connections.idleTimeoutMs })
  if (connections !== undefined) {
    options.connectionTimeout = connections.idleTimeoutMs
    // A kept-alive connection silent between requests is closed after the same time (Fastify's own is 72 s).
    options.keepAliveTimeout = connections.idleTimeoutMs
  }
  const app = Fastify(options)
  // The 100 of Expect: 100-continue waits until a handler reads the body (bodyPipeline), after the signature and the checks.
  deferContinue(app.server)
  // Node's own refusals of a request without Host and of an Expect it cannot meet have empty bodies: these answer S3's XML.
  Object.assign(app.server, { requireHostHeader: false })
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const answer = bareAnswer('ExpectationFailed')
    endWith(response, answer, () => { portMeter?.refused(request.socket, answer.status) })
  })
  // A CONNECT (a proxy's method), which Node would drop unanswered: MethodNotAllowed, the connection closed.
  app.server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    adoptConnectSocket(socket, connections?.idleTimeoutMs ?? 0, app.server)
    const answer = bareAnswer('MethodNotAllowed')
    answer.headers = Object.assign({ allow: 'GET, HEAD, PUT, POST, DELETE' }, answer.headers)
    answerLast(whenAnswered, portMeter, socket, answer)
  })
  if (config.https !== undefined) answerPlainHttp(app.server, () => bareAnswer('InvalidRequest', newRequestId(), plainHttpMessage))
  if (connections !== undefined) {
    const ms = connections.idleTimeoutMs
    app.server.headersTimeout = ms
    // Node checks the headers' deadline on this period (30 s by default): a fraction of it keeps the deadline close.
    Object.assign(app.server, { connectionsCheckingInterval: Math.min(30_000, Math.max(100, ms / 4)) })
    app.server.on('timeout', connections.idleListener(request => bareAnswer('RequestTimeout', request?.s3RequestId), (socket, status) => { portMeter?.refused(socket, status) }))
    app.addHook('onRequest', connections.inConnectionOrder)
  }
  await app.register(s3Api, { registry: config.registry, policy: config.policy, domains: config.domains, operator: config.operator })
  const beside = config.readsBeside
  if (beside !== undefined) {
    let closing = false
    app.addHook('preClose', done => { closing = true; done() })
    const [fastify] = app.server.listeners('request') as RequestListener[]
    app.server.removeListener('request', fastify)
    app.server.on('request', readsBeside(fastify, {
      ...s3Reads({ registry: config.registry, policy: config.policy, domains: s3Domains(config.domains), guard: beside.guard }),
      door: 's3',
      requestId: newRequestId,
      log: config.logger === undefined && config.logLevel === false ? null : app.log as unknown as Logger,
      meter: portMeter,
      beginAlone: beside.beginAlone,
      closing: () => closing
    }))
  }
  guardRequestHead(app.server)
  return app
}
