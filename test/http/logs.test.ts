/**
 * Log lines: no secret at any level (trace included), unique request ids,
 * one `pid`, readable on a terminal and JSON otherwise.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { connect } from 'node:net'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { auth, gateway, token } from './gateway-fixture.js'

function collector (): { stream: Writable, text: () => string } {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  return { stream, text: () => lines.join('') }
}

t.test('no secret reaches a log line, even at trace', async t => {
  const logs = collector()
  const secrets = {
    mgmtToken: 'MGMT-TOKEN-SECRET-1', mgmtKey: 'MGMT-KEY-SECRET-2', malformed: 'MALFORMED-SECRET-3', raw: 'RAW-SECRET-4',
    cookie: 'COOKIE-SECRET-5', packet: 'PACKET-SECRET-6', wrongKey: 'WRONG-KEY-SECRET-7',
    ssecKey: 'U1NFQy1LRVktU0VDUkVULTgtLS0tLS0tLS0tLS0tLS0=', copyKey: 'Q09QWS1LRVktU0VDUkVULTktLS0tLS0tLS0tLS0tLS0=', session: 'SESSION-SECRET-10',
    copyKeyMd5: 'COPY-KEY-MD5-SECRET-11'
  }
  const ssecKeyMd5 = createHash('md5').update(Buffer.from(secrets.ssecKey, 'base64')).digest('base64')
  const { app } = await gateway(t, {
    logLevel: 'trace',
    logDestination: logs.stream,
    management: { tokens: [secrets.mgmtToken], keys: [{ email: 'ops@example.com', key: secrets.mgmtKey }] }
  })
  const form = '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n--b--\r\n'
  const requests = [
    { method: 'POST', url: '/photos', headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=b', cookie: `s=${secrets.cookie}` }, payload: form },
    // A form stored encrypted with the client's key: its headers reach the multipart plugin's trace line.
    {
      method: 'POST',
      url: '/photos',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'multipart/form-data; boundary=b',
        'x-amz-server-side-encryption-customer-algorithm': 'AES256',
        'x-amz-server-side-encryption-customer-key': secrets.ssecKey,
        'x-amz-server-side-encryption-customer-key-md5': ssecKeyMd5,
        'x-amz-copy-source-server-side-encryption-customer-key': secrets.copyKey,
        'x-amz-copy-source-server-side-encryption-customer-key-md5': secrets.copyKeyMd5,
        'x-amz-security-token': secrets.session
      },
      payload: form
    },
    { method: 'PUT', url: '/photos/x', headers: { authorization: `Bearer ${token}` }, payload: 'x' },
    { method: 'PUT', url: '/photos/y', headers: { authorization: `Bearer ${secrets.malformed} and more` }, payload: 'y' },
    { method: 'GET', url: '/photos/y', headers: { authorization: secrets.raw } },
    { method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { authorization: `Bearer ${secrets.mgmtToken}` } },
    { method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { authorization: `Bearer ${secrets.malformed} x` } },
    { method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { 'x-auth-email': 'ops@example.com', 'x-auth-key': secrets.mgmtKey } },
    { method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { 'x-auth-email': 'ops@example.com', 'x-auth-key': secrets.wrongKey } },
    { method: 'GET', url: '/client/v4/accounts/a/r2/buckets', headers: { 'x-auth-email': 'bad', 'x-auth-key': `${secrets.wrongKey} \u0001` } }
  ] as const
  for (const request of requests) await app.inject(request)

  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  await new Promise<void>(resolve => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /photos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secrets.packet}\r\nBad Header Line\r\n\r\n`)
    })
    socket.on('data', () => {})
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })

  const text = logs.text()
  t.match(text, /Providing options to busboy/, 'trace lines were written (the multipart plugin\'s included)')
  t.match(text, /"busboyOptions":\{[^\n]*"authorization":"\[redacted\]"/, 'the headers it logs are redacted')
  t.match(text, /"busboyOptions":\{[^\n]*"x-amz-server-side-encryption-customer-key":"\[redacted\]"/, 'an SSE-C key among them too')
  t.match(text, /"msg":"client error"/, 'the malformed request was logged')
  for (const [name, secret] of [['gateway token', token], ['SSE-C key MD5', ssecKeyMd5], ...Object.entries(secrets)]) {
    t.notOk(text.includes(secret), `${name} is in no line`)
  }
})

t.test('request ids are UUIDs, unique; each line has one pid', async t => {
  const logs = collector()
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream })
  for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url: '/site/none' })
  const lines = logs.text().trim().split('\n')
  const ids = lines.map(line => (JSON.parse(line) as { reqId?: string }).reqId)
  t.equal(ids.length, 5)
  for (const id of ids) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.equal(new Set(ids).size, 5, 'unique')
  for (const line of lines) t.equal(line.match(/"pid":/g)?.length, 1, 'one pid field')
})

t.test('a request\'s line names its bucket, key, status and bytes', async t => {
  const logs = collector()
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream })
  const auth = { authorization: `Bearer ${token}` }
  await app.inject({ method: 'PUT', url: '/photos/cat.txt', headers: auth, payload: 'hello' })
  await app.inject({ method: 'GET', url: '/photos/cat.txt', headers: auth })
  await app.inject({ method: 'HEAD', url: '/photos/cat.txt', headers: auth })
  const form = '--b\r\nContent-Disposition: form-data; name="file"; filename="dog.txt"\r\n\r\nwoof\r\n--b--\r\n'
  await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=b' }, payload: form })
  const two = '--b\r\nContent-Disposition: form-data; name="prefix"\r\n\r\nin/\r\n' +
    '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc\r\n' +
    '--b\r\nContent-Disposition: form-data; name="file"; filename="b.txt"\r\n\r\ndefgh\r\n--b--\r\n'
  await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=b' }, payload: two })
  const created = await app.inject({ method: 'POST', url: '/photos/big?action=mpu-create', headers: auth })
  const uploadId = (JSON.parse(created.body) as { result: { uploadId: string } }).result.uploadId
  const part = await app.inject({ method: 'PUT', url: `/photos/big?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=1`, headers: auth, payload: Buffer.alloc(7000, 1) })
  t.equal(part.statusCode, 200)
  const lines = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request')
  t.match(lines[0], { method: 'PUT', bucket: 'photos', key: 'cat.txt', status: 200, bytes: 5 }, 'a put: the bytes stored')
  t.match(lines[1], { method: 'GET', bucket: 'photos', key: 'cat.txt', status: 200, bytes: 5 }, 'a get: the bytes sent')
  t.match(lines.splice(2, 1)[0], { method: 'HEAD', bucket: 'photos', key: 'cat.txt', status: 200, bytes: 0 }, 'a head: no body sent')
  t.match(lines[2], { method: 'POST', bucket: 'photos', key: 'dog.txt', status: 200, bytes: 4 }, 'a form: the key of its file, the bytes stored')
  t.match(lines[3], { method: 'POST', bucket: 'photos', status: 200, bytes: 8 }, 'a form of two files: the bytes of both')
  t.equal(lines[3].key, undefined, 'no one key')
  t.match(lines[5], { method: 'PUT', bucket: 'photos', key: 'big', status: 200, bytes: 7000 }, 'a part: the bytes stored')
  const undecodable = await app.inject({ method: 'GET', url: '/photos/%zz', headers: auth })
  t.equal(undecodable.statusCode, 400)
  const refused = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request').at(-1)
  t.match(refused, { method: 'GET', url: '/photos/%zz', status: 400, bytes: undecodable.body.length, code: errorCodeOf(undecodable.body) }, 'a request refused before any route has its line too, with its code')
  t.equal((await app.inject({ method: 'HEAD', url: '/photos/%zz', headers: auth })).statusCode, 400)
  const refusedHead = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request').at(-1)
  t.match(refusedHead, { method: 'HEAD', url: '/photos/%zz', status: 400, bytes: 0, code: errorCodeOf(undecodable.body) }, 'a HEAD refused so: its code, and no body sent')
  t.equal(lines.length, 6)
  t.equal(lines[0].code, undefined, 'an answer that is no error has no code')
})

t.test('a probe\'s line names its URL, not a bucket', async t => {
  const logs = collector()
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream })
  for (const url of ['/_health/live', '/_health/ready']) t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, url)
  const lines = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request')
  t.match(lines, [{ method: 'GET', url: '/_health/live', status: 200 }, { method: 'GET', url: '/_health/ready', status: 200 }])
  t.same(lines.map(line => [line.bucket, line.key]), [[undefined, undefined], [undefined, undefined]], 'no bucket _health')
})

t.test('an error answer\'s line has its code, as the client got it', async t => {
  const logs = collector()
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream })
  const auth = { authorization: `Bearer ${token}` }
  await app.inject({ method: 'PUT', url: '/photos/cat.txt', headers: auth, payload: 'hello' })
  const answers = [
    await app.inject({ method: 'GET', url: '/photos/none', headers: auth }),
    await app.inject({ method: 'GET', url: '/nobucket/x', headers: auth }),
    await app.inject({ method: 'GET', url: '/photos/cat.txt', headers: { ...auth, 'if-match': '"other"' } }),
    await app.inject({ method: 'GET', url: '/photos/cat.txt', headers: { ...auth, range: 'bytes=10-20' } }),
    await app.inject({ method: 'PUT', url: '/photos/x' }),
    await app.inject({ method: 'GET', url: '/client/v4/no/such/route', headers: auth })
  ]
  const lines = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request').slice(1)
  t.same(lines.map(line => [line.status, line.code]), answers.map(answer => [answer.statusCode, (JSON.parse(answer.body) as { errors: Array<{ code: number }> }).errors[0].code]))
  t.same(lines.map(line => line.code).slice(0, 5), [10007, 10006, 41200, 10039, 40100], 'NoSuchKey, NoSuchBucket, the 412, the 416, a refused write')
  t.equal(typeof lines[5].code, 'number', 'the management API\'s code')
  t.equal(lines[5].status, 400)
  const unsupported = await app.inject({ method: 'PROPFIND' as 'GET', url: '/photos/cat.txt', headers: auth })
  const consoleMissing = await app.inject({ method: 'GET', url: '/_console/no-such-file.js' })
  const more = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request').slice(-2)
  t.same(more.map(line => [line.status, line.code]), [unsupported, consoleMissing].map(answer => [answer.statusCode, errorCodeOf(answer.body)]), 'a method no route has, a console file that is not there')
})

t.test('a refusal of the site guard has its code too', async t => {
  const logs = collector()
  // No token on loopback: the guard refuses a foreign Host.
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream, token: null })
  const refused = await app.inject({ method: 'GET', url: '/photos/cat.txt', headers: { host: 'evil.example' } })
  t.equal(refused.statusCode, 421, 'a foreign Host')
  const line = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request').at(-1)
  t.match(line, { status: 421, code: errorCodeOf(refused.body) })
})

function errorCodeOf (body: string): number {
  return (JSON.parse(body) as { errors: Array<{ code: number }> }).errors[0].code
}

t.test('the line of a request named by its URL hides the credentials in its query, on the routes and the management API', async t => {
  const logs = collector()
  const mgmtToken = 'MGMT-TOKEN-SECRET-8'
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream, management: { tokens: [mgmtToken], keys: [] } })
  const query = 'X-Amz-Credential=AKIDSECRET&X-Amz-Signature=SIGSECRET&X-Amz-Security-Token=STSSECRET&token=TOKENSECRET&Access_Token=ACCESSSECRET&sig=SIG2SECRET&signature=SIG3SECRET&page=2'
  const hidden = 'X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Security-Token=[redacted]&token=[redacted]&Access_Token=[redacted]&sig=[redacted]&signature=[redacted]&page=2'
  const routes = await app.inject({ method: 'GET', url: `/photos/%zz?${query}`, headers: auth })
  t.equal(routes.statusCode, 400)
  const mgmt = await app.inject({ method: 'GET', url: `/client/v4/accounts/a/r2/buckets?${query}`, headers: { authorization: `Bearer ${mgmtToken}` } })
  t.equal(mgmt.statusCode, 200)
  const lines = logs.text().trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.msg === 'request')
  t.match(lines.at(-2), { method: 'GET', url: `/photos/%zz?${hidden}`, status: 400 }, 'the routes: names kept, values hidden')
  t.match(lines.at(-1), { method: 'GET', url: `/client/v4/accounts/a/r2/buckets?${hidden}`, status: 200 }, 'the management API: names kept, values hidden')
  t.notMatch(logs.text(), /SECRET/, 'no value anywhere')
})

t.test('a refusal the door decides (a conditional DELETE: 501) is not logged as a fault', async t => {
  const logs = collector()
  const { app } = await gateway(t, { logLevel: 'info', logDestination: logs.stream })
  const res = await app.inject({ method: 'DELETE', url: '/photos/k', headers: { authorization: `Bearer ${token}`, 'if-match': '"x"' } })
  t.equal(res.statusCode, 501)
  const levels = logs.text().trim().split('\n').map(line => (JSON.parse(line) as { level: number }).level)
  t.notOk(levels.some(level => level >= 50), 'nothing at error level')
})

const loggerModule = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/server/logger.js')

t.test('readable lines on a terminal, JSON lines otherwise', async t => {
  const script = `import(${JSON.stringify(loggerModule)}).then(m => m.createLogger({ level: 'info' }).info({ bucket: 'b' }, 'hello there'))`
  const piped = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  t.match(JSON.parse(piped), { msg: 'hello there', bucket: 'b', level: 30 }, 'JSON when stdout is a pipe')
  const loaded = `import(${JSON.stringify(loggerModule)}).then(m => { m.createLogger({ level: 'info' }); console.log(Object.keys(require.cache).some(f => f.includes('pino-pretty'))) })`
  t.equal(execFileSync(process.execPath, ['-e', loaded], { encoding: 'utf8' }).trim(), 'false', 'and the pretty printer is not even loaded then')
  const command = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(script).replace(/\$/g, '\\$')}`
  const onTty = execFileSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' })
  t.match(onTty, /INFO/, 'a level word')
  t.match(onTty, /hello there/)
  t.notOk(onTty.trim().startsWith('{'), 'not JSON on a terminal')
})
