/**
 * The local side of recursive copies and mirrors: the regular files under a
 * directory (symbolic links followed to what they name, as `cp -r` and
 * `aws s3 cp --recursive` do; sockets, pipes and devices skipped), and the
 * etag a stored object of the same bytes would have.
 *
 * An etag is the MD5 of the bytes, or for an object completed from N parts,
 * the MD5 of the parts' MD5s followed by `-N`. The part size of such an
 * object is not recorded, so `matchesEtag` tries the sizes that give N parts
 * and that an uploader would pick (ours, the common 5/8/16/64/100 MiB, and
 * size/N rounded up to a MiB), hashing the file once for all of them.
 */
import { createHash, type Hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
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

const MiB = 1024 * 1024

/** Does the file of `size` bytes at `file` hold the bytes of an object whose etag is `etag`? */
export async function matchesEtag (file: string, size: number, etag: string, partSize: number): Promise<boolean> {
  const multipart = /^([0-9a-f]{32})-(\d+)$/.exec(etag)
  if (multipart === null) {
    const hash = createHash('md5')
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
    return hash.digest('hex') === etag
  }
  const parts = Number(multipart[2])
  const perPart = Math.ceil(size / parts)
  const candidates = [...new Set([partSize, 5 * MiB, 8 * MiB, 16 * MiB, 64 * MiB, 100 * MiB, Math.ceil(perPart / MiB) * MiB, perPart])]
    .filter(p => p > 0 && Math.ceil(size / p) === parts)
  if (candidates.length === 0) return false
  const states = candidates.map(p => ({ partSize: p, filled: 0, part: createHash('md5') as Hash, digests: [] as Buffer[] }))
  for await (const chunk of createReadStream(file)) {
    for (const state of states) {
      let rest = chunk as Buffer
      while (rest.length > 0) {
        const take = Math.min(rest.length, state.partSize - state.filled)
        state.part.update(rest.subarray(0, take))
        state.filled += take
        rest = rest.subarray(take)
        if (state.filled === state.partSize) {
          state.digests.push(state.part.digest())
          state.part = createHash('md5')
          state.filled = 0
        }
      }
    }
  }
  return states.some(state => {
    const digests = state.filled > 0 ? [...state.digests, state.part.digest()] : state.digests
    return digests.length === parts && `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${parts}` === etag
  })
}
