/**
 * `serve --workers 2`: the primary reads routes.json and the management
 * API's credentials.json once, at start, and hands them to every worker,
 * as it does the TLS pair. A worker that replaces one that died serves
 * what the primary accepted: files damaged since (an edit half saved, a
 * disk full) neither stop it (six deaths within a minute would stop the
 * whole server) nor make it serve other routes or credentials than its
 * siblings.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within } from './serve-process.js'

const account = '023e105f4ecef8ad9ca31a8372d0c353'
const adminToken = 'primary-read-admin-token-0123456789'

t.test('a replacement worker serves the routes and credentials the primary read, not the files damaged since', async t => {
  const data = testdir(t)
  mkdirSync(path.join(data, '.mgmt'), { recursive: true, mode: 0o700 })
  writeFileSync(path.join(data, '.mgmt', 'credentials.json'), JSON.stringify({ tokens: [adminToken] }), { mode: 0o600 })
  writeFileSync(path.join(data, 'routes.json'), JSON.stringify(['/pub/=default']))
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--s3-port', '0', '--workers', '2', '--fsync', 'off', '--log-level', 'info'])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  const deadline = Date.now() + 60_000
  while (!served.stdout().includes('web console:') && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
  t.equal((await call(port, 'PUT', '/default/hello.txt', 'hello')).status, 200)
  const buckets = `/client/v4/accounts/${account}/r2/buckets`

  // Damaged while the server runs.
  writeFileSync(path.join(data, 'routes.json'), '["/pub/=def')
  writeFileSync(path.join(data, '.mgmt', 'credentials.json'), '{"tokens": [')
  const children = (): number[] => readFileSync(`/proc/${served.child.pid}/task/${served.child.pid}/children`, 'utf8').split(' ').filter(s => s !== '').map(Number)
  const [victim] = children()
  process.kill(victim, 'SIGKILL')
  const replaced = Date.now() + 30_000
  while (!(children().length === 2 && !children().includes(victim)) && Date.now() < replaced) await new Promise(resolve => setTimeout(resolve, 50))
  t.ok(children().length === 2 && !children().includes(victim), 'a worker replaced the one killed')
  // Replacements that could not start would die in turn, and six deaths within a minute stop the server.
  await new Promise(resolve => setTimeout(resolve, 6000))
  t.equal(served.child.exitCode, null, 'the server goes on')
  t.equal(served.stdout().split('\n').filter(line => line.includes('worker died')).length, 1, 'one death: the one killed')
  // Each on its own connection: both workers answer some.
  for (let i = 0; i < 8; i++) {
    const routed = await call(port, 'GET', '/pub/hello.txt')
    t.same([routed.status, routed.body], [200, 'hello'], `the route read at start serves (${i})`)
    t.equal((await call(port, 'GET', buckets, undefined, { authorization: `Bearer ${adminToken}` })).status, 200, `the token read at start opens the API (${i})`)
    t.not((await call(port, 'GET', buckets, undefined, { authorization: 'Bearer another-token-0123456789' })).status, 200, `another token does not (${i})`)
  }
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})
