/**
 * Large bodies over real sockets: the HTTP door hands each 1 MiB read chunk
 * back to the store once the socket has taken it, and the store reads the
 * next bytes into it. Many concurrent GETs and ranges of different objects,
 * some of them from clients that stop reading half-way, must each receive
 * exactly their own bytes: a chunk handed back too early would show here as
 * another object's bytes in a body.
 */
import { createHash } from 'node:crypto'
import http from 'node:http'
import t, { type Test } from 'tap'
import { auth, gateway } from './gateway-fixture.js'

const MiB = 1024 * 1024

function pattern (size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(size)
  let x = seed
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    bytes[i] = x >>> 24
  }
  return bytes
}

const md5 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex')

/** GET over a socket; reads slowly when asked to, so the socket's buffer fills and the stream pauses. */
async function get (port: number, path: string, headers: Record<string, string>, slow = false, abortAfter?: number): Promise<{ status: number, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { ...auth, ...headers } }, res => {
      const chunks: Buffer[] = []
      let received = 0
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        received += chunk.byteLength
        if (abortAfter !== undefined && received >= abortAfter) {
          req.destroy()
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) })
          return
        }
        if (slow) {
          res.pause()
          setTimeout(() => res.resume(), 2)
        }
      })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }) })
      res.on('error', reject)
    })
    req.on('error', err => { if (abortAfter === undefined) reject(err) })
  })
}

t.test('concurrent large GETs and ranges each receive their own bytes', async t => {
  const { app } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const objects = [pattern(9 * MiB + 123, 1), pattern(6 * MiB, 2), pattern(3 * MiB + 7, 3)]
  for (const [i, bytes] of objects.entries()) {
    const res = await app.inject({ method: 'PUT', url: `/photos/big-${i}`, headers: auth, payload: bytes })
    t.equal(res.statusCode, 200)
  }
  for (let round = 0; round < 3; round++) {
    const requests = objects.flatMap((bytes, i) => [
      get(port, `/photos/big-${i}`, {}, i === round).then(r => ({ r, want: bytes, what: `GET big-${i}` })),
      get(port, `/photos/big-${i}`, { range: `bytes=${MiB}-${3 * MiB - 1}` }).then(r => ({ r, want: bytes.subarray(MiB, 3 * MiB), what: `range of big-${i}` })),
      // A client that goes away after 2 MiB: its chunks must not come back while still queued.
      get(port, `/photos/big-${i}`, {}, false, 2 * MiB).then(() => null)
    ])
    for (const done of await Promise.all(requests)) {
      if (done === null) continue
      t.equal(done.r.status, done.what.startsWith('range') ? 206 : 200, done.what)
      t.equal(done.r.body.byteLength, done.want.byteLength, `${done.what}: length`)
      t.equal(md5(done.r.body), md5(done.want), `${done.what}: its own bytes (round ${round})`)
    }
  }
})

t.test('a body whose file fails before its first chunk still gets an error answer', async t => {
  const { app, dataDir } = await gateway(t)
  const res = await app.inject({ method: 'PUT', url: '/photos/cut', headers: auth, payload: pattern(4 * MiB, 9) })
  t.equal(res.statusCode, 200)
  const { readdirSync, truncateSync } = await import('node:fs')
  const path = await import('node:path')
  const blobs = path.join(dataDir, 'photos', '.fsbucket', 'blobs')
  for (const sub of readdirSync(blobs)) for (const name of readdirSync(path.join(blobs, sub))) truncateSync(path.join(blobs, sub, name), 0)
  const cut = await app.inject({ method: 'GET', url: '/photos/cut', headers: auth })
  t.equal(cut.statusCode, 500, 'the shortened body is an error, not an empty 200')
})

/** Sets the size of every body file of `bucket` (one object each here): cut short or grown. */
async function resizeBodies (dataDir: string, bucket: string, size: number): Promise<void> {
  const { readdirSync, truncateSync } = await import('node:fs')
  const path = await import('node:path')
  const blobs = path.join(dataDir, bucket, '.fsbucket', 'blobs')
  for (const sub of readdirSync(blobs)) for (const name of readdirSync(path.join(blobs, sub))) truncateSync(path.join(blobs, sub, name), size)
}

function logLines (lines: string[]): Array<Record<string, unknown>> {
  return lines.join('').trim().split('\n').filter(line => line !== '').map(line => JSON.parse(line) as Record<string, unknown>)
}

async function logged (t: Test): Promise<{ app: Awaited<ReturnType<typeof gateway>>['app'], dataDir: string, port: number, lines: string[] }> {
  const { Writable } = await import('node:stream')
  const lines: string[] = []
  const logDestination = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const { app, dataDir } = await gateway(t, { logLevel: 'info', logDestination })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  return { app, dataDir, port, lines }
}

