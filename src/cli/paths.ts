/**
 * Locations on the command line: `fsb://<bucket>/<key or prefix>` names a
 * bucket, a key or a prefix; `-` is standard input or output; anything else
 * is a local path.
 *
 * Keys are opaque to the store, but a key copied down to a directory becomes a
 * path there: `localPathFor` refuses any key whose relative part could
 * reach outside the destination (`..`, `.`, empty segments, NUL, a leading
 * `/`), so a hostile or odd key is skipped with an error rather than written
 * somewhere else.
 *
 * A listing under a prefix matches keys by their NFC form but shows each in
 * the form it was last written in (as R2 does), so a key listed under
 * `résumé/` may be spelled `re\u0301sume\u0301/...`: `keyUnderPrefix` finds
 * where the prefix ends in it by comparing NFC forms, never by length.
 */
import path from 'node:path'
import { keptForm } from '../bucket/index.js'
import { CliError } from './errors.js'

export const scheme = 'fsb://'

export type Location =
  | { kind: 'remote', bucket: string, key: string }
  | { kind: 'local', path: string }
  | { kind: 'stdio' }

export function isRemote (arg: string): boolean {
  return arg.startsWith(scheme)
}

/** Parses one command-line location; the bucket of a remote one must be present. */
export function parseLocation (arg: string): Location {
  if (arg === '-') return { kind: 'stdio' }
  if (!isRemote(arg)) {
    if (arg === '') throw new CliError('an empty path is not a location')
    return { kind: 'local', path: arg }
  }
  const rest = arg.slice(scheme.length)
  const slash = rest.indexOf('/')
  const bucket = slash === -1 ? rest : rest.slice(0, slash)
  const key = slash === -1 ? '' : rest.slice(slash + 1)
  if (bucket === '') throw new CliError(`${arg}: no bucket named (write fsb://<bucket>/<key>)`)
  return { kind: 'remote', bucket, key }
}

export function remoteUrl (bucket: string, key = ''): string {
  return key === '' ? `${scheme}${bucket}` : `${scheme}${bucket}/${key}`
}

/** A prefix treated as a directory: `photos` and `photos/` both mean the keys under `photos/`. */
export function directoryPrefix (prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`
}

/**
 * The part of a listed key after `prefix` (what a copy names it under its
 * destination, what `ls` shows), keys and prefixes compared in NFC. The
 * part keeps the key's own spelling: the shortest start of the key whose
 * NFC form is the prefix's is cut off. A key with no such start (its NFC
 * form begins with the prefix's in the middle of a composed character) gives
 * the rest of its NFC form; one the prefix does not cover is kept whole.
 */
export function keyUnderPrefix (prefix: string, key: string): string {
  if (key.startsWith(prefix) && keptForm(prefix) === prefix) return key.slice(prefix.length)
  const kept = keptForm(prefix)
  for (let end = 0; end <= key.length; end++) {
    const start = keptForm(key.slice(0, end))
    if (start === kept) return key.slice(end)
    // A start's NFC form grows with it (a mark composes into the character before, never away): past the prefix's, none will match.
    if (start.length > kept.length + 1) break
  }
  const whole = keptForm(key)
  return whole.startsWith(kept) ? whole.slice(kept.length) : key
}

/** An empty object whose key ends in `/`: the folder some tools make; a download has nothing to write for it. */
export function isFolderMarker (object: { key: string, size: number }): boolean {
  return object.key.endsWith('/') && object.size === 0
}

/** The last segment of a key (what a copy to a directory names the file). */
export function keyBaseName (key: string): string {
  const trimmed = key.endsWith('/') ? key.slice(0, -1) : key
  return trimmed.slice(trimmed.lastIndexOf('/') + 1)
}

/**
 * The path under `dir` where the key's relative part `relative` is written,
 * or null when that part could not be a path inside `dir`.
 */
export function localPathFor (dir: string, relative: string): string | null {
  if (relative === '' || relative.startsWith('/') || relative.includes('\0')) return null
  const segments = relative.split('/')
  if (segments.some(s => s === '' || s === '.' || s === '..' || (path.sep === '\\' && s.includes('\\')))) return null
  const target = path.resolve(dir, ...segments)
  const root = path.resolve(dir)
  // A root directory (`/`, `C:\`) ends with its separator already: another would make `//`, which no path starts with.
  return target.startsWith(root.endsWith(path.sep) ? root : root + path.sep) ? target : null
}

/** A local path relative to the directory walked, as a key suffix (always `/`-separated). */
export function keySuffix (relative: string): string {
  return relative.split(path.sep).join('/')
}
