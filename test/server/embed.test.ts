/**
 * `startServer` used the way a user's test suite uses it: loaded from the
 * package's entry, started in memory before the tests and closed after
 * them, driven with the AWS SDK on `s3.endpoint` and fetch on `url`. Also:
 * a process that closed its server ends by itself (and has no signal
 * handler of ours, from the import or the server), memory mode writes
 * nothing to disk (not in the working directory, not in the temporary
 * one), a taken port is a clear error, and a token gets the S3 port a key
 * pair of its own.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import type { StartedServer } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { within } from './serve-process.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../../..')
/** What `import { startServer } from 'fsbucket'` loads: the module package.json's `main` names. */
const entry = pathToFileURL(path.join(root, (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string }).main)).href
const { startServer } = await import(entry) as typeof import('../../src/index.js')

function s3Client (server: StartedServer, credentials: { accessKeyId: string, secretAccessKey: string } = server.s3): S3Client {
  return new S3Client({ endpoint: server.s3.endpoint, region: server.s3.region, credentials, forcePathStyle: true })
}

t.test('a suite: start in memory before, S3 and HTTP during, close after', async t => {
  let server: StartedServer
  let s3: S3Client
  // beforeAll / afterAll
  t.before(async () => {
    server = await startServer({ memory: true })
    s3 = s3Client(server)
  })
  t.teardown(async () => {
    s3.destroy()
    await server.close()
  })

  t.test('defaults: loopback, free ports, the development key pair, region auto', async t => {
    t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    t.match(server.s3.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/)
    t.not(server.s3.endpoint, server.url)
    t.same({ ...server.s3, endpoint: '' }, { endpoint: '', accessKeyId: 'fsbucket-dev', secretAccessKey: 'fsbucket-dev-secret', region: 'auto' })
  })

  t.test('an object put with the SDK is read back with the SDK and over HTTP', async t => {
    const put = await s3.send(new PutObjectCommand({ Bucket: 'default', Key: 'notes/hello.txt', Body: 'hello', ContentType: 'text/plain' }))
    const got = await s3.send(new GetObjectCommand({ Bucket: 'default', Key: 'notes/hello.txt' }))
    t.equal(await got.Body?.transformToString(), 'hello')
    const read = await fetch(`${server.url}/default/notes/hello.txt`)
    t.equal(read.status, 200)
    t.equal(await read.text(), 'hello')
    t.equal(read.headers.get('etag'), put.ETag)
  })

  t.test('an object put over HTTP is listed and read with the SDK', async t => {
    const put = await fetch(`${server.url}/default/notes/second.txt`, { method: 'PUT', body: 'second' })
    t.equal(put.status, 200)
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'default', Prefix: 'notes/' }))
    t.same(listed.Contents?.map(o => o.Key), ['notes/hello.txt', 'notes/second.txt'])
    const got = await s3.send(new GetObjectCommand({ Bucket: 'default', Key: 'notes/second.txt' }))
    t.equal(await got.Body?.transformToString(), 'second')
    const list = await (await fetch(`${server.url}/default?prefix=notes/`)).json() as { result: Array<{ key: string }> }
    t.same(list.result.map(o => o.key), ['notes/hello.txt', 'notes/second.txt'])
  })
})

t.test('close() stops both ports; a second close() is harmless', async t => {
  const server = await startServer({ memory: true })
  t.equal((await fetch(`${server.url}/default/none`)).status, 404)
  await server.close()
  await server.close()
  await t.rejects(fetch(`${server.url}/default/none`), 'the HTTP port is closed')
  await t.rejects(fetch(server.s3.endpoint), 'the S3 port is closed')
})

/** A kept-alive connection to `origin` (HTTP/1.1, no `Connection: close`), and all it receives until it closes. */
async function keptAlive (origin: string): Promise<{ socket: Socket, received: Promise<string> }> {
  const { hostname, port } = new URL(origin)
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s))
    s.once('error', reject)
  })
  socket.on('error', () => {})
  const received = new Promise<string>(resolve => {
    let text = ''
    socket.on('data', chunk => { text += String(chunk) })
    socket.once('close', () => resolve(text))
  })
  return { socket, received }
}

const pause = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

