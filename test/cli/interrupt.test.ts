/**
 * An interrupted transfer leaves nothing behind: Ctrl-C (SIGINT) during a
 * multipart upload from stdin aborts the upload before the command exits
 * with 130, and during a download removes its temporary file; during
 * `cp -r` of several large files it starts no further file and aborts every
 * upload it created, after the parts being written have failed (so the
 * store leaves no part file behind). The gateway
 * runs in this process, so the test sees the parts (or the half of a body)
 * arrive before it interrupts, and sees the abort.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { buildApp } from '../../src/app.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { bin, cleanEnv, token } from './fixture.js'

t.test('SIGINT during a multipart upload aborts it', async t => {
  const dataDir = testdir(t)
  const app = await buildApp({ dataDir, host: '127.0.0.1', token, publicBuckets: [], routes: [], fsync: false, logLevel: false })
  const seen: string[] = []
  let partsDone: () => void = () => {}
  const twoParts = new Promise<void>(resolve => { partsDone = resolve })
  app.addHook('onResponse', async (request, reply) => {
    const action = /[?&]action=([a-z-]+)/.exec(request.url)?.[1] ?? ''
    seen.push(`${request.method} ${action} ${reply.statusCode}`)
    if (seen.filter(s => s === 'PUT mpu-uploadpart 200').length === 2) partsDone()
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close() })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const endpoint = `http://127.0.0.1:${address.port}`
  const created = await app.inject({ method: 'POST', url: '/client/v4/accounts/x/r2/buckets', headers: { authorization: `Bearer ${token}` }, payload: { name: 'photos' } })
  t.equal(created.statusCode, 200)

  const child = spawn(process.execPath, [bin, 'cp', '--part-size', '5MiB', '-', 'fsb://photos/stream.bin', '--endpoint', endpoint, '--token', token],
    { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
  const stderr: Buffer[] = []
  child.stderr.on('data', chunk => stderr.push(chunk))
  child.stdin.on('error', () => {})
  child.stdin.write(randomBytes(11 * 1024 * 1024)) // two whole parts go up; the third waits for more input
  await twoParts
  child.kill('SIGINT')
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  t.equal(code, 130)
  t.match(Buffer.concat(stderr).toString(), /fsbucket: interrupted; aborting 1 multipart upload\n/)
  t.ok(seen.includes('DELETE mpu-abort 204'), 'the upload was aborted')
  t.notOk(seen.some(s => s.startsWith('POST mpu-complete')), 'and never completed')
  const listed = await app.inject({ url: '/photos', headers: { authorization: `Bearer ${token}` } })
  t.same(listed.json().result, [], 'no object was stored')
})

t.test('SIGINT during a download removes its temporary file', async t => {
  const work = testdir(t)
  // A gateway that lists the key, then sends half of its body and stalls.
  const size = 4 * 1024 * 1024
  const object = { key: 'big.bin', size, etag: 'e', uploaded: new Date().toISOString(), storageClass: 'Standard', httpMetadata: {}, customMetadata: {} }
  const server = http.createServer((request, response) => {
    if (request.url?.startsWith('/photos?') === true) {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ success: true, errors: [], messages: [], result: [object], result_info: { truncated: false, delimitedPrefixes: [] } }))
      return
    }
    response.writeHead(200, { 'content-length': String(size) })
    response.write(Buffer.alloc(size / 2, 1))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const port = (server.address() as AddressInfo).port

  const child = spawn(process.execPath, [bin, 'cp', 'fsb://photos/big.bin', 'got.bin', '--endpoint', `http://127.0.0.1:${port}`],
    { cwd: work, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  const stderr: Buffer[] = []
  child.stderr.on('data', chunk => stderr.push(chunk))
  const closed = new Promise<number | null>(resolve => child.on('close', resolve))
  // Wait for the temporary file to hold the half that was sent.
  for (;;) {
    const names = await fsp.readdir(work)
    const sizes = await Promise.all(names.map(async name => (await fsp.stat(path.join(work, name))).size))
    if (sizes.some(s => s === size / 2)) break
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  child.kill('SIGINT')
  t.equal(await closed, 130)
  t.equal(Buffer.concat(stderr).toString(), '\nfsbucket: interrupted\n')
  t.same(await fsp.readdir(work), [], 'no file, temporary or not, is left')
})

/** Uploads of `bucket` still in progress, through the engine. */
async function uploadsLeft (dataDir: string, bucket: string): Promise<string[]> {
  const registry = await openRegistry(dataDir, { fsync: false })
  try {
    const listed = await (await registry.open(bucket))!.listMultipartUploads()
    return listed.uploads.map(upload => upload.key)
  } finally {
    await registry.close()
  }
}

