/**
 * Key names as the console shows them (no DOM: a test runs them in Node).
 */

/**
 * A key's name under the folder `prefix`. The gateway matches keys and
 * prefixes by their NFC form but lists each key as last written, so under
 * `résumé/` a key may be spelled `re\u0301sume\u0301/one.txt`: the start
 * cut off is the shortest whose NFC form is the prefix's, not the prefix's
 * length. The CLI's keyUnderPrefix (src/cli/paths.ts) is the same rule, in
 * the Node code the browser's bundle cannot import; one test table checks
 * both (test/cli/units.test.ts).
 */
export function nameUnder (prefix: string, key: string): string {
  if (key.startsWith(prefix) && prefix.normalize('NFC') === prefix) return key.slice(prefix.length)
  const kept = prefix.normalize('NFC')
  for (let end = 0; end <= key.length; end++) {
    const start = key.slice(0, end).normalize('NFC')
    if (start === kept) return key.slice(end)
    if (start.length > kept.length + 1) break
  }
  const whole = key.normalize('NFC')
  return whole.startsWith(kept) ? whole.slice(kept.length) : key
}

/** The bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069). */
const bidiControls = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * A key (or a part of one) as the console writes it on the page: its
 * bidirectional controls as `\uHHHH`, as the CLI prints them
 * (src/cli/terminal-text.ts). Written raw, one reorders the rest of its
 * line: the key `invoice\u202efdp.exe` would read `invoiceexe.pdf`.
 * Links and requests keep the key itself.
 */
export function shownName (name: string): string {
  return name.replace(bidiControls, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
