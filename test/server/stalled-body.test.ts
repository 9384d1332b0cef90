/**
 * A body that stops arriving, through every door that streams one into the
 * engine: after the idle timeout's answer (408, or S3's RequestTimeout), the
 * partial body is gone from the bucket's `.fsbucket/` and no handle to it is
 * left open, as when the client goes away mid-body (server/connection.ts's
 * `idleConnectionListener`). Real sockets in this process, so `/proc/self/fd`
 * shows the server's handles.
 */
import { readdirSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { open, received } from '../raw-socket.js'
import { auth, gateway, token } from '../http/gateway-fixture.js'
import { s3Server } from '../s3/fixture.js'
import { idleConnectionListener, inConnectionOrder, receivingBody, whenAnswered } from '../../src/server/connection.js'

/** Bigger than a body the catalog keeps inline: it streams into a file. */
const sent = 300_000
const declared = 1_000_000

/** The bucket's own files (its catalog, and stores/fs/spare.ts's spare file, made once the bucket is used), which stay. */
const ownFile = /^(catalog\.db(-wal|-shm|-journal)?|format\.json|settings\.json|spare)$/

/** Files under `dir` (relative), besides the bucket's own. */
function filesUnder (dir: string, at = ''): string[] {
  const found: string[] = []
  for (const entry of readdirSync(path.join(dir, at), { withFileTypes: true })) {
    const name = path.join(at, entry.name)
    if (entry.isDirectory()) found.push(...filesUnder(dir, name))
    else if (!ownFile.test(entry.name)) found.push(name)
  }
  return found
}

/** What this process holds open under `dir`, besides the bucket's own files. */
function handlesUnder (dir: string): string[] {
  const held: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string
    try { target = readlinkSync(`/proc/self/fd/${fd}`) } catch { continue } // closed meanwhile (readdir's own)
    if (target.startsWith(dir + path.sep) && !ownFile.test(path.basename(target))) held.push(target)
  }
  return held
}

async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

/**
 * Sends `head` and part of its body, goes silent, and checks that the answer
 * matches `status`, then that neither a file nor a handle of the partial
 * body is left in `internal` (a bucket's `.fsbucket/`) once the connection closed.
 */
async function stall (t: Test, port: number, internal: string, head: string, body: Buffer, status: RegExp): Promise<void> {
  const before = filesUnder(internal)
  const socket = await open(port)
  socket.write(head)
  socket.write(body)
  const { text, closed } = await received(socket, () => false, 8000)
  socket.destroy()
  t.match(text, status, 'answered the idle timeout\'s answer')
  t.ok(closed, 'and the connection closed')
  // The engine discards the partial body once it sees the request fail: give it a moment.
  let files: string[] = []
  let handles: string[] = []
  for (let tries = 0; tries < 40; tries++) {
    files = filesUnder(internal).filter(f => !before.includes(f))
    handles = handlesUnder(internal)
    if (files.length === 0 && handles.length === 0) break
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.same(files, [], 'no file of the partial body left')
  t.same(handles, [], 'no handle to it left open')
}

const authLine = `Authorization: Bearer ${token}\r\n`
const gatewayTimeout = /^HTTP\/1\.1 408 [^]*"code":40800/

t.test('the HTTP routes: a stalled PUT, form POST or upload part leaves no file and no open handle', async t => {
  const lines: Array<{ level: number, msg?: string }> = []
  const { app, registry, dataDir } = await gateway(t, { idleTimeout: 1, logLevel: 'info', logDestination: { write: (line: string) => { lines.push(JSON.parse(line)) } } })
  const port = await listening(app)
  const internal = path.join(dataDir, 'photos', '.fsbucket')
  const part = Buffer.alloc(sent, 'x')

  await t.test('PUT', async t => {
    await stall(t, port, internal, `PUT /photos/stalled HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: ${declared}\r\n\r\n`, part, gatewayTimeout)
  })

  await t.test('form POST', async t => {
    const boundary = 'fsbucketboundary'
    const opening = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stalled.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    await stall(t, port, internal,
      `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declared}\r\n\r\n`,
      Buffer.concat([opening, part]), gatewayTimeout)
  })

  await t.test('upload part', async t => {
    const upload = await (await registry.open('photos'))!.createMultipartUpload('stalled-parts')
    await stall(t, port, internal,
      `PUT /photos/stalled-parts?action=mpu-uploadpart&uploadId=${upload.uploadId}&partNumber=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: ${declared}\r\n\r\n`,
      part, gatewayTimeout)
  })

  await t.test('the management API\'s object PUT', async t => {
    const url = '/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets/photos/objects/stalled-mgmt'
    await stall(t, port, internal, `PUT ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Length: ${declared}\r\n\r\n`, part, gatewayTimeout)
  })

  await t.test('the management API\'s JSON body', async t => {
    const url = '/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets'
    await stall(t, port, internal, `POST ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authLine}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n`, Buffer.from('{"name": "stalled-'), gatewayTimeout)
  })

  for (const key of ['stalled', 'stalled.bin', 'stalled-mgmt']) {
    t.equal((await app.inject({ method: 'GET', url: `/photos/${key}`, headers: auth })).statusCode, 404, `${key}: nothing stored`)
  }
  t.equal((await app.inject({ method: 'PUT', url: '/photos/later', headers: auth, payload: 'x'.repeat(sent) })).statusCode, 200, 'later writes work')
  t.same(lines.filter(line => line.level >= 40).map(line => line.msg), [], 'a cut upload is no server fault: nothing logged at warn or error level')
})

t.test('the S3 port: a stalled PutObject or UploadPart leaves no file and no open handle', async t => {
  const lines: Array<{ level: number, msg?: string }> = []
  const logger = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)) } })
  const { port, registry, dataDir } = await s3Server(t, { connections: { idleTimeoutMs: 1000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered, receivingBody }, logger })
  const internal = path.join(dataDir, 'photos', '.fsbucket')
  const part = Buffer.alloc(sent, 'x')
  const s3Timeout = /^HTTP\/1\.1 400 [^]*<Code>RequestTimeout<\/Code>/

  await t.test('PutObject', async t => {
    await stall(t, port, internal, `PUT /photos/stalled HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${declared}\r\n\r\n`, part, s3Timeout)
  })

  await t.test('UploadPart', async t => {
    const upload = await (await registry.open('photos'))!.createMultipartUpload('stalled-parts')
    await stall(t, port, internal,
      `PUT /photos/stalled-parts?partNumber=1&uploadId=${encodeURIComponent(upload.uploadId)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${declared}\r\n\r\n`,
      part, s3Timeout)
  })

  await t.test('DeleteObjects\' document', async t => {
    await stall(t, port, internal, `POST /photos?delete HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n`, Buffer.from('<Delete><Object><Key>'), s3Timeout)
  })

  t.equal(await (await registry.open('photos'))!.head('stalled'), null, 'nothing stored')
  t.same(lines.filter(line => line.level >= 40).map(line => line.msg), [], 'a cut upload is no server fault: nothing logged at warn or error level')
})
