/**
 * XML in and out of the S3 door. Answers are built from plain objects by
 * fast-xml-parser's builder (it escapes every value, so a key such as
 * `a<b>&c` can never break a document). Request bodies are read by
 * `xml-reader.ts`, one pass in time linear in the body, into plain objects
 * with every value kept as a string (`0001` stays a key, not the number 1).
 *
 * Request bodies are read whole up to a cap that depends on the document
 * (`XML_BODY_LIMITS`): a Delete of 1,000 keys of 1 KiB and a
 * CompleteMultipartUpload of 10,000 parts fit in 2 MiB; a CORS or
 * lifecycle configuration (100 rules, 1,000 rules) is a small document,
 * and a larger body is refused before it is parsed: MaxMessageLengthExceeded,
 * as S3 answers a request body too large for its operation.
 *
 * A document also holds a bounded number of elements and other markup
 * (`nodes`), which its largest legitimate form fits in (a Delete of 1,000
 * Objects, a completion of 10,000 Parts, each with all their child
 * elements): a body of only empty elements is refused, not turned into
 * hundreds of thousands of objects.
 */
import { XMLBuilder } from 'fast-xml-parser'
import { S3Error } from './errors.js'
import { readDocument, XmlReadError } from './xml-reader.js'

export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/'

export interface XmlBodyLimit {
  /** Largest body read (bytes, after aws-chunked decoding). */
  bytes: number
  /** Most elements, comments, CDATA sections and processing instructions the document may hold. */
  nodes: number
}

const KiB = 1024
const MiB = 1024 * KiB

/** The caps of each document the S3 door reads, by root element. */
export const XML_BODY_LIMITS = {
  // 1,000 Objects (S3's cap) of a Key, VersionId, ETag, LastModifiedTime and Size each, keys of 1,024 bytes escaped.
  Delete: { bytes: 2 * MiB, nodes: 10_000 },
  // 10,000 Parts of a PartNumber, an ETag and five checksums each.
  CompleteMultipartUpload: { bytes: 2 * MiB, nodes: 100_000 },
  // 1,000 rules (S3's cap) of a dozen elements or so, each with an ID of 255 characters and a prefix filter.
  LifecycleConfiguration: { bytes: 256 * KiB, nodes: 32_768 },
  // 100 rules (S3's cap) of a few origins, methods and headers each.
  CORSConfiguration: { bytes: 64 * KiB, nodes: 8_192 },
  // A LocationConstraint, and the few elements directory buckets add.
  CreateBucketConfiguration: { bytes: 64 * KiB, nodes: 256 }
} as const satisfies Record<string, XmlBodyLimit>

/** The documents the S3 door reads, by their root element. */
export type XmlDocumentRoot = keyof typeof XML_BODY_LIMITS

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

/**
 * An S3 XML document: `<?xml ...?><Root xmlns="...">...</Root>`. Control
 * characters in values (a key may hold any) go out as character
 * references, as S3 writes them: a raw CR would reach the client as LF
 * (XML normalises line ends) and a raw NUL would make the whole page
 * unreadable. Element names never hold one, so only values are touched.
 */
export function xmlDocument (root: string, body: Record<string, unknown>): string {
  const built = builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    [root]: { '@_xmlns': S3_NAMESPACE, ...body }
  }) as string
  return built.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, c => `&#${c.charCodeAt(0)};`)
}

/** The error document of every failed request. */
export function errorDocument (code: string, message: string, fields: Record<string, string>): string {
  return builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    Error: { Code: code, Message: message, ...fields }
  }) as string
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads a request body whole (up to its document's cap:
 * MaxMessageLengthExceeded past it) and parses it; MalformedXML when it is
 * not well-formed XML in UTF-8 (a byte that is not UTF-8, an undefined
 * entity, a control character, a DOCTYPE, nesting over 100 deep), holds
 * more markup than its document's budget, or is not a `root` document.
 */
export async function readXmlBody (source: AsyncIterable<Uint8Array>, root: XmlDocumentRoot): Promise<Record<string, unknown>> {
  const limit: XmlBodyLimit = XML_BODY_LIMITS[root]
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of source) {
    size += chunk.length
    if (size > limit.bytes) throw new S3Error('MaxMessageLengthExceeded', `A ${root} body is limited to ${limit.bytes} bytes.`)
    chunks.push(Buffer.from(chunk))
  }
  let text: string
  try {
    text = utf8.decode(Buffer.concat(chunks))
  } catch {
    throw new S3Error('MalformedXML', 'The XML body is not UTF-8.')
  }
  if (text.trim() === '') throw new S3Error('MalformedXML')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) throw new S3Error('MalformedXML')
  let document
  try {
    document = readDocument(text, listPaths, limit.nodes)
  } catch (err) {
    if (err instanceof XmlReadError) throw new S3Error('MalformedXML', err.reason === 'malformed' ? undefined : err.message)
    throw err
  }
  if (document.root !== root) throw new S3Error('MalformedXML', `The body must be a ${root} document.`)
  const element = document.value
  return typeof element === 'object' && element !== null ? element as Record<string, unknown> : {}
}

/**
 * The text of a child element that must hold text only (a Key): undefined
 * when absent, MalformedXML when it is given twice or holds elements.
 */
export function textOnly (element: unknown, name: string): string | undefined {
  const value = (element as Record<string, unknown> | null | undefined)?.[name]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).every(k => k === '#text')) {
    const inner = (value as { '#text'?: unknown })['#text']
    return typeof inner === 'string' ? inner : ''
  }
  throw new S3Error('MalformedXML', `${name} must hold text only, once.`)
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
