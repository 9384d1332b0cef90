/**
 * Errors of the object commands, and the one line each prints.
 *
 * Both transports raise errors carrying the numeric code of the engine's
 * catalogue (src/bucket/errors.ts) or of the HTTP door's table: the local
 * transport gets them from the engine, the HTTP transport from the answer's
 * envelope. The words a user reads come from the one table below, keyed by
 * those codes, so a command fails with the same line either way:
 * `fsbucket: cat fsb://photos/x: no such key`.
 */

/** Short texts for the codes a user meets; any other code keeps the message it came with. */
const texts: Record<number, string> = {
  10004: 'bucket already exists',
  10005: 'invalid bucket name (3 to 63 lowercase letters, digits and hyphens)',
  10006: 'no such bucket',
  10007: 'no such key',
  10008: 'bucket not empty (rb --force removes its objects first)',
  10011: 'part smaller than the store\'s minimum part size (raise --part-size)',
  10012: 'custom metadata larger than 2,048 bytes',
  10020: 'invalid key (1 to 1,024 bytes of UTF-8)',
  10037: 'the bytes do not match their checksum',
  100100: 'object too large for one put (5 GiB minus 5 MiB)',
  10910: 'retained by a bucket lock rule (not deleted or overwritten)',
  10911: 'the bucket has lock rules (remove them first)',
  40100: 'the server needs a token (--token or FSBUCKET_TOKEN)',
  40300: 'the server refused the token',
  40301: 'the server refuses writes without a token (it has none configured and does not listen on loopback)',
  9106: 'the server needs a token (--token or FSBUCKET_TOKEN)',
  9109: 'the server refused the token',
  10000: 'the server refused the credentials'
}

/** A failure of a command: `code` is the catalogue's when it came from the store or the server. */
export class CliError extends Error {
  readonly code: number | undefined

  constructor (message: string, code?: number, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CliError'
    this.code = code
  }
}

/** An error with a catalogue code → a CliError with the table's words (or the given message). */
export function fromCode (code: number, message: string, cause?: unknown): CliError {
  return new CliError(texts[code] ?? message, code, { cause })
}

/** The text of the one line an error prints after `fsbucket: <command> <target>: `. */
export function describeError (err: unknown): string {
  if (err instanceof CliError) return err.message
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'number' && texts[code] !== undefined) return texts[code]
  if (typeof code === 'string') {
    const errno = err as NodeJS.ErrnoException
    switch (code) {
      case 'ENOENT': return `no such file or directory${errno.path === undefined ? '' : `: ${errno.path}`}`
      case 'EACCES':
      case 'EPERM': return `permission denied${errno.path === undefined ? '' : `: ${errno.path}`}`
      case 'EISDIR': return 'is a directory (use -r)'
      case 'ENOTDIR': return `not a directory${errno.path === undefined ? '' : `: ${errno.path}`}`
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
