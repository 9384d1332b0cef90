/**
 * A server that stops answering fails a command instead of hanging it
 * (`--timeout`, seconds of silence), and a transfer whose bytes keep moving
 * is never cut however long it lasts. The servers here are bare node:http
 * ones that answer as a stopped gateway would (not at all) or slowly. A
 * connection that never opens fails after the connect timeout: the transport
 * is given a short one, and a host name whose lookup never answers, so its
 * socket is connecting and never connects.
 */
import t from 'tap'
import type { Test } from 'tap'
import { promises as fsp } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { spawn } from 'node:child_process'
import { HttpTransport } from '../../src/cli/transport-http.js'
import { bin, cleanEnv, runBin } from './fixture.js'

const size = 8
const object = { key: 'slow.bin', size, etag: 'e', uploaded: new Date().toISOString(), storageClass: 'Standard', httpMetadata: {}, customMetadata: {} }

/** A gateway whose listing of `photos` answers, and whose object bodies come as `body` sends them. */
async function gateway (t: Test, body: (response: http.ServerResponse) => void): Promise<string> {
  const server = http.createServer((request, response) => {
    if (request.url?.startsWith('/photos?') === true) {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ success: true, errors: [], messages: [], result: [object], result_info: { truncated: false, delimitedPrefixes: [] } }))
      return
    }
    if (request.url?.startsWith('/photos/') === true) body(response)
    // Anything else is never answered: a stopped server.
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('a server that never answers fails the command after --timeout seconds', async t => {
  const work = testdir(t)
  const endpoint = await gateway(t, () => {})
  const started = Date.now()
  const listed = await runBin(['ls', 'fsb://other', '--endpoint', endpoint, '--timeout', '1'], { cwd: work })
  t.equal(listed.code, 1)
  t.equal(listed.stderr, `fsbucket: ls fsb://other: ${endpoint} stopped answering: nothing moved for 1 s (--timeout)\n`)
  t.ok(Date.now() - started < 10_000, 'in about the time given')
  const fromEnv = await runBin(['stat', 'fsb://other/x', '--endpoint', endpoint], { cwd: work, env: { FSBUCKET_TIMEOUT: '1' } })
  t.equal(fromEnv.stderr, `fsbucket: stat fsb://other/x: ${endpoint} stopped answering: nothing moved for 1 s (--timeout)\n`, 'FSBUCKET_TIMEOUT sets it too')
})

t.test('a body that stalls fails the download, and leaves no file', async t => {
  const work = testdir(t)
  const endpoint = await gateway(t, response => {
    response.writeHead(200, { 'content-length': String(size) })
    response.write(Buffer.alloc(size / 2, 1))
  })
  const got = await runBin(['cp', 'fsb://photos/slow.bin', 'got.bin', '--endpoint', endpoint, '--timeout', '1'], { cwd: work })
  t.equal(got.code, 1)
  t.equal(got.stderr, `fsbucket: cp fsb://photos/slow.bin: ${endpoint} stopped answering: nothing moved for 1 s (--timeout)\n`)
  t.same(await fsp.readdir(work), [], 'no file, temporary or not')
})

t.test('a transfer longer than --timeout whose bytes keep moving is not cut', async t => {
  const work = testdir(t)
  const endpoint = await gateway(t, response => {
    response.writeHead(200, { 'content-length': String(size) })
    let sent = 0
    const timer = setInterval(() => {
      response.write(Buffer.from([sent]))
      if (++sent === size) {
        clearInterval(timer)
        response.end()
      }
    }, 400) // 3.2 s in all, never 1 s without a byte
  })
  const got = await runBin(['cp', 'fsb://photos/slow.bin', 'got.bin', '--endpoint', endpoint, '--timeout', '1'], { cwd: work })
  t.equal(got.code, 0, got.stderr)
  t.same(await fsp.readFile(path.join(work, 'got.bin')), Buffer.from([0, 1, 2, 3, 4, 5, 6, 7]))
})

t.test('--timeout takes whole seconds from 1 to a day', async t => {
  const work = testdir(t)
  for (const value of ['0', '1.5', '86401', 'soon']) {
    const refused = await runBin(['ls', '--endpoint', 'http://127.0.0.1:9', '--timeout', value], { cwd: work })
    t.equal(refused.code, 1, `${value}: exit 1`)
    t.match(refused.stderr, /expected a number of seconds from 1 to 86400/)
  }
})

t.test('a download its reader holds back longer than --timeout is not cut (cat | less)', async t => {
  const work = testdir(t)
  const big = 16 * 1024 * 1024
  const endpoint = await gateway(t, response => {
    response.writeHead(200, { 'content-length': String(big) })
    response.end(Buffer.alloc(big, 7))
  })
  const child = spawn(process.execPath, [bin, 'cat', 'fsb://photos/slow.bin', '--endpoint', endpoint, '--timeout', '1'], { cwd: work, env: cleanEnv() })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const closed = new Promise<number | null>(resolve => child.on('close', resolve))
  // The reader reads nothing for 3 s: the pipe fills, the command waits for it, the connection is still.
  await new Promise(resolve => setTimeout(resolve, 3000))
  let received = 0
  child.stdout.on('data', (chunk: Buffer) => { received += chunk.length })
  t.equal(await closed, 0, stderr)
  t.equal(received, big, 'every byte, once read')
})

t.test('a connection that never opens fails the request after the connect timeout', async t => {
  const looked: string[] = []
  const transport = new HttpTransport('http://gateway.test:8787', undefined, 60, {
    timeoutMs: 50,
    lookup: hostname => { looked.push(hostname) } // never answers
  })
  t.teardown(async () => { await transport.close() })
  // Without the timeout the request would wait for ever: this says so instead of hanging the test.
  let guard: NodeJS.Timeout | undefined
  const waitedOut = new Promise<never>((_resolve, reject) => {
    guard = setTimeout(() => { reject(new Error('still connecting after 5 s')) }, 5000)
  })
  try {
    await t.rejects(Promise.race([transport.listBuckets(), waitedOut]), { name: 'CliError', message: 'cannot reach http://gateway.test:8787: no connection after 0.05 s' })
  } finally {
    clearTimeout(guard)
  }
  t.same(looked, ['gateway.test'], 'the connection was under way, not refused')
})
