/**
 * The HTTP door's one error table.
 *
 * Errors of the binding (`BucketError`) answer with the status and code of
 * the catalogue in src/bucket/errors.ts. Errors that only the HTTP door can
 * make (a bad token, a malformed header, a body that is not JSON, a wrong
 * method) have codes of their own below, listed in docs/errors.md's
 * "Error codes of the HTTP door" table; a test keeps the two in step. Errors
 * raised by Fastify and @fastify/multipart are mapped onto these codes by
 * their `code` property, never by their message. Argument mistakes the binding
 * reports as TypeError/RangeError (two checksums in one put, a part number out
 * of range; marked by the engine, see `isArgumentError`), and an If-Match /
 * If-None-Match holding no etag, are the client's fault: 400 with
 * `InvalidArgument`. Any other exception is a bug: 500, logged with its stack. Storage failures of the catalogue (a full disk:
 * 507, a read-only or forbidden data directory: 503) are logged at warn with
 * the path involved, which the client never sees.
 *
 * Every error answers with the envelope
 * `{success: false, errors: [{code, message}], messages: [], result: null}`.
 */
import { BucketErrors, InvalidConditionalHeader, isArgumentError, isBucketError, isStorageFailure, isTransient } from '../bucket/index.js'
import type { ErrorDefinition } from '../bucket/index.js'
import { plainHttpMessage } from '../doors/bare-answer.js'

/** An entry of this door's table: the same shape as the engine's catalogue entries. */
export type DoorErrorDefinition = ErrorDefinition

export const DoorErrors = {
  InvalidArgument: { code: 40000, status: 400, message: 'The request is not valid.' },
  InvalidUrl: { code: 40001, status: 400, message: 'The URL is not valid (malformed percent-encoding?).' },
  InvalidJson: { code: 40002, status: 400, message: 'The request body is not valid JSON.' },
  InvalidHeader: { code: 40003, status: 400, message: 'A request header is not valid.' },
  InvalidQuery: { code: 40004, status: 400, message: 'A query parameter is not valid.' },
  InvalidForm: { code: 40005, status: 400, message: 'The multipart form is not valid.' },
  InvalidAction: { code: 40006, status: 400, message: 'Unknown or missing action for this method.' },
  InvalidRequest: { code: 40007, status: 400, message: 'The request is not valid HTTP.' },
  PlainHttpToTls: { code: 40008, status: 400, message: plainHttpMessage },
  MissingToken: { code: 40100, status: 401, message: 'Authentication required: send Authorization: Bearer <token>.' },
  InvalidToken: { code: 40300, status: 403, message: 'The token is not valid.' },
  WritesRefused: { code: 40301, status: 403, message: 'This server has no token configured and does not listen on loopback only, so it refuses writes and private reads. Start it with --token.' },
  CorsRefused: { code: 40302, status: 403, message: 'CORS preflight refused by the bucket\'s CORS rules.' },
  CrossSiteRequest: { code: 40303, status: 403, message: 'This server has no credentials configured, so it refuses requests that change something unless they come from its own origin.' },
  CrossSiteRead: { code: 40304, status: 403, message: 'This server has no credentials configured, so on its loopback names (path routes such as /pub/ included) it answers reads, and their preflights, from local pages only; other sites read through its host routes and its buckets\' custom domains.' },
  RequestTimeout: { code: 40800, status: 408, message: 'The request body sent nothing for too long (--idle-timeout).' },
  HeadersTooLarge: { code: 43100, status: 431, message: 'The request headers are too large (16 KiB in all).' },
  UnsupportedEncoding: { code: 41501, status: 415, message: 'Content-Encoding: aws-chunked bodies are not accepted on these routes: send the object\'s bytes as they are.' },
  ForeignHost: { code: 42100, status: 421, message: 'This server has no credentials configured, so it answers only to loopback host names, its routes and its buckets\' custom domains.' },
  SiteHost: { code: 42101, status: 421, message: 'This host name serves a public bucket\'s site: the management API and the web console answer on the gateway\'s other host names.' },
  NoSuchKey: { code: 10007, status: 404, message: 'The specified key does not exist.' },
  NoSuchRoute: { code: 40400, status: 404, message: 'No route for this URL.' },
  // Every path under /client/v4 is the management API's, however it is spelled (its own code, as the API answers it).
  ManagementPath: { code: 7000, status: 400, message: 'No route for that URI' },
  MethodNotAllowed: { code: 40500, status: 405, message: 'The method is not allowed on this resource.' },
  PreconditionFailed: { code: 41200, status: 412, message: 'At least one of the preconditions you specified did not hold.' },
  BodyTooLarge: { code: 41300, status: 413, message: 'The request body is too large.' },
  UnsupportedMediaType: { code: 41500, status: 415, message: 'The request body has an unsupported content type.' },
  ExpectationFailed: { code: 41700, status: 417, message: 'The Expect header cannot be met: this server supports only Expect: 100-continue.' },
  UnsupportedTransferCoding: { code: 50101, status: 501, message: 'Transfer-Encoding takes only chunked here: send the body as it is, with Content-Length or chunked.' },
  ConditionalDelete: { code: 50100, status: 501, message: 'DELETE does not take If-Match, If-None-Match, If-Modified-Since or If-Unmodified-Since here: nothing was deleted.' },
  // The process's budget for bodies held in memory (src/doors/body-budget.ts) has no room: a moment's wait is the cure, as S3's SlowDown says.
  SlowDown: { code: 50300, status: 503, message: 'The server holds too many request bodies at once; try again in a moment.' },
  InternalError: { code: BucketErrors.InternalError.code, status: 500, message: BucketErrors.InternalError.message }
} as const satisfies Record<string, DoorErrorDefinition>

