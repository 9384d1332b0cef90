/**
 * HTTPS on both ports (src/server/tls.ts): a real `fsbucket serve` with a
 * self-signed certificate made here with openssl (node:crypto makes keys,
 * not X.509 certificates), reached by curl with --cacert and by the AWS
 * SDK with an agent trusting it; SIGHUP swaps the certificate (every
 * worker's), a bad new pair keeps the old one; both files or neither, and
 * files that are wrong, are one-line start-up errors. `startServer` takes a
 * pair too.
 */
import t, { type Test } from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { Agent, get, request } from 'node:https'
import path from 'node:path'
import { connect as netConnect, type Socket } from 'node:net'
import { connect, type PeerCertificate } from 'node:tls'
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { startServer } from '../../src/index.js'
import { hasOpenssl, selfSignedCertificate, type CertificatePair } from '../certificate.js'
import { testdir } from '../testdir.js'
import { freePort, run, within, type Served } from './serve-process.js'

const curl = spawnSync('curl', ['--version']).status === 0

/** Two certificates, and the files a server is given (`cert`, `key`), holding the first: a renewal writes the second over them. */
function renewable (t: Test): { dir: string, first: CertificatePair, second: CertificatePair, cert: string, key: string } {
  const dir = testdir(t)
  const first = selfSignedCertificate(dir, 'first')
  const second = selfSignedCertificate(dir, 'second')
  const cert = path.join(dir, 'cert.pem')
  const key = path.join(dir, 'key.pem')
  copyFileSync(first.cert, cert)
  copyFileSync(first.key, key)
  return { dir, first, second, cert, key }
}

/** `startServer` serving HTTPS with a new self-signed certificate (`ca`, which clients trust), closed after the test; `pair` its files. */
async function embeddedTls (t: Test, name: string): Promise<{ server: Awaited<ReturnType<typeof startServer>>, ca: Buffer, pair: CertificatePair }> {
  const pair = selfSignedCertificate(testdir(t), name)
  const ca = readFileSync(pair.cert)
  const server = await startServer({ tls: { cert: ca, key: readFileSync(pair.key) } })
  t.teardown(server.close)
  return { server, ca, pair }
}

/** The certificate a new TLS connection to `port` is served (not verified: the reload tests look at which one). */
async function servedCertificate (port: number): Promise<PeerCertificate> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const certificate = socket.getPeerCertificate()
      socket.end()
      resolve(certificate)
    })
    socket.once('error', reject)
  })
}

