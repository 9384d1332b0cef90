import t from 'tap'
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { decodeEncodedWords } from '../../src/s3/encoded-words.js'
import { devSigner, raw, s3Server } from './fixture.js'
import { open, received } from '../raw-socket.js'

t.test('decodeEncodedWords: RFC 2047 words decoded, anything else kept as written', async t => {
  const cases: Array<[string, string]> = [
    ['plain', 'plain'],
    ['=?UTF-8?B?WsO8cmljaA==?=', 'Zürich'],
    ['=?utf-8?q?Z=C3=BCrich_city?=', 'Zürich city'],
    ['=?ISO-8859-1?Q?Z=FCrich?=', 'Zürich'],
    ['=?UTF-8?B?WsO8?= =?UTF-8?B?cmljaA==?=', 'Zürich'], // white space between two words goes
    ['in =?UTF-8?B?WsO8cmljaA==?= now', 'in Zürich now'], // around a word it stays
    ['=?UTF-8*en?B?WsO8cmljaA==?=', 'Zürich'],
    ['=?UTF-8?B?not base64!?=', '=?UTF-8?B?not base64!?='],
    ['=?UTF-8?B?/w==?=', '=?UTF-8?B?/w==?='], // a byte that is not UTF-8
    ['=?x-unknown?B?WsO8?=', '=?x-unknown?B?WsO8?='],
    ['=?UTF-8?Q?bad=ZZ?=', '=?UTF-8?Q?bad=ZZ?='],
    ['a=?b', 'a=?b']
  ]
  for (const [value, decoded] of cases) t.equal(decodeEncodedWords(value), decoded, value)
})

