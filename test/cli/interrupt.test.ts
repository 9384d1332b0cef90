/**
 * An interrupted transfer leaves nothing behind: Ctrl-C (SIGINT) during a
 * multipart upload from stdin aborts the upload before the command exits
 * with 130, and during a download removes its temporary file. The gateway
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
