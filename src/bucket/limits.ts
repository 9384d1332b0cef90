/**
 * The engine's limits, in one place: what a single call may carry. Doors and
 * commands read them from here (through index.ts) instead of spelling the
 * numbers again, so a door's own early check (an S3 Content-Length, a CLI
 * part size) can never drift from the engine's.
 *
 * Each follows the hosted service (its R2 "Limits" page and the Workers R2
 * binding reference) or, where that says nothing, S3's multipart limits.
 * Limits that only shape how this implementation pages or caches (a list
 * page's metadata budget, the part checksums a record keeps) stay beside
 * the code they govern.
 */

const MiB = 1024 * 1024

/** Largest single put: 5 GiB minus 5 MiB (R2 limits page: "Maximum upload size", single-part). */
export const MAX_PUT_BYTES = 5 * 1024 * MiB - 5 * MiB
/** Largest part: the same 5 GiB minus 5 MiB (R2 limits page: the upload limit applies to each part). */
export const MAX_PART_BYTES = 5 * 1024 * MiB - 5 * MiB
/** Largest copy, as the largest put (R2 limits page: the upload limit applies to copies; S3 CopyObject stops at 5 GiB). */
export const MAX_COPY_BYTES = 5 * 1024 * MiB - 5 * MiB
/** Smallest part but the last, unless a store says otherwise (R2 multipart docs and S3: 5 MiB). */
export const DEFAULT_MIN_PART_BYTES = 5 * MiB
/** Highest part number, and so most parts of one upload (R2 limits page: "Maximum upload parts"; S3: 1 to 10,000). */
export const MAX_PART_NUMBER = 10_000
/** Most keys one delete call removes (R2 binding `delete(keys)`; S3 DeleteObjects: 1,000). */
export const MAX_DELETE_KEYS = 1000
/** Most objects one list page returns (R2 binding `list({ limit })`: 1 to 1,000, the default). */
export const MAX_LIST_LIMIT = 1000
/** Most parts or uploads one listing of a multipart upload returns (S3 ListParts / ListMultipartUploads: 1,000). */
export const MAX_UPLOAD_PAGE = 1000
/** Largest key, in bytes of UTF-8 (R2 limits page: "Object key length"). */
export const MAX_KEY_BYTES = 1024
/** Largest custom metadata, keys and values counted in UTF-8 bytes (the R2 binding's MetadataTooLarge, 10012; S3: 2 KB of user metadata). */
export const MAX_CUSTOM_METADATA_BYTES = 2048
/** Age after which an incomplete multipart upload is aborted (R2 multipart docs: the default lifecycle aborts after 7 days). */
export const DEFAULT_UPLOAD_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000
/** Most CORS rules a bucket holds (S3's cap, on every door). */
export const MAX_CORS_RULES = 100
/**
 * Largest CORS configuration, in bytes of S3's CORSConfiguration document
 * (`corsConfigurationBytes`): the S3 door's cap on that body, so every door
 * holds what S3 could send and no more. Every preflight and cross-origin
 * answer walks the rules, so their size is what an anonymous request costs.
 */
export const MAX_CORS_CONFIGURATION_BYTES = 64 * 1024
/**
 * Largest lifecycle configuration, in bytes of S3's LifecycleConfiguration
 * document (`lifecycleConfigurationBytes`): the S3 door's cap on that body.
 * A thousand rules (the most a bucket has) with ids of 255 characters and
 * prefixes of a hundred fit in it; a thousand prefixes of a key's 1,024
 * bytes do not, and are refused on every door rather than stored as rules
 * the S3 door could not take back.
 */
export const MAX_LIFECYCLE_CONFIGURATION_BYTES = 1024 * 1024
/**
 * Most buckets one scoped token names. The hosted service documents no cap
 * (a token is scoped "to a set of buckets"); a thousand covers any scope a
 * person picks. Unbounded, a few tokens of 80,000 names each made the
 * records 14 MB, which every process reads and parses again after any
 * change to a token, and every listing sends.
 */
export const MAX_TOKEN_BUCKETS = 1000

/** Longest time between a server's sweeps: the longest delay Node's timers keep (2^31 - 1 ms, 24.8 days); a longer one fires at once, then every millisecond. */
export const MAX_SWEEP_INTERVAL_MS = 2 ** 31 - 1
