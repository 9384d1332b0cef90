/**
 * The shape of the house, checked: one engine, thin doors, stores behind a port.
 *   - src/bucket is the ground: it imports nothing else of the project, no
 *     web framework, no HTTP or socket module, no file system;
 *   - outside src/bucket, only src/bucket/index.ts (doors, roots) and
 *     src/bucket/port.ts (stores, roots) are imported;
 *   - doors (src/http, src/mgmt, src/s3, src/cli, src/console) never import
 *     a store or each other, nor touch files; what several doors share (the
 *     request log line) is in src/doors, which imports only the engine's
 *     surface and packages, never a door, a store, a root or a file; one exception: the command
 *     door's src/cli/local-files.ts reads and writes the user's own files
 *     (what cp and mirror upload and download), never a store's;
 *   - stores (src/stores/<name>) import only the port of the engine, and
 *     never a door or another store (but the PostgreSQL store keeps its
 *     bodies with the filesystem store's body-file modules, and marks the
 *     data directory as its own with catalog-mark.ts, and moves deleted
 *     buckets' directories with deleted-buckets.ts); modules
 *     directly in src/stores/ (rows.ts) are shared by every store and
 *     import only the port;
 *   - only the composition roots (src/index.ts, src/app.ts, src/main.ts,
 *     src/server/) wire stores to doors;
 *   - no import cycles, no source file over 500 lines.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

const MAX_LINES = 500
const fileSystem = /^(node:fs|fs|node:fs\/promises|fs\/promises|fs-extra|proper-lockfile|libsql|node:sqlite)$/
const doors = ['http', 'mgmt', 's3', 'cli', 'console']
const roots = new Set(['src/index.ts', 'src/app.ts', 'src/main.ts'])
/** The filesystem store's body-file modules, which the PostgreSQL store shares, and the mark that fences the two on one data directory. */
const bodyFiles = new Set(['src/stores/fs/blobs.ts', 'src/stores/fs/atomic.ts', 'src/stores/fs/readers.ts', 'src/stores/fs/catalog-mark.ts', 'src/stores/fs/deleted-buckets.ts'])
/** Door modules that may touch files that are never a store's: the user's own files (CLI) and the console's built assets. */
const userFiles = new Set(['src/cli/local-files.ts', 'src/console/serve.ts'])

async function sources (dir: string): Promise<string[]> {
  try {
    const entries = await readdir(path.join(root, dir), { recursive: true })
    return entries.filter(name => name.endsWith('.ts') && !name.endsWith('.d.ts')).map(name => path.join(dir, name))
  } catch {
    return []
  }
}

export function importsOf (text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm), ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map(m => m[1])
}

/** The import as a path from the project root, or the package name. */
function resolved (file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier
  return path.join(path.dirname(file), specifier).replace(/\.js$/, '.ts')
}

/** The layer of a source file: 'engine', 'door:<name>', 'store:<name>', 'root', or 'other'. */
export function layerOf (file: string): string {
  if (file.startsWith('src/bucket/')) return 'engine'
  if (roots.has(file) || file.startsWith('src/server/')) return 'root'
  const [, top, second] = file.split('/')
  if (top === 'doors') return 'doors-shared'
  if (top === 'stores' && second?.endsWith('.ts') === true) return 'stores-shared'
  if (top === 'stores' && second !== undefined) return `store:${second}`
  if (doors.includes(top)) return `door:${top}`
  return 'other'
}

