/**
 * Checking the options of the library's entry points: `openBucket`,
 * `openRegistry` and `openMemoryRegistry` (open.ts) and `startServer`
 * (embed.ts). They are called by code, not typed on a command line, so a
 * mistake is a programming error: it is refused before anything opens, with
 * Node's string codes (docs/errors.md), the function named first.
 *
 * - A key the function does not know is refused (`ERR_INVALID_ARG_VALUE`),
 *   naming the one meant when only its case or a typo or two differ: a
 *   misspelt `fsnyc: false` or `datadir` would otherwise leave the default
 *   silently in place.
 * - A value of the wrong type is `ERR_INVALID_ARG_TYPE`; an empty string is
 *   `ERR_INVALID_ARG_VALUE` unless the option gives it a meaning.
 * - `undefined` options, and an option set to `undefined`, count as left
 *   out (a caller passing its own optional settings through).
 *
 * A value of the right type outside its range is the caller's to judge
 * (`OptionError`, or `OptionRangeError` where the library has promised a
 * RangeError: a number Node's timers cannot keep, docs/library.md).
 */

export type OptionErrorCode = 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE'

/**
 * A refused option or path: a TypeError with Node's code for it
 * (`ERR_INVALID_ARG_TYPE` for a value of the wrong type,
 * `ERR_INVALID_ARG_VALUE` for any other), so a caller can tell it from a
 * failure to open or to start without reading the message.
 */
export class OptionError extends TypeError {
  readonly code: OptionErrorCode
  constructor (method: string, message: string, code: OptionErrorCode = 'ERR_INVALID_ARG_VALUE') {
    super(`${method}: ${message}`)
    this.code = code
  }
}

/** A number outside its range, for the options the library documents as a RangeError (as Node's own `ERR_INVALID_ARG_VALUE` may be). */
export class OptionRangeError extends RangeError {
  readonly code = 'ERR_INVALID_ARG_VALUE'
  constructor (method: string, message: string) {
    super(`${method}: ${message}`)
  }
}

/**
 * Refuses a number option that is given and does not `fit`: `must` says what
 * it must be. A RangeError (OptionRangeError) unless the function has
 * promised a TypeError for every refusal (`startServer`: OptionError).
 */
export function checkNumber (
  method: string, name: string, value: number | undefined, fits: (value: number) => boolean, must: string,
  Refusal: typeof OptionError | typeof OptionRangeError = OptionRangeError
): void {
  if (value !== undefined && !fits(value)) throw new Refusal(method, `${name} must be ${must} (got ${String(value)})`)
}

/** What an option's value must be: its `typeof` (never null). */
export type OptionType = 'string' | 'boolean' | 'number' | 'object' | 'function'

/** A value as a message shows it: its type, and the value itself where it is short and no secret of a structure. */
export function shown (value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`
  if (Buffer.isBuffer(value)) return 'a Buffer'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'function') return 'a function'
  return `${typeof value} ${String(value)}`
}

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, case ignored: how far a typo is from a key. */
function editDistance (a: string, b: string): number {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  const rows = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => i === 0 ? j : j === 0 ? i : 0))
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[x.length][y.length]
}

/** The known key a misspelt one most likely meant: the same but for case, else the nearest within a typo or two (one for short keys); none when two are as near. */
export function meantKey (key: string, known: readonly string[]): string | undefined {
  const sameCase = known.find(k => k.toLowerCase() === key.toLowerCase())
  if (sameCase !== undefined) return sameCase
  const most = key.length <= 4 ? 1 : 2
  const near = known.map(k => ({ k, d: editDistance(key, k) })).filter(c => c.d <= most).sort((a, b) => a.d - b.d)
  return near.length === 0 || (near.length > 1 && near[1].d === near[0].d) ? undefined : near[0].k
}

/** An unknown key, naming the one meant (`meantKey`), else the known ones; `where` prefixes a nested option's (`tls.`). */
export function unknownKey (method: string, key: string, known: readonly string[], where = ''): OptionError {
  const meant = meantKey(key, known)
  return new OptionError(method, `unknown option ${where}${key}${meant === undefined ? ` (known: ${known.join(', ')})` : ` (did you mean ${where}${meant}?)`}`)
}

/** Option names whose values are secrets or may hold one (`tls` given as a PEM string instead of `{ cert, key }`: its private key). */
const secretKey = /token|secret|catalog|password|tls|key/i

/**
 * The options of `method` as given, each known and of its type: `types`
 * lists every option (a key not in it is refused), `emptyAllowed` the
 * string options an empty string means something for. `undefined` is no
 * options at all.
 */

export function checkOptions<T extends object> (method: string, options: unknown, types: Readonly<Record<keyof T & string, OptionType>>, emptyAllowed: readonly string[] = []): T {
  if (options === undefined) return {} as T // no options: every one left out
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionError(method, `options must be an object (got ${shown(options)})`, 'ERR_INVALID_ARG_TYPE')
  }
  const known = Object.keys(types)
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(types, key)) throw unknownKey(method, key, known)
    if (value === undefined) continue
    const type = types[key as keyof T & string]
    if (typeof value !== type || value === null) {
      // A secret (a token, a key, a catalog URL's password) is named by its type alone: errors reach logs.
      const got = secretKey.test(key) ? (value === null ? 'null' : typeof value) : shown(value)
      throw new OptionError(method, `${key} must be a${type === 'object' ? 'n' : ''} ${type} (got ${got})`, 'ERR_INVALID_ARG_TYPE')
    }
    if (value === '' && !emptyAllowed.includes(key)) throw new OptionError(method, `${key} must not be empty`)
  }
  return options as T
}
