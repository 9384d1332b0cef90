/**
 * The reader of the XML documents clients send to the S3 door: one pass over
 * the text, each character looked at a bounded number of times, so the time
 * is linear in the body whatever it holds (unclosed comments, deep nesting,
 * long runs of `&` or `<`). It replaces a general parser that took several
 * microseconds an element (a body of 64 KiB of empty elements took 150 ms)
 * and a validator run beside it; S3's documents need far less than XML
 * offers, and what they need is here:
 *
 *   - well-formedness as XML 1.0 defines it for documents without a DTD:
 *     one root; matched tags; names made of name characters; attributes
 *     quoted, once each, without `<`; the five named entities and character
 *     references to characters a document may hold (what HTML adds, an
 *     undefined entity, is an error, not literal text); comments, CDATA
 *     sections and processing instructions closed; the XML declaration only
 *     first. A DOCTYPE is refused, which rules out entity expansion.
 *   - the shape the door reads (`readDocument`): an element of text only is
 *     its text (`0001` stays a string), an empty one '', one with child
 *     elements an object of them by local name (a namespace prefix is
 *     dropped), its text, if any, under `#text`; a name given twice, or a
 *     path in `lists`, makes a list. Attributes, comments and processing
 *     instructions are dropped; CDATA is text. Objects have no prototype
 *     (V8 keeps them as dictionaries from the start: thousands of distinct
 *     names do not each make a new hidden class), and `__proto__` is no
 *     element name.
 *
 * Nesting is bounded (`MAX_DEPTH`), and so is the number of elements and
 * other markup (`maxNodes`), which bounds the objects a body makes.
 * Anything else is `XmlReadError`, which the door answers as MalformedXML.
 */

/** Deepest nesting read; S3's documents go six deep. */
export const MAX_DEPTH = 100

export class XmlReadError extends Error {
  constructor (readonly reason: 'malformed' | 'too many nodes' | 'too deep', detail: string) {
    super(detail)
  }
}

// XML 1.0 (fifth edition), productions 4 and 4a.
const nameStart = ':A-Z_a-z\\u{C0}-\\u{D6}\\u{D8}-\\u{F6}\\u{F8}-\\u{2FF}\\u{370}-\\u{37D}\\u{37F}-\\u{1FFF}\\u{200C}-\\u{200D}\\u{2070}-\\u{218F}\\u{2C00}-\\u{2FEF}\\u{3001}-\\u{D7FF}\\u{F900}-\\u{FDCF}\\u{FDF0}-\\u{FFFD}\\u{10000}-\\u{EFFFF}'
const nameRest = `${nameStart}\\-.0-9\\u{B7}\\u{300}-\\u{36F}\\u{203F}-\\u{2040}`
const xmlName = new RegExp(`^[${nameStart}][${nameRest}]*$`, 'u')

/** The longest reference that can be well-formed, between `&` and `;`: `#x10FFFF`, `#1114111`, `#0000065`. */
const LONGEST_REFERENCE = 8

/** The character a reference stands for (the text between `&` and `;`), or null when XML defines none. */
export function referenceValue (name: string): string | null {
  switch (name) {
    case 'amp': return '&'
    case 'lt': return '<'
    case 'gt': return '>'
    case 'quot': return '"'
    case 'apos': return "'"
  }
  if (name.charCodeAt(0) !== 0x23) return null // #
  const hex = name.charCodeAt(1) === 0x78 // x
  const digits = name.length - (hex ? 2 : 1)
  if (digits < 1 || digits > (hex ? 6 : 7)) return null
  let c = 0
  for (let k = name.length - digits; k < name.length; k++) {
    const d = name.charCodeAt(k)
    const value = d >= 0x30 && d <= 0x39 ? d - 0x30 : hex && d >= 0x61 && d <= 0x66 ? d - 0x57 : hex && d >= 0x41 && d <= 0x46 ? d - 0x37 : -1
    if (value < 0) return null
    c = c * (hex ? 16 : 10) + value
  }
  const allowed = c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)
  return allowed ? String.fromCodePoint(c) : null
}

