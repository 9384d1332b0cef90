/**
 * Lets tap be given a test's source, `npx tap test/s3/sigv4.test.ts`, by
 * running its compiled file, dist/test/s3/sigv4.test.js, instead
 * (package.json's `tap.node-arg` imports this module into every test
 * process).
 *
 * The tests run compiled, like the package, so tap's TypeScript plugin is
 * off, and Node alone cannot load a `.ts` file (ERR_UNKNOWN_FILE_EXTENSION).
 * A resolve hook maps a `.ts` file of this checkout's test/ to its
 * counterpart in dist/: its imports are then resolved from dist/ too. It
 * does not build: a missing compiled file is an error that says to run
 * `npm run build`, and one older than its source is run with a warning
 * (tsc rewrites only what changed, so a source saved unchanged stays newer).
 * Plain JavaScript, so that it works whatever dist/ holds.
 */
import { existsSync, statSync } from 'node:fs'
import { register } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isMainThread } from 'node:worker_threads'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const tests = path.join(root, 'test') + path.sep

/**
 * The compiled file a test's source runs as, or null for any other file.
 *
 * @param {string} file an absolute path
 * @returns {string | null}
 */
export function compiledTest (file) {
  if (!file.startsWith(tests) || !/\.[cm]?ts$/.test(file) || file.endsWith('.d.ts')) return null
  return path.join(root, 'dist', path.relative(root, file)).replace(/\.([cm]?)ts$/, '.$1js')
}

/** @type {import('node:module').ResolveHook} */
export async function resolve (specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  if (!resolved.url.startsWith('file:')) return resolved
  const source = fileURLToPath(resolved.url)
  const compiled = compiledTest(source)
  if (compiled === null) return resolved
  const shown = path.relative(root, compiled)
  if (!existsSync(compiled)) throw new Error(`${shown} does not exist: run \`npm run build\` first (the tests run compiled, from dist/)`)
  if (statSync(compiled).mtimeMs < statSync(source).mtimeMs) {
    process.stderr.write(`warning: ${shown} is older than ${path.relative(root, source)}; run \`npm run build\` if you changed it\n`)
  }
  return { url: pathToFileURL(compiled).href, format: 'module', shortCircuit: true }
}

// Imported by `--import` on the main thread: registers this module's hook, which Node loads again on its hooks thread.
if (isMainThread) register(import.meta.url)