/** What is wrong with `file` importing `specifier`, or null. */
export function violation (file: string, specifier: string): string | null {
  const target = resolved(file, specifier)
  const from = layerOf(file)
  const to = target.startsWith('src/') ? layerOf(target) : 'package'
  if (from === 'engine') {
    if (target.startsWith('src/') && to !== 'engine') return 'the engine imports nothing else of the project'
    if (fileSystem.test(target)) return 'the engine never touches files'
    if (/^(fastify|@fastify\/)/.test(target)) return 'the engine never imports a web framework'
    if (/^(node:)?(http|https|http2|net|tls)$/.test(target)) return 'the engine knows no HTTP: what reads requests or writes answers is the doors\' (src/doors)'
    return null
  }
  if (from === 'stores-shared') {
    if (target.startsWith('src/') && target !== 'src/bucket/port.ts') return 'a module shared by the stores imports the port only'
    if (fileSystem.test(target)) return 'a module shared by the stores never touches files'
    return null
  }
  if (from === 'doors-shared') {
    if (target.startsWith('src/') && to !== 'doors-shared' && target !== 'src/bucket/index.ts') return 'a module shared by the doors imports the engine\'s surface only'
    if (fileSystem.test(target)) return 'a module shared by the doors never touches files'
    return null
  }
  if (to === 'engine' && from !== 'root' && !from.startsWith('store:') && target !== 'src/bucket/index.ts') {
    return 'doors use src/bucket/index.ts only'
  }
  if (from.startsWith('store:')) {
    if (to === 'engine' && target !== 'src/bucket/port.ts' && target !== 'src/bucket/index.ts') return 'stores use src/bucket/port.ts only'
    if (to.startsWith('door:') || to === 'doors-shared') return 'a store never imports a door'
    if (to === 'stores-shared') return null
    if (from === 'store:pg' && bodyFiles.has(target)) return null
    if (to.startsWith('store:') && to !== from) return 'a store never imports another store'
    if (to === 'root') return 'a store never imports a composition root'
    return null
  }
  if (from.startsWith('door:')) {
    if (to.startsWith('store:') || to === 'stores-shared') return 'a door never imports a store'
    if (to === 'doors-shared') return null
    if (to.startsWith('door:') && to !== from) return 'doors never import each other'
    if (to === 'root') return 'a door never imports a composition root'
    if (fileSystem.test(target) && !(userFiles.has(file) && /^node:fs/.test(target))) return 'doors never touch files'
  }
  return null
}