t.test('a body file of 16 to 64 KiB that does not hold its size is an error before any header, never a short or a longer body', async t => {
  const { app, dataDir, port, lines } = await logged(t)
  for (const [size, what] of [[1000, 'shorter'], [40000, 'longer']] as const) {
    const key = `mid-${what}`
    t.equal((await app.inject({ method: 'PUT', url: `/photos/${key}`, headers: auth, payload: pattern(30000, 4) })).statusCode, 200)
    await resizeBodies(dataDir, 'photos', size)
    for (const headers of [{}, { range: 'bytes=500-1500' }, { origin: 'http://127.0.0.1' }] as Array<Record<string, string>>) {
      const res = await get(port, `/photos/${key}`, headers)
      t.equal(res.status, 500, `${what} file, ${JSON.stringify(headers)}: 500`)
      t.match(JSON.parse(res.body.toString()), { success: false, errors: [{ code: 10001 }] }, 'the code of an internal error')
    }
    await app.inject({ method: 'DELETE', url: `/photos/${key}`, headers: auth })
  }
  const failed = logLines(lines).filter(line => line.level === 50 && line.msg !== 'request')
  t.equal(failed.length, 6, 'each logged at error')
  t.match(failed[0], { err: { message: /shorter than its catalog entry/, path: /blobs/ } }, 'with the reason and the file')
  t.match(failed[5], { err: { message: /longer than its catalog entry/ } })
})

t.test('a large body file cut short or grown fails with 500 before its headers, never sent as another length', async t => {
  const { app, dataDir, port, lines } = await logged(t)
  for (const [size, what] of [[5000, 'shorter'], [200000, 'longer']] as const) {
    const key = `big-${what}`
    t.equal((await app.inject({ method: 'PUT', url: `/photos/${key}`, headers: auth, payload: pattern(100000, 5) })).statusCode, 200)
    await resizeBodies(dataDir, 'photos', size)
    for (const headers of [{}, { range: 'bytes=0-99' }, { origin: 'http://127.0.0.1' }] as Array<Record<string, string>>) {
      const res = await get(port, `/photos/${key}`, headers)
      t.equal(res.status, 500, `${what} file, ${JSON.stringify(headers)}: an error answer, not the object`)
      t.match(JSON.parse(res.body.toString()), { success: false, errors: [{ code: 10001 }] })
    }
    await app.inject({ method: 'DELETE', url: `/photos/${key}`, headers: auth })
  }
  const failed = logLines(lines).filter(line => line.level === 50 && line.msg !== 'request')
  t.equal(failed.length, 6, 'each logged at error')
  t.match(failed[0], { err: { message: /shorter than its catalog entry/, path: /blobs/ } }, 'with the reason and the file')
  t.match(failed[5], { err: { message: /longer than its catalog entry/, path: /blobs/ } })
})

t.test('an object of several part files, one of them cut short or grown, fails with 500 before its headers', async t => {
  const { app, dataDir, port } = await logged(t)
  const created = await app.inject({ method: 'POST', url: '/photos/parts?action=mpu-create', headers: auth })
  const uploadId = encodeURIComponent((JSON.parse(created.body) as { result: { uploadId: string } }).result.uploadId)
  const parts = []
  for (const [n, body] of [[1, pattern(5 * MiB, 7)], [2, pattern(3000, 8)]] as const) {
    const res = await app.inject({ method: 'PUT', url: `/photos/parts?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=${n}`, headers: auth, payload: body })
    parts.push({ partNumber: n, etag: (JSON.parse(res.body) as { result: { etag: string } }).result.etag })
  }
  const done = await app.inject({ method: 'POST', url: `/photos/parts?action=mpu-complete&uploadId=${uploadId}`, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ parts }) })
  t.equal(done.statusCode, 200, done.body)
  t.equal((await get(port, '/photos/parts', {})).status, 200, 'whole, it is served')
  const { readdirSync, statSync, truncateSync } = await import('node:fs')
  const path = await import('node:path')
  const blobs = path.join(dataDir, 'photos', '.fsbucket', 'blobs')
  const files = readdirSync(blobs).flatMap(sub => readdirSync(path.join(blobs, sub)).map(name => path.join(blobs, sub, name)))
  const second = files.find(file => statSync(file).size === 3000)!
  for (const size of [2000, 4000]) {
    truncateSync(second, size)
    // A range of the first part only: every file is measured, whichever the range reads.
    for (const headers of [{}, { range: 'bytes=0-99' }] as Array<Record<string, string>>) {
      t.equal((await get(port, '/photos/parts', headers)).status, 500, `the second part ${size < 3000 ? 'cut short' : 'grown'}, ${JSON.stringify(headers)}: 500`)
    }
  }
})

