/**
 * `mkdir -p` that always ends. Node's `mkdir(dir, { recursive: true })`
 * loops for ever, busy in a thread of its pool, when the system answers
 * ENOENT for a directory whose parent exists (as /proc and other virtual
 * file systems do: `--data /proc/nope` spun a core and never started).
 * Here each missing directory is created on its own, top down, so every
 * system error is returned once, with the path it is about.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fsyncDirectory } from './atomic.js'

/** Makes `dir` (its parent must exist): true when made, false when it was there; any other failure is thrown. */
export async function makeOne (dir: string, mode?: number): Promise<boolean> {
  try {
    await fsp.mkdir(dir, mode === undefined ? undefined : { mode })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

/**
 * Creates `dir` and its missing parents (with `mode`); throws the system's
 * error for the first one that cannot be made. With `fsync`, each directory
 * made here is synced into its parent, so that a power cut loses none of
 * them with the files later synced inside.
 */
export async function makeDirectory (dir: string, options: { fsync?: boolean, mode?: number } = {}): Promise<void> {
  const missing: string[] = []
  let current = path.resolve(dir)
  for (;;) {
    const exists = await fsp.stat(current).then(() => true, (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false
      throw err
    })
    if (exists) break
    missing.push(current)
    const parent = path.dirname(current)
    if (parent === current) break
    current = parent
  }
  for (const directory of missing.reverse()) {
    // Made by another process meanwhile: as good as made here (and synced there).
    if (await makeOne(directory, options.mode) && options.fsync === true) await fsyncDirectory(path.dirname(directory))
  }
  // What exists but is no directory is refused as mkdir refuses it.
  if (!(await fsp.stat(dir)).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', path: dir })
}
