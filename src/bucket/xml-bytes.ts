/**
 * The sizes of the S3 door's XML documents, byte for byte, measured where
 * the engine keeps a bucket's rules: a configuration every door may store
 * is bounded by the size of the document the S3 door gives back for it, so
 * that its Put takes back whatever its Get gave (limits.ts has the bounds).
 */

/** The bytes a value takes in an XML document (`&` is `&amp;`, `"` is `&quot;`, as the S3 door escapes them). */
export function xmlTextBytes (value: string): number {
  let bytes = Buffer.byteLength(value)
  for (const c of value) {
    if (c === '&') bytes += 4
    else if (c === '<' || c === '>') bytes += 3
    else if (c === '"' || c === "'") bytes += 5
  }
  return bytes
}

/** The bytes of `<name>value</name>`. */
export function xmlElementBytes (name: string, value: string): number {
  return 2 * name.length + 5 + xmlTextBytes(value)
}

/** The bytes of what the S3 door writes around a document's content: the declaration and the root element with S3's namespace. */
export function xmlDocumentFrameBytes (root: string): number {
  return `<?xml version="1.0" encoding="UTF-8"?><${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></${root}>`.length
}