function isSpace (c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
}

interface Frame {
  /** The name as written (a closing tag must repeat it), and without its prefix. */
  qualified: string
  local: string
  /** Dotted local names from the root, what `lists` holds; null when longer than any of them. */
  path: string | null
  children: Record<string, unknown> | null
  text: string
}

export interface ReadDocument {
  /** The root element's local name. */
  root: string
  /** Its value, shaped as the module's notes say. */
  value: unknown
}

/**
 * Reads `text` as an XML document. `lists` names the element paths
 * (`Delete.Object`) that are lists even when they hold one element.
 */
export function readDocument (text: string, lists: ReadonlySet<string>, maxNodes: number): ReadDocument {
  const n = text.length
  let i = 0
  let nodes = 0
  const stack: Frame[] = []
  let result: ReadDocument | undefined
  let longestList = 0
  for (const path of lists) longestList = Math.max(longestList, path.length)

  const fail = (detail: string): never => { throw new XmlReadError('malformed', detail) }
  const counted = (): void => {
    if (++nodes > maxNodes) throw new XmlReadError('too many nodes', `A document holds at most ${maxNodes} elements, comments and other markup.`)
  }
  /** Index just past `close`, searched from `from`, or failure: each search starts where the last construct ended. */
  const past = (close: string, from: number, what: string): number => {
    const end = text.indexOf(close, from)
    if (end < 0) fail(`${what} is not closed.`)
    return end + close.length
  }
  /** A reference at `i` (on `&`): its character, and `i` moves past its `;`. */
  const reference = (): string => {
    let end = i + 1
    while (end < n && end - i <= LONGEST_REFERENCE + 1 && text.charCodeAt(end) !== 0x3b) end++ // ;
    const value = text.charCodeAt(end) === 0x3b ? referenceValue(text.slice(i + 1, end)) : null
    if (value === null) fail('An & begins no reference XML defines.')
    i = end + 1
    return value as string
  }
  /** A name at `i`, ended by white space, `/`, `>` or `=`; `i` moves past it. */
  const name = (): string => {
    const start = i
    while (i < n) {
      const c = text.charCodeAt(i)
      if (isSpace(c) || c === 0x2f || c === 0x3e || c === 0x3d) break
      i++
    }
    const found = text.slice(start, i)
    if (!xmlName.test(found)) fail(`"${found.slice(0, 40)}" is not an XML name.`)
    return found
  }
  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++
  }
  /** Attributes up to `>` or `/>`; checked, then dropped. Returns whether the tag closes itself. */
  const attributes = (): boolean => {
    let seen: Set<string> | undefined
    for (;;) {
      const before = i
      skipSpace()
      if (i >= n) fail('A tag is not closed.')
      const c = text.charCodeAt(i)
      if (c === 0x3e) { i++; return false } // >
      if (c === 0x2f) { // /
        if (text.charCodeAt(i + 1) !== 0x3e) fail('A / in a tag is not followed by >.')
        i += 2
        return true
      }
      if (i === before) fail('Attributes must be separated by white space.')
      const attribute = name()
      seen ??= new Set()
      if (seen.has(attribute)) fail(`The attribute ${attribute} is given twice.`)
      seen.add(attribute)
      skipSpace()
      if (text.charCodeAt(i) !== 0x3d) fail(`The attribute ${attribute} has no value.`) // =
      i++
      skipSpace()
      const quote = text.charCodeAt(i)
      if (quote !== 0x22 && quote !== 0x27) fail(`The value of ${attribute} is not quoted.`)
      i++
      for (;;) {
        if (i >= n) fail(`The value of ${attribute} is not closed.`)
        const v = text.charCodeAt(i)
        if (v === quote) { i++; break }
        if (v === 0x3c) fail('An attribute value may not hold <.')
        if (v === 0x26) reference()
        else i++
      }
    }
  }
  const close = (frame: Frame): void => {
    let value: unknown
    if (frame.children === null) {
      value = frame.text
    } else {
      if (frame.text !== '') frame.children['#text'] = frame.text
      value = frame.children
    }
    const parent = stack[stack.length - 1]
    if (parent === undefined) {
      result = { root: frame.local, value }
      return
    }
    const siblings = parent.children ??= Object.create(null) as Record<string, unknown>
    const previous = siblings[frame.local]
    if (Object.hasOwn(siblings, frame.local)) {
      if (Array.isArray(previous)) previous.push(value)
      else siblings[frame.local] = [previous, value]
    } else {
      siblings[frame.local] = frame.path !== null && lists.has(frame.path) ? [value] : value
    }
  }

  if (text.charCodeAt(0) === 0xfeff) i = 1
  skipSpace()
  if (text.startsWith('<?xml', i) && (isSpace(text.charCodeAt(i + 5)) || text.startsWith('?>', i + 5))) i = past('?>', i + 5, 'The XML declaration')
  while (i < n) {
    const c = text.charCodeAt(i)
    const current = stack[stack.length - 1]
    if (c !== 0x3c) { // text
      if (current === undefined) {
        if (!isSpace(c)) fail('Text outside the root element.')
        i++
        continue
      }
      let start = i
      let run = ''
      while (i < n) {
        const t = text.charCodeAt(i)
        if (t === 0x3c) break
        if (t === 0x26) {
          run += text.slice(start, i) + reference()
          start = i
        } else i++
      }
      current.text += run + text.slice(start, i)
      continue
    }
    const next = text.charCodeAt(i + 1)
    if (next === 0x21 && text.startsWith('<!--', i)) { // !
      counted()
      i = past('-->', i + 4, 'A comment')
    } else if (next === 0x21 && text.startsWith('<![CDATA[', i)) {
      if (current === undefined) fail('A CDATA section outside the root element.')
      counted()
      const end = past(']]>', i + 9, 'A CDATA section')
      current!.text += text.slice(i + 9, end - 3)
      i = end
    } else if (next === 0x3f) { // ?
      counted()
      const end = past('?>', i + 2, 'A processing instruction')
      const target = /^[^\t\n\r ]*/.exec(text.slice(i + 2, end - 2))![0]
      if (!xmlName.test(target) || target.toLowerCase() === 'xml') fail('A processing instruction is malformed, or an XML declaration that does not come first.')
      i = end
    } else if (next === 0x21) {
      fail('S3 documents have no DOCTYPE or other declarations.')
    } else if (next === 0x2f) { // /
      i += 2
      const closing = name()
      skipSpace()
      if (text.charCodeAt(i) !== 0x3e) fail(`The closing tag ${closing} is not closed.`)
      i++
      const frame = stack.pop()
      if (frame === undefined || frame.qualified !== closing) fail(`</${closing}> closes no open element of that name.`)
      close(frame!)
    } else {
      if (current === undefined && result !== undefined) fail('A document has one root element.')
      counted()
      i++
      const qualified = name()
      const colon = qualified.indexOf(':')
      const local = colon === -1 ? qualified : qualified.slice(colon + 1)
      // A name JavaScript objects give a meaning of their own is no element of S3's.
      if (local === '__proto__' || local === '') fail(`${qualified} is not an element name S3 uses.`)
      if (stack.length >= MAX_DEPTH) throw new XmlReadError('too deep', `Elements nest at most ${MAX_DEPTH} deep.`)
      // Only paths as long as the longest list path are kept: a path is hashed to be looked up, and
      // deep nesting of long names must not make each element cost the length of all its ancestors' names.
      const path = current === undefined ? local : current.path === null ? null : `${current.path}.${local}`
      const frame: Frame = { qualified, local, path: path !== null && path.length <= longestList ? path : null, children: null, text: '' }
      if (current !== undefined) current.children ??= Object.create(null) as Record<string, unknown>
      const empty = attributes()
      stack.push(frame)
      if (empty) close(stack.pop()!)
    }
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1].qualified}> is not closed.`)
  if (result === undefined) fail('The document has no root element.')
  return result!
}
