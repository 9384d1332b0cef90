/**
 * `npm start`'s build step: runs `npm run build` only when a source is newer
 * than the last build this script ran (`node scripts/build-if-stale.js`;
 * `--force` builds anyway).
 *
 * Plain JavaScript, not TypeScript compiled to dist/: it has to run before
 * dist/ exists. The sources are what `npm start` runs from dist/: src/
 * (the console's browser code included), scripts/, tsconfig.json and
 * package.json; the tests are left out (`npm test` builds them itself). The
 * stamp, dist/.build-stamp, is written after a build that succeeded, with
 * the time the build started, so a file saved while it ran is seen as newer
 * next time. A build run by hand (`npm run build`) does not write it: the
 * next `npm start` builds once more, which costs little because tsc and the
 * console's bundling skip what has not changed.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** What the decision is made on: the newest source, and the build's stamp and entry point. */
export const sourcePaths = ['src', 'scripts', 'tsconfig.json', 'package.json']
export const stampPath = 'dist/.build-stamp'
export const entryPath = 'dist/bundle/main.js'

/**
 * Whether a build is needed, and why.
 *
 * @param {{ newest: { path: string, mtimeMs: number } | null, stampMs: number | null, entryExists: boolean }} state
 * @returns {{ needed: boolean, reason: string }}
 */
export function buildDecision ({ newest, stampMs, entryExists }) {
  if (!entryExists) return { needed: true, reason: `${entryPath} is missing` }
  if (stampMs === null) return { needed: true, reason: `no ${stampPath}: no build by this script yet` }
  if (newest !== null && newest.mtimeMs > stampMs) return { needed: true, reason: `${newest.path} changed since the last build` }
  return { needed: false, reason: 'no source changed since the last build' }
}

/**
 * The most recently modified file under `paths` (files or directories,
 * relative to `base`), or null when there is none.
 *
 * @param {string} base
 * @param {string[]} paths
 * @returns {{ path: string, mtimeMs: number } | null}
 */
export function newestFile (base, paths) {
  /** @type {{ path: string, mtimeMs: number } | null} */
  let newest = null
  const visit = (/** @type {string} */ relative) => {
    const full = path.join(base, relative)
    let stat
    try {
      stat = statSync(full)
    } catch {
      return
    }
    if (stat.isDirectory()) {
      for (const name of readdirSync(full)) visit(path.join(relative, name))
    } else if (newest === null || stat.mtimeMs > newest.mtimeMs) {
      newest = { path: relative, mtimeMs: stat.mtimeMs }
    }
  }
  for (const relative of paths) visit(relative)
  return newest
}

/**
 * Decides for the checkout at `base` and builds when needed.
 *
 * @param {string} base
 * @param {{ force?: boolean, build?: () => boolean, log?: (line: string) => void }} [options]
 * @returns {{ needed: boolean, reason: string, built: boolean }}
 */
export function buildIfStale (base, options = {}) {
  const log = options.log ?? (line => { console.error(line) })
  const stamp = path.join(base, stampPath)
  const decision = options.force === true
    ? { needed: true, reason: '--force' }
    : buildDecision({
      newest: newestFile(base, sourcePaths),
      stampMs: existsSync(stamp) ? statSync(stamp).mtimeMs : null,
      entryExists: existsSync(path.join(base, entryPath))
    })
  if (!decision.needed) {
    log(`build: skipped, ${decision.reason}`)
    return { ...decision, built: false }
  }
  log(`build: ${decision.reason}`)
  const started = new Date()
  const build = options.build ?? (() => spawnSync('npm', ['run', 'build'], { cwd: base, stdio: 'inherit' }).status === 0)
  if (!build()) return { ...decision, built: false }
  writeFileSync(stamp, `${started.toISOString()}\n`)
  utimesSync(stamp, started, started)
  return { ...decision, built: true }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { needed, built } = buildIfStale(root, { force: process.argv.includes('--force') })
  if (needed && !built) process.exitCode = 1
}