t.test('close() lets a request in flight on a kept-alive connection finish, then ends that connection at once, on either port', async t => {
  for (const door of ['HTTP', 'S3'] as const) {
    const server = await startServer({ memory: true })
    const origin = door === 'HTTP' ? server.url : server.s3.endpoint
    const { socket, received } = await keptAlive(origin)
    socket.write(`PUT /default/k HTTP/1.1\r\nHost: ${new URL(origin).host}\r\nContent-Length: 10\r\n\r\nhello`)
    await pause(300)
    let closed = false
    const closing = server.close().then(() => { closed = true })
    await pause(300)
    t.notOk(closed, `${door}: close() waits for the upload in flight`)
    socket.write('world')
    // The idle timeout (60 s) is what ended such a connection before.
    const answer = await within(received, 10_000, `${door}: the answer, then the end of its connection`)
    t.match(answer, /^HTTP\/1\.1 200 /, `${door}: the upload in flight finished`)
    t.match(answer, /\r\nconnection: close\r\n/i, `${door}: its answer says the connection ends`)
    await within(closing, 10_000, `${door}: close()`)
  }
})

t.test('close() closes at once a kept-alive connection whose last answer no hook saw, or whose refused body is still arriving', async t => {
  for (const door of ['HTTP', 'S3'] as const) {
    const server = await startServer({ memory: true, token: 'embed-token' })
    const origin = door === 'HTTP' ? server.url : server.s3.endpoint
    const host = new URL(origin).host
    // A URL the router cannot decode is answered 400 before any hook runs.
    const bad = await keptAlive(origin)
    bad.socket.write(`GET /default/%zz HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
    await new Promise(resolve => bad.socket.once('data', resolve))
    // A write without credentials is refused at once, while its 8 MiB are still being sent (and thrown away).
    const refused = await keptAlive(origin)
    refused.socket.write(`PUT /default/k HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n`)
    refused.socket.write(Buffer.alloc(8 * 1024 * 1024, 'x'))
    await new Promise(resolve => refused.socket.once('data', resolve))
    await within(server.close(), 10_000, `${door}: close()`)
    t.match(await within(bad.received, 10_000, `${door}: the bad URL's connection ends`), /^HTTP\/1\.1 400 /)
    t.match(await within(refused.received, 10_000, `${door}: the refused write's connection ends`), /^HTTP\/1\.1 40[13] /)
  }
})

t.test('close() closes at once a connection that never sent a request', async t => {
  const server = await startServer({ memory: true })
  const { received } = await keptAlive(server.url)
  // Node's own sweep left it open until the headers timeout (60 s).
  await within(server.close(), 10_000, 'close()')
  t.equal(await within(received, 10_000, 'the end of the connection'), '', 'closed without a word')
})

t.test('close() during an answer already begun on a kept-alive connection: the connection ends after it', async t => {
  const server = await startServer({ memory: true })
  const body = Buffer.alloc(32 * 1024 * 1024, 'x')
  t.equal((await fetch(`${server.url}/default/big`, { method: 'PUT', body })).status, 200)
  const { socket, received } = await keptAlive(server.url)
  socket.write(`GET /default/big HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\n\r\n`)
  await new Promise(resolve => socket.once('data', resolve))
  socket.pause()
  let closed = false
  const closing = server.close().then(() => { closed = true })
  await pause(300)
  t.notOk(closed, 'close() waits for the answer being sent')
  socket.resume()
  const answer = await within(received, 10_000, 'the answer, then the end of its connection')
  t.match(answer, /^HTTP\/1\.1 200 /)
  t.equal(answer.length - answer.indexOf('\r\n\r\n') - 4, body.length, 'the whole body')
  await within(closing, 10_000, 'close()')
})

t.test('each in-memory server has buckets of its own', async t => {
  const one = await startServer({ memory: true })
  const two = await startServer()
  t.teardown(async () => { await Promise.all([one.close(), two.close()]) })
  t.equal((await fetch(`${one.url}/default/k`, { method: 'PUT', body: 'one' })).status, 200)
  t.equal((await fetch(`${two.url}/default/k`)).status, 404, 'not in the other (memory is also the default)')
})

async function listening (port = 0): Promise<Server> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  return server
}

t.test('a taken port: a clear error naming it, for either port', async t => {
  const taken = await listening()
  t.teardown(() => { taken.close() })
  const port = (taken.address() as { port: number }).port
  await t.rejects(startServer({ memory: true, port }), { message: `cannot listen: port ${port} on 127.0.0.1 is already in use (EADDRINUSE) (the HTTP gateway port); choose another port with --port (FSBUCKET_PORT)`, cause: { code: 'EADDRINUSE' } })
  await t.rejects(startServer({ memory: true, s3Port: port }), { message: `cannot listen: port ${port} on 127.0.0.1 is already in use (EADDRINUSE) (the S3 API port); choose another port with --s3-port (FSBUCKET_S3_PORT; 0 turns the S3 port off)` })
})

t.test('options it cannot honour are refused before anything starts', async t => {
  await t.rejects(startServer({ memory: true, dataDir: testdir(t) }), { name: 'TypeError', message: /either dataDir or memory: true, not both/ })
  await t.rejects(startServer({ memory: false }), { name: 'TypeError', message: /needs a dataDir/ })
  await t.rejects(startServer({ port: 70000 }), { name: 'TypeError', message: /port must be an integer from 0 to 65535/ })
})

