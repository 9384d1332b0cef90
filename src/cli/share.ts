/**
 * `fsbucket share fsb://<bucket>/<key>`: a presigned SigV4 URL on the S3
 * port (path style) that lets whoever holds it GET the object (or PUT it,
 * with `--upload`) until it expires, and the curl command that uses it.
 *
 * What signs the link: a scoped token made for it in the registry of
 * `--data` (and `--catalog`), named `share <bucket>/<key>`, limited to the
 * bucket, object-read-only for a download and object-read-write for an
 * upload, expiring when the link does. The link is signed with that token's
 * S3 pair (the access key id is the token's id), so the server checks it as
 * any presigned URL: a changed key, method, expiry or signature fails the
 * signature, and `fsbucket token revoke <id>` ends the link (the token's
 * id is printed on stderr, and `token list` shows it). The configured admin
 * pair is never used: a link is only as strong as its own token. The token
 * may do more than the one key (any key of the bucket, with the same
 * permission), but only someone who has its secret could sign for another
 * key, and the secret is not printed; the URL carries only the signature.
 *
 * A running server sees the new token within a second or so
 * (TOKEN_CACHE_MS), as it sees any token made from the command line.
 *
 * `--expires` takes what `token create --expires` takes (a duration such as
 * `15m`, `12h`, `7d`, or an ISO 8601 instant), at most 7 days away: the
 * longest life S3 gives a presigned URL. The S3 endpoint the URL names is
 * the serve defaults' host and S3 port unless `--s3-endpoint`
 * (FSBUCKET_S3_ENDPOINT) names another (`https://s3.example.test`).
 */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { isArgumentError, parseExpiry, type BucketRegistry } from '../bucket/index.js'
import { catalogOption, dataOption } from '../doors/command-options.js'
import { NodeSha256 } from '../doors/sha256.js'
import { parseLocation, keyBaseName } from './paths.js'

/** S3's longest presigned URL lifetime, in seconds (7 days). */
export const MAX_SHARE_SECONDS = 604_800
const TOKEN_NAME_MAX = 120

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
  if (at === null) return 'expected a duration such as 15m, 12h, 7d, or an ISO 8601 date and time in the future'
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

/** RFC 3986 encoding of one path segment or query part, as SigV4 canonicalizes it. */
function awsEncode (text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** A string quoted for a POSIX shell: single quotes, an embedded one closed, escaped and reopened. */
export function shellQuote (text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`
}

export interface Presign {
  endpoint: URL
  bucket: string
  key: string
  method: 'GET' | 'PUT'
  accessKeyId: string
  secretAccessKey: string
  seconds: number
  now: Date
}

/** The presigned URL (path style, region `auto`, unsigned payload) for one request. */
export async function presignShare (spec: Presign): Promise<string> {
  const path = `/${awsEncode(spec.bucket)}/${spec.key.split('/').map(awsEncode).join('/')}`
  // Loaded here: the signer costs every other command a tenth of a second of start-up.
  const { SignatureV4 } = await import('@smithy/signature-v4')
  const signer = new SignatureV4({
    service: 's3',
    region: 'auto',
    credentials: { accessKeyId: spec.accessKeyId, secretAccessKey: spec.secretAccessKey },
    sha256: NodeSha256,
    // The path is encoded above, once, as S3 clients send it.
    uriEscapePath: false
  })
  const signed = await signer.presign({
    method: spec.method,
    protocol: spec.endpoint.protocol,
    hostname: spec.endpoint.hostname,
    port: spec.endpoint.port === '' ? undefined : Number(spec.endpoint.port),
    path,
    query: {},
    // The body is not signed (a link does not know it): UNSIGNED-PAYLOAD, which a
    // presigned URL means when it names no hash; the header itself is neither
    // signed nor moved into the query, so the URL alone is the whole credential.
    headers: { host: spec.endpoint.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }
  }, {
    expiresIn: spec.seconds,
    signingDate: spec.now,
    unhoistableHeaders: new Set(['x-amz-content-sha256']),
    unsignableHeaders: new Set(['x-amz-content-sha256'])
  })
  const query = Object.entries(signed.query ?? {})
    .map(([name, value]) => `${awsEncode(name)}=${awsEncode(String(value))}`)
    .sort()
    .join('&')
  return `${spec.endpoint.origin}${path}?${query}`
}

/** The token's name: what it shares, cut to the 120 characters a name may have. */
function tokenName (bucket: string, key: string): string {
  const name = `share ${bucket}/${key}`
  return name.length <= TOKEN_NAME_MAX ? name : `${name.slice(0, TOKEN_NAME_MAX - 1)}…`
}

function fail (target: string, what: string): void {
  process.stderr.write(`fsbucket: share ${JSON.stringify(target)}: ${what}\n`)
  process.exitCode = 1
}

export function registerShareCommand (program: Command, wiring: ShareCommandWiring): void {
  program.command('share <target>')
    .description('print a presigned S3 URL that downloads fsb://<bucket>/<key> (or uploads it, with --upload) until it expires, and the curl command that uses it')
    .addOption(dataOption())
    .addOption(catalogOption())
    .option('--expires <when>', 'how long the link works: a duration (90s, 15m, 12h, 7d) or an ISO 8601 instant, at most 7 days', '1h')
    .option('--upload', 'a link that PUTs the object instead of GETting it', false)
    .addOption(new Option('--s3-endpoint <url>', 'the S3 port the link names').env('FSBUCKET_S3_ENDPOINT').default(wiring.defaultS3Endpoint)
      .argParser(value => parseS3Endpoint(value).origin))
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
      const registry = await wiring.openRegistry(options.data, options.catalog)
      let made
      try {
        if (await registry.info(location.bucket) === null) {
          fail(target, `no bucket ${JSON.stringify(location.bucket)}`)
          return
        }
        made = await registry.tokens.create({
          name: tokenName(location.bucket, location.key),
          permission: options.upload ? 'object-read-write' : 'object-read-only',
          buckets: [location.bucket],
          expiresOn: new Date(now.getTime() + seconds * 1000)
        })
      } catch (err) {
        if (!isArgumentError(err)) throw err
        fail(target, (err as Error).message)
        return
      } finally {
        await registry.close()
      }
      const url = await presignShare({
        endpoint,
        bucket: location.bucket,
        key: location.key,
        method: options.upload ? 'PUT' : 'GET',
        accessKeyId: made.accessKeyId,
        secretAccessKey: made.secretAccessKey,
        seconds,
        now
      })
      const file = shellQuote(keyBaseName(location.key))
      process.stdout.write(`${url}\n`)
      process.stdout.write(options.upload ? `curl -T ${file} ${shellQuote(url)}\n` : `curl -o ${file} ${shellQuote(url)}\n`)
      process.stderr.write(`signed with token ${made.id} (expires ${made.expiresOn ?? ''}); fsbucket token revoke ${made.id} ends the link\n`)
    })
}
