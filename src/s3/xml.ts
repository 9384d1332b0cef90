/**
 * XML in and out of the S3 door. Answers are built from plain objects by
 * fast-xml-parser's builder (it escapes every value, so a key such as
 * `a<b>&c` can never break a document). Request bodies are checked by its
 * validator and read by its parser into plain objects with every value
 * kept as a string (`0001` stays a key, not the number 1): an element of
 * text only is its text, an empty one '', one with child elements an
 * object of them by local name (a namespace prefix is dropped), its text,
 * if any, under `#text`; a name given twice, or a path in `listPaths`,
 * makes a list. Attributes, comments and processing instructions are
 * dropped; CDATA is text.
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
 *
 * Every check of a body runs in time linear in its length. The validator
 * and the parser are linear, at a few microseconds an element, which the
 * byte caps and the markup budgets bound. What they let through but the
 * door refuses (a DOCTYPE or other declaration, which also rules out entity
 * expansion; a reference XML does not define, which the parser would take
 * as literal text or as one of HTML's; nesting over `MAX_DEPTH`; a body
 * over its markup budget) is found first by `scanMarkup`, one pass over the
 * text that never searches again from an earlier place (a search for the
 * end of a comment that finds none ends the scan: a regular expression
 * that looked for the end of each `<!--` took minutes for 2 MiB).
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser'
import { MAX_CORS_CONFIGURATION_BYTES, MAX_LIFECYCLE_CONFIGURATION_BYTES } from '../bucket/index.js'
import { withHeldBody } from '../doors/body-budget.js'
import { S3Error } from './errors.js'

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
  // 1,000 rules (S3's cap) of a dozen elements or so; the engine holds every door to the same bytes.
  LifecycleConfiguration: { bytes: MAX_LIFECYCLE_CONFIGURATION_BYTES, nodes: 16_384 },
  // 100 rules (S3's cap) of a few origins, methods and headers each; the engine holds every door to the same bytes.
  CORSConfiguration: { bytes: MAX_CORS_CONFIGURATION_BYTES, nodes: 8_192 },
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

/** Deepest nesting read; S3's documents go six deep. */
export const MAX_DEPTH = 100

const parser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  // Numeric character references (`&#34;`, what Go clients such as rclone write for `"`) are XML too;
  // `scanMarkup` has refused every named one but XML's five before the parser sees the text.
  processEntities: true,
  htmlEntities: true,
  // Keys may begin or end with spaces; whitespace between elements shows up as `#text` and is ignored.
  trimValues: false,
  maxNestedTags: MAX_DEPTH,
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

// XML 1.0 (fifth edition), productions 4 and 4a: what a processing instruction's target must be.
const nameStart = ':A-Z_a-z\\u{C0}-\\u{D6}\\u{D8}-\\u{F6}\\u{F8}-\\u{2FF}\\u{370}-\\u{37D}\\u{37F}-\\u{1FFF}\\u{200C}-\\u{200D}\\u{2070}-\\u{218F}\\u{2C00}-\\u{2FEF}\\u{3001}-\\u{D7FF}\\u{F900}-\\u{FDCF}\\u{FDF0}-\\u{FFFD}\\u{10000}-\\u{EFFFF}'
const nameRest = `${nameStart}\\-.0-9\\u{B7}\\u{300}-\\u{36F}\\u{203F}-\\u{2040}`
// The combining marks (U+0300-036F) stand in a range on purpose: a name may hold them after its first character.
// eslint-disable-next-line no-misleading-character-class
const xmlName = new RegExp(`^[${nameStart}][${nameRest}]*$`, 'u')

const namedEntities = new Set(['amp', 'lt', 'gt', 'quot', 'apos'])
/** The longest reference that can be well-formed, between `&` and `;`: `#x10FFFF`, `#1114111`, `#0000065`. */
const LONGEST_REFERENCE = 8

/**
 * Whether `name` (what stands between `&` and `;`) is a reference XML 1.0
 * defines: the five named entities and character references to characters
 * a document may hold (no NUL, no C0 control but tab, LF and CR, no
 * surrogate, no U+FFFE or U+FFFF).
 */
function wellFormedReference (name: string): boolean {
  if (namedEntities.has(name)) return true
  const reference = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name)
  if (reference === null) return false
  const c = reference[1] !== undefined ? parseInt(reference[1], 16) : Number(reference[2])
  return c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)
}

export type ScanResult = 'ok' | 'malformed' | 'too many nodes' | 'too deep'

