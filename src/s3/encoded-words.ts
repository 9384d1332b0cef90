/**
 * RFC 2047 encoded words in `x-amz-meta-*` values, as the hosted service
 * reads them: HTTP header values are ASCII in practice (Node.js, botocore
 * and others refuse anything else), so a client with non-ASCII metadata
 * sends `=?UTF-8?B?WsO8cmljaA==?=` and the service stores `Zürich`. On the
 * way out, headers.ts encodes what is not printable ASCII the same way.
 *
 * A word is `=?charset?B|Q?text?=`; white space between two adjacent words
 * goes (RFC 2047 section 6.2), and the rest of the value stays as it is. A
 * word in a charset TextDecoder does not know, or whose bytes are not valid
 * in its charset, is kept as written rather than guessed at.
 */
const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g
const BETWEEN_WORDS = /(\?=)[ \t\r\n]+(?==\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)/g

function wordBytes (encoding: string, text: string): Buffer | null {
  if (encoding === 'B' || encoding === 'b') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null
    return Buffer.from(text, 'base64')
  }
  // Q: `_` is a space, `=XX` a byte, anything else itself.
  if (/=(?![0-9A-Fa-f]{2})/.test(text)) return null
  return Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1')
}

function decodeWord (word: string, charset: string, encoding: string, text: string): string {
  const bytes = wordBytes(encoding, text)
  if (bytes === null) return word
  // RFC 2231 allows a language after `*` (`UTF-8*en`): the charset is before it.
  const label = charset.split('*')[0]
  try {
    return new TextDecoder(label, { fatal: true }).decode(bytes)
  } catch {
    return word
  }
}

/** A header value with its RFC 2047 encoded words decoded; a value without any, as it is. */
export function decodeEncodedWords (value: string): string {
  if (!value.includes('=?')) return value
  return value.replace(BETWEEN_WORDS, '$1').replace(ENCODED_WORD, decodeWord)
}
