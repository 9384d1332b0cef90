/**
 * A request's headers → the metadata a write stores, once for every door
 * that takes metadata as headers (the HTTP routes, the S3 API): the HTTP
 * metadata (Content-Type, Content-Language, Content-Disposition,
 * Content-Encoding, Cache-Control, Expires) and custom metadata under a
 * door's prefix (`x-meta-`, `x-amz-meta-`); the `response-*` query
 * parameters that override the stored metadata in one response; and the
 * headers that keep a served object from acting as the origin serving it.
 *
 * Header values travel as Latin-1 on the wire. Values that are valid UTF-8
 * (curl and the SDKs send UTF-8 as is) are decoded as UTF-8, so
 * `x-meta-city: Zürich` is stored as written. An Expires that is not a
 * date is left out of the metadata made here and reported, and each door
 * answers as its protocol does (the HTTP routes refuse it, S3 stores the
 * epoch).
 */
import { headerFields, httpRequestConditions, parseHttpDate, type BucketHTTPMetadata } from '../bucket/index.js'

/** Request headers as Node.js gives them (names lowercased). */
export type RequestHeaders = Record<string, string | string[] | undefined>

function single (headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** A header value as received (Latin-1 per byte) → the string the client meant. */
export function decodeHeaderValue (value: string): string {
  if (!/[\u0080-\u00ff]/.test(value)) return value
  const text = new TextDecoder('utf-8', { fatal: false }).decode(Buffer.from(value, 'latin1'))
  return text.includes('\ufffd') ? value : text
}

/**
 * A stored string → a value Node puts in a response header: UTF-8 bytes as
 * Latin-1 (so `Zürich` round-trips), or null when it cannot travel (a
 * control character other than tab: Node would throw, and the read with it).
 * Values are stored as sent, and a form part's headers or the binding can
 * carry such bytes.
 */
export function headerWireValue (value: string): string | null {
  if (/^[\t\u0020-\u007e]*$/.test(value)) return value // printable ASCII travels as is
  const wire = Buffer.from(value, 'utf8').toString('latin1')
  return /[\u0000-\u0008\u000a-\u001f\u007f]/.test(wire) ? null : wire
}

/** The HTTP metadata of a request's headers; `invalidExpires` holds an Expires that is not a date (then not in `metadata`). */
export function httpMetadataOfHeaders (headers: RequestHeaders): { metadata: BucketHTTPMetadata, invalidExpires?: string } {
  const metadata: BucketHTTPMetadata = {}
  for (const [field, header] of headerFields) {
    const value = single(headers, header)
    if (value !== undefined) metadata[field] = decodeHeaderValue(value)
  }
  const expires = single(headers, 'expires')
  if (expires === undefined) return { metadata }
  const date = parseHttpDate(decodeHeaderValue(expires))
  if (date === undefined) return { metadata, invalidExpires: expires }
  metadata.cacheExpiry = date
  return { metadata }
}

/** The bytes of a Content-MD5 (the base64 of 16 bytes), or null when the value is not one. */
export function contentMd5Bytes (value: string): ArrayBuffer | null {
  const text = value.trim()
  const bytes = Buffer.from(text, 'base64')
  if (bytes.length !== 16 || !/^[A-Za-z0-9+/]{22}={0,2}$/.test(text)) return null
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer
}

/** Whether a request's Content-Encoding names `aws-chunked`: the framing of an S3 SDK's streamed body, never an object's bytes. */
export function namesAwsChunked (headers: RequestHeaders): boolean {
  return (single(headers, 'content-encoding') ?? '').split(',').some(coding => coding.trim().toLowerCase() === 'aws-chunked')
}

/**
 * How a request's date conditions are judged: a read's (and a copy's source's) as RFC 9110 asks of a server, an
 * If-Unmodified-Since equal to the Last-Modified holding (`httpRequestConditions`); a write's as the hosted service
 * judges them, strictly (a plain `Headers`): a Last-Modified has whole seconds, and a write conditioned on the one it
 * read must not replace a version another writer stored within the same second.
 */
export type ConditionsOf = 'read' | 'write'

/** Where a door's conditions go: an empty Headers judged as `use` says. */
export function conditionsHeaders (use: ConditionsOf): Headers {
  return use === 'read' ? httpRequestConditions() : new Headers()
}

/**
 * The request's headers among `names` (conditional ones), in the binding's Headers form, which parses lists, `*` and
 * weak etags, judged as `use` says; undefined when none was sent.
 */
export function conditionalHeadersOf (headers: RequestHeaders, names: readonly string[], use: ConditionsOf): Headers | undefined {
  let onlyIf: Headers | undefined
  for (const name of names) {
    const value = single(headers, name)
    if (value === undefined) continue
    onlyIf ??= conditionsHeaders(use)
    onlyIf.set(name, value)
  }
  return onlyIf
}

/** The custom metadata of a request's headers: each `<prefix><name>` header (a name after the prefix required). */
export function customMetadataOfHeaders (headers: RequestHeaders, prefix: string): Record<string, string> {
  const entries: Array<[string, string]> = []
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(prefix) || name.length === prefix.length) continue
    entries.push([name.slice(prefix.length), decodeHeaderValue(single(headers, name) ?? '')])
  }
  // Own properties: a name such as `__proto__` is an entry like any other.
  return Object.fromEntries(entries)
}

