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
