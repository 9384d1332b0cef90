/**
 * XML in and out of the S3 door, through fast-xml-parser only: answers are
 * built from plain objects (the builder escapes every value, so a key such
 * as `a<b>&c` can never break a document), and request bodies are validated
 * then parsed into plain objects with every value kept as a string (`0001`
 * stays a key, not the number 1).
 *
 * Request bodies (Delete, CompleteMultipartUpload, CORS and lifecycle
 * configurations) are read whole up to `MAX_XML_BYTES`: S3 limits them the
 * same way (a Delete of 1,000 keys of 1 KiB fits).
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser'
import { S3Error } from './errors.js'

export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/'
/** Largest XML request body read (a Delete of 1,000 keys of 1,024 bytes, escaped, fits). */
export const MAX_XML_BYTES = 2 * 1024 * 1024

const builder = new XMLBuilder({ ignoreAttributes: false, format: false, suppressEmptyNode: false, processEntities: true })

/** Element paths that are lists even when they hold one element. */
const listPaths = new Set([
  'Delete.Object',
  'CompleteMultipartUpload.Part',
  'CORSConfiguration.CORSRule',
  'CORSConfiguration.CORSRule.AllowedOrigin',
  'CORSConfiguration.CORSRule.AllowedMethod',
  'CORSConfiguration.CORSRule.AllowedHeader',
  'CORSConfiguration.CORSRule.ExposeHeader',
  'LifecycleConfiguration.Rule',
  'LifecycleConfiguration.Rule.Transition'
])

const parser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  removeNSPrefix: true,
  parseTagValue: false,
  // Numeric character references (`&#34;`, what Go clients such as rclone write for `"`) are XML too.
  htmlEntities: true,
  // Keys may begin or end with spaces; whitespace between elements shows up as `#text` and is ignored.
  trimValues: false,
  jPath: true,
  isArray: (_name, path) => listPaths.has(String(path))
})

/** An S3 XML document: `<?xml ...?><Root xmlns="...">...</Root>`. */
export function xmlDocument (root: string, body: Record<string, unknown>): string {
  return builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    [root]: { '@_xmlns': S3_NAMESPACE, ...body }
  }) as string
}

/** The error document of every failed request. */
export function errorDocument (code: string, message: string, fields: Record<string, string>): string {
  return builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    Error: { Code: code, Message: message, ...fields }
  }) as string
}

/** Reads a request body whole (bounded) and parses it; MalformedXML when it is not XML or not `root`. */
export async function readXmlBody (source: AsyncIterable<Uint8Array>, root: string): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of source) {
    size += chunk.length
    if (size > MAX_XML_BYTES) throw new S3Error('MalformedXML', `XML bodies are limited to ${MAX_XML_BYTES} bytes.`)
    chunks.push(Buffer.from(chunk))
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.trim() === '' || XMLValidator.validate(text) !== true) throw new S3Error('MalformedXML')
  // S3's documents have no DTD; refusing one rules out entity expansion.
  if (/<!DOCTYPE/i.test(text)) throw new S3Error('MalformedXML', 'XML bodies may not declare a DOCTYPE.')
  const parsed = parser.parse(text) as Record<string, unknown>
  const element = parsed[root]
  if (element === undefined) throw new S3Error('MalformedXML', `The body must be a ${root} document.`)
  return typeof element === 'object' && element !== null ? element as Record<string, unknown> : {}
}

/** A child element's text, or undefined. */
export function text (element: unknown, name: string): string | undefined {
  const value = (element as Record<string, unknown> | null | undefined)?.[name]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value
  if (typeof value === 'object' && '#text' in value && typeof (value as { '#text': unknown })['#text'] === 'string') {
    return (value as { '#text': string })['#text']
  }
  if (typeof value === 'object') return ''
  return String(value)
}

/** A child list (as `listPaths` makes them), or []. */
export function list (element: unknown, name: string): unknown[] {
  const value = (element as Record<string, unknown> | null | undefined)?.[name]
  return Array.isArray(value) ? value : value === undefined ? [] : [value]
}
