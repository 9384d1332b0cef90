/**
 * An object's custom metadata as response headers, for every door that
 * answers it as headers (the HTTP routes' `x-meta-*`, S3's `x-amz-meta-*`).
 *
 * Names are stored as written, and the binding takes any string: `a b`,
 * `ü`, `a:b` cannot be a header's name, and `A` and `a` would be one. Such
 * names are left out of the answer and counted, and the door says how many
 * (S3's `x-amz-missing-meta`, the routes' `x-missing-meta`), as S3 does for
 * metadata it cannot answer. A name Node refused would fail the whole read.
 */

/** A header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** Adds `custom` to `headers` as `<prefix><name, lowercased>`; returns how many entries were left out. */
export function addMetadataHeaders (headers: Record<string, string>, custom: Record<string, string>, prefix: string): number {
  let missing = 0
  for (const name in custom) {
    const header = prefix + name.toLowerCase()
    if (!HEADER_NAME.test(name) || headers[header] !== undefined) missing++
    else headers[header] = custom[name]
  }
  return missing
}
