/**
 * `startServer` checks its options before anything opens: an option it does
 * not know (a misspelt `datadir` would otherwise start in memory), a value
 * of the wrong type or empty, an unknown log level and a `tls` without both
 * parts are each refused as a TypeError with Node's code, naming the option.
 * And `idleTimeout`: a request whose body stopped arriving is answered 408
 * after it, and `close()` resolves then, not after 60 s.
 */
import t, { type Test } from 'tap'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import path from 'node:path'
import { startServer, type StartServerOptions } from '../../src/index.js'
import { hasOpenssl, selfSignedCertificate } from '../certificate.js'
import { testdir } from '../testdir.js'

const wrongType = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }
const wrongValue = { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' }

async function refused (t: Test, options: unknown, expected: object, message: RegExp): Promise<void> {
  await t.rejects(startServer(options as StartServerOptions), { ...expected, message }, JSON.stringify(options) ?? String(options))
}

t.test('unknown options are refused, naming the one meant when only its case differs', async t => {
  const dir = path.join(testdir(t), 'data')
  await refused(t, { datadir: dir }, wrongValue, /^startServer: unknown option datadir \(did you mean dataDir\?\)$/)
  await refused(t, { dataDirectory: dir }, wrongValue, /^startServer: unknown option dataDirectory \(known: dataDir, memory, /)
  await refused(t, { s3port: 18580 }, wrongValue, /did you mean s3Port\?/)
  await refused(t, { fsnyc: false, dataDir: dir }, wrongValue, /^startServer: unknown option fsnyc \(did you mean fsync\?\)$/)
  await refused(t, { tls: { certificate: 'x', privateKey: 'y' } }, wrongValue, /unknown option tls\.certificate \(known: cert, key\)/)
  t.notOk(existsSync(dir), 'no data directory was made')
})

t.test('options of the wrong type, or empty, are refused', async t => {
  const dir = path.join(testdir(t), 'data')
  await refused(t, null, wrongType, /^startServer: options must be an object \(got null\)$/)
  await refused(t, 'memory', wrongType, /options must be an object \(got string "memory"\)/)
  await refused(t, { memory: 'no' }, wrongType, /^startServer: memory must be a boolean \(got string "no"\)$/)
  await refused(t, { fsync: 'false', dataDir: dir }, wrongType, /fsync must be a boolean/)
  // A secret of the wrong type is named by its type alone: the message may reach a log.
  await refused(t, { token: 12345 }, wrongType, /^startServer: token must be a string \(got number\)$/)
  await refused(t, { tls: '-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n' }, wrongType, /^startServer: tls must be an object \(got string\)$/)
  await refused(t, { token: '' }, wrongValue, /^startServer: token must not be empty$/)
  // As `serve --token` refuses them: no Authorization header could carry the token, and every write would be refused.
  for (const token of ['abc\n', 'a b', '\tabc']) {
    await refused(t, { token }, wrongValue, /^startServer: token: the token must not contain whitespace \(a space or a line break, often one left at its end\): no request could present it$/)
  }
  await refused(t, { dataDir: 42 }, wrongType, /dataDir must be a string \(got number 42\)/)
  await refused(t, { dataDir: '' }, wrongValue, /^startServer: dataDir must not be empty$/)
  await refused(t, { logLevel: 'loud' }, wrongValue, /^startServer: logLevel must be one of fatal, error, warn, info, debug, trace, silent \(got string "loud"\)$/)
  await refused(t, { port: 70000 }, wrongValue, /port must be an integer from 0 to 65535/)
  await refused(t, { idleTimeout: 0 }, wrongValue, /idleTimeout must be an integer number of seconds from 1 to 86400/)
  t.notOk(existsSync(dir), 'no data directory was made')
})

t.test('tls needs both a certificate and a key, neither empty', { skip: !hasOpenssl && 'openssl is not installed' }, async t => {
  const pair = selfSignedCertificate(testdir(t), 'localhost')
  const cert = readFileSync(pair.cert)
  const key = readFileSync(pair.key)
  await refused(t, { tls: { cert } }, wrongValue, /^startServer: tls needs both cert and key \(PEM, strings or Buffers\): key is missing$/)
  await refused(t, { tls: { key } }, wrongValue, /cert is missing/)
  await refused(t, { tls: {} }, wrongValue, /cert is missing/)
  await refused(t, { tls: { cert: '', key: '' } }, wrongValue, /^startServer: tls\.cert must not be empty$/)
  await refused(t, { tls: { cert, key: Buffer.alloc(0) } }, wrongValue, /^startServer: tls\.key must not be empty$/)
  const server = await startServer({ tls: { cert, key } })
  t.match(server.url, /^https:/)
  await server.close()
})

t.test('idleTimeout: an upload whose body stopped is answered 408 after it, and close() resolves then', async t => {
  const server = await startServer({ idleTimeout: 1 })
  let sent: () => void = () => {}
  const written = new Promise<void>(resolve => { sent = resolve })
  const answered = new Promise<number | undefined>((resolve, reject) => {
    const upload = request(`${server.url}/default/stalled`, { method: 'PUT', headers: { 'content-length': 1_000_000 } }, res => { res.resume(); resolve(res.statusCode) })
    upload.on('error', reject)
    upload.write(Buffer.alloc(100_000), () => { sent() })
  })
  // The upload's bytes are out, and the server has answered a request sent after them: it is reading that upload.
  await written
  t.equal((await fetch(`${server.url}/_health/live`)).status, 200)
  const started = Date.now()
  await server.close()
  t.ok(Date.now() - started < 5000, `close() resolved after ${Date.now() - started} ms`)
  t.equal(await answered, 408)
})

t.test('a data directory that cannot be used is a start-up failure carrying the system error, as a port in use is', async t => {
  const file = path.join(testdir(t), 'not-a-directory')
  writeFileSync(file, 'x')
  await t.rejects(startServer({ dataDir: file }), { code: 'ENOTDIR', cause: { code: 'ENOTDIR' }, message: /not a directory/ })
  await t.rejects(startServer({ dataDir: path.join(file, 'below') }), { code: 'ENOTDIR', message: /not a directory/ })
})