/**
 * One pass over a body, before the validator and the parser see it:
 * 'malformed' for what they would let through but XML forbids or S3's
 * documents never hold (an undefined or malformed reference; a DOCTYPE or
 * other declaration; an unclosed comment, CDATA section, processing
 * instruction or tag; text, CDATA or a second element outside the root
 * element; a processing instruction without a name, or an XML declaration
 * that does not come first; an element name with an empty
 * local part or `__proto__`), 'too many nodes' past `maxNodes` elements,
 * comments, CDATA sections and processing instructions, 'too deep' when
 * elements nest more than `MAX_DEPTH` deep. Each step moves past what it
 * looked at or ends the scan, so the time is linear in the text.
 */
export function scanMarkup (text: string, maxNodes: number): ScanResult {
  const n = text.length
  let nodes = 0
  let depth = 0
  let rooted = false
  /** At `&` at `at`: the index of its `;`, or -1 when it begins no reference XML defines. */
  const reference = (at: number): number => {
    let end = at + 1
    while (end < n && end - at <= LONGEST_REFERENCE + 1 && text.charCodeAt(end) !== 0x3b) end++ // ;
    return text.charCodeAt(end) === 0x3b && wellFormedReference(text.slice(at + 1, end)) ? end : -1
  }
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    // Outside the root element only white space, comments and processing instructions.
    if (depth === 0 && c !== 0x3c && c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return 'malformed'
    if (c === 0x26) { // &
      i = reference(i)
      if (i < 0) return 'malformed'
      continue
    }
    if (c !== 0x3c) continue // <
    const next = text.charCodeAt(i + 1)
    if (next === 0x2f) { // / : a closing tag; the validator matches it with its start tag
      depth--
      i = text.indexOf('>', i + 2)
      if (i < 0) return 'malformed'
      continue
    }
    if (++nodes > maxNodes) return 'too many nodes'
    // Inside comments, CDATA and processing instructions `&` and `<` are only characters.
    const comment = text.startsWith('<!--', i)
    if (next === 0x21 && !comment && depth === 0) return 'malformed' // CDATA outside the root element, or a declaration
    if (comment || text.startsWith('<![CDATA[', i)) {
      const end = comment ? text.indexOf('-->', i + 4) : text.indexOf(']]>', i + 9)
      if (end < 0) return 'malformed'
      i = end + 2
      continue
    }
    if (next === 0x21) return 'malformed' // ! : S3's documents have no DTD (a DOCTYPE, an ENTITY declaration)
    if (next === 0x3f) { // ?
      const end = text.indexOf('?>', i + 2)
      if (end < 0) return 'malformed'
      const target = /^[^\t\n\r ]*/.exec(text.slice(i + 2, end))![0]
      const declaration = target === 'xml' && text.slice(0, i).trim() === ''
      if (!declaration && (!xmlName.test(target) || target.toLowerCase() === 'xml')) return 'malformed'
      i = end + 1
      continue
    }
    // A start tag or an empty-element tag: its name, then on to its `>` past quoted attribute values.
    if (depth === 0 && rooted) return 'malformed' // a second root element
    rooted = true
    if (++depth > MAX_DEPTH) return 'too deep'
    let j = i + 1
    for (let t = text.charCodeAt(j); j < n && t !== 0x3e && t !== 0x2f && t !== 0x20 && t !== 0x09 && t !== 0x0a && t !== 0x0d; t = text.charCodeAt(++j));
    const qualified = text.slice(i + 1, j)
    const local = qualified.slice(qualified.indexOf(':') + 1)
    if (local === '' || local === '__proto__') return 'malformed'
    let quote = 0
    for (; j < n; j++) {
      const t = text.charCodeAt(j)
      if (quote !== 0) {
        if (t === quote) quote = 0
        else if (t === 0x3c) return 'malformed' // < in an attribute value
        else if (t === 0x26) {
          j = reference(j)
          if (j < 0) return 'malformed'
        }
      } else if (t === 0x22 || t === 0x27) quote = t
      else if (t === 0x3e) break // >
    }
    if (j >= n) return 'malformed'
    if (text.charCodeAt(j - 1) === 0x2f) depth-- // />
    i = j
  }
  return 'ok'
}

/**
 * Reads a request body whole (up to its document's cap:
 * MaxMessageLengthExceeded past it) and parses it; MalformedXML when it is
 * not well-formed XML in UTF-8 (a byte that is not UTF-8, an undefined
 * entity, a control character, a DOCTYPE, nesting over 100 deep, an
 * element named `__proto__`), holds more markup than its document's
 * budget, or is not a `root` document. Its bytes are held within the
 * process's body budget: SlowDown (503) when a chunk finds no room there.
 */