t.test('the rules themselves', async t => {
  t.equal(violation('src/bucket/bucket.ts', './keys.js'), null)
  t.not(violation('src/bucket/registry.ts', '../stores/fs/atomic.js'), null, 'the engine reaching a store')
  t.not(violation('src/bucket/open.ts', 'node:fs'), null, 'the engine touching files')
  t.not(violation('src/bucket/x.ts', 'fastify'), null)
  t.not(violation('src/bucket/x.ts', 'node:http'), null, 'the engine reading requests')
  t.equal(violation('src/doors/bare-answer.ts', 'node:http'), null, 'what the doors share may')
  t.not(violation('src/bucket/x.ts', '../http/routes.js'), null, 'the engine importing a door')
  t.equal(violation('src/http/read.ts', '../bucket/index.js'), null)
  t.not(violation('src/http/read.ts', '../bucket/range.js'), null, 'a door past the surface')
  t.not(violation('src/http/read.ts', '../bucket/port.js'), null, 'a door on the port')
  t.not(violation('src/mgmt/store.ts', '../stores/fs/json-directory.js'), null, 'a door importing a store')
  t.not(violation('src/s3/routes.ts', '../http/errors.js'), null, 'doors importing each other')
  t.not(violation('src/cli/objects.ts', '../stores/fs/store.js'), null, 'the future command door importing a store')
  t.not(violation('src/http/x.ts', 'node:fs/promises'), null, 'a door touching files')
  t.equal(violation('src/cli/local-files.ts', 'node:fs/promises'), null, 'the command door on the user\'s files')
  t.not(violation('src/cli/local-files.ts', 'libsql'), null, 'but not on a store\'s')
  t.not(violation('src/bucket/x.ts', 'node:sqlite'), null, 'the engine opening a catalog')
  t.not(violation('src/cli/cp.ts', 'node:fs'), null, 'and only in that module')
  t.equal(violation('src/stores/fs/store.ts', '../../bucket/port.js'), null)
  t.equal(violation('src/stores/fs/store.ts', './catalog.js'), null)
  t.not(violation('src/stores/fs/store.ts', '../../bucket/bucket.js'), null, 'a store past the port')
  t.not(violation('src/stores/memory/store.ts', '../fs/blobs.js'), null, 'a store importing another')
  t.equal(violation('src/stores/pg/store.ts', '../fs/blobs.js'), null, 'the PostgreSQL store shares the body files')
  t.not(violation('src/stores/pg/store.ts', '../fs/catalog.js'), null, 'but not the SQLite catalog')
  t.not(violation('src/stores/fs/x.ts', '../../http/errors.js'), null, 'a store importing a door')
  t.equal(violation('src/stores/fs/catalog.ts', '../rows.js'), null, 'a store importing a module shared by the stores')
  t.equal(violation('src/stores/pg/rows.ts', '../rows.js'), null)
  t.equal(violation('src/stores/rows.ts', '../bucket/port.js'), null, 'the shared module on the port')
  t.not(violation('src/stores/rows.ts', './fs/catalog.js'), null, 'the shared module importing a store')
  t.not(violation('src/stores/rows.ts', '../bucket/index.js'), null, 'the shared module past the port')
  t.not(violation('src/stores/rows.ts', 'node:fs'), null, 'the shared module touching files')
  t.not(violation('src/http/routes.ts', '../stores/rows.js'), null, 'a door importing the stores\' shared module')
  t.equal(violation('src/s3/app.ts', '../doors/request-log.js'), null, 'a door importing what the doors share')
  t.equal(violation('src/doors/request-log.ts', 'fastify'), null)
  t.not(violation('src/doors/request-log.ts', '../http/routes.js'), null, 'the doors\' shared module importing a door')
  t.not(violation('src/doors/request-log.ts', '../stores/fs/store.js'), null, 'or a store')
  t.not(violation('src/doors/request-log.ts', '../bucket/range.js'), null, 'or past the engine\'s surface')
  t.not(violation('src/doors/request-log.ts', 'node:fs'), null, 'or touching files')
  t.not(violation('src/stores/fs/store.ts', '../../doors/request-log.js'), null, 'a store importing it')
  t.equal(violation('src/index.ts', './stores/fs/store.js'), null, 'roots wire stores')
  t.equal(violation('src/app.ts', './http/routes.js'), null)
})

t.test('imports point one way', async t => {
  const violations: string[] = []
  for (const file of await sources('src')) {
    const text = await readFile(path.join(root, file), 'utf8')
    for (const specifier of importsOf(text)) {
      const rule = violation(file, specifier)
      if (rule !== null) violations.push(`${file} imports ${specifier}: ${rule}`)
    }
  }
  t.same(violations, [])
})

t.test('no import cycles', async t => {
  const graph = new Map<string, string[]>()
  for (const file of await sources('src')) {
    const text = await readFile(path.join(root, file), 'utf8')
    graph.set(file, importsOf(text).filter(s => s.startsWith('.')).map(s => resolved(file, s)))
  }
  const cycles: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'visiting') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '))
      return
    }
    state.set(file, 'visiting')
    for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...trail, file])
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file, [])
  t.same(cycles, [])
})

t.test(`no source file over ${MAX_LINES} lines`, async t => {
  const long: string[] = []
  for (const file of await sources('src')) {
    const lines = (await readFile(path.join(root, file), 'utf8')).split('\n').length
    if (lines > MAX_LINES) long.push(`${file}: ${lines} lines`)
  }
  t.same(long, [])
})

t.test('each module opens with a comment saying what it owns', async t => {
  const silent: string[] = []
  for (const file of await sources('src')) {
    const text = await readFile(path.join(root, file), 'utf8')
    if (!/^\s*(\/\*\*|\/\/)/.test(text)) silent.push(file)
  }
  t.same(silent, [])
})
