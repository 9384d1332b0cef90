/**
 * The bucket binding: the one module every door (HTTP routes, management API)
 * imports. Nothing here knows about HTTP frameworks.
 */
export * from './types.js'
export { BucketError, BucketErrors, isBucketError, errorByCode } from './errors.js'
export type { ErrorDefinition, BucketErrorName } from './errors.js'
export { openBucket, bodyStream } from './bucket.js'
export * from './registry.js'