/** Waits until TLS connections succeed on `port`. */
async function tlsAnswering (port: number, served: Served, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (served.child.exitCode !== null) throw new Error(`the server exited: ${served.stderr()}`)
    try {
      await servedCertificate(port)
      return
    } catch {
      if (Date.now() > deadline) throw new Error(`no TLS on port ${port} within ${ms} ms: ${served.stderr()}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
}

async function until (what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

const base = ['--fsync', 'off', '--log-level', 'info']

t.test('serve --tls-cert/--tls-key: HTTPS on both ports, curl and the AWS SDK trusting the certificate', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const dir = testdir(t)
  const first = selfSignedCertificate(dir, 'first')
  const port = await freePort()
  const s3Port = await freePort()
  const served = run(['serve', '--data', path.join(dir, 'data'), '--port', String(port), '--s3-port', String(s3Port), '--workers', '1',
    '--tls-cert', first.cert, '--tls-key', first.key, ...base])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await tlsAnswering(port, served)
  await tlsAnswering(s3Port, served)
  t.match(served.stdout(), `"url":"https://127.0.0.1:${port}/_console/"`, 'the start-up lines give https URLs')
  t.match(served.stdout(), `"endpoint":"https://127.0.0.1:${s3Port}"`)

  if (curl) {
    const put = execFileSync('curl', ['-sS', '--cacert', first.cert, '-X', 'PUT', '--data-binary', 'over tls', `https://127.0.0.1:${port}/default/hello.txt`], { encoding: 'utf8' })
    t.match(put, /"key":"hello.txt"/, 'curl --cacert: a PUT on the HTTP gateway')
    t.equal(execFileSync('curl', ['-sS', '--cacert', first.cert, `https://127.0.0.1:${port}/default/hello.txt`], { encoding: 'utf8' }), 'over tls')
    const listing = execFileSync('curl', ['-sS', '--cacert', first.cert, `https://127.0.0.1:${s3Port}/`], { encoding: 'utf8' })
    t.match(listing, '<Name>default</Name>', 'curl --cacert: the S3 port lists the buckets')
    const plain = spawnSync('curl', ['-sS', `https://127.0.0.1:${port}/`], { encoding: 'utf8' })
    t.not(plain.status, 0, 'curl without the certificate refuses it')
  }

  const s3 = new S3Client({
    endpoint: `https://127.0.0.1:${s3Port}`,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: 'fsbucket-dev', secretAccessKey: 'fsbucket-dev-secret' },
    // The SDK's Node handler, configured with an agent that trusts the certificate.
    requestHandler: { httpsAgent: new Agent({ ca: execFileSync('cat', [first.cert]) }) }
  })
  t.teardown(() => { s3.destroy() })
  await s3.send(new PutObjectCommand({ Bucket: 'default', Key: 'sdk.txt', Body: 'from the sdk' }))
  const got = await s3.send(new GetObjectCommand({ Bucket: 'default', Key: 'hello.txt' }))
  t.equal(await got.Body?.transformToString(), 'over tls', 'the AWS SDK reads over HTTPS with its agent trusting the certificate')
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

for (const workers of ['1', '2']) {
  t.test(`SIGHUP re-reads the certificate (--workers ${workers}); a bad new pair keeps the old one`, { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
    const { dir, first, second, cert, key } = renewable(t)
    const port = await freePort()
    const s3Port = await freePort()
    const served = run(['serve', '--data', path.join(dir, 'data'), '--port', String(port), '--s3-port', String(s3Port), '--workers', workers,
      '--tls-cert', cert, '--tls-key', key, ...base])
    t.teardown(() => { served.child.kill('SIGKILL') })
    await tlsAnswering(port, served)
    await tlsAnswering(s3Port, served)
    // Every worker listens before the primary's start-up line.
    await until('started', 60_000, () => served.stdout().includes('web console:'))
    t.equal((await servedCertificate(port)).fingerprint256, first.fingerprint, 'the first certificate is served')

    const reloaded = (): number => served.stdout().split('\n').filter(line => line.includes('TLS certificate reloaded')).length
    copyFileSync(second.cert, cert)
    copyFileSync(second.key, key)
    served.child.kill('SIGHUP')
    await until('every process reloaded', 30_000, () => reloaded() === Number(workers))
    // Several connections: with workers they are spread over the processes, and each must serve the new one.
    for (let i = 0; i < 6; i++) {
      t.equal((await servedCertificate(port)).fingerprint256, second.fingerprint, `the HTTP gateway serves the new certificate (${i})`)
      t.equal((await servedCertificate(s3Port)).fingerprint256, second.fingerprint, `the S3 port serves the new certificate (${i})`)
    }

    writeFileSync(cert, 'not a certificate')
    served.child.kill('SIGHUP')
    // Read and judged once: by the process, or by the primary for its workers.
    await until('the failure is logged', 30_000, () => served.stdout().split('\n').filter(line => line.includes('TLS reload failed')).length === 1)
    t.match(served.stdout(), 'is not a PEM certificate', 'the log says why')
    t.equal((await servedCertificate(port)).fingerprint256, second.fingerprint, 'the previous certificate is still served')
    t.equal(served.child.exitCode, null, 'the server goes on')
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0)
  })
}

