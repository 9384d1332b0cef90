/**
 * A caller's `warn` as the registry and its stores call it: one that throws
 * fails nothing (a warning follows what it tells of: a committed write, a
 * read answered without the bucket it names).
 */
export function guardedWarn<F> (warn: (fields: F, message: string) => void): (fields: F, message: string) => void {
  return (fields, message) => {
    try {
      warn(fields, message)
    } catch {}
  }
}
