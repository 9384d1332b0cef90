/**
 * The S3 door's one error table: every error the S3 API answers with, by its
 * S3 code (the string clients switch on), with its HTTP status and message.
 *
 * Errors of the binding (`BucketError`) are translated by their catalogue
 * name through `fromCatalogue`, never by their message; errors only this door
 * makes (signatures, XML, headers) are `S3Error`s. Argument mistakes the
 * binding reports as TypeError/RangeError are the client's: InvalidArgument.
 * The "Error codes of the S3 API" table of docs/errors.md is checked against this
 * module by test/s3/errors-doc.test.ts.
 */
import { BucketErrors, InvalidConditionalHeader, isArgumentError, isBucketError, UploadChecksumError, type BucketErrorName } from '../bucket/index.js'

export interface S3ErrorDefinition {
  readonly status: number
  readonly message: string
}

export const S3Errors = {
  AccessDenied: { status: 403, message: 'Access Denied' },
  AccessForbidden: { status: 403, message: 'CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource\'s CORS spec.' },
  AuthorizationHeaderMalformed: { status: 400, message: 'The authorization header is malformed.' },
  AuthorizationQueryParametersError: { status: 400, message: 'The presigned URL\'s X-Amz-* query parameters are not valid.' },
  BadDigest: { status: 400, message: 'The Content-MD5 or checksum you specified did not match what we received.' },
  BucketAlreadyOwnedByYou: { status: 409, message: 'Your previous request to create the named bucket succeeded and you already own it.' },
  BucketNotEmpty: { status: 409, message: 'The bucket you tried to delete is not empty.' },
  EntityTooLarge: { status: 400, message: 'Your proposed upload exceeds the maximum allowed object size.' },
  EntityTooSmall: { status: 400, message: 'Your proposed upload is smaller than the minimum allowed object size.' },
  ExpiredToken: { status: 400, message: 'The provided token has expired.' },
  ExpectationFailed: { status: 417, message: 'The Expect header cannot be met: this server supports only Expect: 100-continue.' },
  IncompleteBody: { status: 400, message: 'You did not provide the number of bytes specified by the Content-Length HTTP header.' },
  InsufficientStorage: { status: 507, message: 'There is not enough storage space left to store the object.' },
  InternalError: { status: 500, message: 'We encountered an internal error. Please try again.' },
  InvalidAccessKeyId: { status: 403, message: 'The AWS access key Id you provided does not exist in our records.' },
  InvalidArgument: { status: 400, message: 'Invalid Argument' },
  InvalidBucketName: { status: 400, message: 'The specified bucket is not valid.' },
  InvalidEncryptionAlgorithmError: { status: 400, message: 'The Encryption request you specified is not valid. Supported value: AES256.' },
  InvalidBucketState: { status: 409, message: 'The request is not valid with the current state of the bucket.' },
  InvalidDigest: { status: 400, message: 'The Content-MD5 or checksum you specified is not valid.' },
  InvalidPart: { status: 400, message: 'One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part\'s entity tag.' },
  InvalidPartOrder: { status: 400, message: 'The list of parts was not in ascending order. Parts must be ordered by part number.' },
  InvalidPartNumber: { status: 416, message: 'The requested partnumber is not satisfiable' },
  InvalidRange: { status: 416, message: 'The requested range is not satisfiable' },
  InvalidRequest: { status: 400, message: 'Invalid Request' },
  InvalidStorageClass: { status: 400, message: 'The storage class you specified is not valid' },
  InvalidToken: { status: 400, message: 'The provided token is malformed or otherwise invalid.' },
  KeyTooLongError: { status: 400, message: 'Your key is too long' },
  MalformedTrailerError: { status: 400, message: 'The request contained trailing data that was not well-formed or did not conform to our published schema.' },
  MalformedXML: { status: 400, message: 'The XML you provided was not well-formed or did not validate against our published schema' },
  MaxMessageLengthExceeded: { status: 400, message: 'Your request was too big.' },
  MetadataTooLarge: { status: 400, message: 'Your metadata headers exceed the maximum allowed metadata size.' },
  MethodNotAllowed: { status: 405, message: 'The specified method is not allowed against this resource.' },
  MissingContentLength: { status: 411, message: 'You must provide the Content-Length HTTP header.' },
  NoSuchBucket: { status: 404, message: 'The specified bucket does not exist' },
  NoSuchCORSConfiguration: { status: 404, message: 'The CORS configuration does not exist' },
  NoSuchKey: { status: 404, message: 'The specified key does not exist.' },
  NoSuchLifecycleConfiguration: { status: 404, message: 'The lifecycle configuration does not exist' },
  NoSuchUpload: { status: 404, message: 'The specified multipart upload does not exist. The upload ID might not be valid, or the multipart upload might have been aborted or completed.' },
  NotImplemented: { status: 501, message: 'A header or query you provided implies functionality that is not implemented.' },
  PreconditionFailed: { status: 412, message: 'At least one of the pre-conditions you specified did not hold' },
  RequestHeaderSectionTooLarge: { status: 400, message: 'Your request header section exceeds the maximum allowed size.' },
  RequestTimeout: { status: 400, message: 'Your socket connection to the server was not read from or written to within the timeout period.' },
  RequestTimeTooSkewed: { status: 403, message: 'The difference between the request time and the server\'s time is too large.' },
  ServiceUnavailable: { status: 503, message: 'The storage is unavailable; try again later.' },
  SignatureDoesNotMatch: { status: 403, message: 'The request signature we calculated does not match the signature you provided. Check your key and signing method.' },
  // S3's answer to more than it will take at once; here, a body the process's body budget (src/doors/body-budget.ts) has no room for.
  SlowDown: { status: 503, message: 'Please reduce your request rate.' },
  XAmzContentSHA256Mismatch: { status: 400, message: 'The provided \'x-amz-content-sha256\' header does not match what was computed.' }
} as const satisfies Record<string, S3ErrorDefinition>

