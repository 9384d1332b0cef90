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
 * References XML 1.0 defines: the five named entities and character
 * references to characters a document may hold (no NUL, no C0 control but
 * tab, LF and CR, no surrogate, no U+FFFE or U+FFFF). The parser would take
 * HTML's named entities too, and an undefined one as literal text.
 */
function wellFormedReferences (text: string): boolean {
  const markup = text.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, '') // where `&` is only a character
  for (const m of markup.matchAll(/&([^;&<>\s]*);?/g)) {
    const name = m[1]
    if (!m[0].endsWith(';')) return false
    if (['amp', 'lt', 'gt', 'quot', 'apos'].includes(name)) continue
    const reference = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name)
    if (reference === null) return false
    const c = reference[1] !== undefined ? parseInt(reference[1], 16) : Number(reference[2])
    const allowed = c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)
    if (!allowed) return false
  }
  return true
}

/**
 * Reads a request body whole (bounded) and parses it; MalformedXML when it
 * is not well-formed XML in UTF-8 (a byte that is not UTF-8, an undefined
 * entity, a control character, a DOCTYPE, nesting the parser refuses) or
 * not a `root` document.
 */
export async function readXmlBody (source: AsyncIterable<Uint8Array>, root: string): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of source) {
    size += chunk.length
    if (size > MAX_XML_BYTES) throw new S3Error('MalformedXML', `XML bodies are limited to ${MAX_XML_BYTES} bytes.`)
    chunks.push(Buffer.from(chunk))
  }
  let text: string
  try {
    text = utf8.decode(Buffer.concat(chunks))
  } catch {
    throw new S3Error('MalformedXML', 'The XML body is not UTF-8.')
  }
  if (text.trim() === '') throw new S3Error('MalformedXML')
  // S3's documents have no DTD; refusing one rules out entity expansion.
  if (/<!DOCTYPE/i.test(text)) throw new S3Error('MalformedXML', 'XML bodies may not declare a DOCTYPE.')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text) || !wellFormedReferences(text)) throw new S3Error('MalformedXML')
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