t.test('with a token: the HTTP port wants it, and the S3 port has a key pair of its own', async t => {
  const server = await startServer({ memory: true, token: 'suite-token' })
  const s3 = s3Client(server)
  t.teardown(async () => { s3.destroy(); await server.close() })
  t.not(server.s3.accessKeyId, 'fsbucket-dev')
  t.ok(server.s3.secretAccessKey.length >= 32)
  await s3.send(new PutObjectCommand({ Bucket: 'default', Key: 'k', Body: 'signed' }))
  const dev = s3Client(server, { accessKeyId: 'fsbucket-dev', secretAccessKey: 'fsbucket-dev-secret' })
  t.teardown(() => { dev.destroy() })
  await t.rejects(dev.send(new GetObjectCommand({ Bucket: 'default', Key: 'k' })), { name: 'InvalidAccessKeyId' }, 'the development pair is refused')
  t.equal((await fetch(`${server.url}/default/k`)).status, 401)
  const read = await fetch(`${server.url}/default/k`, { headers: { authorization: 'Bearer suite-token' } })
  t.equal(await read.text(), 'signed')
})

t.test('with a data directory: the buckets are kept there', async t => {
  const dataDir = testdir(t)
  const first = await startServer({ dataDir, fsync: false })
  t.equal((await fetch(`${first.url}/default/kept.txt`, { method: 'PUT', body: 'kept' })).status, 200)
  await first.close()
  t.ok(readdirSync(dataDir).includes('default'), 'the bucket is a directory of the data directory')
  const second = await startServer({ dataDir, fsync: false })
  t.teardown(async () => { await second.close() })
  t.equal(await (await fetch(`${second.url}/default/kept.txt`)).text(), 'kept', 'and read by the next server')
})

/** Runs embedded-suite.js as a process of its own, in `cwd` with TMPDIR `tmp`; resolves with what it printed and when it exited. */
async function runSuite (cwd: string, tmp: string): Promise<{ code: number | null, seen: Record<string, unknown>, exitedAt: number, stderr: string }> {
  // Without tap's hooks (in NODE_OPTIONS of every child): the process runs as a user's suite runs.
  const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, path.join(here, 'embedded-suite.js')], {
    cwd, env: { ...process.env, TMPDIR: tmp, TMP: tmp, TEMP: tmp }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.on('data', chunk => { out += String(chunk) })
  child.stderr.on('data', chunk => { err += String(chunk) })
  // Long enough for a slow start on a busy machine; a process that does not exit is killed and fails the test.
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  const exitedAt = Date.now()
  clearTimeout(killer)
  const line = out.trim().split('\n').at(-1) ?? ''
  return { code, seen: line.startsWith('{') ? JSON.parse(line) as Record<string, unknown> : {}, exitedAt, stderr: err }
}

t.test('a process that closes its server exits by itself, soon after', async t => {
  const cwd = testdir(t)
  const { code, seen, exitedAt, stderr } = await runSuite(cwd, cwd)
  t.equal(code, 0, `exit code 0 (stderr: ${stderr})`)
  t.match(seen, { put: 200, form: 200, read: 'from S3', multipart: 'one part', deleted: 204, bucket: 200, console: 200 }, 'it used the doors')
  t.match(seen.conflict, /^cannot listen: port \d+ on 127\.0\.0\.1 is already in use \(EADDRINUSE\) \(the (HTTP gateway|S3 API) port\); choose another port with --(s3-)?port \(FSBUCKET_(S3_)?PORT[;)]/, 'the failed start is a clear error')
  t.same(seen.signalListeners, { imported: 0, closed: 0 }, 'no signal handler: not by the import, not by a server in memory')
  t.type(seen.closedAt, 'number', 'it closed the server')
  const after = exitedAt - (seen.closedAt as number)
  t.ok(after < 5000, `exited ${after} ms after close(), with nothing to keep it alive`)
})

t.test('memory mode writes nothing to disk: the working and temporary directories stay empty', async t => {
  const cwd = path.join(testdir(t, { cwd: {}, tmp: {} }), 'cwd')
  const tmp = path.join(path.dirname(cwd), 'tmp')
  const { code, seen, stderr } = await runSuite(cwd, tmp)
  t.equal(code, 0, stderr)
  t.match(seen, { put: 200, form: 200, multipart: 'one part', bucket: 200 }, 'it stored objects, parts, a form and a bucket')
  t.same(readdirSync(cwd), [], 'nothing in the working directory')
  t.same(readdirSync(tmp), [], 'nothing in the temporary directory')
})