t.test('TLS start-up errors: both files or neither, unreadable or invalid files; one line, exit 1', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const dir = testdir(t)
  const pair = selfSignedCertificate(dir, 'pair')
  const other = selfSignedCertificate(dir, 'other')
  const garbage = path.join(dir, 'garbage.pem')
  writeFileSync(garbage, 'hello')
  const cases: Array<{ name: string, args: string[], env?: NodeJS.ProcessEnv, message: string | RegExp }> = [
    { name: 'only --tls-cert', args: ['--tls-cert', pair.cert], message: '--tls-cert (FSBUCKET_TLS_CERT) needs --tls-key (FSBUCKET_TLS_KEY): give both PEM files or neither' },
    { name: 'only FSBUCKET_TLS_KEY', args: [], env: { FSBUCKET_TLS_KEY: pair.key }, message: '--tls-key (FSBUCKET_TLS_KEY) needs --tls-cert (FSBUCKET_TLS_CERT)' },
    { name: 'a missing certificate', args: ['--tls-cert', path.join(dir, 'none.pem'), '--tls-key', pair.key], message: `cannot read the TLS certificate ${path.join(dir, 'none.pem')}: no such file (ENOENT)` },
    { name: 'a certificate that is not PEM', args: ['--tls-cert', garbage, '--tls-key', pair.key], message: `the TLS certificate ${garbage} is not a PEM certificate` },
    { name: 'a key that is not PEM', args: ['--tls-cert', pair.cert, '--tls-key', garbage], message: `the TLS key ${garbage} is not a PEM private key` },
    { name: 'a key of another certificate', args: ['--tls-cert', pair.cert, '--tls-key', other.key], message: `the TLS key ${other.key} does not belong to the certificate ${pair.cert}` }
  ]
  for (const workers of ['1', '2']) {
    for (const { name, args, env, message } of cases) {
      const served = run(['serve', '--data', path.join(dir, 'data'), '--port', String(await freePort()), '--s3-port', '0', '--workers', workers, ...args, ...base], { env })
      t.equal(await within(served.exited, 60_000, name), 1, `--workers ${workers}, ${name}: exit 1`)
      const lines = served.stderr().trim().split('\n')
      t.equal(lines.length, 1, `--workers ${workers}, ${name}: one line`)
      t.match(lines[0], message, `--workers ${workers}, ${name}: says what is wrong`)
      t.notMatch(served.stdout(), /listening/, `--workers ${workers}, ${name}: nothing listened`)
    }
  }
})

t.test('startServer({ tls }): both ports serve HTTPS', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const { server, ca, pair } = await embeddedTls(t, 'embedded')
  t.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/)
  t.match(server.s3.endpoint, /^https:\/\/127\.0\.0\.1:\d+$/)
  const agent = new Agent({ ca })
  const response = await new Promise<number>((resolve, reject) => {
    get(`${server.url}/_health/live`, { agent }, res => { res.resume(); resolve(res.statusCode ?? 0) }).on('error', reject)
  })
  t.equal(response, 200)
  t.equal((await servedCertificate(Number(new URL(server.s3.endpoint).port))).fingerprint256, pair.fingerprint)
  await t.rejects(startServer({ tls: { cert: 'nope', key: 'nope' } }), { message: /^the TLS certificate is not a PEM certificate/ })
})

/** A request over HTTPS trusting `ca`: its status and body. */
async function httpsAnswer (url: string, ca: Buffer, method: string, headers: Record<string, string>, body = ''): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: new Agent({ ca }) }, res => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => { resolve({ status: res.statusCode ?? 0, body: text }) })
    })
    req.on('error', reject).end(body)
  })
}

