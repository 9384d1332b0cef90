/**
 * What each process of `fsbucket serve --workers 2` loads as it starts
 * (src/server/serve.ts, worker.ts, startup.ts): the primary, which checks
 * and forks, no door, no Fastify, no prom-client; a worker, no command line
 * and nothing that only some requests or options use (prom-client until a
 * scrape, the CRCs' WebAssembly until a CRC32C or CRC64NVME, the console's
 * file sender until a console file is asked for, the table of media types
 * until an object stored without one is answered, the signer's
 * package, PostgreSQL's client without --catalog, the S3 door without an
 * S3 port, the management API until its first request, Node's fetch
 * implementation). Recorded as test/cli/startup.test.ts does, through a load hook,
 * and through CommonJS's loader too: packages require one another; and, as
 * each process exits, the modules Node loaded for itself.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { modulesOf } from '../bundle-modules.js'
import { testdir } from '../testdir.js'
import { answering, bin, call, freePort, within } from './serve-process.js'

/** Every module each process of a two-worker server loaded until it served, by process id (the primary's is `primary`). */
async function loadedByServe (t: Test, args: string[]): Promise<{ primary: string[], workers: string[][] }> {
  const dir = testdir(t)
  const records = path.join(dir, 'loaded')
  const hooks = path.join(dir, 'hooks.mjs')
  const record = `(url) => appendFileSync(${JSON.stringify(records)} + '-' + process.pid, url + '\\n')`
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs'
const record = ${record}
export async function load (url, context, next) { record(url); return await next(url, context) }
`)
  const register = path.join(dir, 'register.mjs')
  writeFileSync(register, `import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
const record = ${record}
register(${JSON.stringify(pathToFileURL(hooks).href)})
const Module = createRequire(import.meta.url)('node:module')
// Node's own modules loaded by name at run time count too.
const getBuiltinModule = process.getBuiltinModule
process.getBuiltinModule = function (id) { record(id.startsWith('node:') ? id : 'node:' + id); return getBuiltinModule.call(this, id) }
const load = Module._load
Module._load = function (request, parent, isMain) {
  try { record(Module._resolveFilename(request, parent, isMain)) } catch {}
  return load.apply(this, arguments)
}
// And what Node loaded for itself, which neither hook sees: a global such as Headers loads its fetch implementation.
process.on('exit', () => { for (const entry of process.moduleLoadList) if (entry.startsWith('NativeModule ')) record('node:' + entry.slice('NativeModule '.length)) })
`)
  const port = await freePort()
  // Without tap's hooks (NODE_OPTIONS), as serve-process.ts runs the server; the cluster passes --import on to the workers.
  const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--import', pathToFileURL(register).href, bin, 'serve', '--data', path.join(dir, 'data'),
    '--port', String(port), '--workers', '2', '--log-level', 'info', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', chunk => { stdout += String(chunk) })
  child.stderr.on('data', chunk => { stderr += String(chunk) })
  const exited = new Promise(resolve => child.once('exit', resolve))
  try {
    await answering(port, { child, stdout: () => stdout, stderr: () => stderr, exited: exited as Promise<number> })
    // The second worker starts once the first listens: the primary says `serving` once both do.
    await within((async () => { while (!stdout.includes('"msg":"serving"')) await new Promise(resolve => setTimeout(resolve, 20)) })(), 30_000, 'serving')
    // Both workers answer: a few requests on their own connections reach each (the cluster hands connections round-robin).
    for (let i = 0; i < 4; i++) t.equal((await call(port, 'GET', '/_health/live')).status, 200)
  } finally {
    child.kill('SIGTERM')
    await within(exited, 20_000, 'the server stopping')
  }
  const files = readdirSync(dir).filter(name => name.startsWith('loaded-'))
  const read = (name: string): string[] => modulesOf(readFileSync(path.join(dir, name), 'utf8').split('\n').filter(line => line !== ''))
  const byPid = new Map(files.map(name => [Number(name.slice('loaded-'.length)), read(name)]))
  // env execs node in place: the primary is the spawned process itself.
  const primary = byPid.get(child.pid ?? -1) ?? []
  byPid.delete(child.pid ?? -1)
  return { primary, workers: [...byPid.values()] }
}

const everywhere = /\/node_modules\/(prom-client|@fastify\/send|mime-types|mime-db|hash-wasm|@smithy\/signature-v4|pg|pino-pretty|@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler)\//
const doors = /\/node_modules\/(fastify|@fastify\/[^/]+|fast-xml-parser|mime-types)\/|\/dist\/src\/(app|server\/gateway|s3\/app|http\/routes|mgmt\/plugin)\.js/
const commandLine = /\/node_modules\/commander\/|\/dist\/src\/(main|cli\/index)\.js/
const s3Door = /\/node_modules\/fast-xml-parser\/|\/dist\/src\/s3\/(app|index)\.js/
// Built at its first request (src/doors/handed-on.ts).
const managementApi = /\/dist\/src\/mgmt\/(plugin|routes\/[^/]+)\.js/
// Node's own modules that plain HTTP/1.1 never needs; undici comes with a read of the Headers or fetch global.
const unusedByPlainHttp = /^node:(https|http2|tls|zlib|internal\/deps\/undici\/undici)$/

t.test('serve --workers 2: the primary loads no door, a worker no command line and nothing it does not use yet', async t => {
  const { primary, workers } = await loadedByServe(t, ['--s3-port', '0'])
  t.ok(primary.some(line => line.endsWith('/dist/src/server/serve.js')), 'the primary was recorded')
  t.same(primary.filter(line => doors.test(line) || everywhere.test(line)), [], 'the primary: no door, no Fastify, no prom-client')
  t.equal(workers.length, 2, 'both workers were recorded')
  for (const loaded of workers) {
    t.ok(loaded.some(line => line.endsWith('/dist/src/server/gateway.js')) && loaded.some(line => /\/node_modules\/fastify\//.test(line)), 'a worker loads its doors')
    t.same(loaded.filter(line => commandLine.test(line) || everywhere.test(line) || s3Door.test(line) || managementApi.test(line)), [],
      'a worker: no command line, prom-client, CRC WebAssembly, signer package, PostgreSQL client, schema compilers, console file sender, media types table, S3 door without an S3 port, nor the management API before its first request')
    t.same([...new Set(loaded.filter(line => unusedByPlainHttp.test(line)))], [],
      'serving plain HTTP/1.1 before any upload: no HTTPS, HTTP/2, TLS or zlib module of Node\'s, nor its fetch implementation (undici)')
  }
})

t.test('with an S3 port, a worker loads the S3 door and still not the signer package', async t => {
  const { workers } = await loadedByServe(t, ['--s3-port', String(await freePort())])
  t.equal(workers.length, 2)
  for (const loaded of workers) {
    t.ok(loaded.some(line => line.endsWith('/dist/src/s3/app.js')), 'the S3 door')
    t.same(loaded.filter(line => everywhere.test(line)), [])
    t.same([...new Set(loaded.filter(line => unusedByPlainHttp.test(line)))], [], 'nor Node\'s fetch implementation, TLS, HTTP/2 or zlib')
  }
})
