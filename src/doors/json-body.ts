/**
 * JSON request bodies, as the HTTP routes and the management API read them:
 * `JSON.parse`, after one pass that refuses nesting deeper than any body
 * they take needs. V8 parses any JSON in linear time, but a body of nothing
 * but `[` costs it some 500 ns a level (a 2 MiB one took a second, fifty
 * times a list of keys of the same size); the deepest body read here is a
 * lifecycle rule inside its list, five levels.
 *
 * A body's bytes must be UTF-8 (RFC 8259, section 8.1): read leniently, a
 * key sent as Latin-1 `café` would become `caf\uFFFD`, another key, and a
 * batch delete or a lifecycle rule would act on objects the client never
 * named.
 */

import { isUtf8 } from 'node:buffer'

/** Deepest nesting of arrays and objects read. */
export const MAX_JSON_DEPTH = 32

/**
 * `JSON.parse(text)`, or a SyntaxError (what JSON.parse throws, so callers
 * answer it as they answer malformed JSON) when arrays and objects nest
 * deeper than `maxDepth`.
 */
export function parseJsonBody (text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // \ escapes the next character
      else if (c === 0x22) inString = false // "
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) { // [ {
      if (++depth > maxDepth) throw new SyntaxError(`JSON bodies nest at most ${maxDepth} deep.`)
    } else if (c === 0x5d || c === 0x7d) { // ] }
      depth--
    }
  }
  return JSON.parse(text)
}

/** The text of a JSON body's bytes, or a SyntaxError (answered as malformed JSON) when they are not UTF-8. */
export function jsonBodyText (body: Buffer): string {
  if (!isUtf8(body)) throw new SyntaxError('JSON bodies must be UTF-8.')
  return body.toString('utf8')
}
