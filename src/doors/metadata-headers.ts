/**
 * An object's custom metadata as response headers, for every door that
 * answers it as headers (the HTTP routes' `x-meta-*`, S3's `x-amz-meta-*`).
 *
 * Names are stored as written, and the binding takes any string: `a b`,
 * `ü`, `a:b` cannot be a header's name, and `A` and `a` would be one. Such
 * names are left out of the answer and counted, and the door says how many
 * (S3's `x-amz-missing-meta`, the routes' `x-missing-meta`), as S3 does for
 * metadata it cannot answer, with the values the door's encoding cannot
 * carry (the routes send UTF-8 bytes, and no control character; S3 sends
 * RFC 2047 words, which carry any). A name or value Node refused would fail
 * the whole read.
 */

/** A header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Adds `custom` to `headers` as `<prefix><name, lowercased>` (values as
 * stored: the door encodes every header at the end), those whose value
 * `travels` only (by default, every value does); returns how many entries
 * were left out.
 */
export function addMetadataHeaders (headers: Record<string, string>, custom: Record<string, string>, prefix: string, travels?: (value: string) => boolean): number {
  let missing = 0
  for (const name in custom) {
    const header = prefix + name.toLowerCase()
    if (!HEADER_NAME.test(name) || headers[header] !== undefined || travels?.(custom[name]) === false) missing++
    else headers[header] = custom[name]
  }
  return missing
}
