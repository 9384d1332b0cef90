/**
 * The engine's surface for doors: the bucket binding, the registry of
 * buckets, the error catalogue, limits and parsers. Doors (HTTP routes,
 * management API, ...) import this module and nothing else of src/bucket/;
 * stores implement src/bucket/port.ts. Nothing here knows about HTTP
 * frameworks or files.
 */
export * from './types.js'
export {
  BucketError, BucketErrors, isBucketError, isArgumentError, isStorageFailure, isTransient, storageFailureNames, ArgumentTypeError, ArgumentRangeError,
  UploadChecksumError
} from './errors.js'
export type { ErrorDefinition, BucketErrorName, StorageFailureName } from './errors.js'
export {
  BucketEngine, bodyBuffer, bodyStream, MAX_PUT_BYTES, MAX_PART_BYTES, MAX_PART_NUMBER, MAX_DELETE_KEYS, DEFAULT_MIN_PART_BYTES,
  DEFAULT_UPLOAD_MAX_AGE_MS
} from './bucket.js'
export { MAX_LIST_LIMIT } from './listing.js'
export { parseConditional, evaluateConditional, InvalidConditionalHeader } from './conditional.js'
export type { ParsedConditional, ConditionalOutcome } from './conditional.js'
export { parseRangeHeader, resolveRange } from './range.js'
export type { ResolvedRange } from './range.js'
export { MAX_KEY_BYTES, compareIds } from './keys.js'
export { MAX_CUSTOM_METADATA_BYTES, headerFields } from './metadata.js'
export { parseHttpDate } from './http-date.js'
export { runningChecksum, type RunningChecksum } from './checksums.js'
export { randomHex } from './random.js'
export { copiedChecksums } from './copy.js'
export * from './registry.js'
export type { DocumentTransaction, StateDocuments, RecyclingStream } from './port.js'
export { isRecyclingStream } from './port.js'
