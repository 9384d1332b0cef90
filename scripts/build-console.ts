/**
 * Bundles the web console (src/console/ui/) into static files in
 * dist/console/: one minified ES module and one stylesheet, named with a
 * hash of their content so the gateway can let browsers cache them for a
 * year, and index.html pointing at them (revalidated on every load). No
 * source maps and no inline code: the page runs under a CSP that admits
 * only the script and stylesheet tags carrying the nonce the server draws
 * for each answer. `npm run build` runs this after tsc.
 *
 * Nothing is rebuilt when the bundle is newer than every file it is made
 * from (src/console/ui/ and this script), so `npm start` after no change
 * costs no bundling; `--force` rebuilds anyway.
 */
import { build } from 'esbuild'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const source = path.join(root, 'src', 'console', 'ui')
const out = path.join(root, 'dist', 'console')

/** Newest modification time of the files in `dir` (not recursive: the console's sources are one folder). */
async function newestSource (): Promise<number> {
  const files = (await fsp.readdir(source)).map(name => path.join(source, name))
  files.push(fileURLToPath(import.meta.url))
  const times = await Promise.all(files.map(async file => (await fsp.stat(file)).mtimeMs))
  return Math.max(...times)
}

async function upToDate (): Promise<boolean> {
  const built = await fsp.stat(path.join(out, 'index.html')).then(s => s.mtimeMs, () => null)
  return built !== null && built > await newestSource()
}

async function main (): Promise<void> {
  if (!process.argv.includes('--force') && await upToDate()) {
    console.log('console: dist/console/ is up to date')
    return
  }
  await fsp.rm(out, { recursive: true, force: true })
  const result = await build({
    entryPoints: { console: path.join(source, 'main.ts') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    entryNames: '[name]-[hash]',
    outdir: out,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none'
  })
  const outputs = Object.keys(result.metafile.outputs).map(file => path.basename(file))
  const script = outputs.find(name => name.endsWith('.js'))
  const style = outputs.find(name => name.endsWith('.css'))
  if (script === undefined || style === undefined) throw new Error(`the console bundle is missing a script or a stylesheet: ${outputs.join(', ')}`)
  const template = await fsp.readFile(path.join(source, 'index.html'), 'utf8')
  const html = template.replace('{{script}}', script).replace('{{style}}', style)
  // {{nonce}} stays: the server fills it in for each answer (src/console/serve.ts).
  if (html.replaceAll('{{nonce}}', '').includes('{{')) throw new Error('src/console/ui/index.html has a placeholder the build does not know')
  await fsp.writeFile(path.join(out, 'index.html'), html)
  console.log(`console: dist/console/{index.html,${script},${style}}`)
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
