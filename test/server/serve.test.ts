/**
 * `fsbucket serve` as a process: clear start-up failures (unwritable data,
 * busy port, with and without workers), worker restarts and crash loops,
 * draining on the first signal and exiting on the second, a full disk
 * under stdout, `--version`.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { answering, bin, call, freePort, run, within } from './serve-process.js'

const token = 'serve-token'
const authed = { authorization: `Bearer ${token}` }
const quiet = ['--fsync', 'off', '--log-level', 'warn', '--token', token, '--s3-port', '0']

t.test('--version prints the version of package.json', async t => {
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(bin), '..', 'package.json'), 'utf8')) as { version: string }
  const served = run(['--version'])
  t.equal(await served.exited, 0)
  t.equal(served.stdout().trim(), pkg.version)
})

/** A user who cannot write what root made read-only; as an ordinary user, the mode bits suffice. */
const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}

t.test('an unwritable data directory or bucket: exit 1 with one line naming it', async t => {
  const root = testdir(t)
  chmodSync(root, 0o755)
  const data = path.join(root, 'data')
  mkdirSync(path.join(data, 'photos'), { recursive: true })
  chmodSync(data, 0o555)
  const port = String(await freePort())
  const first = run(['serve', '--data', data, '--port', port, '--workers', '1', ...quiet], asOther)
  t.equal(await within(first.exited, 60_000, 'exit'), 1)
  const lines = first.stderr().trim().split('\n')
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], `cannot write in the data directory ${data}: permission denied (EACCES)`)

  chmodSync(data, 0o777)
  chmodSync(path.join(data, 'photos'), 0o555)
  if (process.getuid?.() === 0) chownSync(path.join(data, 'photos'), 0, 0)
  const second = run(['serve', '--data', data, '--port', port, '--workers', '2', ...quiet], asOther)
  t.equal(await within(second.exited, 60_000, 'exit'), 1)
  t.match(second.stderr().trim(), new RegExp(`^cannot write in bucket "photos": ${path.join(data, 'photos')}: permission denied \\(EACCES\\)$`))
  chmodSync(path.join(data, 'photos'), 0o755)
})

t.test('a setting every worker would refuse (half an S3 key pair, a malformed routes.json or credentials.json) stops the server at once, with or without workers', async t => {
  for (const workers of ['1', '2']) {
    const data = testdir(t)
    const lone = run(['serve', '--data', data, '--port', String(await freePort()), '--workers', workers, ...quiet, '--s3-access-key-id', 'AKID'])
    t.equal(await within(lone.exited, 30_000, `--workers ${workers}: exit`), 1, `--workers ${workers}: half a key pair`)
    t.match(lone.stderr().trim(), /^--s3-access-key-id and --s3-secret-access-key .* go together$/)
    t.notMatch(lone.stdout(), /worker died/, 'no worker was started to die')
    writeFileSync(path.join(data, 'routes.json'), '{"cdn.localhost": "site"}')
    const routes = run(['serve', '--data', data, '--port', String(await freePort()), '--workers', workers, ...quiet])
    t.equal(await within(routes.exited, 30_000, `--workers ${workers}: exit`), 1, `--workers ${workers}: routes.json`)
    t.match(routes.stderr().trim(), /routes\.json must be a JSON array of route specs/)
    t.notMatch(routes.stdout(), /worker died/)
    writeFileSync(path.join(data, 'routes.json'), '["cdn.localhost=site"')
    const broken = run(['serve', '--data', data, '--port', String(await freePort()), '--workers', workers, ...quiet])
    t.equal(await within(broken.exited, 30_000, `--workers ${workers}: exit`), 1, `--workers ${workers}: routes.json not JSON`)
    t.match(broken.stderr().trim(), `${path.join(data, 'routes.json')} is not valid JSON`, 'the file to mend is named')
    rmSync(path.join(data, 'routes.json'))
    mkdirSync(path.join(data, '.mgmt'), { recursive: true })
    writeFileSync(path.join(data, '.mgmt', 'credentials.json'), '{tokens: []}')
    const credentials = run(['serve', '--data', data, '--port', String(await freePort()), '--workers', workers, ...quiet])
    t.equal(await within(credentials.exited, 30_000, `--workers ${workers}: exit`), 1, `--workers ${workers}: credentials.json not JSON`)
    t.match(credentials.stderr().trim(), `${path.join(data, '.mgmt', 'credentials.json')} is not valid JSON`)
    t.notMatch(credentials.stdout(), /worker died/, 'no worker was started to die')
  }
})

