/**
 * `fsbucket share fsb://<bucket>/<key>`: a presigned SigV4 URL on the S3
 * port (path style) that lets whoever holds it GET the object (or PUT it,
 * with `--upload`) until it expires, and the curl command that uses it.
 *
 * What signs the link (src/doors/share-links.ts, shared with the management
 * API's share-links route): a scoped token made for it in the registry of
 * `--data` (and `--catalog`), named `share <bucket>/<key>`, limited to the
 * bucket, object-read-only for a download and object-read-write for an
 * upload, expiring when the link does. Its id is printed on stderr, and
 * `fsbucket token revoke <id>` ends the link. The token may do more than
 * the one key (any key of the bucket, with the same permission), but only
 * someone who has its secret could sign for another key, and the secret is
 * not printed; the URL carries only the signature.
 *
 * A running server accepts the new token at once, as it accepts any token
 * made from the command line (a lookup that misses reads the tokens again).
 *
 * `--expires` takes what `token create --expires` takes (a duration such as
 * `15m`, `12h`, `7d`, or an ISO 8601 instant), at most 7 days away: the
 * longest life S3 gives a presigned URL. The S3 endpoint the URL names is
 * the serve defaults' host and S3 port unless `--s3-endpoint`
 * (FSBUCKET_S3_ENDPOINT) names another (`https://s3.example.test`); a bad
 * one is refused as `serve` refuses its own (secret-option.ts), never
 * repeated: it may hold a password.
 *
 * What reaches the terminal holds no raw control character (terminal-text.ts):
 * a refusal's line is shown as the object commands show theirs, and the curl
 * command, which the user pastes, writes a bidirectional control of the file
 * name as its UTF-8 bytes in `$'…'`, as the doors' shell quoting writes C0
 * and C1 controls: the shell reads back the same name, and the line shows in
 * its order (a raw U+202E would show `invoice\u202efdp.exe` as
 * `invoiceexe.pdf`).
 */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { isArgumentError, parseExpiry, type BucketRegistry } from '../bucket/index.js'
import { catalogOption, dataOption } from '../doors/command-options.js'
import { curlCommand, hasDotSegment, makeShareLink, MAX_SHARE_SECONDS, type ShareLink } from '../doors/share-links.js'
import { parseLocation } from './paths.js'
import { printFailure, watchStdout } from './context.js'
import { secretValue } from './secret-option.js'

export interface ShareCommandWiring {
  /** Opens the registry of the buckets in a data directory (with the catalog `catalog` names, if given). */
  openRegistry: (dataDir: string, catalog?: string) => Promise<BucketRegistry>
  /** `http://<host>:<s3 port>` of a server started with the defaults. */
  defaultS3Endpoint: string
}

interface ShareOptions {
  data: string
  catalog?: string
  expires: string
  upload: boolean
  s3Endpoint: string
}

/**
 * How long a link given `--expires <text>` lives, in whole seconds from
 * `now`, or why it cannot: the forms of `token create --expires`, at most
 * 7 days.
 */
export function shareSeconds (text: string, now: Date): number | string {
  const at = parseExpiry(text, now)
  if (at === null) return 'expected a duration such as 15m, 12h, 7d, or an ISO 8601 date and time with a zone (2026-12-31T00:00:00Z) in the future'
  const seconds = Math.ceil((at.getTime() - now.getTime()) / 1000)
  if (seconds > MAX_SHARE_SECONDS) return 'a share link lives at most 7 days (604800 seconds), as S3 presigned URLs do'
  return seconds
}

/** `--s3-endpoint`: an http(s) URL with no path, query or credentials. */
export function parseS3Endpoint (text: string): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new InvalidArgumentError('expected an http:// or https:// URL such as http://127.0.0.1:8788')
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' ||
      url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new InvalidArgumentError('expected an http:// or https:// URL with no path, such as http://127.0.0.1:8788')
  }
  return url
}

/** `--s3-endpoint`: an origin, without credentials (a share link would carry them to whoever it is given); refused through `secretValue`, which never repeats the value. */
export function s3EndpointOrigin (value: string): string {
  if (/:\/\/[^/?#]*@/.test(value)) throw new Error('the URL must not hold credentials (user:password@)')
  return parseS3Endpoint(value).origin
}

function fail (target: string, what: string): void {
  printFailure('share', target, what)
  process.exitCode = 1
}

export function registerShareCommand (program: Command, wiring: ShareCommandWiring): void {
  const share = program.command('share <target>')
  share
    .description('print a presigned S3 URL that downloads fsb://<bucket>/<key> (or uploads it, with --upload) until it expires, and the curl command that uses it')
    .addOption(dataOption())
    .addOption(catalogOption())
    .option('--expires <when>', 'how long the link works: a duration (90s, 15m, 12h, 7d) or an ISO 8601 instant, at most 7 days', '1h')
    .option('--upload', 'a link that PUTs the object instead of GETting it', false)
    .addOption(new Option('--s3-endpoint <url>', 'the S3 port the link names').env('FSBUCKET_S3_ENDPOINT').default(wiring.defaultS3Endpoint)
      .argParser(secretValue(() => share, '--s3-endpoint', 'FSBUCKET_S3_ENDPOINT', s3EndpointOrigin)))
    .action(async (target: string, options: ShareOptions) => {
      const location = parseLocation(target)
      if (location.kind !== 'remote' || location.key === '' || location.key.endsWith('/')) {
        fail(target, 'expected an object, fsb://<bucket>/<key>')
        return
      }
      const now = new Date()
      const seconds = shareSeconds(options.expires, now)
      if (typeof seconds === 'string') {
        fail(target, `--expires ${options.expires}: ${seconds}`)
        return
      }
      const endpoint = new URL(options.s3Endpoint)
      const method = options.upload ? 'PUT' : 'GET'
      const registry = await wiring.openRegistry(options.data, options.catalog)
      let link: ShareLink
      try {
        if (await registry.info(location.bucket) === null) {
          fail(target, `bucket "${location.bucket}" does not exist`)
          return
        }
        // An instant asked for is the latest the link works (parsed without a clock, a duration is none): a duration is how long it works at least.
        const notAfter = parseExpiry(options.expires) ?? undefined
        link = await makeShareLink(registry.tokens, { endpoint, bucket: location.bucket, key: location.key, method, seconds, now, notAfter })
      } catch (err) {
        if (!isArgumentError(err)) throw err
        fail(target, (err as Error).message)
        return
      } finally {
        await registry.close()
      }
      // A reader that went away (`| head -0`) ends the command quietly; the token is made and named on stderr.
      watchStdout('share', target)
      process.stdout.write(`${link.url}\n`)
      process.stdout.write(`${curlCommand(method, location.key, link.url)}\n`)
      process.stderr.write(`signed with token ${link.tokenId} (expires ${link.expiresOn}); fsbucket token revoke ${link.tokenId} ends the link\n`)
      if (hasDotSegment(location.key)) {
        process.stderr.write('the key has a "." or ".." segment: curl needs --path-as-is (as printed), and browsers, which resolve such segments, cannot use the link\n')
      }
    })
}
