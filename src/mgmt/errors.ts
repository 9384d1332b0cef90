/**
 * The management API's error table: every condition it answers with, its
 * numeric code, HTTP status and message. Routes throw `ManagementError`s by
 * name; the plugin's error handler is the only place that writes them out.
 *
 * Codes follow the hosted API where its code for a condition is known
 * (9106, 6003, 9109, 10000, 1000, 7000, 7003, 6007, 1061, 81044, 81053, 81058,
 * 83011, 9000, 9003..9007, 9015, 9021, 9051, and the bucket codes 10004..10008, 10012, 10020,
 * 10037, 10059, 100100). Where the
 * hosted API's code is not known, the code is fsbucket's own and docs/errors.md
 * says so.
 *
 * Statuses: 400 for validation, duplicates and missing credentials (as the
 * hosted API answers 9106), 403 for wrong credentials, 404
 * for unknown resources. Two bucket conditions keep the 409 of the bucket
 * catalogue (a bucket that exists, a bucket that is not empty); those answers
 * carry `x-should-retry: false`, because the official SDK otherwise retries
 * every 409 twice with a back-off before giving up. Nothing answers 429.
 *
 * The storage failures of the engine's catalogue (a full disk: 507, a
 * read-only or forbidden data directory: 503, an I/O error: 500) and a copy
 * whose source kept changing (503, try again) are answered with the
 * catalogue's own code, status and message, and logged at warn (a storage
 * failure with the path involved). An argument the engine refuses (a TypeError
 * or RangeError it marked) is 10040; any other exception is 10001 (500),
 * logged with its stack.
 */
import { BucketErrors, isArgumentError, isBucketError, isStorageFailure, storageFailureNames } from '../bucket/index.js'
import type { BucketErrorName, ErrorDefinition, StorageFailureName } from '../bucket/index.js'

/** An entry of this door's table: the same shape as the engine's catalogue entries. */
export type ManagementErrorDefinition = ErrorDefinition

