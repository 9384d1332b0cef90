/**
 * The bucket binding: the one module every door (HTTP routes, management API)
 * imports. Nothing here knows about HTTP frameworks.
 */
export * from './types.js'
export { BucketError, BucketErrors, isBucketError, errorByCode } from './errors.js'
export type { ErrorDefinition, BucketErrorName } from './errors.js'
export { BucketEngine, bodyBuffer, bodyStream, MAX_PUT_BYTES, MAX_PART_BYTES, MAX_LIST_LIMIT, DEFAULT_UPLOAD_MAX_AGE_MS } from './bucket.js'
export { openBucket } from './open.js'
export { parseConditional, evaluateConditional, InvalidConditionalHeader } from './conditional.js'
export type { ParsedConditional, ConditionalOutcome } from './conditional.js'
export { parseRangeHeader, resolveRange } from './range.js'
export type { ResolvedRange } from './range.js'
export { MAX_KEY_BYTES, compareIds } from './keys.js'
export { MAX_CUSTOM_METADATA_BYTES } from './metadata.js'
export * from './registry.js'