t.test('a large body cut short while it is sent is logged at error as an incomplete answer', async t => {
  const { app, dataDir, port, lines } = await logged(t)
  // Far more than the sockets' buffers on both sides hold: the server still has most of it to read when the file is cut.
  const size = 64 * MiB
  const body = Buffer.alloc(size, 6)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/cut', headers: auth, payload: body })).statusCode, 200)
  for (const headers of [{}, { origin: 'http://127.0.0.1' }] as Array<Record<string, string>>) {
    // The file is cut once the answer has begun (it held its size when opened); the connection is cut: no complete answer.
    const res = await new Promise<{ status: number, received: number } | Error>(resolve => {
      const req = http.get({ host: '127.0.0.1', port, path: '/photos/cut', headers: { ...auth, ...headers } }, res => {
        let received = 0
        res.once('data', () => {
          res.pause()
          resizeBodies(dataDir, 'photos', 1.5 * MiB).then(() => res.resume(), resolve)
        })
        res.on('data', (chunk: Buffer) => { received += chunk.byteLength })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, received }) })
        res.on('error', resolve)
      })
      req.on('error', resolve)
    })
    t.ok(res instanceof Error || res.received < size, 'the connection is cut before the whole body')
    t.equal((await app.inject({ method: 'PUT', url: '/photos/cut', headers: auth, payload: body })).statusCode, 200, 'written again for the next try')
  }
  await new Promise(resolve => setTimeout(resolve, 100))
  const gets = logLines(lines).filter(line => line.method === 'GET')
  t.equal(gets.length, 2, 'one line per request (beside Fastify, and through its route)')
  for (const line of gets) {
    t.match(line, { level: 50, msg: 'request', bucket: 'photos', key: 'cut', incomplete: true, err: { message: /shorter than its catalog entry/ } })
    t.ok(typeof line.bytes === 'number' && line.bytes >= MiB && line.bytes < size, `the bytes sent before the cut: ${String(line.bytes)}`)
  }
})

t.test('a client that goes away mid-body: its line says incomplete, with the bytes handed to the socket, at info', async t => {
  const { app, port, lines } = await logged(t)
  const size = 64 * MiB
  t.equal((await app.inject({ method: 'PUT', url: '/photos/left', headers: auth, payload: Buffer.alloc(size, 3) })).statusCode, 200)
  for (const headers of [{}, { origin: 'http://127.0.0.1' }] as Array<Record<string, string>>) {
    // Beside Fastify, and through its route (an Origin takes a read there).
    await get(port, '/photos/left', headers, false, MiB)
  }
  await new Promise(resolve => setTimeout(resolve, 200))
  const gets = logLines(lines).filter(line => line.method === 'GET')
  t.equal(gets.length, 2, 'one line each')
  for (const line of gets) {
    t.match(line, { level: 30, msg: 'request', bucket: 'photos', key: 'left', status: 200, incomplete: true })
    t.ok(typeof line.bytes === 'number' && line.bytes >= MiB && line.bytes < size, `the bytes handed over, not the object's size: ${String(line.bytes)}`)
  }
})

t.test('a streamed body sent whole is logged once, complete, whichever path and however its last bytes go', async t => {
  const { app, port, lines } = await logged(t)
  // A short last chunk: its write is still queued when the stream ends.
  const size = 2 * MiB + 100
  t.equal((await app.inject({ method: 'PUT', url: '/photos/tail', headers: auth, payload: pattern(size, 4) })).statusCode, 200)
  const before = logLines(lines).length
  for (const headers of [{}, { origin: 'http://127.0.0.1' }] as Array<Record<string, string>>) {
    t.equal((await get(port, '/photos/tail', headers)).body.byteLength, size)
  }
  const injected = await app.inject({ method: 'GET', url: '/photos/tail', headers: { ...auth, origin: 'http://127.0.0.1' } })
  t.equal(injected.rawPayload.byteLength, size)
  await new Promise(resolve => setTimeout(resolve, 200))
  const gets = logLines(lines).slice(before).filter(line => line.method === 'GET')
  t.equal(gets.length, 3, 'one line a request')
  for (const line of gets) {
    t.match(line, { level: 30, status: 200, bytes: size })
    t.equal(line.incomplete, undefined, 'not said to be incomplete')
  }
})

t.test('a client that goes away before the first byte of a streamed body: incomplete, 0 bytes', async t => {
  const { app, port, lines } = await logged(t)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/early', headers: auth, payload: Buffer.alloc(8 * MiB, 2) })).statusCode, 200)
  const before = logLines(lines).length
  await new Promise<void>(resolve => {
    const req = http.get({ host: '127.0.0.1', port, path: '/photos/early', headers: { ...auth, origin: 'http://127.0.0.1' } })
    req.on('response', res => { res.destroy(); resolve() })
    req.on('error', () => { resolve() })
  })
  await new Promise(resolve => setTimeout(resolve, 200))
  const gets = logLines(lines).slice(before).filter(line => line.method === 'GET')
  t.equal(gets.length, 1, 'its line')
  t.match(gets[0], { level: 30, status: 200, incomplete: true })
  t.ok(typeof gets[0].bytes === 'number' && gets[0].bytes < 8 * MiB, `bytes handed over: ${String(gets[0].bytes)}`)
})
