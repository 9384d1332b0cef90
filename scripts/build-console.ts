/**
 * Bundles the web console (src/console/ui/) into static files in
 * dist/console/: one minified ES module and one stylesheet, named with a
 * hash of their content so the gateway can let browsers cache them for a
 * year, and index.html pointing at them (revalidated on every load). No
 * source maps and no inline code: the page runs under a CSP that admits
 * only the script and stylesheet tags carrying the nonce the server draws
 * for each answer. `npm run build` runs this after tsc.
 */
import { build } from 'esbuild'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const source = path.join(root, 'src', 'console', 'ui')
const out = path.join(root, 'dist', 'console')

async function main (): Promise<void> {
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