t.test('a busy port: exit non-zero with one line naming the port, no respawn loop', async t => {
  const blocker = createServer()
  await new Promise<void>(resolve => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => blocker.close())
  const port = (blocker.address() as { port: number }).port
  for (const workers of ['1', '3']) {
    const data = testdir(t)
    const served = run(['serve', '--data', data, '--port', String(port), '--workers', workers, ...quiet])
    const code = await within(served.exited, 60_000, `--workers ${workers}: exit`)
    t.equal(code, 1, `--workers ${workers}: exit code`)
    const lines = served.stderr().trim().split('\n')
    t.equal(lines.length, 1, `--workers ${workers}: one line`)
    t.match(lines[0], `port ${port} on 127.0.0.1 is already in use (EADDRINUSE)`)
    t.notMatch(served.stdout(), /worker died/, 'no worker was restarted')
  }
})

/** A PUT whose body is only half sent, on a raw socket. */
/** A connection holding an upload of 10 bytes of which 5 were sent; closed after its answer unless `keepAlive`. */
async function halfUpload (port: number, key: string, keepAlive = false): Promise<Socket> {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s))
    s.once('error', reject)
  })
  socket.on('error', () => {})
  socket.write(`PUT /default/${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 10\r\n${keepAlive ? '' : 'Connection: close\r\n'}\r\nhello`)
  await new Promise(resolve => setTimeout(resolve, 300))
  return socket
}

async function answerOf (socket: Socket): Promise<string> {
  return await new Promise(resolve => {
    let text = ''
    socket.on('data', chunk => { text += String(chunk) })
    socket.once('close', () => resolve(text))
  })
}

t.test('the first signal drains requests in flight, then exits 0', async t => {
  for (const workers of ['1', '2']) {
    const data = testdir(t)
    const port = await freePort()
    const served = run(['serve', '--data', data, '--port', String(port), '--workers', workers, ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    await answering(port, served)
    const upload = await halfUpload(port, 'drained')
    const answer = answerOf(upload)
    served.child.kill(workers === '1' ? 'SIGTERM' : 'SIGINT')
    await new Promise(resolve => setTimeout(resolve, 500))
    t.equal(served.child.exitCode, null, `--workers ${workers}: still running while a request is in flight`)
    await t.rejects(call(port, 'GET', '/default/drained', undefined, authed), `--workers ${workers}: no new connections while draining`)
    upload.write('world')
    t.match(await within(answer, 30_000, 'answer'), /^HTTP\/1\.1 200 /, 'the request in flight finished')
    t.equal(await within(served.exited, 30_000, 'exit'), 0, 'then the server exited 0')
    const again = run(['serve', '--data', data, '--port', String(port), '--workers', '1', ...quiet])
    await answering(port, again)
    t.equal((await call(port, 'GET', '/default/drained', undefined, authed)).body, 'helloworld', 'and the upload was stored')
    again.child.kill('SIGTERM')
    t.equal(await again.exited, 0)
  }
})

t.test('a request pipelined behind one in flight while the server drains is answered as usual, then its connection closes', async t => {
  const data = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--workers', '1', ...quiet])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  const socket = await halfUpload(port, 'kept', true)
  const answer = answerOf(socket)
  served.child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 500))
  socket.write(`worldGET /default/kept HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`)
  const text = await within(answer, 30_000, 'answers')
  const answers = text.split(/(?=HTTP\/1\.1 )/)
  t.equal(answers.length, 2, 'both answered')
  t.match(answers[0], /^HTTP\/1\.1 200 /, 'the upload in flight')
  t.match(answers[1], /^HTTP\/1\.1 200 /, 'the request behind it, served as usual rather than refused')
  t.match(answers[1], /\r\nconnection: close\r\n/i, 'and the connection closed after it')
  t.match(answers[1], /helloworld$/)
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

t.test('a request in flight on a kept-alive connection while the server drains: its answer closes the connection, and the server exits 0 at once', async t => {
  const data = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--workers', '1', ...quiet])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  const socket = await halfUpload(port, 'kept-alive', true)
  const answer = answerOf(socket)
  served.child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 500))
  socket.write('world')
  const text = await within(answer, 30_000, 'the answer, then the end of its connection')
  t.match(text, /^HTTP\/1\.1 200 /, 'the upload in flight finished')
  t.match(text, /\r\nconnection: close\r\n/i, 'and its answer says the connection ends')
  // The connection left open until the idle timeout (60 s) held the drain until its timeout (10 s): exit 1.
  t.equal(await within(served.exited, 30_000, 'exit'), 0, 'the server exited 0, nothing left in flight')
  t.notMatch(served.stdout(), /drain timeout/)
})