t.test('development mode over HTTPS: a page of the server\'s own https origin writes through both ports and the management API; its http twin is another origin', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const { server, ca } = await embeddedTls(t, 'origin')
  const doors = [
    { name: 'HTTP port', base: server.url, put: '/default/from-page.txt' },
    { name: 'S3 port', base: server.s3.endpoint, put: '/default/from-page.txt' }
  ]
  for (const door of doors) {
    const own = new URL(door.base).origin
    const same = await httpsAnswer(door.base + door.put, ca, 'PUT', { origin: own, 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain' }, 'page')
    t.equal(same.status, 200, `${door.name}: a write from ${own} is the server's own`)
    const twin = await httpsAnswer(door.base + door.put, ca, 'PUT', { origin: own.replace('https:', 'http:'), 'content-type': 'text/plain' }, 'page')
    t.equal(twin.status, 403, `${door.name}: the http origin of the same host and port is another origin`)
  }
  const created = await httpsAnswer(`${server.url}/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets`, ca, 'POST',
    { origin: new URL(server.url).origin, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json', authorization: 'Bearer console' }, JSON.stringify({ name: 'from-console' }))
  t.equal(created.status, 200, `the console's bucket creation over HTTPS: ${created.body}`)
})

/** What a port answers to plain HTTP: every byte until the server closes the connection. */
async function plainAnswer (port: number, requestLine = 'GET /default/x HTTP/1.1'): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => { socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\n\r\n`) })
    let text = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('close', () => { resolve(text) }).on('error', reject)
  })
}

t.test('plain HTTP sent to a TLS port is answered 400 in the clear, in the door\'s own envelope, and the port serves HTTPS on', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const { server, ca } = await embeddedTls(t, 'plain')
  const http = await plainAnswer(Number(new URL(server.url).port))
  t.match(http, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(http, /connection: close/i)
  t.equal(JSON.parse(http.slice(http.indexOf('\r\n\r\n') + 4)).errors[0].code, 40008)
  t.match(http, /speaks HTTPS only: send the request to its https:\/\/ URL/)
  const s3 = await plainAnswer(Number(new URL(server.s3.endpoint).port))
  t.match(s3, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(s3, /<Code>InvalidRequest<\/Code><Message>This port speaks HTTPS only/)
  t.match(s3, /x-amz-request-id: [0-9A-F]{16}/)
  for (const line of ['HEAD /_health/live HTTP/1.1', 'PUT /default/x HTTP/1.1', 'CONNECT 127.0.0.1:443 HTTP/1.1']) {
    t.match(await plainAnswer(Number(new URL(server.url).port), line), /^HTTP\/1\.1 400 Bad Request\r\n/, `${line.split(' ')[0]}: what OpenSSL knows for plain HTTP`)
  }
  // A method OpenSSL does not know is, for it, a wrong TLS version: closed unanswered, as any failed handshake.
  t.equal(await plainAnswer(Number(new URL(server.url).port), 'PROPFIND /default/x HTTP/1.1').catch(() => ''), '', 'PROPFIND: closed unanswered')
  // OpenSSL 3.5 (Node 24's) knows these too, 3.0 (Node 20's) does not: answered as plain HTTP, or closed unanswered.
  for (const method of ['DELETE', 'PATCH', 'OPTIONS']) {
    const answer = await plainAnswer(Number(new URL(server.url).port), `${method} /default/x HTTP/1.1`).catch(() => '')
    const plain = answer.startsWith('HTTP/1.1 400 Bad Request\r\n') && answer.includes('speaks HTTPS only')
    t.ok(answer === '' || plain, `${method}: answered as plain HTTP or closed unanswered, nothing else`)
  }
  const after = await httpsAnswer(`${server.url}/_health/live`, ca, 'GET', {})
  t.equal(after.status, 200, 'HTTPS is served as before')
})

t.test('a TLS connection that never finishes its handshake is closed after the idle timeout, and at once when the server closes', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const dir = testdir(t)
  const pair = selfSignedCertificate(dir, 'handshake')
  const server = await startServer({ tls: { cert: execFileSync('cat', [pair.cert]), key: execFileSync('cat', [pair.key]) }, idleTimeout: 1 })
  let closed = false
  t.teardown(async () => { if (!closed) await server.close() })
  const silent = async (port: number): Promise<{ socket: Socket, ended: Promise<number> }> => {
    const socket = netConnect(port, '127.0.0.1')
    await new Promise(resolve => socket.once('connect', resolve))
    const started = Date.now()
    return { socket, ended: new Promise(resolve => socket.once('close', () => { resolve(Date.now() - started) })) }
  }
  for (const url of [server.url, server.s3.endpoint]) {
    const { ended } = await silent(Number(new URL(url).port))
    const ms = await ended
    t.ok(ms >= 900 && ms < 5000, `${url}: closed after the idle timeout of 1 s (${ms} ms), not Node's 120 s`)
  }
  const { ended } = await silent(Number(new URL(server.url).port))
  const started = Date.now()
  await server.close()
  closed = true
  await ended
  t.ok(Date.now() - started < 900, `close() ended the handshaking connection at once (${Date.now() - started} ms)`)
})

t.test('a worker that replaces one that died serves the pair the primary accepted, not files half renewed since', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const { dir, first, second, cert, key } = renewable(t)
  const port = await freePort()
  const served = run(['serve', '--data', path.join(dir, 'data'), '--port', String(port), '--s3-port', '0', '--workers', '2',
    '--tls-cert', cert, '--tls-key', key, ...base])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await tlsAnswering(port, served)
  await until('started', 60_000, () => served.stdout().includes('web console:'))
  // A renewal half written: the new certificate beside the old key.
  copyFileSync(second.cert, cert)
  const children = (): number[] => readFileSync(`/proc/${served.child.pid}/task/${served.child.pid}/children`, 'utf8').split(' ').filter(s => s !== '').map(Number)
  const [victim] = children()
  process.kill(victim, 'SIGKILL')
  await until('a worker replaced it', 30_000, () => children().length === 2 && !children().includes(victim))
  // Replacements that could not start would die in turn, and six deaths within a minute (about 3 s) stop the server.
  await new Promise(resolve => setTimeout(resolve, 6000))
  t.equal(served.child.exitCode, null, 'the server goes on')
  t.equal(served.stdout().split('\n').filter(line => line.includes('worker died')).length, 1, 'one death: the one killed')
  for (let i = 0; i < 6; i++) {
    t.equal((await servedCertificate(port)).fingerprint256, first.fingerprint, `the accepted certificate is served (${i})`)
  }
  t.notMatch(served.stdout() + served.stderr(), /workers keep dying|does not belong/, 'no replacement failed')
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})


