/**
 * XML in and out of the S3 door, through fast-xml-parser only: answers are
 * built from plain objects (the builder escapes every value, so a key such
 * as `a<b>&c` can never break a document), and request bodies are validated
 * then parsed into plain objects with every value kept as a string (`0001`
 * stays a key, not the number 1).
 *
 * Request bodies are read whole up to a cap that depends on the document
 * (`XML_BODY_LIMITS`): a Delete of 1,000 keys of 1 KiB and a
 * CompleteMultipartUpload of 10,000 parts fit in 2 MiB; a CORS or
 * lifecycle configuration (100 rules, 1,000 rules) is a small document,
 * and a larger body is refused before it is parsed: MaxMessageLengthExceeded,
 * as S3 answers a request body too large for its operation.
 *
 * Every check of a body runs in time linear in its length: the checks of
 * our own are one pass over the text (`scanMarkup`), never a regular
 * expression that searches again from each candidate start (one that
 * looked for the end of each `<!--` rescanned the rest of the body for each
 * unclosed one: minutes for 2 MiB). fast-xml-parser's validator and parser
 * are linear too, but at several microseconds an element, so a document
 * that may hold many elements also has an element budget its largest
 * legitimate form fits in (a Delete of 1,000 Objects, a completion of 10,000
 * Parts, each with all their child elements): a body of only empty elements
 * is refused after one cheap pass rather than parsed.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser'
import { S3Error } from './errors.js'

export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/'

export interface XmlBodyLimit {
  /** Largest body read (bytes, after aws-chunked decoding). */
  bytes: number
  /** Most elements (start tags and empty-element tags) the document may hold. */
  elements: number
}

const KiB = 1024
const MiB = 1024 * KiB

/** The caps of each document the S3 door reads, by root element. */
export const XML_BODY_LIMITS = {
  // 1,000 Objects (S3's cap) of a Key, VersionId, ETag, LastModifiedTime and Size each, keys of 1,024 bytes escaped.
  Delete: { bytes: 2 * MiB, elements: 10_000 },
  // 10,000 Parts of a PartNumber, an ETag and five checksums each.
  CompleteMultipartUpload: { bytes: 2 * MiB, elements: 100_000 },
  // 1,000 rules, each with an ID of 255 characters and a prefix filter, fit.
  LifecycleConfiguration: { bytes: 256 * KiB, elements: 64 * KiB },
  // 100 rules of a few origins, methods and headers each.
  CORSConfiguration: { bytes: 64 * KiB, elements: 16 * KiB },
  CreateBucketConfiguration: { bytes: 64 * KiB, elements: 16 * KiB }
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
  // eslint-disable-next-line no-control-regex
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

const namedEntities = new Set(['amp', 'lt', 'gt', 'quot', 'apos'])
/** The longest reference name that can be well-formed: `#x10FFFF`, `#1114111`, `#0000065`. */
const LONGEST_REFERENCE = 8

/**
 * Whether `name` (what stands between `&` and `;`) is a reference XML 1.0
 * defines: the five named entities and character references to characters
 * a document may hold (no NUL, no C0 control but tab, LF and CR, no
 * surrogate, no U+FFFE or U+FFFF). The parser would take HTML's named
 * entities too, and an undefined one as literal text.
 */
function wellFormedReference (name: string): boolean {
  if (namedEntities.has(name)) return true
  const reference = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name)
  if (reference === null) return false
  const c = reference[1] !== undefined ? parseInt(reference[1], 16) : Number(reference[2])
  return c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)
}

/**
 * One pass over a body, before the parser sees it: 'malformed' for what
 * the parser would let through but XML forbids (an undefined or malformed
 * reference, a DOCTYPE or other declaration, which also rules out entity
 * expansion; an unclosed comment, CDATA section or processing
 * instruction), 'too many elements' past `maxElements`. Each step either
 * moves past what it looked at or ends the scan (a search for the end of
 * a comment that finds none ends it), so the time is linear in the text.
 */
export function scanMarkup (text: string, maxElements: number): 'ok' | 'malformed' | 'too many elements' {
  let elements = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x3c) { // <
      // Inside comments, CDATA and processing instructions `&` and `<` are only characters.
      const close = text.startsWith('<!--', i)
        ? '-->'
        : text.startsWith('<![CDATA[', i) ? ']]>' : text.startsWith('<?', i) ? '?>' : undefined
      if (close !== undefined) {
        const end = text.indexOf(close, i + 2)
        if (end < 0) return 'malformed'
        i = end + close.length - 1
        continue
      }
      const next = text.charCodeAt(i + 1)
      // S3's documents have no DTD (a DOCTYPE, an ENTITY declaration).
      if (next === 0x21) return 'malformed' // !
      if (next !== 0x2f && ++elements > maxElements) return 'too many elements' // not a closing tag
    } else if (c === 0x26) { // &
      let end = i + 1
      while (end < n && end - i <= LONGEST_REFERENCE && text.charCodeAt(end) !== 0x3b) end++ // ;
      if (text.charCodeAt(end) !== 0x3b || !wellFormedReference(text.slice(i + 1, end))) return 'malformed'
      i = end
    }
  }
  return 'ok'
}

/**
 * Reads a request body whole (up to its document's cap:
 * MaxMessageLengthExceeded past it) and parses it; MalformedXML when it is
 * not well-formed XML in UTF-8 (a byte that is not UTF-8, an undefined
 * entity, a control character, a DOCTYPE, nesting the parser refuses),
 * holds more elements than its document's budget, or is not a `root`
 * document.
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
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) throw new S3Error('MalformedXML')
  const scanned = scanMarkup(text, limit.elements)
  if (scanned === 'too many elements') throw new S3Error('MalformedXML', `A ${root} document holds at most ${limit.elements} elements.`)
  if (scanned === 'malformed') throw new S3Error('MalformedXML')
  let parsed: Record<string, unknown>
  try {
    if (XMLValidator.validate(text) !== true) throw new S3Error('MalformedXML')
    parsed = parser.parse(text) as Record<string, unknown>
  } catch {
    // The parser's own refusals (nesting too deep, element names such as __proto__) are the body's fault too.
    throw new S3Error('MalformedXML')
  }
  const element = parsed[root]
  if (element === undefined) throw new S3Error('MalformedXML', `The body must be a ${root} document.`)
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
