/**
 * The command line loads what a command needs (src/main.ts): `--version`
 * and `--help` load neither the stores (SQLite), the server, a transport,
 * the S3 signer nor the table of content types; an object command given
 * `--endpoint` loads the HTTP transport and still no store.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { modulesOf } from '../bundle-modules.js'
import { testdir } from '../testdir.js'

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/fsbucket.js')

/** What a command loads: the URL of every module Node loads for it, through a load hook. */
function loadedBy (t: Test, args: string[]): string[] {
  const dir = testdir(t)
  const record = path.join(dir, 'loaded.txt')
  const hooks = path.join(dir, 'hooks.mjs')
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs'
export async function load (url, context, next) { appendFileSync(${JSON.stringify(record)}, url + '\\n'); return await next(url, context) }
`)
  const register = path.join(dir, 'register.mjs')
  writeFileSync(register, `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
  writeFileSync(record, '')
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, bin, ...args], { encoding: 'utf8', cwd: dir })
  t.equal(run.error, undefined)
  return modulesOf(readFileSync(record, 'utf8').split('\n').filter(line => line !== ''))
}

const heavy = /\/stores\/|\/server\/(serve|gateway|open)\.js|\/cli\/transport-(local|http)\.js|signature-v4|node_modules\/@?libsql|mime-types|\/fastify\//

t.test('--version and --help load no store, server, transport or signer', async t => {
  for (const args of [['--version'], ['--help'], ['cp', '--help']]) {
    const loaded = loadedBy(t, args)
    t.ok(loaded.some(url => url.endsWith('/dist/src/main.js')), `${args.join(' ')}: the command line was loaded`)
    t.same(loaded.filter(url => heavy.test(url)), [], `${args.join(' ')}: nothing heavy`)
  }
})

t.test('an object command over HTTP loads its transport and no store', async t => {
  const loaded = loadedBy(t, ['ls', '--endpoint', 'http://127.0.0.1:9', '--quiet'])
  t.ok(loaded.some(url => url.endsWith('/cli/transport-http.js')), 'the HTTP transport')
  t.same(loaded.filter(url => /\/stores\/|node_modules\/@?libsql|transport-local/.test(url)), [], 'no store')
})