export const ManagementErrors = {
  // Credentials
  MissingAuthHeaders: { code: 9106, status: 400, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' },
  InvalidRequestHeaders: { code: 6003, status: 400, message: 'Invalid request headers' },
  InvalidAccessToken: { code: 9109, status: 403, message: 'Invalid access token' },
  AuthenticationError: { code: 10000, status: 403, message: 'Authentication error' },
  AccessDenied: { code: 10950, status: 403, message: 'Access denied: these credentials do not permit this action.' },
  TokenNotFound: { code: 10951, status: 404, message: 'No token with that id.' },
  NoS3Port: { code: 10952, status: 501, message: 'This server has no S3 port: share links are presigned S3 URLs.' },
  // The process's budget for bodies held in memory (src/doors/body-budget.ts) has no room; the hosted API's code for it is not known.
  SlowDown: { code: 10953, status: 503, message: 'The server holds too many request bodies at once; try again in a moment.' },
  // Requests
  NoRoute: { code: 7000, status: 400, message: 'No route for that URI' },
  MalformedJson: { code: 6007, status: 400, message: 'Malformed JSON in request body' },
  InvalidQuery: { code: 1198, status: 400, message: 'Invalid query parameter' },
  InvalidRequestBody: { code: 1199, status: 400, message: 'Invalid request body' },
  // Accounts, the user and its tokens
  AccountNotFound: { code: 7003, status: 404, message: 'Could not route to the account, perhaps your object identifier is invalid?' },
  InvalidApiToken: { code: 1000, status: 401, message: 'Invalid API Token' },
  // Zones
  ZoneNotFound: { code: 7003, status: 404, message: 'Could not route to the zone, perhaps your object identifier is invalid?' },
  ZoneAlreadyExists: { code: 1061, status: 400, message: 'The zone already exists' },
  InvalidZoneName: { code: 1097, status: 400, message: 'The zone name is not a valid domain name' },
  // DNS records
  RecordNotFound: { code: 81044, status: 404, message: 'Record does not exist.' },
  RecordHostConflict: { code: 81053, status: 400, message: 'An A, AAAA, or CNAME record with that host already exists.' },
  IdenticalRecord: { code: 81058, status: 400, message: 'An identical record already exists.' },
  ProxiedTargetNotAllowed: { code: 9003, status: 400, message: 'Target is not allowed for a proxied record.' },
  RecordTypeNotProxiable: { code: 9004, status: 400, message: 'This record type cannot be proxied.' },
  InvalidIPv4: { code: 9005, status: 400, message: 'Content for A record must be a valid IPv4 address.' },
  InvalidIPv6: { code: 9006, status: 400, message: 'Content for AAAA record must be a valid IPv6 address.' },
  // The routes name the type: "Content for CNAME record is invalid."
  InvalidContent: { code: 9007, status: 400, message: 'Content for the record is invalid.' },
  InvalidTxtContent: { code: 9051, status: 400, message: 'Invalid TXT record. Record may only contain printable ASCII!' },
  RecordContentTooLong: { code: 9015, status: 400, message: 'Record content exceeds the allowed length of 4096 wire format bytes.' },
  CombinedContentTooLong: { code: 83011, status: 400, message: 'Combined content length of records with this name and type exceeds the limit.' },
  InvalidRecordContent: { code: 9009, status: 400, message: 'Content for the record is missing or invalid.' },
  InvalidRecordName: { code: 9000, status: 400, message: 'DNS name is invalid.' },
  InvalidRecordType: { code: 9020, status: 400, message: 'Invalid DNS record type.' },
  InvalidTtl: { code: 9021, status: 400, message: 'Invalid TTL. Must be between 60 and 86400 seconds, or 1 for automatic.' },
  RecordReadOnly: { code: 9102, status: 400, message: 'This record belongs to a bucket\'s custom domain: detach the domain to change or remove it.' },
  InvalidSrvData: { code: 9101, status: 400, message: 'SRV record data is invalid: priority, weight and port must be integers from 0 to 65535 and target a hostname.' },
  // Certificate packs
  CertificatePackNotFound: { code: 1413, status: 404, message: 'Certificate pack not found.' },
  // Invites
  InviteNotFound: { code: 1003, status: 404, message: 'Invite not found.' },
  InviteNotPending: { code: 1005, status: 400, message: 'The invite has already been answered or has expired.' },
  InvalidInviteStatus: { code: 1006, status: 400, message: 'An invite can only be accepted or rejected.' },
  // Buckets (the bucket catalogue's conditions, as this API answers them)
  BucketAlreadyExists: { code: 10004, status: 409, message: 'The bucket you tried to create already exists, and you own it.' },
  InvalidBucketName: { code: 10005, status: 400, message: 'The specified bucket name is not valid.' },
  NoSuchBucket: { code: 10006, status: 404, message: 'The specified bucket does not exist.' },
  BucketNotEmpty: { code: 10008, status: 409, message: 'The bucket you tried to delete is not empty.' },
  InvalidArgument: { code: 10040, status: 400, message: 'Invalid argument.' },
  NoCorsConfiguration: { code: 10059, status: 404, message: 'The CORS configuration does not exist.' },
  NoSuchKey: { code: 10007, status: 404, message: 'The specified key does not exist.' },
  PreconditionFailed: { code: 10031, status: 412, message: 'At least one of the pre-conditions you specified did not hold.' },
  InvalidObjectName: { code: 10020, status: 400, message: 'The specified object name is not valid.' },
  EntityTooLarge: { code: 100100, status: 400, message: 'Your proposed upload exceeds the maximum allowed object size.' },
  BadDigest: { code: 10037, status: 400, message: 'The provided checksum does not match the data.' },
  MetadataTooLarge: { code: 10012, status: 400, message: 'Your metadata headers exceed the maximum allowed metadata size.' },
  // An object encrypted with a customer-provided key (SSE-C): the engine's code; this API takes no key, so it reads no such object
  SsecKeyRequired: { code: 10910, status: 400, message: 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.' },
  // Bucket locks (fsbucket's own codes, as the engine's catalogue)
  ObjectLocked: { code: 10913, status: 403, message: 'The object is retained by a bucket lock rule and cannot be deleted or overwritten.' },
  BucketLocked: { code: 10914, status: 409, message: 'The bucket has lock rules; remove them before deleting the bucket.' },
  // Custom domains of buckets
  DomainNotInZone: { code: 10071, status: 400, message: 'The domain is not in the given zone.' },
  DomainAlreadyAttached: { code: 10072, status: 400, message: 'The domain is already attached to a bucket.' },
  DomainNotFound: { code: 10073, status: 404, message: 'The custom domain is not attached to this bucket.' },
  // Queues and event notifications
  QueueNotFound: { code: 11000, status: 404, message: 'Queue does not exist.' },
  QueueAlreadyExists: { code: 11009, status: 409, message: 'A queue with this name already exists.' },
  InvalidQueueName: { code: 11003, status: 400, message: 'The queue name is not valid: 1 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit.' },
  InvalidQueueSettings: { code: 11004, status: 400, message: 'The queue or consumer settings are not valid.' },
  ConsumerAlreadyExists: { code: 11005, status: 409, message: 'This queue already has a consumer.' },
  ConsumerNotFound: { code: 11006, status: 404, message: 'Consumer does not exist.' },
  InvalidNotificationRule: { code: 10090, status: 400, message: 'The event notification rule is not valid.' },
  OverlappingNotificationRule: { code: 10091, status: 409, message: 'The event notification rule overlaps an existing rule of this bucket.' },
  NoSuchNotificationRule: { code: 10092, status: 404, message: 'No event notification rule of this queue has that id.' },
  // Anything else
  InternalError: { code: 10001, status: 500, message: 'Internal error.' }
} as const satisfies Record<string, ManagementErrorDefinition>

export type ManagementErrorName = keyof typeof ManagementErrors

/** The catalogue's errors this API answers as the catalogue has them: the storage failures, and a copy to try again. */
export const answeredAsCatalogued = [...storageFailureNames, 'CopySourceContended'] as const satisfies readonly BucketErrorName[]

type CataloguedName = typeof answeredAsCatalogued[number]

function isCataloguedName (name: BucketErrorName): name is CataloguedName {
  return (answeredAsCatalogued as readonly string[]).includes(name)
}

/** Entries of an error's `error_chain` (the hosted API uses it to say which header was malformed). */
export interface ErrorChainEntry {
  code: number
  message: string
}

export class ManagementError extends Error {
  readonly code: number
  readonly status: number
  readonly errorName: ManagementErrorName | CataloguedName
  readonly chain: ErrorChainEntry[] | undefined
  /** For storage failures: the path involved, for the log. */
  readonly path?: string

  /** `detail` replaces the table's message when the condition has a more precise one (e.g. naming the target). */
  constructor (name: ManagementErrorName, detail?: string, chain?: ErrorChainEntry[]) {
    const def = ManagementErrors[name]
    super(detail ?? def.message)
    this.name = 'ManagementError'
    this.code = def.code
    this.status = def.status
    this.errorName = name
    this.chain = chain
  }

  /** An error of the engine's catalogue answered with the catalogue's code, status and message. */
  static catalogued (name: CataloguedName, path?: string, cause?: unknown): ManagementError {
    const err = new ManagementError('InternalError', BucketErrors[name].message)
    Object.assign(err, { code: BucketErrors[name].code, status: BucketErrors[name].status, errorName: name, path, cause })
    return err
  }
}

/**
 * The engine's catalogue → this API's table, by catalogue name; the storage
 * failures and CopySourceContended are answered with the catalogue's own
 * entry (above), so they have no row. Conditions this API has no answer of its own for are InternalError
 * (500), as before: they belong to object and multipart calls the
 * management API does not make.
 */
const fromCatalogue: Record<Exclude<BucketErrorName, CataloguedName>, ManagementErrorName> = {
  InternalError: 'InternalError',
  EntityTooSmall: 'InternalError',
  MetadataTooLarge: 'MetadataTooLarge',
  InvalidObjectName: 'InvalidObjectName',
  InvalidMaxKeys: 'InternalError',
  NoSuchUpload: 'InternalError',
  InvalidPart: 'InternalError',
  BadDigest: 'BadDigest',
  InvalidRange: 'InternalError',
  InvalidPartOrder: 'InternalError',
  EntityTooLarge: 'EntityTooLarge',
  BucketAlreadyExists: 'BucketAlreadyExists',
  InvalidBucketName: 'InvalidBucketName',
  NoSuchBucket: 'NoSuchBucket',
  BucketNotEmpty: 'BucketNotEmpty',
  // The management API takes no customer key: a read of an SSE-C object's content is refused as the engine refuses it
  // (another key, or a key where none is wanted, cannot be asked here).
  SsecKeyRequired: 'SsecKeyRequired',
  SsecKeyMismatch: 'InvalidArgument',
  SsecNotApplicable: 'InvalidArgument',
  ObjectLocked: 'ObjectLocked',
  BucketLocked: 'BucketLocked',
  AccessDenied: 'AccessDenied'
}

/** Any thrown value → the ManagementError the client sees. */
export function toManagementError (err: unknown): ManagementError {
  if (err instanceof ManagementError) return err
  if (isStorageFailure(err)) return ManagementError.catalogued(err.errorName as StorageFailureName, err.path, err)
  if (isArgumentError(err)) return new ManagementError('InvalidArgument', err.message)
  if (isBucketError(err)) {
    const name = err.errorName
    if (isCataloguedName(name)) return ManagementError.catalogued(name, err.path, err)
    // Why a name is taken when no bucket holds it (a file made by hand: stores/fs/registry-storage.ts) follows this API's sentence.
    const own = fromCatalogue[name]
    return new ManagementError(own, name === 'BucketAlreadyExists' && err.detail !== undefined ? `${ManagementErrors[own].message} ${err.detail}` : undefined)
  }
  return new ManagementError('InternalError')
}

/** Statuses the official SDK retries by default; answers with them say not to. */
export function isRetriedBySdk (status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}
