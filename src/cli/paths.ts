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
 */
import path from 'node:path'
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
  return target.startsWith(root + path.sep) ? target : null
}

/** A local path relative to the directory walked, as a key suffix (always `/`-separated). */
export function keySuffix (relative: string): string {
  return relative.split(path.sep).join('/')
}