export type S3ErrorCode = keyof typeof S3Errors

/**
 * Catalogue errors of the binding → S3 codes. Every catalogue entry has a
 * row (a test checks), so no binding error reaches a client as InternalError
 * by omission.
 */
export const fromCatalogue: Record<BucketErrorName, S3ErrorCode> = {
  InternalError: 'InternalError',
  EntityTooSmall: 'EntityTooSmall',
  MetadataTooLarge: 'MetadataTooLarge',
  InvalidObjectName: 'KeyTooLongError',
  InvalidMaxKeys: 'InvalidArgument',
  NoSuchUpload: 'NoSuchUpload',
  InvalidPart: 'InvalidPart',
  BadDigest: 'BadDigest',
  InvalidRange: 'InvalidRange',
  InvalidPartOrder: 'InvalidPartOrder',
  EntityTooLarge: 'EntityTooLarge',
  BucketAlreadyExists: 'BucketAlreadyOwnedByYou',
  InvalidBucketName: 'InvalidBucketName',
  NoSuchBucket: 'NoSuchBucket',
  BucketNotEmpty: 'BucketNotEmpty',
  NoSpaceLeft: 'InsufficientStorage',
  QuotaExceeded: 'InsufficientStorage',
  ReadOnlyStorage: 'ServiceUnavailable',
  StoragePermissionDenied: 'ServiceUnavailable',
  StorageNotPermitted: 'ServiceUnavailable',
  StorageIoError: 'InternalError',
  TooManyOpenFiles: 'ServiceUnavailable',
  CatalogUnavailable: 'ServiceUnavailable',
  SettingsDamaged: 'InternalError',
  StateDamaged: 'InternalError',
  CopySourceContended: 'ServiceUnavailable',
  SsecKeyRequired: 'InvalidRequest',
  SsecKeyMismatch: 'AccessDenied',
  SsecNotApplicable: 'InvalidRequest',
  // S3 refuses a delete or overwrite of an object under retention with AccessDenied (403).
  ObjectLocked: 'AccessDenied',
  BucketLocked: 'InvalidBucketState',
  AccessDenied: 'AccessDenied'
}

/**
 * An error of the S3 door, with the S3 code it answers with; `fields` are
 * elements of the error document beyond Code and Message (S3's
 * `HeadersNotSigned`, for one).
 */
export class S3Error extends Error {
  readonly code: S3ErrorCode
  readonly status: number
  readonly headers: Record<string, string>
  readonly fields: Record<string, string>

  constructor (code: S3ErrorCode, detail?: string, headers: Record<string, string> = {}, fields: Record<string, string> = {}) {
    super(detail ?? S3Errors[code].message)
    this.code = code
    this.status = S3Errors[code].status
    this.headers = headers
    this.fields = fields
  }
}

export interface S3ErrorReply {
  code: S3ErrorCode
  status: number
  message: string
  headers: Record<string, string>
  fields: Record<string, string>
}

/** Fastify's framework errors the client caused, by their `code`. */
const frameworkErrors: Record<string, S3ErrorCode> = {
  FST_ERR_BAD_URL: 'InvalidArgument',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'IncompleteBody',
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: 'InvalidRequest',
  FST_ERR_CTP_BODY_TOO_LARGE: 'EntityTooLarge'
}

/** The one translation of a thrown error into the door's answer. */
export function s3ErrorReply (err: unknown): S3ErrorReply {
  if (err instanceof S3Error) return { code: err.code, status: err.status, message: err.message, headers: err.headers, fields: err.fields }
  if (isBucketError(err)) {
    const code = fromCatalogue[err.errorName]
    // The binding's message names its method and catalogue code (`put: ... (10037)`): S3 clients get the sentence alone.
    const sentence = BucketErrors[err.errorName].message
    const message = err.detail === undefined ? sentence : `${sentence} ${err.detail}`
    return { code, status: S3Errors[code].status, message, headers: {}, fields: {} }
  }
  // A part or completion at odds with its upload's checksum: S3 answers InvalidRequest.
  if (err instanceof UploadChecksumError) return { code: 'InvalidRequest', status: 400, message: err.message, headers: {}, fields: {} }
  // Only the engine's marked argument errors are the client's; any other TypeError is a bug (500).
  if (isArgumentError(err) || err instanceof InvalidConditionalHeader) {
    return { code: 'InvalidArgument', status: 400, message: err.message, headers: {}, fields: {} }
  }
  const frameworkCode = (err as { code?: unknown } | null)?.code
  if (typeof frameworkCode === 'string' && frameworkCode in frameworkErrors) {
    const code = frameworkErrors[frameworkCode]
    return { code, status: S3Errors[code].status, message: S3Errors[code].message, headers: {}, fields: {} }
  }
  return { code: 'InternalError', status: 500, message: S3Errors.InternalError.message, headers: {}, fields: {} }
}
