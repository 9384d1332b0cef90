/**
 * Paths inside fsbucket's package (its package.json, the console's built
 * files), found from where the code runs: dist/src/ as tsc writes it (what
 * the library's users import) or dist/bundle/ (what the `fsbucket` command
 * runs, scripts/build-bundle.ts), which sit at different depths.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

let root: string | null = null

/** `segments` joined to the package's directory: the nearest one above this module holding a package.json. */
export function packagePath (...segments: string[]): string {
  if (root === null) {
    let dir = path.dirname(fileURLToPath(import.meta.url))
    while (!existsSync(path.join(dir, 'package.json'))) {
      const parent = path.dirname(dir)
      if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`)
      dir = parent
    }
    root = dir
  }
  return path.join(root, ...segments)
}
