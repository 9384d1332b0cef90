/**
 * URIs and queries as SigV4 reads and signs them: the raw query split into
 * decoded parameters, and the RFC 3986 encodings of the canonical request
 * (every byte but the unreserved characters percent-encoded; `/` kept in a
 * path).
 *
 * A `+` in the query is a space, as S3 (and every S3 server that parses its
 * query as a form: MinIO's Go, R2's URLSearchParams) reads it: the AWS SDK
 * for Go v1 sends an unsigned request's spaces that way (rclone's anonymous
 * remotes: `prefix=dir+with+space%2F`), and form encoders do (Python's
 * urlencode, Node's querystring). A plus meant as a plus is `%2B`, as every
 * SDK and s3cmd send it. In a path `+` stays a plus.
 */
import { S3Error } from './errors.js'

/** A URI component encoded as SigV4 encodes it: RFC 3986, every byte but the unreserved characters percent-encoded. */
function uriEncode (text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** The canonical query string: names and values encoded, sorted by name, then by value for a repeated name; the signature itself left out. */
export function canonicalQuery (query: Record<string, string | string[]>): string {
  const pairs: Array<[string, string]> = []
  for (const name of Object.keys(query)) {
    if (name.toLowerCase() === 'x-amz-signature') continue
    const encodedName = uriEncode(name)
    const value = query[name]
    pairs.push([encodedName, typeof value === 'string'
      ? `${encodedName}=${uriEncode(value)}`
      : value.map(v => `${encodedName}=${uriEncode(v)}`).sort().join('&')])
  }
  if (pairs.length < 2) return pairs[0]?.[1] ?? ''
  return pairs.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0).map(pair => pair[1]).join('&')
}

/**
 * Splits a raw query string into decoded parameters (repeated names become
 * arrays), in an object without a prototype: `__proto__` or `constructor`
 * is a parameter like any other (signed, and never mistaken for one that
 * was not sent).
 */
export function parseRawQuery (raw: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null)
  if (raw === '') return query
  for (const part of raw.split('&')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    const name = decodeComponent(eq === -1 ? part : part.slice(0, eq))
    const value = eq === -1 ? '' : decodeComponent(part.slice(eq + 1))
    const previous = query[name]
    if (previous === undefined) query[name] = value
    // Pushed, not copied: a URL repeating one name 8,000 times took a second to split.
    else if (Array.isArray(previous)) previous.push(value)
    else query[name] = [previous, value]
  }
  return query
}

function decodeComponent (text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    throw new S3Error('InvalidArgument', 'The query string has malformed percent-encoding.')
  }
}

/** A path re-encoded the AWS way: every byte but unreserved characters and `/` percent-encoded. */
export function awsEncodePath (path: string): string {
  let decoded: string
  try {
    decoded = decodeURIComponent(path)
  } catch {
    return path
  }
  return decoded.split('/').map(uriEncode).join('/')
}
