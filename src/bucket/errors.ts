/**
 * The error catalogue: every error the bucket binding raises on purpose.
 *
 * Codes and messages follow the hosted service, so a script written against it
 * sees the same `code` here. Each entry also carries the HTTP status a door
 * answers with; doors translate through this table and nowhere else. The
 * README's error table is checked against this module by a test.
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
  // A store whose catalog is a server (PostgreSQL) that cannot be reached: retry later.
  CatalogUnavailable: { code: 50300, status: 503, message: 'The catalog is unavailable. Please try again.' },
} as const satisfies Record<string, ErrorDefinition>

export type BucketErrorName = keyof typeof BucketErrors

/** An error of the catalogue: `code` is typed, the message reads `"<method>: <message> (<code>)"`. */
export class BucketError extends Error {
  readonly code: number
  readonly status: number
  readonly errorName: BucketErrorName

  constructor (name: BucketErrorName, method: string, detail?: string) {
    const def = BucketErrors[name]
    const message = detail === undefined ? def.message : `${def.message} ${detail}`
    super(`${method}: ${message} (${def.code})`)
    this.name = 'Error'
    this.code = def.code
    this.status = def.status
    this.errorName = name
  }
}

export function isBucketError (err: unknown): err is BucketError {
  return err instanceof BucketError
}

/** Looks a catalogue entry up by its numeric code (doors use it for documentation and tests). */
export function errorByCode (code: number): (ErrorDefinition & { name: BucketErrorName }) | undefined {
  for (const [name, def] of Object.entries(BucketErrors)) {
    if (def.code === code) return { name: name as BucketErrorName, ...def }
  }
  return undefined
}
