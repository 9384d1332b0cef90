/**
 * Share links: a presigned SigV4 URL on the S3 port (path style, region
 * `auto`) that lets whoever holds it GET one object (or PUT it) until it
 * expires. Made by `fsbucket share` (src/cli/share.ts) and by the
 * management API's `POST .../buckets/{bucket}/share-links`, which the web
 * console calls (the console runs in a browser and holds no S3 secret).
 *
 * What signs a link: a scoped token made for it (`makeShareLink`), named
 * `share <bucket>/<key>`, limited to the bucket, object-read-only for a
 * download and object-read-write for an upload, expiring when the link
 * does. The URL carries only the signature of that token's S3 pair (its
 * access key id is the token's id); the token's value and secret are handed
 * to nobody, so nobody holding the URL can sign for another key or method,
 * and revoking the token ends the link. The configured admin pair never
 * signs a link: a link is only as strong as its own token.
 */
import { keyId, lookupId, type TokenDirectory } from '../bucket/index.js'
import { NodeSha256 } from './sha256.js'

/** S3's longest presigned URL lifetime, in seconds (7 days). */
export const MAX_SHARE_SECONDS = 604_800
/** A token's name is at most 120 characters (tokens.ts). */
const TOKEN_NAME_MAX = 120

/** RFC 3986 encoding of one path segment or query part, as SigV4 canonicalizes it. */
function awsEncode (text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * C0 and C1 control characters, DEL and the bidirectional controls: never
 * printed raw (a key's ESC could recolour a terminal, its line feed fake a
 * line, a right-to-left override show `invoice\u202efdp.exe` as
 * `invoiceexe.pdf`).
 */
const controls = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

/**
 * A string quoted for a POSIX shell: single quotes, an embedded one closed,
 * escaped and reopened. One holding a control character is quoted `$'…'`
 * (bash, zsh, ksh) with each byte of the character's UTF-8 as `\xHH`, which
 * means the same in every locale: the command prints as plain text and
 * still names the same bytes, wherever it is shown (the CLI's line, the
 * management API's `curl` field, the console). A quote or backslash in it
 * is written `\x27`, `\x5c` too, never `\'`: a shell without `$'…'` (dash,
 * many a `/bin/sh`) reads `$` and a plain `'…'`, which such an escape would
 * end early, running the rest of a key as commands; written as bytes, the
 * word stays one quoted word there (of other bytes, but nothing runs).
 */
export function shellQuote (text: string): string {
  if (!controls.test(text)) return `'${text.replace(/'/g, "'\\''")}'`
  const escaped = text.replace(new RegExp(`[\\\\']|${controls.source}`, 'g'), c =>
    [...Buffer.from(c, 'utf8')].map(byte => `\\x${byte.toString(16).padStart(2, '0')}`).join(''))
  return `$'${escaped}'`
}

/** Whether a key has a `.` or `..` segment, which clients that normalize a URL's path (curl, browsers) remove before sending it. */
export function hasDotSegment (key: string): boolean {
  return key.split('/').some(segment => segment === '.' || segment === '..')
}

/** The last segment of a key (`a/b/c.txt` → `c.txt`), the file a link's curl command reads or writes; `download` for none, `.`, `..` or `-` (curl's stdin and stdout). */
function keyFileName (key: string): string {
  const trimmed = key.endsWith('/') ? key.slice(0, -1) : key
  const last = trimmed.slice(trimmed.lastIndexOf('/') + 1)
  // No file name holds U+0000 (a shell's `$'\x00'` would cut it short).
  return last === '' || last === '.' || last === '..' || last === '-' || last.includes('\u0000') ? 'download' : last
}

/**
 * The curl command that uses a link: `curl -o <file> '<url>'` for a
 * download, `curl -T <file> '<url>'` for an upload. A key with a `.` or
 * `..` segment adds `--path-as-is`: curl would otherwise resolve the
 * segments and ask for another path than the one signed (403). An upload
 * to a key ending in `/` names its request target: `-T` would otherwise
 * append the file's name to the path.
 */
export function curlCommand (method: 'GET' | 'PUT', key: string, url: string): string {
  const asIs = hasDotSegment(key) ? '--path-as-is ' : ''
  const target = method === 'PUT' && key.endsWith('/') ? `--request-target ${shellQuote(requestTarget(url))} ` : ''
  return `curl ${asIs}${target}${method === 'PUT' ? '-T' : '-o'} ${shellQuote(keyFileName(key))} ${shellQuote(url)}`
}

/** A URL's path and query as written (`new URL` would resolve dot segments). */
function requestTarget (url: string): string {
  return url.slice(url.indexOf('/', url.indexOf('//') + 2))
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
  // Loaded here: the signer costs every command that makes no link a tenth of a second of start-up.
  // A CommonJS package: its `default` is what it exports (scripts/build-bundle.ts).
  const { SignatureV4 } = (await import('@smithy/signature-v4')).default
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

/** The link token's name: what it shares, cut to the 120 characters a name may have. */
function shareTokenName (bucket: string, key: string): string {
  const name = `share ${bucket}/${key}`
  if (name.length <= TOKEN_NAME_MAX) return name
  // Cut between characters, never inside a surrogate pair (a lone half is no text a store or a page keeps).
  const end = /[\ud800-\udbff]/.test(name[TOKEN_NAME_MAX - 2]) ? TOKEN_NAME_MAX - 2 : TOKEN_NAME_MAX - 1
  return `${name.slice(0, end)}…`
}

export interface ShareLinkSpec {
  /** The S3 port's public origin, which the URL names. */
  endpoint: URL
  bucket: string
  key: string
  method: 'GET' | 'PUT'
  /** 1 to MAX_SHARE_SECONDS; the caller checks. */
  seconds: number
  now: Date
  /** The latest the link may stop working (its maker's own expiry, an instant asked for): `seconds` is cut to it, to 1 at least. */
  notAfter?: Date
  /** The id of the token that asked for the link: revoking it ends the link (TokenRecord.madeBy). */
  madeBy?: string
}

export interface ShareLink {
  url: string
  /** The id of the token that signs it (the URL's access key id): revoking it ends the link. */
  tokenId: string
  /** ISO 8601. */
  expiresOn: string
}

/**
 * Makes the link's token (the engine checks the bucket name) and signs the
 * URL with its pair. The engine judges the key first, as the request the
 * link stands for: an upload link for a key no write may name (one holding
 * U+0000) is refused (InvalidObjectName), and no token is made.
 */
export async function makeShareLink (tokens: Pick<TokenDirectory, 'create'>, spec: ShareLinkSpec): Promise<ShareLink> {
  if (spec.method === 'PUT') keyId('putObject', spec.key)
  else lookupId('getObject', spec.key)
  // The URL's X-Amz-Date names a whole second, and the URL expires `seconds` after it: so does the token, and the answer says
  // when. The next whole second, so that the link lives at least `seconds` (a date under a second ahead is within any skew).
  const signed = new Date(Math.ceil(spec.now.getTime() / 1000) * 1000)
  const seconds = spec.notAfter === undefined
    ? spec.seconds
    : Math.max(1, Math.min(spec.seconds, Math.floor((spec.notAfter.getTime() - signed.getTime()) / 1000)))
  const made = await tokens.create({
    name: shareTokenName(spec.bucket, spec.key),
    permission: spec.method === 'PUT' ? 'object-read-write' : 'object-read-only',
    buckets: [spec.bucket],
    expiresOn: new Date(signed.getTime() + seconds * 1000),
    madeBy: spec.madeBy
  })
  const url = await presignShare({
    endpoint: spec.endpoint,
    bucket: spec.bucket,
    key: spec.key,
    method: spec.method,
    accessKeyId: made.accessKeyId,
    secretAccessKey: made.secretAccessKey,
    seconds,
    now: signed
  })
  return { url, tokenId: made.id, expiresOn: made.expiresOn ?? '' }
}