t.test('a second signal exits at once; the drain timeout bounds the first', async t => {
  const data = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--workers', '1', ...quiet])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  await halfUpload(port, 'cut')
  served.child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal(served.child.exitCode, null, 'draining')
  const started = Date.now()
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 5000, 'exit on the second signal'), 1)
  t.ok(Date.now() - started < 3000, 'at once')

  const bounded = run(['serve', '--data', data, '--port', String(port), '--workers', '2', '--drain-timeout', '1', ...quiet])
  t.teardown(() => { bounded.child.kill('SIGKILL') })
  await answering(port, bounded)
  await halfUpload(port, 'stalled')
  const signalled = Date.now()
  bounded.child.kill('SIGTERM')
  t.equal(await within(bounded.exited, 15_000, 'exit after the drain timeout'), 1, 'cut short: exit 1')
  const waited = Date.now() - signalled
  t.ok(waited >= 900 && waited < 10_000, `after about the drain timeout (${waited} ms)`)
})

function workerPids (primary: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' }).trim().split('\n').filter(s => s !== '').map(Number)
  } catch {
    return []
  }
}

t.test('a dying worker is replaced after a back-off; a crash loop stops the server', async t => {
  const data = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--workers', '2', '--fsync', 'off', '--token', token, '--s3-port', '0'])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  while (!served.stdout().includes('"msg":"serving"')) await new Promise(resolve => setTimeout(resolve, 100))
  const pid = served.child.pid ?? 0
  const [victim] = workerPids(pid)
  process.kill(victim, 'SIGKILL')
  const deadline = Date.now() + 60_000
  while (!workerPids(pid).some(p => p !== victim) || workerPids(pid).length < 2) {
    if (Date.now() > deadline) { t.fail('no replacement worker'); break }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  await answering(port, served)
  t.equal((await call(port, 'PUT', '/default/after', 'x', authed)).status, 200, 'serving again')
  const died = served.stdout().split('\n').filter(l => l.includes('worker died')).map(l => JSON.parse(l) as Record<string, unknown>)
  t.equal(died.length, 1)
  t.equal(died[0].worker, victim, 'the line names the worker')
  t.equal(died[0].restartInMs, 100, 'the first restart waits 100 ms')
  t.equal(served.stdout().split('\n').find(l => l.includes('worker died'))?.match(/"pid":/g)?.length, 1, 'one pid field per line')

  const killer = setInterval(() => { for (const p of workerPids(pid)) { try { process.kill(p, 'SIGKILL') } catch {} } }, 50)
  t.teardown(() => clearInterval(killer))
  t.equal(await within(served.exited, 90_000, 'stop on a crash loop'), 1)
  clearInterval(killer)
  t.match(served.stderr(), /workers keep dying \(6 exits within 60 s/)
  const delays = served.stdout().split('\n').filter(l => l.includes('worker died')).map(l => (JSON.parse(l) as { restartInMs: number }).restartInMs)
  t.same(delays, [100, 200, 400, 800, 1600], 'each restart waits twice as long')
})

t.test('a full disk under stdout does not take the server down', async t => {
  const data = testdir(t)
  const port = await freePort()
  const served = run(['serve', '--data', data, '--port', String(port), '--workers', '1', '--fsync', 'off', '--token', token, '--log-level', 'trace', '--s3-port', '0'], { stdout: openSync('/dev/full', 'w') })
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  for (let i = 0; i < 20; i++) t.equal((await call(port, 'PUT', `/default/k${i}`, 'x', authed)).status, 200)
  t.equal(served.child.exitCode, null, 'still running')
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)
})
