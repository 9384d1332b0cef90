/**
 * `shownText` and `jsonLine` (src/cli/terminal-text.ts), one character
 * class at a time: what the object commands print of a bucket's text.
 * test/cli/terminal.test.ts runs hostile keys through every command.
 */
import t from 'tap'
import { jsonLine, shownText } from '../../src/cli/terminal-text.js'

t.test('controls print as escapes, and letters as they are', async t => {
  t.equal(shownText('a\\b'), 'a\\\\b', 'a backslash doubled')
  t.equal(shownText('a\tb\nc\rd'), 'a\\tb\\nc\\rd')
  t.equal(shownText('\u001b]0;x\u0007\u007f'), '\\x1b]0;x\\x07\\x7f', 'C0 and DEL')
  t.equal(shownText('\u009b31m'), '\\u009b31m', 'C1')
  t.equal(shownText('résumé 日本 ✓'), 'résumé 日本 ✓', 'non-ASCII letters unchanged')
})

t.test('bidirectional controls print as escapes: a key cannot reorder what the terminal shows', async t => {
  // Shown raw, RIGHT-TO-LEFT OVERRIDE makes this key read "invoiceexe.pdf".
  t.equal(shownText('invoice\u202efdp.exe'), 'invoice\\u202efdp.exe')
  for (const c of ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']) {
    const code = c.charCodeAt(0).toString(16).padStart(4, '0')
    t.equal(shownText(`a${c}b`), `a\\u${code}b`, `U+${code.toUpperCase()}`)
  }
  t.equal(shownText('a\u200db'), 'a\u200db', 'a joiner (emoji sequences) is left alone')
  // Printed raw, they break the line in editors and log viewers as a line feed would.
  t.equal(shownText('a\u2028b\u2029c'), 'a\\u2028b\\u2029c', 'the line and paragraph separators')
})

t.test('--json lines hold no raw control and parse back to the same text', async t => {
  const key = 'k\u007f\u009b\u202e\u2066\u2028\n'
  const line = jsonLine({ key })
  t.notMatch(line, /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/)
  t.same(JSON.parse(line), { key })
  t.match(line, /\\u202e/)
})
