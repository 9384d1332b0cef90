/**
 * Text from a bucket, as the object commands print it.
 *
 * Keys, bucket names, metadata values, content types, etags and a server's
 * error messages are anyone's bytes. Printed raw, a key holding
 * `ESC ] 0 ; title BEL` retitles the user's terminal, one holding CSI
 * sequences recolours or clears it, and one holding a line feed fakes a line
 * of output (`upload: ... -> fsb://b/x` followed by a made-up `remove:`
 * line). So every such text goes through `shownText` before it reaches
 * stdout, stderr or a progress bar:
 *
 *   - a backslash is doubled (`\\`), so what follows stays unambiguous: the
 *     key `a\nb` (backslash, n) prints as `a\\nb`, the key holding a line
 *     feed as `a\nb`;
 *   - TAB, LF and CR print as `\t`, `\n`, `\r`; the other C0 controls and
 *     DEL as `\xHH` (`\x1b`, `\x07`, `\x7f`);
 *   - C1 controls (U+0080 to U+009F, which some terminals obey as ESC
 *     sequences: U+009B is CSI) as `\u00HH` (`\u009b`), a code point, so it
 *     cannot be taken for a byte;
 *   - the bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E,
 *     U+2066 to U+2069) as `\uHHHH`: printed raw, they reorder what follows
 *     on the line, so the key `invoice\u202efdp.exe` would show as
 *     `invoiceexe.pdf`;
 *   - the line and paragraph separators (U+2028, U+2029), which editors,
 *     log viewers and some terminals take for a line break, as `\uHHHH`;
 *   - everything else, non-ASCII letters included, prints as it is.
 *
 * Local paths get the same treatment (a download's path holds its key), and
 * so do the command's own arguments when a message quotes them. The sinks
 * apply it (context.ts: the record on stdout, the failure lines, ls and stat;
 * progress.ts: the bar's label), so no field can slip past.
 *
 * `--json` output stays exact: `jsonLine` is JSON.stringify, which escapes
 * C0 controls already; DEL, C1, the separators and the bidirectional
 * controls, which it leaves raw, are written as escapes (`\u007f`, `\u009b`, `\u202e`), the
 * same string to any JSON parser. `jsonText`, the same indented, serves the
 * commands whose whole output is JSON (`token create`, `token list`).
 */
/** DEL, the C1 controls, the line and paragraph separators and the bidirectional controls: what JSON.stringify leaves raw. */
const rawInJson = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069'
const needsEscape = new RegExp(`[\\\\\\u0000-\\u001f${rawInJson}]`, 'g')
const escapedInJson = new RegExp(`[${rawInJson}]`, 'g')
const named: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }

function escapeOne (c: string): string {
  const short = named[c]
  if (short !== undefined) return short
  const code = c.charCodeAt(0)
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`
  return `\\u${code.toString(16).padStart(4, '0')}`
}

/** Text from a bucket (or a server, a local path, the command line), safe and unambiguous on a terminal. */
export function shownText (text: string): string {
  return text.replace(needsEscape, escapeOne)
}

/** JSON text with the characters JSON.stringify leaves raw written as `\uHHHH` (they occur only inside its strings). */
function escapedJson (json: string): string {
  return json.replace(escapedInJson, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** One line of `--json` output: exact JSON, with no raw control character in it. */
export function jsonLine (value: unknown): string {
  return escapedJson(JSON.stringify(value))
}

/** JSON indented by two spaces, as exact and as safe as `jsonLine`. */
export function jsonText (value: unknown): string {
  return escapedJson(JSON.stringify(value, null, 2))
}