export type DoorErrorName = keyof typeof DoorErrors

/** An error made by the HTTP door itself. */
export class DoorError extends Error {
  readonly code: number
  readonly status: number
  readonly headers: Record<string, string>
  /** What this request did, as given after the error's own message (another door may word the message its own way). */
  readonly detail: string | undefined

  constructor (name: DoorErrorName, detail?: string, headers: Record<string, string> = {}) {
    const def = DoorErrors[name]
    super(detail === undefined ? def.message : `${def.message} ${detail}`)
    this.code = def.code
    this.status = def.status
    this.headers = headers
    this.detail = detail
  }
}

/** Fastify's and @fastify/multipart's error codes → the door's errors. */
const frameworkErrors: Record<string, DoorErrorName> = {
  FST_ERR_BAD_URL: 'InvalidUrl',
  FST_ERR_CTP_INVALID_JSON_BODY: 'InvalidJson',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'InvalidJson',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BodyTooLarge',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UnsupportedMediaType',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'InvalidHeader',
  // A method that must carry a body (QUERY) sent without Content-Type.
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: 'InvalidHeader',
  FST_ERR_NOT_FOUND: 'NoSuchRoute',
  FST_PARTS_LIMIT: 'BodyTooLarge',
  FST_FILES_LIMIT: 'BodyTooLarge',
  FST_FIELDS_LIMIT: 'BodyTooLarge',
  FST_REQ_FILE_TOO_LARGE: 'BodyTooLarge',
  FST_PROTO_VIOLATION: 'InvalidForm',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'InvalidForm',
  FST_INVALID_JSON_FIELD_ERROR: 'InvalidForm',
  FST_MP_PREMATURE_CLOSE: 'InvalidForm'
}

export interface ErrorReply {
  status: number
  code: number
  message: string
  headers: Record<string, string>
  /** How the server logs the error: not at all (the client's mistake), at warn (a storage failure, with `path`), or as a fault. */
  log: 'warn' | 'error' | null
  /** For storage failures: the file or directory involved. */
  path?: string
}

/** The one translation of a thrown error into the door's answer. */
export function errorReply (err: unknown): ErrorReply {
  if (err instanceof DoorError) {
    // 501 and 503 are the door's refusals (not implemented, try again), not faults.
    return { status: err.status, code: err.code, message: err.message, headers: err.headers, log: err.status >= 500 && err.status !== 501 && err.status !== 503 ? 'error' : null }
  }
  if (isStorageFailure(err)) return { status: err.status, code: err.code, message: err.message, headers: {}, log: 'warn', path: err.path }
  if (isBucketError(err)) return { status: err.status, code: err.code, message: err.message, headers: {}, log: isTransient(err) ? 'warn' : err.status >= 500 ? 'error' : null }
  if (isArgumentError(err) || err instanceof InvalidConditionalHeader) {
    return { status: 400, code: DoorErrors.InvalidArgument.code, message: err.message, headers: {}, log: null }
  }
  const frameworkCode = (err as { code?: unknown } | null)?.code
  if (typeof frameworkCode === 'string' && frameworkCode in frameworkErrors) {
    const def = DoorErrors[frameworkErrors[frameworkCode]]
    return { status: def.status, code: def.code, message: def.message, headers: {}, log: def.status >= 500 ? 'error' : null }
  }
  return { status: 500, code: DoorErrors.InternalError.code, message: DoorErrors.InternalError.message, headers: {}, log: 'error' }
}

/** The JSON envelope of every answer. */
export interface GatewayEnvelope<T> {
  success: boolean
  errors: Array<{ code: number, message: string }>
  messages: string[]
  result: T | null
  result_info?: Record<string, unknown>
}

export function success<T> (result: T, resultInfo?: Record<string, unknown>): GatewayEnvelope<T> {
  return resultInfo === undefined
    ? { success: true, errors: [], messages: [], result }
    : { success: true, errors: [], messages: [], result, result_info: resultInfo }
}

export function failure (code: number, message: string): GatewayEnvelope<null> {
  return { success: false, errors: [{ code, message }], messages: [], result: null }
}
