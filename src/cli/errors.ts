/**
 * Errors of the object commands, and the one line each prints.
 *
 * Both transports raise errors carrying the numeric code of the engine's
 * catalogue (src/bucket/errors.ts) or of a server's own table: the local
 * transport gets them from the engine, the HTTP transport from the answer's
 * envelope. The words a user reads come from the tables below, keyed by the
 * errors' names, so a command fails with the same line either way:
 * `fsbucket: cat fsb://photos/x: no such key`.
 *
 * `engineTexts` has a row for every name of the catalogue (the compiler
 * checks), so a new engine error is a decision here too. `serverErrors`
 * holds what only a server answers (the HTTP routes' and the management
 * API's codes): this door never imports another, so it names those codes
 * itself, and test/cli/error-texts.test.ts checks them against the doors'
 * tables.
 */
import { BucketErrors, damageOf, isBucketError, type BucketError, type BucketErrorName } from '../bucket/index.js'

/** Short texts for the engine's errors a user meets; null keeps the message the error came with. */
const engineTexts: Record<BucketErrorName, string | null> = {
  InternalError: null,
  EntityTooSmall: 'part smaller than the store\'s minimum part size (raise --part-size)',
  MetadataTooLarge: 'custom metadata larger than 2,048 bytes',
  InvalidObjectName: 'invalid key (1 to 1,024 bytes of UTF-8)',
  InvalidMaxKeys: null,
  NoSuchUpload: null,
  InvalidPart: null,
  BadDigest: 'the bytes do not match their checksum',
  InvalidRange: null,
  InvalidPartOrder: null,
  EntityTooLarge: 'object too large for one put (5 GiB minus 5 MiB)',
  BucketAlreadyExists: 'bucket already exists',
  InvalidBucketName: 'invalid bucket name (3 to 63 lowercase letters, digits and hyphens)',
  NoSuchBucket: 'no such bucket',
  BucketNotEmpty: 'bucket not empty (rb --force removes its objects first)',
  NoSpaceLeft: null,
  QuotaExceeded: null,
  ReadOnlyStorage: null,
  StoragePermissionDenied: null,
  StorageNotPermitted: null,
  StorageIoError: null,
  TooManyOpenFiles: null,
  CatalogUnavailable: null,
  SettingsDamaged: 'the bucket\'s settings are damaged (mend <bucket>/.fsbucket/settings.json; a server\'s log says what is wrong)',
  StateDamaged: null,
  CopySourceContended: null,
  SsecKeyRequired: 'the object is encrypted with a customer key (SSE-C), which the commands do not send',
  SsecKeyMismatch: null,
  SsecNotApplicable: null,
  ObjectLocked: 'retained by a bucket lock rule (not deleted or overwritten)',
  BucketLocked: 'the bucket has lock rules (remove them first)',
  AccessDenied: 'the token does not permit this (see fsbucket token list)'
}

/**
 * What only a server answers, by the name its door gives it: the HTTP
 * routes' (src/http/errors.ts) and the management API's
 * (src/mgmt/errors.ts). A missing key is the routes' NoSuchKey: the engine
 * answers one with null, and the commands raise the same error for it.
 */
export const serverErrors = {
  NoSuchKey: { code: 10007, text: 'no such key' },
  MissingToken: { code: 40100, text: 'the server needs a token (--token or FSBUCKET_TOKEN)' },
  InvalidToken: { code: 40300, text: 'the server refused the token' },
  WritesRefused: { code: 40301, text: 'the server refuses writes without a token (it has none configured and does not listen on loopback)' },
  MissingAuthHeaders: { code: 9106, text: 'the server needs a token (--token or FSBUCKET_TOKEN)' },
  InvalidAccessToken: { code: 9109, text: 'the server refused the token' },
  AuthenticationError: { code: 10000, text: 'the server refused the credentials' }
} as const satisfies Record<string, { code: number, text: string }>

type ServerErrorName = keyof typeof serverErrors

/** The text of a code a server or the engine answered with, if the tables have one. */
const textsByCode = new Map<number, string>([
  ...(Object.entries(engineTexts) as Array<[BucketErrorName, string | null]>)
    .filter((entry): entry is [BucketErrorName, string] => entry[1] !== null)
    .map(([name, text]): [number, string] => [BucketErrors[name].code, text]),
  ...Object.values(serverErrors).map(({ code, text }): [number, string] => [code, text])
])