export async function readXmlBody (source: AsyncIterable<Uint8Array>, root: XmlDocumentRoot): Promise<Record<string, unknown>> {
  const bytes = XML_BODY_LIMITS[root].bytes
  return await withHeldBody(source, {
    bytes,
    tooLarge: () => new S3Error('MaxMessageLengthExceeded', `A ${root} body is limited to ${bytes} bytes.`),
    // S3's SlowDown, with the Retry-After the other doors send: room comes back as soon as other bodies are parsed.
    noRoom: () => new S3Error('SlowDown', undefined, { 'retry-after': '1' })
  }, body => parseXmlBody(body, root))
}

function parseXmlBody (body: Buffer, root: XmlDocumentRoot): Record<string, unknown> {
  const limit: XmlBodyLimit = XML_BODY_LIMITS[root]
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw new S3Error('MalformedXML', 'The XML body is not UTF-8.')
  }
  // White space before the XML declaration, which XML does not allow there, is dropped rather than refused.
  text = text.replace(/^[ \t\r\n]+/, '')
  if (text === '') throw new S3Error('MalformedXML')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) throw new S3Error('MalformedXML')
  switch (scanMarkup(text, limit.nodes)) {
    case 'malformed': throw new S3Error('MalformedXML')
    case 'too many nodes': throw new S3Error('MalformedXML', `A document holds at most ${limit.nodes} elements, comments and other markup.`)
    case 'too deep': throw new S3Error('MalformedXML', `Elements nest at most ${MAX_DEPTH} deep.`)
  }
  let parsed: Record<string, unknown>
  try {
    if (XMLValidator.validate(text) !== true) throw new S3Error('MalformedXML')
    parsed = parser.parse(text) as Record<string, unknown>
  } catch {
    // The parser's own refusals (element names such as constructor) are the body's fault too.
    throw new S3Error('MalformedXML')
  }
  const names = Object.keys(parsed)
  if (names.length !== 1 || names[0] !== root) throw new S3Error('MalformedXML', `The body must be a ${root} document.`)
  const element = parsed[root]
  return typeof element === 'object' && element !== null ? element as Record<string, unknown> : {}
}

/**
 * The text of a child element, undefined when absent: MalformedXML when
 * it is given twice or holds elements, never read as empty (a filter's
 * `<Prefix>` read as '' would name the whole bucket).
 */
export function text (element: unknown, name: string): string | undefined {
  const value = (element as Record<string, unknown> | null | undefined)?.[name]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).every(k => k === '#text')) {
    const inner = (value as { '#text'?: unknown })['#text']
    return typeof inner === 'string' ? inner : ''
  }
  throw new S3Error('MalformedXML', `${name} must hold text only, once.`)
}

/**
 * The child elements of `element` (named `where` in the error), each
 * among `allowed` as S3's schema puts them there: MalformedXML for any
 * other element (a misspelt or miscased name is another element, XML's
 * names are case-sensitive) or for text beside them. An element with no
 * child (`<Filter/>`, or white space only) has none.
 */
export function elementsOf (element: unknown, allowed: readonly string[], where: string): Record<string, unknown> {
  if (element === undefined || element === null) return {}
  if (typeof element === 'string') {
    if (element.trim() === '') return {}
    throw new S3Error('MalformedXML', `${where} holds elements, not text.`)
  }
  if (typeof element !== 'object' || Array.isArray(element)) throw new S3Error('MalformedXML', `${where} is given once.`)
  const children = element as Record<string, unknown>
  for (const name of Object.keys(children)) {
    if (name === '#text') {
      const between = children[name]
      if (typeof between === 'string' && between.trim() === '') continue
      throw new S3Error('MalformedXML', `${where} holds elements, not text.`)
    }
    if (!allowed.includes(name)) throw new S3Error('MalformedXML', `${where} has no element ${shownName(name)}: it holds ${allowed.join(', ')}.`)
  }
  return children
}

/** An element's name as an error names it: a name of a megabyte would make a megabyte's answer. */
function shownName (name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name
}

/** A child list (as `listPaths` makes them), or []. */
export function list (element: unknown, name: string): unknown[] {
  const value = (element as Record<string, unknown> | null | undefined)?.[name]
  return Array.isArray(value) ? value : value === undefined ? [] : [value]
}