/** Three files of three parts each (at 5 MiB), for `cp -r --part-size 5MiB --parallel 2`. */
async function threeLargeFiles (dir: string): Promise<void> {
  await fsp.mkdir(dir)
  for (const name of ['a.bin', 'b.bin', 'c.bin']) await fsp.writeFile(path.join(dir, name), randomBytes(12 * 1024 * 1024))
}

t.test('SIGINT during cp -r of large files leaves no upload on the server', async t => {
  const dataDir = testdir(t)
  const work = path.join(dataDir, '..', `${path.basename(dataDir)}-tree`)
  t.teardown(async () => { await fsp.rm(work, { recursive: true, force: true }) })
  await threeLargeFiles(work)
  const app = await buildApp({ dataDir, host: '127.0.0.1', token, publicBuckets: [], routes: [], fsync: false, logLevel: false })
  let partsDone: () => void = () => {}
  const twoParts = new Promise<void>(resolve => { partsDone = resolve })
  let parts = 0
  app.addHook('onResponse', async (request, reply) => {
    if (/[?&]action=mpu-uploadpart/.test(request.url) && reply.statusCode === 200 && ++parts === 2) partsDone()
  })
  // An abort answered late: meanwhile the parts it failed return, and a command that went on would start the next file.
  app.addHook('onSend', async request => {
    if (/[?&]action=mpu-abort/.test(request.url)) await new Promise(resolve => setTimeout(resolve, 1000))
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close() })
  const address = app.server.address() as AddressInfo
  t.equal((await app.inject({ method: 'POST', url: '/client/v4/accounts/x/r2/buckets', headers: { authorization: `Bearer ${token}` }, payload: { name: 'photos' } })).statusCode, 200)

  const child = spawn(process.execPath, [bin, 'cp', '-r', '--part-size', '5MiB', '--parallel', '2', work, 'fsb://photos/tree',
    '--endpoint', `http://127.0.0.1:${address.port}`, '--token', token], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  const stderr: Buffer[] = []
  child.stderr.on('data', chunk => stderr.push(chunk))
  const closed = new Promise<number | null>(resolve => child.on('close', resolve))
  await twoParts
  child.kill('SIGINT')
  t.equal(await closed, 130)
  t.match(Buffer.concat(stderr).toString(), /^\nfsbucket: interrupted; aborting 2 multipart uploads\n$/, 'nothing else is reported')
  await new Promise(resolve => setTimeout(resolve, 300)) // what the command sent before it exited has been handled
  t.same(await uploadsLeft(dataDir, 'photos'), [], 'every upload created was aborted')
})

t.test('SIGINT during a local cp -r of large files leaves no upload and no part file', async t => {
  const dataDir = testdir(t)
  const work = path.join(dataDir, '..', `${path.basename(dataDir)}-tree`)
  t.teardown(async () => { await fsp.rm(work, { recursive: true, force: true }) })
  await threeLargeFiles(work)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  await registry.close()
  const tmp = path.join(dataDir, 'photos', '.fsbucket', 'tmp')

  const child = spawn(process.execPath, [bin, 'cp', '-r', '--part-size', '5MiB', '--parallel', '2', work, 'fsb://photos/tree', '--data', dataDir],
    { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  const closed = new Promise<number | null>(resolve => child.on('close', resolve))
  // Interrupt while parts are being written.
  while ((await fsp.readdir(tmp).catch(() => [])).length === 0) await new Promise(resolve => setImmediate(resolve))
  child.kill('SIGINT')
  t.equal(await closed, 130)
  t.same(await fsp.readdir(tmp), [], 'no part file is left half written')
  t.same(await uploadsLeft(dataDir, 'photos'), [], 'every upload created was aborted')
})

t.test('SIGTERM or SIGINT during a local cp of one large file aborts its upload: the file store\'s lock handler does not end the command first', async t => {
  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    const dataDir = testdir(t)
    const file = path.join(dataDir, '..', `${path.basename(dataDir)}-${signal}.bin`)
    t.teardown(async () => { await fsp.rm(file, { force: true }) })
    await fsp.writeFile(file, randomBytes(40 * 1024 * 1024))
    const registry = await openRegistry(dataDir, { fsync: false })
    await registry.create('photos')
    await registry.close()
    const tmp = path.join(dataDir, 'photos', '.fsbucket', 'tmp')
    // Run as a user runs it: the NODE_OPTIONS the test runner adds to every child (the shell drops them) load the runner's
    // own signal-exit into the command, which hid the fault.
    const child = spawn('/bin/sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', process.execPath, bin, 'cp', '--part-size', '5MiB', '--parallel', '2', file, 'fsb://photos/big.bin', '--data', dataDir],
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    const stderr: Buffer[] = []
    child.stderr.on('data', chunk => stderr.push(chunk))
    const closed = new Promise<[number | null, string | null]>(resolve => child.on('close', (exitCode, signalCode) => { resolve([exitCode, signalCode]) }))
    while ((await fsp.readdir(tmp).catch(() => [])).length === 0) await new Promise(resolve => setImmediate(resolve))
    child.kill(signal)
    t.same(await closed, [code, null], `${signal}: exit ${code}, not killed by the signal`)
    t.match(Buffer.concat(stderr).toString(), /fsbucket: interrupted; aborting 1 multipart upload\n/)
    t.same(await uploadsLeft(dataDir, 'photos'), [], `${signal}: the upload was aborted`)
    t.same(await fsp.readdir(tmp), [], `${signal}: no part file is left`)
  }
})

t.test('SIGINT during mirror --delete removes nothing: the keys the source lacks stay', async t => {
  const dataDir = testdir(t)
  const work = path.join(dataDir, '..', `${path.basename(dataDir)}-mirror`)
  t.teardown(async () => { await fsp.rm(work, { recursive: true, force: true }) })
  await threeLargeFiles(work)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const photos = (await registry.open('photos'))!
  for (const key of ['tree/old1', 'tree/old2']) await photos.put(key, 'kept')
  await registry.close()
  const tmp = path.join(dataDir, 'photos', '.fsbucket', 'tmp')

  const child = spawn(process.execPath, [bin, 'mirror', '--delete', '--part-size', '5MiB', '--parallel', '1', work, 'fsb://photos/tree', '--data', dataDir],
    { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const closed = new Promise<number | null>(resolve => child.on('close', resolve))
  while ((await fsp.readdir(tmp).catch(() => [])).length === 0) await new Promise(resolve => setImmediate(resolve))
  child.kill('SIGINT')
  t.equal(await closed, 130)
  t.notMatch(out, /remove:/, 'no removal printed')
  const after = await openRegistry(dataDir, { fsync: false })
  t.teardown(async () => { await after.close() })
  const listed = await (await after.open('photos'))!.list({ prefix: 'tree/old' })
  t.same(listed.objects.map(o => o.key), ['tree/old1', 'tree/old2'], 'the keys the source lacks are still there')
})
