import t from 'tap'
import { s3Server } from './fixture.js'
import { open, received } from '../raw-socket.js'

t.test('PutObject and UploadPart without Content-Length nor Transfer-Encoding: 411 MissingContentLength, nothing stored', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  const upload = await bucket.createMultipartUpload('parts')
  const send = async (path: string, head: string, body = ''): Promise<string> => {
    const socket = await open(server.port)
    t.teardown(() => socket.destroy())
    socket.write(`PUT ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}connection: close\r\n\r\n${body}`)
    return (await received(socket, text => text.includes('</Error>') || /\r\n\r\n$/.test(text))).text
  }
  for (const path of ['/photos/unframed', `/photos/parts?uploadId=${upload.uploadId}&partNumber=1`]) {
    const answer = await send(path, '')
    t.match(answer, /^HTTP\/1\.1 411 /, path)
    t.match(answer, '<Code>MissingContentLength</Code>')
  }
  t.equal(await bucket.head('unframed'), null, 'nothing stored')
  t.same((await upload.listParts()).parts, [], 'no part')
  t.match(await send('/photos/empty', 'content-length: 0\r\n'), /^HTTP\/1\.1 200 /, 'an empty body, declared, is an empty object')
  t.match(await send('/photos/chunked', 'transfer-encoding: chunked\r\n', '2\r\nhi\r\n0\r\n\r\n'), /^HTTP\/1\.1 200 /, 'chunked framing is framing')
  t.equal((await bucket.head('chunked'))?.size, 2)
})

t.test('a transfer coding other than chunked: 501 NotImplemented naming the header, its coded bytes never stored', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  for (const codings of ['gzip, chunked', 'deflate,chunked']) {
    const socket = await open(server.port)
    t.teardown(() => socket.destroy())
    socket.write(`PUT /photos/coded HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: ${codings}\r\nconnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
    const answer = (await received(socket, text => text.includes('</Error>'))).text
    t.match(answer, /^HTTP\/1\.1 501 /, codings)
    t.match(answer, '<Code>NotImplemented</Code>')
    t.match(answer, '<Header>Transfer-Encoding</Header>')
  }
  t.equal(await bucket.head('coded'), null, 'nothing stored')
})
