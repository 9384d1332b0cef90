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
export { BucketEngine } from './bucket.js'
export { bodyBuffer, bodyStream } from './object.js'
export * from './limits.js'
export { parseConditional, evaluateConditional, httpRequestConditions, InvalidConditionalHeader } from './conditional.js'
export type { ParsedConditional, ConditionalOutcome } from './conditional.js'
export { parseRangeHeader, resolveRange } from './range.js'
export type { ResolvedRange } from './range.js'
export { compareIds, isRuleId, isRulePrefix, keptForm, keyId, lookupId, RULE_ID_REQUIREMENT, RULE_PREFIX_REQUIREMENT } from './keys.js'
export { headerFields, mergeCustomMetadata } from './metadata.js'
export { parseHttpDate } from './http-date.js'
export { runningChecksum, sha256, sha256Hex, type RunningChecksum } from './checksums.js'
export { randomHex } from './random.js'
export { copiedBytes, copiedChecksums } from './copy.js'
export * from './registry.js'
export { lifecycleConfigurationBytes, MAX_LIFECYCLE_RULES, objectExpirationHeader, parseLifecycleRules, shownDays, uploadAbortHeaders, type LifecycleRuleDocument } from './lifecycle.js'
export { MAX_RULE_AGE_SECONDS } from './rule-time.js'
export { MAX_LOCK_RULES, parseLockRules, retainingRule, retainedUntil, type LockCondition, type LockRule } from './locks.js'
export { ADMIN, authorize, requireAccess, isPermission, parseExpiry, permissions } from './access.js'
export type { Action, Permission, Principal } from './access.js'
export { looksLikeTokenValue, MakerGoneError, secretOfToken, TOKEN_CACHE_MS, TokenDirectory } from './tokens.js'
export type { NewToken, TokenLookup, TokenRecord, TokenSpec, TokenSummary } from './tokens.js'
export { MAX_SESSION_SECONDS, sessionParent } from './sessions.js'
export type { SessionOpening, SessionSpec, TemporaryCredentials } from './sessions.js'
export type { DocumentTransaction, StateDocuments, RecyclingStream } from './port.js'
export { isRecyclingStream } from './port.js'
export { Queues, isValidQueueName, DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, DEFAULT_VISIBILITY_TIMEOUT_MS, MAX_VISIBILITY_TIMEOUT_MS, DEFAULT_RETENTION_SECONDS } from './queues.js'
export type { QueueRecord, QueueConsumer, PulledMessage } from './queues.js'
export { parseRuleInputs, addRules, removeRules, withRules, RuleRefusal, changeActions } from './notifications.js'
export type { NotificationRule, QueueNotifications, RuleInput } from './notifications.js'
export type { ChangeAction, DeleteOptions, DeleteOutcome } from './port.js'
