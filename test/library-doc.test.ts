/**
 * The example that opens docs/library.md, as a developer copies it: it
 * type-checks under `strict` against the package's declarations, and runs
 * in a directory holding the two files it reads.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import { docsPage } from './docs.js'
import { testdir } from './testdir.js'

const entry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'index.js')

t.test('the library page\'s first example type-checks and runs', async t => {
  const page = await docsPage('library.md')
  const example = /```ts\n([^]*?)```/.exec(page)?.[1] ?? ''
  t.match(example, /from 'fsbucket'/, 'the example imports the package')
  const dir = testdir(t, { 'tom.jpg': Buffer.alloc(2048, 7), 'big.mp4': Buffer.alloc(4096, 9) })
  // The package, as this checkout builds it; `export {}` makes the file a module (the example's top-level awaits).
  const source = example.replaceAll("from 'fsbucket'", `from ${JSON.stringify(entry)}`)
  const file = path.join(dir, 'example.mts')
  writeFileSync(file, source)
  const program = ts.createProgram([file], {
    strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: ['node'], skipLibCheck: true, lib: ['lib.es2023.d.ts', 'lib.dom.d.ts']
  })
  const problems = ts.getPreEmitDiagnostics(program).map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  t.same(problems, [], 'no type error')
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
  writeFileSync(path.join(dir, 'example.mjs'), js)
  const run = spawnSync(process.execPath, ['example.mjs'], { cwd: dir, encoding: 'utf8', timeout: 30_000 })
  t.equal(run.stderr, '', 'nothing on stderr')
  t.equal(run.status, 0, 'it runs')
  t.match(run.stdout, /^"?[0-9a-f]{32}"? \{ offset: 0, length: 1024 \} image\/jpeg 1024\n1 \[\]\n$/, 'and prints what the page says it reads')
})
