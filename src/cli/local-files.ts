/**
 * The local side of recursive copies and mirrors: the regular files under a
 * directory (symbolic links followed to what they name, as `cp -r` and
 * `aws s3 cp --recursive` do; sockets, pipes and devices skipped).
 */
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { keySuffix } from './paths.js'

export interface LocalFile {
  path: string
  /** `/`-separated path under the directory walked. */
  relative: string
  size: number
}

/** Regular files under `root`, depth first, each directory's entries in name order. */
export async function * walkFiles (root: string, relative = ''): AsyncGenerator<LocalFile> {
  const dir = path.join(root, relative)
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  for (const entry of entries) {
    const child = path.join(relative, entry.name)
    const full = path.join(root, child)
    let isFile = entry.isFile()
    let isDirectory = entry.isDirectory()
    let size = -1
    if (entry.isSymbolicLink() || isFile) {
      const info = await stat(full).catch(() => null) // a dangling link is skipped
      if (info === null) continue
      isFile = info.isFile()
      isDirectory = info.isDirectory()
      size = info.size
    }
    if (isDirectory) yield * walkFiles(root, child)
    else if (isFile) yield { path: full, relative: keySuffix(child), size }
  }
}
