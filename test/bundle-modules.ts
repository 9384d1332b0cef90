/**
 * What a process that ran the `fsbucket` command loaded, module by module:
 * the command runs from dist/bundle/ (scripts/build-bundle.ts), whose chunks
 * each stand for the modules they hold (dist/bundle/meta.json says which).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

let outputs: Map<string, string[]> | null = null

/** Output file name → the absolute paths of the modules it holds. */
function bundleOutputs (): Map<string, string[]> {
  if (outputs === null) {
    const meta = JSON.parse(readFileSync(path.join(root, 'dist', 'bundle', 'meta.json'), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> }
    outputs = new Map(Object.entries(meta.outputs).map(([file, output]) => [path.basename(file), Object.keys(output.inputs).map(input => path.resolve(root, input))]))
  }
  return outputs
}

/** `loaded` (URLs or paths, as load hooks record them) with each file of dist/bundle/ replaced by the modules it holds. */
export function modulesOf (loaded: string[]): string[] {
  return loaded.flatMap(entry => {
    const match = /\/dist\/bundle\/([^/]+\.js)$/.exec(entry)
    if (match === null) return [entry]
    const inputs = bundleOutputs().get(match[1])
    if (inputs === undefined) throw new Error(`${entry} is not in dist/bundle/meta.json`)
    return inputs
  })
}
