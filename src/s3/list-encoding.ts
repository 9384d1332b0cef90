/**
 * `encoding-type=url` of the listings (ListObjects, ListObjectsV2,
 * ListMultipartUploads): which values are encoded is each listing's
 * business; how they are encoded is this module's.
 *
 * S3 percent-encodes the UTF-8 bytes of a value except the unreserved
 * characters of RFC 3986 (`A-Z a-z 0-9 - . _ ~`) and `/`: `quux ab/` is
 * answered `quux%20ab/`, `a+b` as `a%2Bb`. `encodeURIComponent` would also
 * encode `/` (which S3 leaves as is) and leave `!'()*` (which S3 encodes).
 * Clients decode with a plain percent-decoder (or, as botocore, one that
 * also reads `+` as a space, which is why `+` is always encoded).
 */
import { S3Error } from './errors.js'

export function s3UrlEncode (value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, '/')
}

/** The encoder `encoding-type` asks for: none, `url`, or InvalidArgument for another value. */
export function listEncoder (encoding: string | undefined): (value: string) => string {
  if (encoding === undefined) return value => value
  if (encoding !== 'url') throw new S3Error('InvalidArgument', 'Invalid Encoding Method specified in Request')
  return s3UrlEncode
}
