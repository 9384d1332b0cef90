/**
 * A connection cut in the middle of an answer (the server sends its headers
 * and part of the body, then closes or resets the connection) fails the
 * command with one line naming the endpoint and what happened, never Node's
 * bare "aborted", and a download cut short leaves no file. The server is a
 * bare node:http one that answers part of what a gateway would.
 */
import t from 'tap'
import type { Test } from 'tap'
import { promises as fsp } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { runBin } from './fixture.js'

const size = 100
const object = { key: 'cut.bin', size, etag: 'e', uploaded: new Date().toISOString(), storageClass: 'Standard', httpMetadata: {}, customMetadata: {} }
const listing = JSON.stringify({ success: true, errors: [], messages: [], result: [object], result_info: { truncated: false, delimitedPrefixes: [] } })

/** Sends the headers and the first part of `body` (its whole length announced), then cuts the connection: closed, or reset. */
function cutShort (response: http.ServerResponse, body: Buffer, how: 'close' | 'reset'): void {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) })
  // Once the part is with the kernel, so that it reaches the client before the end of the connection does.
  response.write(body.subarray(0, Math.floor(body.length / 2)), () => {
    if (how === 'reset') response.socket?.resetAndDestroy()
    else response.socket?.destroy()
  })
}

/**
 * A gateway whose listing of `photos` answers whole; every other answer is
 * cut short: the object's body, the listing of `cut`, the list of buckets
 * (reset), a bucket's creation and an upload's envelope.
 */
async function gateway (t: Test): Promise<string> {
  const server = http.createServer((request, response) => {
    const url = request.url ?? ''
    if (url.startsWith('/photos?')) {
      response.setHeader('content-type', 'application/json')
      response.end(listing)
    } else if (request.method === 'GET' && url.startsWith('/photos/')) {
      cutShort(response, Buffer.alloc(size, 1), 'close')
    } else if (url.startsWith('/cut?')) {
      cutShort(response, Buffer.from(listing), 'close')
    } else if (url === '/') {
      cutShort(response, Buffer.from(JSON.stringify({ success: true, errors: [], messages: [], result: [] })), 'reset')
    } else {
      // A bucket's creation, an upload: the request is read whole, and its answer cut.
      request.resume()
      request.on('end', () => { cutShort(response, Buffer.from(JSON.stringify({ success: true, errors: [], messages: [], result: object })), 'reset') })
    }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const cut = 'the connection was cut before the answer was complete'

t.test('a download cut short fails with the endpoint named, and leaves no file', async t => {
  const work = testdir(t)
  const endpoint = await gateway(t)
  const got = await runBin(['cp', 'fsb://photos/cut.bin', 'got.bin', '--endpoint', endpoint], { cwd: work })
  t.equal(got.stderr, `fsbucket: cp fsb://photos/cut.bin: ${endpoint}: ${cut}\n`)
  t.equal(got.code, 1)
  t.same(await fsp.readdir(work), [], 'no file, temporary or not')

  await fsp.mkdir(path.join(work, 'into'))
  const into = await runBin(['cp', 'fsb://photos/cut.bin', 'into/', '--endpoint', endpoint], { cwd: work })
  t.equal(into.stderr, `fsbucket: cp fsb://photos/cut.bin: ${endpoint}: ${cut}\n`, 'into a directory')
  t.equal(into.code, 1)
  t.same(await fsp.readdir(path.join(work, 'into')), [], 'no file in the directory')

  const cat = await runBin(['cat', 'fsb://photos/cut.bin', '--endpoint', endpoint], { cwd: work })
  t.equal(cat.stderr, `fsbucket: cat fsb://photos/cut.bin: ${endpoint}: ${cut}\n`)
  t.equal(cat.code, 1)
})

t.test('a listing or a JSON answer cut short (closed or reset) fails with the endpoint named', async t => {
  const work = testdir(t)
  const endpoint = await gateway(t)
  await fsp.writeFile(path.join(work, 'a.txt'), 'a')
  for (const [args, target] of [
    [['ls', 'fsb://cut'], 'ls fsb://cut'],
    [['ls'], 'ls'],
    [['mb', 'fsb://fresh'], 'mb fsb://fresh'],
    [['cp', 'a.txt', 'fsb://photos/a.txt'], 'cp a.txt']
  ] as const) {
    const result = await runBin([...args, '--endpoint', endpoint], { cwd: work })
    t.equal(result.stderr, `fsbucket: ${target}: ${endpoint}: ${cut}\n`, args.join(' '))
    t.equal(result.code, 1, `${args.join(' ')}: exit 1`)
  }
})
