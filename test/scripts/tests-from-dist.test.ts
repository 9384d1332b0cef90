/**
 * scripts/tests-from-dist.js, which lets tap be given a test's source
 * (`npx tap test/x.test.ts`): which files it maps, and a real run of this
 * very file given by its `.ts` path.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type * as TestsFromDist from '../../scripts/tests-from-dist.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const hook = path.join(root, 'scripts/tests-from-dist.js')

if (process.env.FSBUCKET_FROM_DIST_CHILD === '1') {
  // Run by the last test below, through the hook: this is the compiled file, not the source.
  t.match(fileURLToPath(import.meta.url), path.join(root, 'dist/test/scripts/tests-from-dist.test.js'), 'running from dist/')
} else {
  // Imported in this thread for its pure function; its hook is registered only by `--import`, in the children.
  const { compiledTest } = await import(hook) as typeof TestsFromDist

  t.test('a test\'s source maps to its compiled file; nothing else does', async t => {
    const cases: Array<[string, string | null]> = [
      ['test/s3/sigv4.test.ts', 'dist/test/s3/sigv4.test.js'],
      ['test/testdir.ts', 'dist/test/testdir.js'],
      ['test/x.test.mts', 'dist/test/x.test.mjs'],
      ['test/types.d.ts', null],
      ['src/main.ts', null],
      ['dist/test/s3/sigv4.test.js', null],
      ['testing/x.test.ts', null]
    ]
    for (const [file, compiled] of cases) {
      t.equal(compiledTest(path.join(root, file)), compiled === null ? null : path.join(root, compiled), file)
    }
  })

  t.test('node, with the hook as tap.node-arg gives it, runs a test given by its .ts path', async t => {
    const output = execFileSync(process.execPath, [`--import=${hook}`, 'test/scripts/tests-from-dist.test.ts'], {
      cwd: root, encoding: 'utf8', env: { ...process.env, FSBUCKET_FROM_DIST_CHILD: '1', TAP: '1' }
    })
    t.match(output, /ok 1 - running from dist\//)
  })
}