/** The `response-*` query parameters (S3's, which the HTTP routes take too) and the headers they override. */
const overrideParameters: Record<string, string> = {
  'response-content-type': 'content-type',
  'response-content-language': 'content-language',
  'response-content-disposition': 'content-disposition',
  'response-content-encoding': 'content-encoding',
  'response-cache-control': 'cache-control',
  'response-expires': 'expires'
}

const overridePairs = Object.entries(overrideParameters)

/** The headers a request's `response-*` query parameters override, by header name. */
export function responseOverridesFrom (query: Record<string, unknown>): Record<string, string> {
  const overrides: Record<string, string> = {}
  for (const [parameter, header] of overridePairs) {
    const value = query[parameter]
    if (typeof value === 'string') overrides[header] = value
  }
  return overrides
}

/**
 * The first `response-*` parameter whose value no header can carry (a
 * control character such as CR or LF), or undefined: a door refuses the
 * read, where the answer would otherwise leave the header out and say
 * something the client did not ask for (its stored type, or a guess).
 */
export function unsendableOverride (query: Record<string, unknown>): string | undefined {
  for (const [parameter] of overridePairs) {
    const value = query[parameter]
    if (typeof value === 'string' && headerWireValue(value) === null) return parameter
  }
  return undefined
}

/** What a sandboxed object's scripts may still do: run, submit forms, open windows and dialogs, download; never as the serving origin. */
const objectSandbox = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads'

/**
 * Media types a browser shows as data (an image, media, text, a file to
 * save), never as a page running script: a short list, named one by one, so
 * a type a browser may one day render as a document is sandboxed until it
 * is added here. PDFs too: browsers' viewers refuse a sandbox, and run no
 * script of the origin. SVG and every other `+xml` type are pages.
 */
const passiveTypes = new Set([
  'application/octet-stream', 'application/json', 'application/pdf', 'application/zip', 'application/gzip', 'application/wasm',
  'text/plain', 'text/css', 'text/csv', 'text/javascript', 'application/javascript',
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/x-icon', 'image/vnd.microsoft.icon',
  'audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/webm', 'audio/aac', 'audio/flac', 'audio/mp4',
  'video/mp4', 'video/webm', 'video/ogg', 'video/quicktime',
  'font/woff', 'font/woff2', 'font/ttf', 'font/otf'
])

/**
 * One media type and nothing else (RFC 9110: `type/subtype` then
 * `;name=value` parameters, a value a token or a quoted string), with no
 * comma anywhere: browsers read Content-Type as a comma-separated list and
 * render the last type in it they can parse (Fetch, "extract a MIME type"),
 * so `text/plain;,text/html` is a page. Each part is delimited by the one
 * before, so the match is linear.
 */
const singleMediaType = /^[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*(?:;[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+=(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+|"(?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\[\t\x20-\x7e\x80-\xff])*")[ \t]*)*$/

/** Whether a Content-Type is exactly one passive media type: what a browser would show as data whichever way it reads the header. */
export function isPassiveContentType (contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.includes(',')) return false
  const essence = singleMediaType.exec(contentType)?.[1]
  return essence !== undefined && passiveTypes.has(essence.toLowerCase())
}

/**
 * The `Cache-Control` of an object read that needed credentials, unless the
 * object has its own: a browser's cache is keyed by URL alone, and would
 * hand a private body to a later request made without them.
 */
export const privateReadCacheControl = 'private, no-store'

/**
 * Adds to a served object's response headers (the read's own, made for this
 * answer) what keeps it from acting as the origin that serves it, for the
 * doors whose origin also serves the console, the management API or takes
 * unsigned requests (the gateway's own host, the S3 port):
 * `X-Content-Type-Options: nosniff` always, and a Content-Security-Policy
 * sandbox without `allow-same-origin` unless the type is exactly one
 * passive type (`isPassiveContentType`), so an HTML, SVG or XML object, one
 * whose type lists several (`text/plain;,text/html`), one of a type no
 * browser should guess at, or one read with
 * `response-content-type=text/html`, runs in an opaque origin whose requests
 * are another site's. A policy the answer has already (a listing page's
 * stricter one) is kept.
 */
export function sandboxObjectHeaders (headers: Record<string, string>): Record<string, string> {
  headers['x-content-type-options'] = 'nosniff'
  if (headers['content-security-policy'] === undefined && !isPassiveContentType(headers['content-type'])) headers['content-security-policy'] = objectSandbox
  return headers
}

/**
 * Whether a request announces a body over `limit` bytes: its
 * `x-amz-decoded-content-length` (the bytes an aws-chunked framing holds),
 * else its Content-Length. Each door refuses such a request before it asks
 * for the body, so the client is never told to send it.
 */
export function declaresBodyOver (headers: RequestHeaders, limit: number): boolean {
  return numberOver(single(headers, 'x-amz-decoded-content-length') ?? single(headers, 'content-length'), limit)
}

/** Whether the Content-Length alone is over `limit` (a door that takes no aws-chunked framing: the management API's JSON). */
export function contentLengthOver (headers: RequestHeaders, limit: number): boolean {
  return numberOver(single(headers, 'content-length'), limit)
}

function numberOver (declared: string | undefined, limit: number): boolean {
  return declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit
}

/** The `Vary` S3 sends on an answer a CORS rule matched (its order): every such answer's on the S3 port, a preflight's on the routes when rules echo origins (their other answers vary by Origin alone). */
export const corsVary = 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method'

/** `Access-Control-Request-Headers` → lowercase names (a CORS preflight's, on every door). */
export function requestedHeaderNames (value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(',') : value ?? ''
  return text.split(',').map(h => h.trim().toLowerCase()).filter(h => h !== '')
}
