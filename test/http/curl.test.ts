/**
 * The upload and download forms people use with the real curl, over a real
 * socket: -T (with Expect: 100-continue), --data-binary, -T - (chunked from a
 * pipe), -F (multipart form), -r ranges, -z and ETag revalidation, and a
 * client killed in the middle of an upload.
 */
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { auth, gateway, token } from './gateway-fixture.js'

const run = promisify(execFile)

async function curl (...args: string[]): Promise<{ stdout: string, stderr: string }> {
  return await run('curl', ['-sS', '-H', `Authorization: Bearer ${token}`, ...args], { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' })
}

const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex')

t.test('curl against a listening gateway', async t => {
  const { app, registry } = await gateway(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const base = `http://127.0.0.1:${address.port}`
  // Files to upload live apart from the data directory (testdir(t) is the gateway's).
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'fsbucket-curl-'))
  t.teardown(async () => { await fsp.rm(dir, { recursive: true, force: true }) })
  const file = path.join(dir, 'photo.jpg')
  const bytes = randomBytes(3 * 1024 * 1024 + 17)
  await fsp.writeFile(file, bytes)
  const stored = async (key: string): Promise<Buffer> =>
    Buffer.from(await (await fetch(`${base}/photos/${key}`, { headers: auth })).arrayBuffer())

  t.test('-T file with Expect: 100-continue', async t => {
    const { stderr, stdout } = await curl('-v', '-H', 'Expect: 100-continue', '-T', file, `${base}/photos/uploads/t.jpg`)
    t.match(stderr, /HTTP\/1\.1 100 Continue/, 'the server said continue')
    t.equal(JSON.parse(stdout).result.etag, md5(bytes))
    t.equal(md5(await stored('uploads/t.jpg')), md5(bytes))
  })

  t.test('--data-binary @file', async t => {
    const { stdout } = await curl('-X', 'PUT', '--data-binary', `@${file}`, `${base}/photos/uploads/d.jpg`)
    t.equal(JSON.parse(stdout).result.size, bytes.length)
    t.equal(md5(await stored('uploads/d.jpg')), md5(bytes))
  })

  t.test('-T - : a chunked body from a pipe, no Content-Length', async t => {
    const { stdout, stderr } = await run('sh', ['-c', `cat "${file}" | curl -sS -v -H "Authorization: Bearer ${token}" -T - "${base}/photos/uploads/piped.jpg"`], { maxBuffer: 16 * 1024 * 1024 })
    t.match(stderr, /Transfer-Encoding: chunked/i)
    t.equal(JSON.parse(stdout).result.etag, md5(bytes))
    t.equal(md5(await stored('uploads/piped.jpg')), md5(bytes))
  })

  t.test('-F file=@photo.jpg', async t => {
    const { stdout } = await curl('-F', `file=@${file};type=image/jpeg`, `${base}/photos`)
    t.same(JSON.parse(stdout).result.map((o: { key: string }) => o.key), ['photo.jpg'])
    const res = await fetch(`${base}/photos/photo.jpg`, { headers: auth })
    t.equal(res.headers.get('content-type'), 'image/jpeg')
    t.equal(md5(Buffer.from(await res.arrayBuffer())), md5(bytes))
    const { stdout: prefixed } = await curl('-F', 'prefix=albums/', '-F', `file=@${file}`, `${base}/photos`)
    t.equal(JSON.parse(prefixed).result[0].key, 'albums/photo.jpg')
  })

  t.test('-r ranges', async t => {
    const { stdout: head } = await run('curl', ['-sS', '-H', `Authorization: Bearer ${token}`, '-r', '0-99', '-D', '-', '-o', path.join(dir, 'part'), `${base}/photos/uploads/t.jpg`], { encoding: 'utf8' })
    t.match(head, /^HTTP\/1\.1 206/)
    t.match(head, new RegExp(`content-range: bytes 0-99/${bytes.length}`, 'i'))
    t.same(await fsp.readFile(path.join(dir, 'part')), bytes.subarray(0, 100))
    await run('curl', ['-sS', '-H', `Authorization: Bearer ${token}`, '-r', '-10', '-o', path.join(dir, 'tail'), `${base}/photos/uploads/t.jpg`])
    t.same(await fsp.readFile(path.join(dir, 'tail')), bytes.subarray(bytes.length - 10))
    const { stdout: code } = await curl('-r', `${bytes.length}-`, '-o', '/dev/null', '-w', '%{http_code}', `${base}/photos/uploads/t.jpg`)
    t.equal(code, '416')
  })

  t.test('-z and ETag revalidation answer 304', async t => {
    const future = new Date(Date.now() + 3600_000).toUTCString()
    const { stdout: fresh } = await curl('-z', future, '-o', '/dev/null', '-w', '%{http_code}', `${base}/photos/uploads/t.jpg`)
    t.equal(fresh, '304', 'not modified since a later date')
    const { stdout: stale } = await curl('-z', 'Thu, 01 Jan 2015 00:00:00 GMT', '-o', '/dev/null', '-w', '%{http_code}', `${base}/photos/uploads/t.jpg`)
    t.equal(stale, '200')
    const etagFile = path.join(dir, 'etag')
    await curl('--etag-save', etagFile, '-o', '/dev/null', `${base}/photos/uploads/t.jpg`)
    t.equal((await fsp.readFile(etagFile, 'utf8')).trim(), `"${md5(bytes)}"`)
    const { stdout: revalidated } = await curl('--etag-compare', etagFile, '-o', '/dev/null', '-w', '%{http_code}', `${base}/photos/uploads/t.jpg`)
    t.equal(revalidated, '304')
  })

  t.test('UTF-8 metadata survives the wire', async t => {
    await curl('-T', file, '-H', 'x-meta-city: Zürich', `${base}/photos/meta.jpg`)
    const { stdout } = await curl('-I', `${base}/photos/meta.jpg`)
    t.match(stdout, /x-meta-city: Zürich/)
  })

  t.test('a huge header does not bring the server down', async t => {
    const { stdout } = await curl('-o', '/dev/null', '-w', '%{http_code}', '-H', `x-meta-huge: ${'h'.repeat(40_000)}`, '-T', file, `${base}/photos/huge`)
    t.equal(stdout, '431')
    const { stdout: after } = await curl('-o', '/dev/null', '-w', '%{http_code}', `${base}/photos/uploads/t.jpg`)
    t.equal(after, '200', 'still serving')
  })

  t.test('a client killed mid-upload leaves no object and no leftover', async t => {
    const big = path.join(dir, 'big.bin')
    await fsp.writeFile(big, randomBytes(8 * 1024 * 1024))
    const client = spawn('curl', ['-sS', '-H', `Authorization: Bearer ${token}`, '--limit-rate', '1M', '-T', big, `${base}/photos/killed.bin`], { stdio: 'ignore' })
    await new Promise(resolve => setTimeout(resolve, 1500))
    client.kill('SIGKILL')
    await new Promise(resolve => client.once('exit', resolve))
    // Give the server a moment to see the reset and discard the staged body.
    await new Promise(resolve => setTimeout(resolve, 300))
    t.equal((await fetch(`${base}/photos/killed.bin`, { method: 'HEAD', headers: auth })).status, 404)
    const bucket = await registry.open('photos')
    const report = await bucket!.sweep({ leftoverGraceMs: 0 })
    t.equal(report.removedLeftovers, 0, 'nothing was left for the sweeper')
  })
})
