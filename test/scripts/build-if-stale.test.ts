/**
 * scripts/build-if-stale.js, `npm start`'s build step: the decision as a
 * table, the newest source found under the directories, and runs against a
 * checkout of a few files (one through npm, as `npm start` runs it).
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type * as BuildIfStale from '../../scripts/build-if-stale.js'
import { testdir } from '../testdir.js'

// The script is plain JavaScript beside its source, not compiled to dist/.
const scriptPath = new URL('../../../scripts/build-if-stale.js', import.meta.url)
const { buildDecision, buildIfStale, newestFile } = await import(scriptPath.href) as typeof BuildIfStale

t.test('the decision', async t => {
  const source = (mtimeMs: number): { path: string, mtimeMs: number } => ({ path: 'src/a.ts', mtimeMs })
  const cases: Array<[string, Parameters<typeof buildDecision>[0], boolean, RegExp]> = [
    ['no dist/bundle/main.js', { newest: source(1), stampMs: 5, entryExists: false }, true, /main\.js is missing/],
    ['never built by the script', { newest: source(1), stampMs: null, entryExists: true }, true, /no dist\/\.build-stamp/],
    ['a source newer than the stamp', { newest: source(6), stampMs: 5, entryExists: true }, true, /src\/a\.ts changed/],
    ['every source older', { newest: source(4), stampMs: 5, entryExists: true }, false, /no source changed/],
    ['a source as old as the stamp', { newest: source(5), stampMs: 5, entryExists: true }, false, /no source changed/],
    ['no source at all', { newest: null, stampMs: 5, entryExists: true }, false, /no source changed/]
  ]
  for (const [name, state, needed, reason] of cases) {
    const decision = buildDecision(state)
    t.equal(decision.needed, needed, name)
    t.match(decision.reason, reason, name)
  }
})

/** A checkout of a few files: a source under src/, one under scripts/, tsconfig.json, package.json. */
function checkout (t: Test): string {
  return testdir(t, {
    src: { 'a.ts': 'a', console: { ui: { 'page.ts': 'p' } } },
    scripts: { 'b.ts': 'b' },
    'tsconfig.json': '{}',
    'package.json': '{}',
    test: { 'c.test.ts': 'c' }
  })
}

function age (file: string, secondsAgo: number): void {
  const when = new Date(Date.now() - secondsAgo * 1000)
  utimesSync(file, when, when)
}

t.test('the newest file under the sources, the console\'s included', async t => {
  const base = checkout(t)
  for (const file of ['src/a.ts', 'src/console/ui/page.ts', 'scripts/b.ts', 'tsconfig.json', 'package.json', 'test/c.test.ts']) age(path.join(base, file), 100)
  age(path.join(base, 'src/console/ui/page.ts'), 10)
  t.equal(newestFile(base, ['src', 'scripts', 'tsconfig.json', 'package.json'])?.path, path.join('src', 'console', 'ui', 'page.ts'))
  t.equal(newestFile(base, ['missing']), null)
})

t.test('built when a source changed, skipped after a build, built again when one is touched', async t => {
  const base = checkout(t)
  for (const file of ['src/a.ts', 'src/console/ui/page.ts', 'scripts/b.ts', 'tsconfig.json', 'package.json']) age(path.join(base, file), 20)
  let builds = 0
  const build = (): boolean => {
    builds++
    mkdirSync(path.join(base, 'dist/bundle'), { recursive: true })
    writeFileSync(path.join(base, 'dist/bundle/main.js'), '')
    return true
  }
  const log = (): void => {}
  t.match(buildIfStale(base, { build, log }), { needed: true, built: true }, 'first start: no build yet')
  t.match(buildIfStale(base, { build, log }), { needed: false, built: false }, 'nothing changed: skipped')
  t.equal(builds, 1)
  // The build as if ten seconds ago, then a source saved now.
  age(path.join(base, 'dist/.build-stamp'), 10)
  writeFileSync(path.join(base, 'tsconfig.json'), '{"compilerOptions":{}}')
  // Saved five seconds ago: after that build, and clearly before the next one's stamp
  // (a source as old as the stamp counts as changed, and both may fall in one clock tick).
  age(path.join(base, 'tsconfig.json'), 5)
  t.match(buildIfStale(base, { build, log }), { needed: true, built: true, reason: /tsconfig\.json changed/ }, 'a source touched: built')
  t.match(buildIfStale(base, { build, log }), { needed: false }, 'and skipped again')
  t.match(buildIfStale(base, { build, log, force: true }), { needed: true, built: true }, '--force builds anyway')
  t.equal(builds, 3)

  const failing = checkout(t)
  t.match(buildIfStale(failing, { build: () => false, log }), { needed: true, built: false }, 'a failed build')
  t.notOk(existsSync(path.join(failing, 'dist/.build-stamp')), 'writes no stamp')
})

t.test('run as npm start runs it: through npm, the build once, then skipped', async t => {
  const base = checkout(t)
  mkdirSync(path.join(base, 'scripts'), { recursive: true })
  copyFileSync(scriptPath, path.join(base, 'scripts/build-if-stale.js'))
  // The checkout's build writes the entry point and counts its runs.
  writeFileSync(path.join(base, 'package.json'), JSON.stringify({
    type: 'module',
    scripts: { build: 'node -e "const fs=require(\'fs\');fs.mkdirSync(\'dist/bundle\',{recursive:true});fs.writeFileSync(\'dist/bundle/main.js\',\'\');fs.appendFileSync(\'builds\',\'x\')"' }
  }))
  const run = (): string => execFileSync(process.execPath, ['scripts/build-if-stale.js'], { cwd: base, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  run()
  t.equal(readFileSync(path.join(base, 'builds'), 'utf8'), 'x', 'built once')
  run()
  t.equal(readFileSync(path.join(base, 'builds'), 'utf8'), 'x', 'not again')
  age(path.join(base, 'dist/.build-stamp'), 10)
  writeFileSync(path.join(base, 'src/a.ts'), 'a2')
  run()
  t.equal(readFileSync(path.join(base, 'builds'), 'utf8'), 'xx', 'a source touched: built again')
})