t.test('x-amz-meta-* sent as UTF-8 bytes and signed as them verifies, and is stored as the text meant', async t => {
  const server = await s3Server(t)
  const value = 'Zoë ☃ 東京'
  const signed = await devSigner().sign({
    method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos/utf8', query: {},
    headers: { host: `127.0.0.1:${server.port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-name': value, 'content-length': '1' }
  }, { signingDate: new Date() })
  const headers = signed.headers as Record<string, string>
  // What curl or a Go/Rust client puts on the wire: the value's UTF-8 bytes, over a socket of its own (a Node.js
  // client's headers are not bytes as given).
  const put = async (meta: string): Promise<string> => {
    const socket = await open(server.port)
    t.teardown(() => socket.destroy())
    const head = Object.entries({ ...headers, 'x-amz-meta-name': meta }).map(([name, v]) => `${name}: ${v}\r\n`).join('')
    socket.write(Buffer.from(`PUT /photos/utf8 HTTP/1.1\r\n${head}connection: close\r\n\r\nx`, 'utf8'))
    return (await received(socket, text => text.includes('</Error>'))).text
  }
  t.match(await put(value), /^HTTP\/1\.1 200 /)
  t.same((await (await server.registry.open('photos'))!.head('utf8'))?.customMetadata, { name: value })
  t.match(await put('Zoë ☃ 東亰'), /^HTTP\/1\.1 403 [^]*SignatureDoesNotMatch/, 'other bytes than were signed')
})

t.test('AWS SDK v3: RFC 2047 metadata is stored decoded and answered encoded; Latin-1 characters as the SDK signs them', async t => {
  const server = await s3Server(t)
  const s3 = server.client()
  const value = 'Zoë ☃ 東京'
  const encoded = `=?UTF-8?B?${Buffer.from(value).toString('base64')}?=`
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'm', Body: 'x', Metadata: { name: encoded, plain: 'ascii' } }))
  const bucket = (await server.registry.open('photos'))!
  t.same((await bucket.head('m'))?.customMetadata, { name: value, plain: 'ascii' }, 'decoded before it is stored')
  const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'm' }))
  t.equal(head.Metadata?.name, encoded, 'encoded on the way out')
  t.equal(decodeEncodedWords(head.Metadata?.name ?? ''), value)
  t.equal(head.Metadata?.plain, 'ascii')
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'latin', Body: 'x', Metadata: { name: 'Zoë' } }))
  t.same((await bucket.head('latin'))?.customMetadata, { name: 'Zoë' })
})

t.test('metadata no header can carry (written through the binding) is left out and counted in x-amz-missing-meta', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  await bucket.put('k', 'x', { customMetadata: { 'a b': '1', ü: '2', Ok: '3', ok: '4', fine: '5', note: 'a\nb' } })
  for (const method of ['HEAD', 'GET'] as const) {
    const answer = await server.app.inject({ method, url: '/photos/k' })
    t.equal(answer.statusCode, 200, method)
    t.equal(answer.headers['x-amz-missing-meta'], '3', `${method}: two names that are not header names, and one that differs from another only in case`)
    t.equal(answer.headers['x-amz-meta-fine'], '5')
    t.equal(answer.headers['x-amz-meta-note'], '=?UTF-8?B?YQpi?=', `${method}: a value with a control character travels as an encoded word`)
  }
  await bucket.put('all', 'x', { customMetadata: { fine: '5' } })
  t.equal((await server.app.inject({ method: 'HEAD', url: '/photos/all' })).headers['x-amz-missing-meta'], undefined, 'none when nothing is missing')
})

t.test('an Expires that is no HTTP date is stored as the epoch (already expired), never dropped; a date is kept', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  for (const [key, expires, stored] of [['zero', '0', 0], ['word', 'never', 0], ['date', 'Wed, 21 Oct 2037 07:28:00 GMT', Date.UTC(2037, 9, 21, 7, 28)]] as const) {
    const put = await server.app.inject({ method: 'PUT', url: `/photos/${key}`, headers: { expires }, payload: 'x' })
    t.equal(put.statusCode, 200, `${expires}: taken`)
    t.equal((await bucket.head(key))?.httpMetadata.cacheExpiry?.getTime(), stored, `${expires}: stored`)
    const head = await server.app.inject({ method: 'HEAD', url: `/photos/${key}` })
    t.equal(head.headers.expires, new Date(stored).toUTCString(), `${expires}: answered`)
  }
})

t.test('a non-ASCII Content-Disposition is answered as it was given, in its UTF-8 bytes; x-amz-meta-* as encoded words', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  const disposition = 'attachment; filename="naïve 東京.txt"'
  /** A string's UTF-8 bytes as Node's HTTP client writes and reads them (one Latin-1 character a byte). */
  const wire = (text: string): string => Buffer.from(text, 'utf8').toString('latin1')
  const put = await raw(server, 'PUT', '/photos/doc', { 'content-disposition': wire(disposition), 'x-amz-meta-name': wire('Zoë'), 'content-language': wire('français') }, 'x')
  t.equal(put.status, 200)
  t.equal((await bucket.head('doc'))?.httpMetadata.contentDisposition, disposition, 'stored as the text meant')
  for (const method of ['HEAD', 'GET']) {
    const answer = await raw(server, method, '/photos/doc')
    t.equal(answer.headers['content-disposition'], wire(disposition), `${method}: the bytes sent, not one encoded word for the whole value`)
    t.equal(answer.headers['content-language'], wire('français'), `${method}: the same for the other headers`)
    t.equal(answer.headers['x-amz-meta-name'], `=?UTF-8?B?${Buffer.from('Zoë').toString('base64')}?=`, `${method}: metadata as S3 encodes it`)
  }
  const rfc5987 = "attachment; filename*=UTF-8''na%C3%AFve.txt"
  await server.client().send(new PutObjectCommand({ Bucket: 'photos', Key: 'ascii', Body: 'x', ContentDisposition: rfc5987 }))
  t.equal((await server.client().send(new HeadObjectCommand({ Bucket: 'photos', Key: 'ascii' }))).ContentDisposition, rfc5987, 'RFC 5987 form, through the SDK, round-trips')
  const override = await raw(server, 'GET', `/photos/ascii?response-content-disposition=${encodeURIComponent(disposition)}`)
  t.equal(override.headers['content-disposition'], wire(disposition), 'a response-content-disposition override, the same way')
  await bucket.put('control', 'x', { httpMetadata: { contentDisposition: 'inline;\nx' } })
  const control = await raw(server, 'HEAD', '/photos/control')
  t.same([control.status, control.headers['content-disposition']], [200, '=?UTF-8?B?aW5saW5lOwp4?='], 'a control character no header carries as bytes: an encoded word, and the read is answered')
})