/** A failure of a command: `code` is the catalogue's when it came from the store or the server. */
export class CliError extends Error {
  readonly code: number | undefined

  constructor (message: string, code?: number, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CliError'
    this.code = code
  }
}

/**
 * The errors whose words name the bucket: "no such bucket" after
 * `cp photo.jpg` reads as if the file were missing, so the line says which
 * bucket does not exist, or that its name is not one (the engine's words).
 */
const bucketTexts: Record<number, (bucket: string) => string> = {
  [BucketErrors.InvalidBucketName.code]: bucket => `"${bucket}" is not a valid bucket name: The specified bucket name is not valid. (3 to 63 lowercase letters, digits and hyphens)`,
  [BucketErrors.NoSuchBucket.code]: bucket => `bucket "${bucket}" does not exist`
}

function aboutBucket (code: number, bucket: string | undefined): string | undefined {
  return bucket === undefined ? undefined : bucketTexts[code]?.(bucket)
}

/** A code from a server's answer → a CliError with the tables' words (or the answer's message), naming `bucket` where the words are about it. */
export function fromCode (code: number, message: string, cause?: unknown, bucket?: string): CliError {
  return new CliError(aboutBucket(code, bucket) ?? textsByCode.get(code) ?? message, code, { cause })
}

/** An error of the engine → a CliError with its text (or the engine's message), naming `bucket` where the words are about it. */
export function fromBucketError (err: BucketError, bucket?: string): CliError {
  const text = aboutBucket(err.code, bucket) ?? engineTexts[err.errorName] ?? err.message
  // Why a name is taken when no bucket holds it: the words alone would say it exists.
  return new CliError(err.errorName === 'BucketAlreadyExists' && err.detail !== undefined ? `${text}: ${err.detail}` : text, err.code, { cause: err })
}

/** A condition the commands find themselves (a missing bucket or key), as a server would answer it. */
export function cliError (name: BucketErrorName | ServerErrorName, bucket?: string): CliError {
  if (isServerErrorName(name)) return new CliError(serverErrors[name].text, serverErrors[name].code)
  return new CliError(aboutBucket(BucketErrors[name].code, bucket) ?? engineTexts[name] ?? BucketErrors[name].message, BucketErrors[name].code)
}

function isServerErrorName (name: string): name is ServerErrorName {
  return Object.hasOwn(serverErrors, name)
}

/** The text of the one line an error prints after `fsbucket: <command> <target>: `. */
export function describeError (err: unknown): string {
  if (err instanceof CliError) return err.message
  // A document of the state read here, not by a server: what is wrong with it is said here, as no log will.
  if (isBucketError(err) && err.errorName === 'StateDamaged') return `${damageOf(err)} (mend it, or restore it from a backup)`
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'number') {
    const text = textsByCode.get(code)
    if (text !== undefined) return text
  }
  if (typeof code === 'string') {
    const errno = err as NodeJS.ErrnoException
    switch (code) {
      case 'ENOENT': return `no such file or directory${errno.path === undefined ? '' : `: ${errno.path}`}`
      case 'EACCES':
      case 'EPERM': return `permission denied${errno.path === undefined ? '' : `: ${errno.path}`}`
      // A download renamed over a directory (a key `a` beside keys under `a/`), or a directory read as a file.
      case 'EISDIR': return errno.syscall === 'rename' ? `a directory is in the way of the file${errno.path === undefined ? '' : `: ${errno.path}`}` : 'is a directory (use -r)'
      case 'ENOTDIR': return `not a directory${errno.path === undefined ? '' : `: ${errno.path}`}`
      case 'ELOOP': return `too many symbolic links (a loop of links)${errno.path === undefined ? '' : `: ${errno.path}`}`
      case 'ENOSPC': return 'no space left on the device'
      case 'ENAMETOOLONG': return `file name too long${errno.path === undefined ? '' : `: ${errno.path}`}`
      case 'EEXIST':
        // mkdir -p of a download's directories: a file of that name stands where a directory must go.
        if (errno.syscall === 'mkdir') return `a file is in the way of a directory${errno.path === undefined ? '' : `: ${errno.path}`}`
        break
    }
  }
  return err instanceof Error ? err.message : String(err)
}
