/**
 * The shape of the house, checked: one engine, thin doors.
 *   - src/bucket never imports a web framework or a door;
 *   - doors (src/http, src/mgmt, src/s3) reach the engine only through
 *     src/bucket/index.ts and never import each other;
 *   - the HTTP routes never touch files (no node:fs, no src/persist);
 *   - only src/persist (and the composition root, src/cli.ts) knows node:fs,
 *     fs-extra and proper-lockfile.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

async function sources (dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { recursive: true })
  return entries.filter(name => name.endsWith('.ts')).map(name => path.join(dir, name))
}

function importsOf (text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm), ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map(m => m[1])
}

/** The import as a path from the project root, or the package name. */
function resolved (file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier
  return path.join(path.dirname(file), specifier).replace(/\.js$/, '.ts')
}

t.test('imports point one way', async t => {
  const violations: string[] = []
  for (const file of [...await sources('src/bucket'), ...await sources('src/http'), ...await sources('src/mgmt'), ...await sources('src/s3')]) {
    const text = await readFile(path.join(root, file), 'utf8')
    for (const specifier of importsOf(text)) {
      const target = resolved(file, specifier)
      const say = (rule: string): void => { violations.push(`${file} imports ${specifier}: ${rule}`) }
      if (/^(node:fs|fs|node:fs\/promises|fs-extra|proper-lockfile)$/.test(target)) say('only src/persist touches files and locks')
      if (file.startsWith('src/bucket/')) {
        if (/^(fastify|@fastify\/)/.test(target)) say('the engine never imports a web framework')
        if (/^src\/(http|mgmt|s3)\//.test(target) || /^src\/(cli|app)\.ts$/.test(target)) say('the engine never imports a door')
        continue
      }
      const door = file.split('/')[1]
      if (target.startsWith('src/bucket/') && target !== 'src/bucket/index.ts') say('doors use src/bucket/index.ts only')
      if (/^src\/(http|mgmt|s3)\//.test(target) && !target.startsWith(`src/${door}/`)) say('doors never import each other')
      if (door === 'http' && (target === 'node:fs' || target === 'node:fs/promises' || target === 'fs-extra' || target.startsWith('src/persist/'))) {
        say('the HTTP routes never touch files')
      }
    }
  }
  t.same(violations, [])
})
