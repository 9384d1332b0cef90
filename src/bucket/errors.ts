/**
 * The error catalogue: every error the engine or a store raises on purpose.
 *
 * Codes and messages follow the hosted service, so a script written against it
 * sees the same `code` here. Each entry also carries the HTTP status a door
 * answers with; doors translate through this table and nowhere else. The
 * error table of docs/errors.md is checked against this module by a test.
 *
 * Storage failures (a full disk, a read-only or forbidden data directory,
 * an I/O error) are entries too, with fsbucket's own codes (109xx): a store
 * raises them through `storageFailure` (port.ts) with the path involved,
 * which doors log at `warn` and never show to clients.
 *
 * Argument mistakes are `TypeError` / `RangeError`, as the hosted runtime
 * throws them; the engine throws the subclasses below, so that a door answers
 * 400 for those and 500 (logged with its stack) for any other exception,
 * which is a bug and never the client's fault.
 */

export interface ErrorDefinition {
  readonly code: number
  readonly status: number
  readonly message: string
}

export const BucketErrors = {
  InternalError: { code: 10001, status: 500, message: 'We encountered an internal error. Please try again.' },
  EntityTooSmall: { code: 10011, status: 400, message: 'Your proposed upload is smaller than the minimum allowed object size.' },
  MetadataTooLarge: { code: 10012, status: 400, message: 'Your metadata headers exceed the maximum allowed metadata size.' },
  InvalidObjectName: { code: 10020, status: 400, message: 'The specified object name is not valid.' },
  InvalidMaxKeys: { code: 10022, status: 400, message: 'MaxKeys params must be positive integer <= 1000.' },
  NoSuchUpload: { code: 10024, status: 404, message: 'The specified multipart upload does not exist.' },
  InvalidPart: { code: 10025, status: 400, message: 'One or more of the specified parts could not be found.' },
  BadDigest: { code: 10037, status: 400, message: 'The provided checksum does not match the data.' },
  InvalidRange: { code: 10039, status: 416, message: 'The requested range is not satisfiable.' },
  InvalidPartOrder: { code: 10048, status: 400, message: 'There was a problem with the multipart upload.' },
  EntityTooLarge: { code: 100100, status: 400, message: 'Your proposed upload exceeds the maximum allowed object size.' },
  // Bucket management (the registry of buckets in a data directory).
  BucketAlreadyExists: { code: 10004, status: 409, message: 'The bucket you tried to create already exists.' },
  InvalidBucketName: { code: 10005, status: 400, message: 'The specified bucket name is not valid.' },
  NoSuchBucket: { code: 10006, status: 404, message: 'The specified bucket does not exist.' },
  BucketNotEmpty: { code: 10008, status: 409, message: 'The bucket you tried to delete is not empty.' },
  // Storage failures (fsbucket's own codes): the request was fine, the storage could not take it.
  NoSpaceLeft: { code: 10901, status: 507, message: 'There is no space left on the device holding the data.' },
  QuotaExceeded: { code: 10902, status: 507, message: 'The disk quota of the data directory is exceeded.' },
  ReadOnlyStorage: { code: 10903, status: 503, message: 'The data directory is on a read-only file system.' },
  StoragePermissionDenied: { code: 10904, status: 503, message: 'Permission denied in the data directory.' },
  StorageNotPermitted: { code: 10905, status: 503, message: 'Operation not permitted in the data directory.' },
  StorageIoError: { code: 10906, status: 500, message: 'An input/output error occurred in the data directory.' },
  TooManyOpenFiles: { code: 10907, status: 503, message: 'Too many open files; try again later.' },
  // A store whose catalog is a server (PostgreSQL) that cannot be reached: retry later.
  CatalogUnavailable: { code: 10908, status: 503, message: 'The catalog is unavailable. Please try again.' },
  // A copy whose source was replaced (or removed from under it) at every attempt: retry later.
  CopySourceContended: { code: 10909, status: 503, message: 'The copy source kept changing while it was copied. Please try again.' },
  // Objects encrypted with a customer-provided key (SSE-C), refused as S3 refuses them (ssec.ts).
  SsecKeyRequired: { code: 10910, status: 400, message: 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.' },
  SsecKeyMismatch: { code: 10911, status: 403, message: 'Requests specifying Server Side Encryption with Customer provided keys must provide the correct secret key.' },
  SsecNotApplicable: { code: 10912, status: 400, message: 'The encryption parameters are not applicable to this object.' },
  // Bucket locks (fsbucket's own codes: the hosted service documents none for these refusals).
  ObjectLocked: { code: 10913, status: 403, message: 'The object is retained by a bucket lock rule and cannot be deleted or overwritten.' },
  BucketLocked: { code: 10914, status: 409, message: 'The bucket has lock rules; remove them before deleting the bucket.' },
  // A bucket's settings document that is not one (not JSON, not an object, no creation date): an operator must mend it.
  SettingsDamaged: { code: 10915, status: 500, message: 'The bucket\'s settings are damaged; the server\'s log names the file and what is wrong.' },
  // A document of the gateway's state (tokens, custom domains, queues) that is not JSON, not of its shape, or of a format this version does not read.
  StateDamaged: { code: 10916, status: 500, message: 'A document of the gateway\'s state is damaged or of a format this version does not read; the server\'s log names the file and what is wrong.' },
  // Credentials that are valid but do not permit what was asked (access.ts decides).
  AccessDenied: { code: 10950, status: 403, message: 'Access denied: these credentials do not permit this action.' },
} as const satisfies Record<string, ErrorDefinition>

export type BucketErrorName = keyof typeof BucketErrors

/** The storage failures of the catalogue. */
export const storageFailureNames = [
  'NoSpaceLeft', 'QuotaExceeded', 'ReadOnlyStorage', 'StoragePermissionDenied', 'StorageNotPermitted', 'StorageIoError', 'TooManyOpenFiles',
  'CatalogUnavailable', 'SettingsDamaged', 'StateDamaged'
] as const satisfies readonly BucketErrorName[]

export type StorageFailureName = typeof storageFailureNames[number]

export interface BucketErrorOptions {
  /** The underlying error (an operating-system or database error). */
  cause?: unknown
  /** The file or directory involved, for the server's log (never shown to clients). */
  path?: string
}

/**
 * An error of the catalogue: `code` is typed, the message reads
 * `"<method>: <message> (<code>)"`, as the hosted binding's do. The parts
 * are fields too, so that a door writing its own envelope (S3) reads them
 * instead of parsing the message.
 */
export class BucketError extends Error {
  readonly code: number
  readonly status: number
  readonly errorName: BucketErrorName
  /** The binding method (or step) that failed: `put`, `createBucket`. */
  readonly method: string
  /** What the message adds to the catalogue's sentence, if anything. */
  readonly detail: string | undefined
  /** For storage failures: the path involved, for the log. */
  readonly path?: string

  constructor (name: BucketErrorName, method: string, detail?: string, options: BucketErrorOptions = {}) {
    const def = BucketErrors[name]
    const message = detail === undefined ? def.message : `${def.message} ${detail}`
    super(`${method}: ${message} (${def.code})`, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'Error'
    this.code = def.code
    this.status = def.status
    this.errorName = name
    this.method = method
    this.detail = detail
    if (options.path !== undefined) this.path = options.path
  }
}

/**
 * What a call on a registry or a bucket handle after its `close()` throws.
 * Not in the catalogue: no request can make it (a server closes its doors
 * before its registry), so it is a mistake in using the library, and
 * carries Node's own code for a use after close, as the stores' would
 * differ (one would go on, another answer 10006).
 */
export function useAfterClose (method: string, what: 'registry' | 'bucket'): Error {
  return Object.assign(new Error(`${method}: The ${what} is closed. (ERR_USE_AFTER_CLOSE)`), { code: 'ERR_USE_AFTER_CLOSE' })
}

/** Whether `err` is a storage failure of the catalogue (logged at warn with its path). */
export function isStorageFailure (err: unknown): err is BucketError {
  return err instanceof BucketError && (storageFailureNames as readonly string[]).includes(err.errorName)
}

/**
 * Whether `err` asks the client to try again later (503: a storage failure
 * of the moment, a copy whose source kept changing): the request was fine,
 * the server is not at fault, and doors log it at warn, not as an error.
 */
export function isTransient (err: unknown): boolean {
  return err instanceof BucketError && err.status === 503
}

const argumentMark = Symbol('argument error')

/** A TypeError the engine throws for an argument of the wrong shape (a 400 at every door). */
export class ArgumentTypeError extends TypeError {
  readonly [argumentMark] = true
}

/** A RangeError the engine throws for an argument out of range (a 400 at every door). */
export class ArgumentRangeError extends RangeError {
  readonly [argumentMark] = true
}

/**
 * An argument that contradicts the checksum algorithm a multipart upload
 * was created with (a part without that checksum or with another, a
 * completion leaving a part's checksum out): a 400 like every argument
 * error, that an S3 door answers as S3 does (InvalidRequest).
 */
export class UploadChecksumError extends ArgumentTypeError {}

/**
 * A malformed `ssecKey` (not 64 lowercase hex digits, not 32 bytes): a plain
 * Error, as the hosted binding throws, marked as an argument mistake (400).
 */
export class SsecKeyError extends Error {
  readonly [argumentMark] = true
}

/** Whether `err` is an argument mistake the engine reported (not a bug elsewhere that happens to be a TypeError). */
export function isArgumentError (err: unknown): err is TypeError | RangeError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[argumentMark] === true
}

export function isBucketError (err: unknown): err is BucketError {
  return err instanceof BucketError
}

/** Operating-system error codes that are storage failures of the catalogue. */
const failureOfErrno: Record<string, StorageFailureName> = {
  ENOSPC: 'NoSpaceLeft',
  EDQUOT: 'QuotaExceeded',
  EROFS: 'ReadOnlyStorage',
  EACCES: 'StoragePermissionDenied',
  EPERM: 'StorageNotPermitted',
  EIO: 'StorageIoError',
  EMFILE: 'TooManyOpenFiles',
  ENFILE: 'TooManyOpenFiles'
}

/**
 * A storage failure of the catalogue, raised by a store while doing `what`
 * (`"storing a body"`): the message names the operation and the
 * catalogue's text, never the path, which travels in `path` for the log.
 */
export function storageFailure (name: StorageFailureName, what: string, options: { path?: string, cause?: unknown } = {}): BucketError {
  return new BucketError(name, what, undefined, options)
}

/**
 * An operating-system error (`err.code` such as ENOSPC) as the storage
 * failure of the catalogue; anything else (and errors already in the
 * catalogue) passes through unchanged.
 */
export function storageFailureOf (err: unknown, what: string, path?: string): unknown {
  const errno = (err as { code?: unknown } | null)?.code
  const name = typeof errno === 'string' ? failureOfErrno[errno] : undefined
  if (name === undefined) return err
  return storageFailure(name, what, { path: path ?? (err as { path?: string }).path, cause: err })
}