t.test('serve draining: a TLS connection still in its handshake as the signal comes has the idle grace to finish it and send its request, which is answered', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const dir = testdir(t)
  const pair = selfSignedCertificate(dir, 'drain')
  const port = await freePort()
  const served = run(['serve', '--data', path.join(dir, 'data'), '--port', String(port), '--s3-port', '0', '--workers', '1',
    '--tls-cert', pair.cert, '--tls-key', pair.key, ...base])
  t.teardown(() => { served.child.kill('SIGKILL') })
  await tlsAnswering(port, served)
  // Accepted, its ClientHello not yet sent: a handshake under way as far as the server knows.
  const raw = netConnect(port, '127.0.0.1')
  await new Promise(resolve => raw.once('connect', resolve))
  await new Promise(resolve => setTimeout(resolve, 100))
  served.child.kill('SIGTERM')
  // The handshake goes on once the drain has begun (the grace runs from then: a quarter second), or after 200 ms.
  const signalled = Date.now()
  while (!served.stdout().includes('draining: ') && Date.now() - signalled < 200) await new Promise(resolve => setTimeout(resolve, 5))
  const answer = await within(new Promise<string>((resolve, reject) => {
    const socket = connect({ socket: raw, ca: readFileSync(pair.cert), servername: 'localhost' }, () => {
      socket.write('GET /_health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    })
    let text = ''
    socket.on('data', chunk => { text += String(chunk) })
    socket.on('close', () => { resolve(text) })
    socket.on('error', reject)
  }), 10_000, 'the answer').catch((err: Error) => err.message)
  t.match(answer, /^HTTP\/1\.1 200 /, 'answered, not met with a reset')
  t.match(answer, /\r\nconnection: close\r\n/i, 'and its connection closed after it')
  t.equal(await within(served.exited, 10_000, 'exit'), 0, 'exit 0')
})
