/**
 * Bundles what the `fsbucket` command runs (bin/fsbucket.js) into
 * dist/bundle/: the command line (`main.js`), a server's worker
 * (`worker.js`) and what `serve` runs before either (`early-fork.js`),
 * with the packages they use, in shared chunks beside them.
 * Modules loaded only by some commands or options (the S3 door, PostgreSQL's
 * client, the metrics, the signer) stay in chunks of their own, loaded when
 * asked for, as they were as modules.
 *
 * Why: Node's module loader spends more on each of the few hundred files a
 * server loads (resolving, reading, linking) than on compiling them. From
 * one chunk per entry, a one-worker server answered 35% sooner after it
 * was started here (530–580 ms against 820–930) and held 7 MiB less idle.
 * The library's own entry (`fsbucket`'s import, dist/src/index.js) stays as
 * tsc wrote it.
 *
 * Left outside: native and optional packages (libsql's binary, pg-native)
 * and those loaded by name at run time (pino-pretty, cli-progress, the
 * packages of Fastify's schema compilers). dist/bundle/meta.json says which
 * modules each output holds (the tests of what a process loads read it).
 * `npm run build` runs this after tsc.
 *
 * The chunks are minified (whitespace and syntax, not names): V8 keeps the
 * source text of every module it loads, and a worker held 3 MiB less of it.
 *
 * One rule for the code it bundles: a package of CommonJS loaded with
 * `import()` is used through its `default`, the package's `module.exports`
 * under Node and here alike; the bundle gives such an import nothing else.
 */
import { build, type Plugin } from 'esbuild'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const out = path.join(root, 'dist', 'bundle')

/**
 * Fastify requires `node:https` and `node:http2` as it loads, for the
 * servers that ask for them; loading both made a worker serving plain
 * HTTP/1.1 (fsbucket never serves HTTP/2) about 2 MiB larger. Here they
 * are objects that load the module at the first use of one of its
 * functions (Fastify only calls their `createServer`s).
 */
const lazyFastifyServers: Plugin = {
  name: 'lazy-fastify-servers',
  setup (build) {
    build.onResolve({ filter: /^node:(https|http2)$/ }, args =>
      /[\\/]node_modules[\\/]fastify[\\/]lib[\\/]server\.js$/.test(args.importer) ? { path: args.path, namespace: 'lazy-builtin' } : undefined)
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, args => ({
      contents: `let loaded; module.exports = new Proxy({}, { get: (_, name) => (loaded ??= require(${JSON.stringify(args.path)}))[name] })`,
      loader: 'js'
    }))
  }
}

async function main (): Promise<void> {
  await fsp.rm(out, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: 'dist/src/main.js', worker: 'dist/src/server/worker.js', 'early-fork': 'dist/src/server/early-fork.js' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: out,
    external: ['libsql', 'pg-native', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
    // Bundled CommonJS packages call `require` for Node's own modules: an ES module has none of its own.
    banner: { js: "import { createRequire as fsbucketRequire } from 'node:module'; const require = fsbucketRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
    // Whitespace and syntax only: names stay as written, so stack traces still name their functions.
    minifyWhitespace: true,
    minifySyntax: true,
    plugins: [lazyFastifyServers]
  })
  await fsp.writeFile(path.join(out, 'meta.json'), JSON.stringify(result.metafile))
  console.log(`bundle: dist/bundle/ (${Object.keys(result.metafile.outputs).length} files)`)
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
