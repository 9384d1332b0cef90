/** Every route, header, status and error of the gateway contract, in process with app.inject. */
import t from 'tap'
import { createHash } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { parseRouteList } from '../../src/http/target.js'
import { auth, gateway } from './gateway-fixture.js'

function envelope (res: LightMyRequestResponse): any {
  const body = res.json()
  for (const field of ['success', 'errors', 'messages', 'result']) {
    if (!(field in body)) throw new Error(`envelope without ${field}: ${res.body}`)
  }
  return body
}

function errorCode (res: LightMyRequestResponse): number {
  const body = envelope(res)
  if (body.success !== false || body.result !== null) throw new Error(`not an error envelope: ${res.body}`)
  return body.errors[0].code
}

const md5Hex = (data: string | Buffer): string => createHash('md5').update(data).digest('hex')

t.test('custom metadata named __proto__ in a header is kept and answered like any other', async t => {
  const { app } = await gateway(t)
  const put = await app.inject({ method: 'PUT', url: '/photos/proto', headers: { ...auth, 'x-meta-__proto__': 'p', 'x-meta-a': 'b' }, payload: 'x' })
  t.same(Object.entries(envelope(put).result.customMetadata), [['__proto__', 'p'], ['a', 'b']])
  const head = await app.inject({ method: 'HEAD', url: '/photos/proto', headers: auth })
  t.equal(head.headers['x-meta-__proto__'], 'p')
})

t.test('put, get, head, delete', async t => {
  const { app } = await gateway(t)
  const put = await app.inject({
    method: 'PUT',
    url: '/photos/notes/today.txt',
    headers: { ...auth, 'content-type': 'text/plain; charset=utf-8', 'x-meta-author': 'Ada', 'cache-control': 'no-cache' },
    payload: 'hello world'
  })
  t.equal(put.statusCode, 200)
  const stored = envelope(put)
  t.equal(stored.success, true)
  t.match(stored.result, { key: 'notes/today.txt', size: 11, etag: md5Hex('hello world'), customMetadata: { author: 'Ada' } })
  t.equal(put.headers.etag, `"${md5Hex('hello world')}"`)

  const get = await app.inject({ method: 'GET', url: '/photos/notes/today.txt', headers: auth })
  t.equal(get.statusCode, 200)
  t.equal(get.body, 'hello world')
  t.match(get.headers, {
    etag: `"${md5Hex('hello world')}"`,
    'content-length': '11',
    'accept-ranges': 'bytes',
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-cache',
    'x-meta-author': 'Ada',
    'content-md5': Buffer.from(md5Hex('hello world'), 'hex').toString('base64'),
    'x-storage-class': 'Standard'
  })
  t.equal(new Date(get.headers['last-modified'] as string).toISOString().slice(0, 19), stored.result.uploaded.slice(0, 19))

  const head = await app.inject({ method: 'HEAD', url: '/photos/notes/today.txt', headers: auth })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], '11')
  t.equal(head.headers.etag, get.headers.etag)

  const del = await app.inject({ method: 'DELETE', url: '/photos/notes/today.txt', headers: auth })
  t.equal(del.statusCode, 204)
  t.equal(del.body, '')
  const gone = await app.inject({ method: 'GET', url: '/photos/notes/today.txt', headers: auth })
  t.equal(gone.statusCode, 404)
  t.equal(errorCode(gone), 10007)
  t.equal((await app.inject({ method: 'DELETE', url: '/photos/never-was', headers: auth })).statusCode, 204, 'DELETE of a missing key is 204')
  t.equal((await app.inject({ method: 'HEAD', url: '/photos/never-was', headers: auth })).statusCode, 404)
})

t.test('content types: stored, from the extension, or octet-stream; response-* overrides', async t => {
  const { app } = await gateway(t)
  for (const key of ['style.css', 'photo.JPG', 'no-extension']) {
    await app.inject({ method: 'PUT', url: `/photos/${key}`, headers: auth, payload: 'x' })
  }
  const type = async (key: string, query = ''): Promise<string | undefined> =>
    (await app.inject({ method: 'GET', url: `/photos/${key}${query}`, headers: auth })).headers['content-type'] as string | undefined
  t.equal(await type('style.css'), 'text/css')
  t.equal(await type('photo.JPG'), 'image/jpeg')
  t.equal(await type('no-extension'), 'application/octet-stream')

  const overridden = await app.inject({
    method: 'GET',
    url: '/photos/style.css?response-content-type=text/plain&response-content-disposition=attachment&response-cache-control=no-store&response-content-language=fr&response-content-encoding=identity&response-expires=Thu,%2001%20Jan%202026%2000:00:00%20GMT',
    headers: auth
  })
  t.match(overridden.headers, {
    'content-type': 'text/plain',
    'content-disposition': 'attachment',
    'cache-control': 'no-store',
    'content-language': 'fr',
    'content-encoding': 'identity',
    expires: 'Thu, 01 Jan 2026 00:00:00 GMT'
  })
  t.equal(await type('style.css'), 'text/css', 'overrides last one response only')
})

t.test('every mapped request header round-trips', async t => {
  const { app } = await gateway(t)
  const headers = {
    ...auth,
    'content-type': 'application/pdf',
    'content-language': 'en-GB',
    'content-disposition': 'inline; filename="r.pdf"',
    'content-encoding': 'identity',
    'cache-control': 'public, max-age=3600',
    expires: 'Fri, 01 Jan 2027 00:00:00 GMT',
    'x-meta-project': 'apollo',
    'x-meta-city': Buffer.from('Zürich', 'utf8').toString('latin1'),
    'x-checksum-sha256': createHash('sha256').update('report').digest('hex'),
    'x-storage-class': 'InfrequentAccess'
  }
  const put = await app.inject({ method: 'PUT', url: '/photos/r.pdf', headers, payload: 'report' })
  t.equal(put.statusCode, 200, put.body)
  t.match(envelope(put).result, {
    httpMetadata: { contentType: 'application/pdf', contentLanguage: 'en-GB', cacheControl: 'public, max-age=3600' },
    customMetadata: { project: 'apollo', city: 'Zürich' },
    storageClass: 'InfrequentAccess',
    checksums: { sha256: headers['x-checksum-sha256'] }
  })
  const get = await app.inject({ method: 'GET', url: '/photos/r.pdf', headers: auth })
  for (const name of ['content-type', 'content-language', 'content-disposition', 'content-encoding', 'cache-control', 'expires', 'x-meta-project', 'x-meta-city', 'x-checksum-sha256', 'x-storage-class']) {
    t.equal(get.headers[name], headers[name as keyof typeof headers], name)
  }
})

t.test('checksums and storage class are checked', async t => {
  const { app } = await gateway(t)
  const badMd5 = await app.inject({ method: 'PUT', url: '/photos/a', headers: { ...auth, 'content-md5': Buffer.from(md5Hex('other'), 'hex').toString('base64') }, payload: 'data' })
  t.equal(badMd5.statusCode, 400)
  t.equal(errorCode(badMd5), 10037)
  const goodMd5 = await app.inject({ method: 'PUT', url: '/photos/a', headers: { ...auth, 'content-md5': Buffer.from(md5Hex('data'), 'hex').toString('base64') }, payload: 'data' })
  t.equal(goodMd5.statusCode, 200)
  const twoHashes = await app.inject({ method: 'PUT', url: '/photos/b', headers: { ...auth, 'x-checksum-sha1': 'a'.repeat(40), 'x-checksum-sha256': 'b'.repeat(64) }, payload: 'data' })
  t.equal(twoHashes.statusCode, 400)
  t.equal(errorCode(twoHashes), 40000)
  const badClass = await app.inject({ method: 'PUT', url: '/photos/c', headers: { ...auth, 'x-storage-class': 'Glacier' }, payload: 'data' })
  t.equal(errorCode(badClass), 40003)
  const badMd5Header = await app.inject({ method: 'PUT', url: '/photos/c', headers: { ...auth, 'content-md5': '%%%' }, payload: 'data' })
  t.equal(errorCode(badMd5Header), 40003)
  for (const key of ['b', 'c']) t.equal((await app.inject({ method: 'HEAD', url: `/photos/${key}`, headers: auth })).statusCode, 404, `nothing stored for ${key}`)
})

t.test('ranges', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/digits', headers: auth, payload: '0123456789' })
  await app.inject({ method: 'PUT', url: '/photos/empty', headers: auth, payload: '' })
  const cases: Array<[string, number, string, string | undefined]> = [
    ['bytes=2-4', 206, '234', 'bytes 2-4/10'],
    ['bytes=7-', 206, '789', 'bytes 7-9/10'],
    ['bytes=-3', 206, '789', 'bytes 7-9/10'],
    ['bytes=8-100', 206, '89', 'bytes 8-9/10'],
    ['bytes=-50', 206, '0123456789', 'bytes 0-9/10'],
    ['bytes=0-0', 206, '0', 'bytes 0-0/10'],
    ['bytes=0-1,4-5', 200, '0123456789', undefined],
    ['bytes=abc', 200, '0123456789', undefined],
    ['items=0-1', 200, '0123456789', undefined]
  ]
  for (const [range, status, body, contentRange] of cases) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url: '/photos/digits', headers: { ...auth, range } })
      t.equal(res.statusCode, status, `${method} ${range}`)
      t.equal(res.headers['content-range'], contentRange, `${method} ${range} Content-Range`)
      t.equal(res.headers['content-length'], String(body.length), `${method} ${range} Content-Length`)
      if (method === 'GET') t.equal(res.body, body, `${range} body`)
    }
  }
  for (const method of ['GET', 'HEAD'] as const) {
    const past = await app.inject({ method, url: '/photos/digits', headers: { ...auth, range: 'bytes=10-' } })
    t.equal(past.statusCode, 416, `${method} past the end`)
    t.equal(past.headers['content-range'], 'bytes */10')
    const empty = await app.inject({ method, url: '/photos/empty', headers: { ...auth, range: 'bytes=0-' } })
    t.equal(empty.statusCode, 416, `${method} range on an empty object`)
    t.equal(empty.headers['content-range'], 'bytes */0')
    const emptySuffix = await app.inject({ method, url: '/photos/empty', headers: { ...auth, range: 'bytes=-5' } })
    t.equal(emptySuffix.statusCode, 416, `${method} suffix range on an empty object`)
  }
  t.equal(errorCode(await app.inject({ method: 'GET', url: '/photos/digits', headers: { ...auth, range: 'bytes=10-' } })), 10039)
})

t.test('conditional reads in RFC 9110 order', async t => {
  const { app } = await gateway(t)
  const put = await app.inject({ method: 'PUT', url: '/photos/doc', headers: auth, payload: '0123456789' })
  const etag = put.headers.etag as string
  const modified = new Date(envelope(put).result.uploaded)
  const later = new Date(modified.getTime() + 60_000).toUTCString()
  const earlier = new Date(modified.getTime() - 60_000).toUTCString()
  const cases: Array<[string, Record<string, string>, number]> = [
    ['If-None-Match matches', { 'if-none-match': etag }, 304],
    ['If-None-Match weak matches', { 'if-none-match': `W/${etag}` }, 304],
    ['If-None-Match list', { 'if-none-match': `"nope", ${etag}` }, 304],
    ['If-None-Match *', { 'if-none-match': '*' }, 304],
    ['If-None-Match differs', { 'if-none-match': '"nope"' }, 200],
    ['If-Modified-Since later', { 'if-modified-since': later }, 304],
    ['If-Modified-Since earlier', { 'if-modified-since': earlier }, 200],
    ['If-Match matches', { 'if-match': etag }, 200],
    ['If-Match differs', { 'if-match': '"nope"' }, 412],
    ['If-Unmodified-Since earlier', { 'if-unmodified-since': earlier }, 412],
    ['If-Unmodified-Since later', { 'if-unmodified-since': later }, 200],
    ['412 before 304', { 'if-match': '"nope"', 'if-none-match': etag }, 412],
    ['304 before Range', { 'if-none-match': etag, range: 'bytes=0-1' }, 304],
    ['412 before 416', { 'if-match': '"nope"', range: 'bytes=50-' }, 412],
    ['304 before 416', { 'if-none-match': etag, range: 'bytes=50-' }, 304],
    ['passing condition with a range', { 'if-match': etag, range: 'bytes=0-1' }, 206]
  ]
  for (const [name, headers, status] of cases) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url: '/photos/doc', headers: { ...auth, ...headers } })
      t.equal(res.statusCode, status, `${method} ${name}`)
      if (status === 304) {
        t.equal(res.body, '', `${name}: 304 has no body`)
        t.equal(res.headers.etag, etag, `${name}: 304 keeps ETag`)
      }
      if (status === 412 && method === 'GET') t.equal(errorCode(res), 41200)
    }
  }
})

t.test('a date equal to the Last-Modified: a read\'s If-Unmodified-Since holds and If-Modified-Since answers 304 (RFC 9110); a write\'s fails, as the hosted service judges it', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/dated', headers: auth, payload: 'first' })
  // The upload time has milliseconds; the header has whole seconds, and names the object as it is.
  const lastModified = String((await app.inject({ method: 'HEAD', url: '/photos/dated', headers: auth })).headers['last-modified'])
  for (const method of ['GET', 'HEAD'] as const) {
    const unmodified = await app.inject({ method, url: '/photos/dated', headers: { ...auth, 'if-unmodified-since': lastModified } })
    t.equal(unmodified.statusCode, 200, `${method} If-Unmodified-Since: not modified after it`)
    const modified = await app.inject({ method, url: '/photos/dated', headers: { ...auth, 'if-modified-since': lastModified } })
    t.equal(modified.statusCode, 304, `${method} If-Modified-Since: not modified after it`)
  }
  // Another writer may have stored a version within the same second: the date cannot tell, so the write is refused.
  const put = await app.inject({ method: 'PUT', url: '/photos/dated', headers: { ...auth, 'if-unmodified-since': lastModified }, payload: 'second' })
  t.equal(put.statusCode, 412, 'a PUT on that If-Unmodified-Since is refused')
  t.equal((await app.inject({ method: 'GET', url: '/photos/dated', headers: auth })).body, 'first')
})

t.test('a 304 keeps ETag, Last-Modified, Cache-Control and Expires, and no other object header', async t => {
  const { app } = await gateway(t)
  const expires = 'Wed, 21 Oct 2037 07:28:00 GMT'
  const put = await app.inject({
    method: 'PUT',
    url: '/photos/cached',
    headers: { ...auth, 'cache-control': 'max-age=60', expires, 'content-type': 'text/plain', 'x-meta-owner': 'ann' },
    payload: 'cached body'
  })
  const etag = put.headers.etag as string
  const full = await app.inject({ method: 'GET', url: '/photos/cached', headers: auth })
  const res = await app.inject({ method: 'GET', url: '/photos/cached', headers: { ...auth, 'if-none-match': etag } })
  t.equal(res.statusCode, 304)
  t.equal(res.headers.etag, etag)
  t.equal(res.headers['last-modified'], full.headers['last-modified'])
  t.equal(res.headers['cache-control'], 'max-age=60')
  t.equal(res.headers.expires, expires)
  t.equal(res.headers['content-type'], undefined, 'no Content-Type')
  t.equal(res.headers['x-meta-owner'], undefined, 'no custom metadata')
})

t.test('conditional puts', async t => {
  const { app } = await gateway(t)
  const create = { ...auth, 'if-none-match': '*' }
  t.equal((await app.inject({ method: 'PUT', url: '/photos/once', headers: create, payload: 'first' })).statusCode, 200)
  const again = await app.inject({ method: 'PUT', url: '/photos/once', headers: create, payload: 'second' })
  t.equal(again.statusCode, 412)
  t.equal(errorCode(again), 41200)
  t.equal((await app.inject({ method: 'GET', url: '/photos/once', headers: auth })).body, 'first', 'nothing stored on 412')
  const etag = `"${md5Hex('first')}"`
  t.equal((await app.inject({ method: 'PUT', url: '/photos/once', headers: { ...auth, 'if-match': '"stale"' }, payload: 'x' })).statusCode, 412)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/once', headers: { ...auth, 'if-match': etag }, payload: 'third' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/photos/once', headers: auth })).body, 'third')
})

t.test('list with prefix, delimiter, cursor, limit and include', async t => {
  const { app } = await gateway(t)
  for (const key of ['a/1', 'a/2', 'a/b/3', 'b/4', 'c']) {
    await app.inject({ method: 'PUT', url: `/photos/${key}`, headers: { ...auth, 'x-meta-k': key, 'content-type': 'text/plain' }, payload: key })
  }
  const list = async (query: string): Promise<any> => envelope(await app.inject({ method: 'GET', url: `/photos${query}`, headers: auth }))
  const all = await list('')
  t.same(all.result.map((o: any) => o.key), ['a/1', 'a/2', 'a/b/3', 'b/4', 'c'])
  t.same(all.result_info, { cursor: null, truncated: false, delimitedPrefixes: [] })
  t.notOk('customMetadata' in all.result[0], 'custom metadata only on request (the binding leaves it undefined)')
  t.notOk('httpMetadata' in all.result[0], 'HTTP metadata only on request')
  t.same((await list('/')).result.length, 5, '/{bucket}/ lists too')

  const delimited = await list('?delimiter=/')
  t.same(delimited.result.map((o: any) => o.key), ['c'])
  t.same(delimited.result_info.delimitedPrefixes, ['a/', 'b/'])
  const prefixed = await list('?prefix=a/&delimiter=/')
  t.same(prefixed.result.map((o: any) => o.key), ['a/1', 'a/2'])
  t.same(prefixed.result_info.delimitedPrefixes, ['a/b/'])

  const seen: string[] = []
  let cursor: string | null = null
  do {
    const page: any = await list(`?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
    t.ok(page.result.length <= 2)
    seen.push(...page.result.map((o: any) => o.key))
    t.equal(page.result_info.truncated, page.result_info.cursor !== null)
    cursor = page.result_info.cursor
  } while (cursor !== null)
  t.same(seen, ['a/1', 'a/2', 'a/b/3', 'b/4', 'c'], 'a cursor walk sees every key once')

  const included = await list('?prefix=c&include=httpMetadata,customMetadata')
  t.same(included.result[0].customMetadata, { k: 'c' })
  t.same(included.result[0].httpMetadata, { contentType: 'text/plain' })

  for (const bad of ['?limit=abc', '?limit=0', '?limit=1001']) {
    const res = await app.inject({ method: 'GET', url: `/photos${bad}`, headers: auth })
    t.equal(res.statusCode, 400, bad)
    t.equal(errorCode(res), 10022, bad)
  }
  t.equal(errorCode(await app.inject({ method: 'GET', url: '/photos?include=everything', headers: auth })), 40000)
  t.equal(errorCode(await app.inject({ method: 'GET', url: '/photos?prefix=a&prefix=b', headers: auth })), 40004)
})

t.test('bulk delete', async t => {
  const { app } = await gateway(t)
  for (const key of ['x', 'y', 'z']) await app.inject({ method: 'PUT', url: `/photos/${key}`, headers: auth, payload: key })
  const res = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'application/json' }, payload: { keys: ['x', 'y', 'missing'] } })
  t.equal(res.statusCode, 200)
  t.same(envelope(res).result, { deleted: ['x', 'y', 'missing'] })
  t.same(envelope(await app.inject({ method: 'GET', url: '/photos', headers: auth })).result.map((o: any) => o.key), ['z'])
  const badJson = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"keys": [' })
  t.equal(badJson.statusCode, 400)
  t.equal(errorCode(badJson), 40002)
  t.equal(errorCode(await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"keys": "x"}' })), 40000)
  const tooMany = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ keys: Array.from({ length: 1001 }, (_, i) => `k${i}`) }) })
  t.equal(tooMany.statusCode, 400, 'more than 1,000 keys')
  t.equal(errorCode(await app.inject({ method: 'POST', url: '/photos', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' })), 40006)
})

function formBody (boundary: string, parts: Array<{ name: string, value: string, filename?: string, type?: string }>): Buffer {
  const chunks = parts.map(p => {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`
    const type = p.filename === undefined ? '' : `Content-Type: ${p.type ?? 'application/octet-stream'}\r\n`
    return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n${p.value}\r\n`
  })
  return Buffer.from(`${chunks.join('')}--${boundary}--\r\n`)
}

t.test('multipart/form-data uploads', async t => {
  const { app } = await gateway(t)
  const boundary = 'fsbucketboundary'
  const headers = { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }
  const withPrefix = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [
      { name: 'prefix', value: 'albums/2026/' },
      { name: 'file', value: 'JPEGDATA', filename: 'beach.jpg', type: 'image/jpeg' },
      { name: 'file', value: 'PNGDATA', filename: 'dog.png', type: 'image/png' }
    ])
  })
  t.equal(withPrefix.statusCode, 200, withPrefix.body)
  t.same(envelope(withPrefix).result.map((o: any) => o.key), ['albums/2026/beach.jpg', 'albums/2026/dog.png'])
  const beach = await app.inject({ method: 'GET', url: '/photos/albums/2026/beach.jpg', headers: auth })
  t.equal(beach.body, 'JPEGDATA')
  t.equal(beach.headers['content-type'], 'image/jpeg')

  const withKey = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [{ name: 'key', value: 'exact/name.bin' }, { name: 'file', value: 'BYTES', filename: 'ignored.txt' }])
  })
  t.same(envelope(withKey).result.map((o: any) => o.key), ['exact/name.bin'])

  const noFile = await app.inject({ method: 'POST', url: '/photos', headers, payload: formBody(boundary, [{ name: 'key', value: 'k' }]) })
  t.equal(noFile.statusCode, 400)
  t.equal(errorCode(noFile), 40005)
  const broken = await app.inject({ method: 'POST', url: '/photos', headers, payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated` })
  t.equal(broken.statusCode, 400, 'a truncated form')
  t.equal(errorCode(broken), 40005)
  t.equal((await app.inject({ method: 'HEAD', url: '/photos/a', headers: auth })).statusCode, 404, 'nothing stored from a broken form')
})

t.test('a form\'s file input left empty stores nothing; one key takes one file; file names are their last segment', async t => {
  const { app } = await gateway(t)
  const boundary = 'fsbucketboundary'
  const headers = { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }
  const marker = await app.inject({ method: 'PUT', url: '/photos/site/', headers: auth, payload: 'MARKER' })
  t.equal(marker.statusCode, 200)
  // A browser sends an input with no file chosen as a file part with an empty name and no bytes.
  const withEmpty = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [
      { name: 'prefix', value: 'site/' },
      { name: 'file', value: 'PAGE', filename: 'index.html', type: 'text/html' },
      { name: 'file2', value: '', filename: '' }
    ])
  })
  t.equal(withEmpty.statusCode, 200, withEmpty.body)
  t.same(envelope(withEmpty).result.map((o: any) => o.key), ['site/index.html'], 'only the chosen file is stored')
  t.equal((await app.inject({ method: 'GET', url: '/photos/site/', headers: auth })).body, 'MARKER', 'the object at the bare prefix is untouched')
  const onlyEmpty = await app.inject({ method: 'POST', url: '/photos', headers, payload: formBody(boundary, [{ name: 'file', value: '', filename: '' }]) })
  t.equal(errorCode(onlyEmpty), 40005, 'a form whose only input is empty has no file')
  const emptyFirst = await app.inject({ method: 'POST', url: '/photos', headers, payload: formBody(boundary, [{ name: 'a', value: '', filename: '' }, { name: 'b', value: 'B', filename: 'b.txt' }]) })
  t.same(envelope(emptyFirst).result.map((o: any) => o.key), ['b.txt'])
  const namelessBytes = await app.inject({ method: 'POST', url: '/photos', headers, payload: formBody(boundary, [{ name: 'a', value: 'A', filename: 'a.txt' }, { name: 'b', value: 'BYTES', filename: '' }]) })
  t.equal(namelessBytes.statusCode, 400, 'a part with bytes but no name is not dropped in silence')
  t.match(envelope(namelessBytes).errors[0].message, /has no file name.*file part 2 was not stored; 1 file stored before it: "a\.txt"/)
  const onlyDots = await app.inject({ method: 'POST', url: '/photos', headers, payload: formBody(boundary, [{ name: 'b', value: 'BYTES', filename: '..' }]) })
  t.equal(errorCode(onlyDots), 40005, 'a file name that is only a path names no key')
  t.match(envelope(onlyDots).errors[0].message, /has no file name to make its key from \(none was sent, or only a path such as "\.\."\)/, 'and the message says why')
  const namelessUnderKey = await app.inject({ method: 'POST', url: '/photos', headers, payload: formBody(boundary, [{ name: 'key', value: 'named' }, { name: 'b', value: 'BYTES', filename: '' }]) })
  t.same(envelope(namelessUnderKey).result.map((o: any) => o.key), ['named'], 'with a key, it is stored under it')

  // Two files under one key: the second would replace the first while both were reported stored.
  const twoUnderKey = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [{ name: 'key', value: 'k2' }, { name: 'file', value: 'FIRST', filename: 'a.txt' }, { name: 'file', value: 'SECOND', filename: 'b.txt' }])
  })
  t.equal(twoUnderKey.statusCode, 400, twoUnderKey.body)
  t.equal(envelope(twoUnderKey).errors[0].code, 40005)
  t.match(envelope(twoUnderKey).errors[0].message, /file part 2 was not stored; 1 file stored before it: "k2"/)
  t.same(envelope(twoUnderKey).result.stored.map((o: any) => o.key), ['k2'])
  t.equal((await app.inject({ method: 'GET', url: '/photos/k2', headers: auth })).body, 'FIRST', 'the first file is what the key holds')

  // Browsers send a file's name only; a name with a path keeps its last segment, never `..` as a key.
  const pathy = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [{ name: 'prefix', value: 'up/' }, { name: 'file', value: 'E', filename: '../../evil.txt' }, { name: 'file', value: 'W', filename: 'C:\\fakepath\\w.txt' }])
  })
  t.same(envelope(pathy).result.map((o: any) => o.key), ['up/evil.txt', 'up/w.txt'])
})

t.test('a form that fails after storing files says which ones were stored', async t => {
  const { app } = await gateway(t)
  const boundary = 'fsbucketboundary'
  const headers = { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }
  const long = 'n'.repeat(1025)
  const res = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [
      { name: 'file', value: 'ONE', filename: 'ok1.txt' },
      { name: 'file', value: 'TWO', filename: 'ok2.txt' },
      { name: 'file', value: 'LONG', filename: long },
      { name: 'file', value: 'NEVER', filename: 'after.txt' }
    ])
  })
  t.equal(res.statusCode, 400, res.body)
  const body = envelope(res)
  t.equal(body.success, false)
  t.equal(body.errors[0].code, 10020, 'the failure of the third file')
  t.match(body.errors[0].message, /file part 3/, 'the message names the part that failed')
  t.match(body.errors[0].message, /2 files stored before it: "ok1\.txt", "ok2\.txt"/, 'and the files stored before it')
  t.same(body.result.stored.map((o: any) => o.key), ['ok1.txt', 'ok2.txt'], 'result.stored: the objects stored before the failure')
  t.equal(body.result.stored[0].size, 3)
  t.equal((await app.inject({ method: 'GET', url: '/photos/ok1.txt', headers: auth })).body, 'ONE', 'they are readable')
  t.equal((await app.inject({ method: 'GET', url: '/photos/ok2.txt', headers: auth })).body, 'TWO')
  t.equal((await app.inject({ method: 'HEAD', url: '/photos/after.txt', headers: auth })).statusCode, 404, 'nothing after the failure is stored')

  const first = await app.inject({
    method: 'POST', url: '/photos', headers,
    payload: formBody(boundary, [{ name: 'file', value: 'LONG', filename: long }, { name: 'file', value: 'X', filename: 'x.txt' }])
  })
  t.equal(errorCode(first), 10020, 'a failure before anything was stored: result is null, as for any error')
  t.notMatch(envelope(first).errors[0].message, /stored before/)
})

t.test('multipart uploads through ?action=mpu-*', async t => {
  const { app } = await gateway(t)
  const create = await app.inject({ method: 'POST', url: '/photos/big.bin?action=mpu-create', headers: { ...auth, 'content-type': 'application/x-big', 'x-meta-origin': 'test' } })
  t.equal(create.statusCode, 200)
  const { key, uploadId } = envelope(create).result
  t.equal(key, 'big.bin')
  t.type(uploadId, 'string')

  const part = async (n: number | string, body: string, id = uploadId): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'PUT', url: `/photos/big.bin?action=mpu-uploadpart&uploadId=${encodeURIComponent(id)}&partNumber=${n}`, headers: auth, payload: body })
  const one = await part(1, 'AAAAAAAAAA')
  t.equal(one.statusCode, 200)
  t.same(envelope(one).result, { partNumber: 1, etag: md5Hex('AAAAAAAAAA') })
  const two = envelope(await part(2, 'BBB')).result

  t.equal((await app.inject({ method: 'HEAD', url: '/photos/big.bin', headers: auth })).statusCode, 404, 'nothing readable before complete')
  for (const bad of [0, 10001, 'x', '1.5', '-1']) {
    const res = await part(bad, 'x')
    t.equal(res.statusCode, 400, `part number ${bad}`)
    t.equal(errorCode(res), 40004)
  }
  t.equal(errorCode(await app.inject({ method: 'PUT', url: '/photos/big.bin?action=mpu-uploadpart&partNumber=1', headers: auth, payload: 'x' })), 40004, 'uploadId required')

  const complete = async (body: unknown, id = uploadId): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `/photos/big.bin?action=mpu-complete&uploadId=${encodeURIComponent(id)}`, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
  const wrongEtag = await complete({ parts: [{ partNumber: 1, etag: md5Hex('nope') }, { partNumber: 2, etag: two.etag }] })
  t.equal(wrongEtag.statusCode, 400)
  t.equal(errorCode(wrongEtag), 10025)
  t.equal(errorCode(await complete({ parts: 'all' })), 40000, 'a bad part list is 400')
  t.equal((await app.inject({ method: 'POST', url: `/photos/big.bin?action=mpu-complete&uploadId=${uploadId}`, headers: { ...auth, 'content-type': 'application/json' }, payload: '{' })).statusCode, 400)

  const done = await complete({ parts: [{ partNumber: 1, etag: `"${md5Hex('AAAAAAAAAA')}"` }, { partNumber: 2, etag: two.etag }] })
  t.equal(done.statusCode, 200, done.body)
  const expectedEtag = md5Hex(Buffer.concat([Buffer.from(md5Hex('AAAAAAAAAA'), 'hex'), Buffer.from(two.etag, 'hex')])) + '-2'
  t.match(envelope(done).result, { key: 'big.bin', size: 13, etag: expectedEtag, customMetadata: { origin: 'test' } })
  t.equal(done.headers.etag, `"${expectedEtag}"`)
  const get = await app.inject({ method: 'GET', url: '/photos/big.bin', headers: auth })
  t.equal(get.body, 'AAAAAAAAAABBB')
  t.equal(get.headers['content-type'], 'application/x-big')

  const after = await part(3, 'C')
  t.equal(after.statusCode, 404, 'a completed upload is gone')
  t.equal(errorCode(after), 10024)

  const aborted = envelope(await app.inject({ method: 'POST', url: '/photos/tmp.bin?action=mpu-create', headers: auth })).result.uploadId
  t.equal((await app.inject({ method: 'DELETE', url: `/photos/tmp.bin?action=mpu-abort&uploadId=${aborted}`, headers: auth })).statusCode, 204)
  const late = await app.inject({ method: 'PUT', url: `/photos/tmp.bin?action=mpu-uploadpart&uploadId=${aborted}&partNumber=1`, headers: auth, payload: 'x' })
  t.equal(late.statusCode, 404)
  t.match(envelope(late).errors[0].message, /upload does not exist/)
  t.equal(errorCode(await part(1, 'x', 'no-such-upload')), 10024)

  t.equal(errorCode(await app.inject({ method: 'POST', url: '/photos/x?action=mpu-explode', headers: auth })), 40006)
  t.equal(errorCode(await app.inject({ method: 'POST', url: '/photos/x', headers: auth })), 40006)
})

t.test('who may do what', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/private.txt', headers: auth, payload: 'secret' })
  await app.inject({ method: 'PUT', url: '/site/index.html', headers: auth, payload: '<h1>hi</h1>' })

  const anonymous = await app.inject({ method: 'GET', url: '/photos/private.txt' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.headers['www-authenticate'], 'Bearer')
  t.equal(errorCode(anonymous), 40100)
  const wrong = await app.inject({ method: 'GET', url: '/photos/private.txt', headers: { authorization: 'Bearer wrong' } })
  t.equal(wrong.statusCode, 403)
  t.equal(errorCode(wrong), 40300)
  t.equal((await app.inject({ method: 'GET', url: '/photos' })).statusCode, 401, 'listing a private bucket needs a token')

  t.equal((await app.inject({ method: 'GET', url: '/site/index.html' })).statusCode, 200, 'public read without a token')
  t.equal((await app.inject({ method: 'HEAD', url: '/site/index.html' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/site' })).statusCode, 200, 'public list without a token')
  for (const [method, url] of [['PUT', '/site/x'], ['DELETE', '/site/index.html'], ['POST', '/site?delete'], ['POST', '/site/x?action=mpu-create']] as const) {
    t.equal((await app.inject({ method, url, payload: method === 'DELETE' ? undefined : '{}' })).statusCode, 401, `${method} ${url} on a public bucket needs a token`)
  }
  t.equal((await app.inject({ method: 'GET', url: '/site/index.html' })).body, '<h1>hi</h1>', 'still there')

  t.equal((await app.inject({ method: 'GET', url: '/' })).statusCode, 401)
  t.same(envelope(await app.inject({ method: 'GET', url: '/', headers: auth })).result.map((b: any) => b.name), ['photos', 'site'])
})

t.test('no token: open on loopback, closed elsewhere', async t => {
  const open = await gateway(t, { token: null, host: '127.0.0.1' })
  t.equal((await open.app.inject({ method: 'PUT', url: '/photos/a', payload: 'x' })).statusCode, 200)
  t.equal((await open.app.inject({ method: 'GET', url: '/photos/a' })).statusCode, 200)

  const exposed = await gateway(t, { token: null, host: '0.0.0.0' })
  const put = await exposed.app.inject({ method: 'PUT', url: '/photos/a', payload: 'x' })
  t.equal(put.statusCode, 403)
  t.equal(errorCode(put), 40301)
  t.equal((await exposed.app.inject({ method: 'GET', url: '/photos/a' })).statusCode, 403, 'private reads refused too')
  t.equal((await exposed.app.inject({ method: 'GET', url: '/site' })).statusCode, 200, 'public reads still served')
})

t.test('--public buckets are readable without a token', async t => {
  const { app } = await gateway(t, { publicBuckets: ['photos'] })
  await app.inject({ method: 'PUT', url: '/photos/a', headers: auth, payload: 'x' })
  t.equal((await app.inject({ method: 'GET', url: '/photos/a' })).statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/b', payload: 'x' })).statusCode, 401)
  // The console shows public access from the management API's managed domain: a --public bucket is public there too.
  const managed = await app.inject({ method: 'GET', url: '/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/r2/buckets/photos/domains/managed', headers: auth })
  t.equal(managed.json().result.enabled, true, 'the management API says so')
})

t.test('missing buckets, wrong methods, bad input', async t => {
  const { app, dataDir } = await gateway(t)
  const noBucket = await app.inject({ method: 'GET', url: '/nothing-here/key', headers: auth })
  t.equal(noBucket.statusCode, 404)
  t.equal(errorCode(noBucket), 10006)
  t.equal(errorCode(await app.inject({ method: 'PUT', url: '/nothing-here/key', headers: auth, payload: 'x' })), 10006)
  t.equal(errorCode(await app.inject({ method: 'GET', url: '/Not_A_Bucket/key', headers: auth })), 10006)
  // A method no route takes (WebDAV's) is answered as any other the resource does not take.
  const propfind = await app.inject({ method: 'PROPFIND' as 'GET', url: '/photos/key', headers: auth })
  t.same([propfind.statusCode, errorCode(propfind), propfind.headers.allow], [405, 40500, 'GET, HEAD, PUT, POST, DELETE, OPTIONS'], 'PROPFIND of an object: 405 naming what it takes')
  t.same([(await app.inject({ method: 'MKCOL' as 'GET', url: '/photos/', headers: auth })).headers.allow], ['GET, HEAD, POST, OPTIONS'], 'MKCOL of a bucket: what a bucket takes')
  t.equal(errorCode(await app.inject({ method: 'PROPFIND' as 'GET', url: '/Not_A_Bucket/key', headers: auth })), 10006, 'a segment that names no bucket: 404, whatever the method')
  const query = await app.inject({ method: 'QUERY' as 'GET', url: '/photos/key', headers: auth })
  t.same([query.statusCode, errorCode(query)], [400, 40003], 'QUERY without Content-Type: the client\'s mistake, not a 500')
  const nowhere = await app.inject({ method: 'QUERY' as 'GET', url: '/Not_A_Bucket/key', headers: auth })
  t.same([nowhere.statusCode, errorCode(nowhere)], [400, 40003], 'whatever it names (docs/http.md)')
  // A listing's error names the binding's operation, as the library's list() would.
  const noListing = await app.inject({ method: 'GET', url: '/nothing-here/', headers: auth })
  t.equal(errorCode(noListing), 10006)
  t.match(noListing.json().errors[0].message, /^list: /)

  const patch = await app.inject({ method: 'PATCH', url: '/photos/key', headers: auth, payload: 'x' })
  t.equal(patch.statusCode, 405)
  t.equal(patch.headers.allow, 'GET, HEAD, PUT, POST, DELETE, OPTIONS')
  t.equal(errorCode(patch), 40500)
  const putBucket = await app.inject({ method: 'PUT', url: '/photos', headers: auth, payload: 'x' })
  t.equal(putBucket.statusCode, 405)
  t.equal(putBucket.headers.allow, 'GET, HEAD, POST, OPTIONS')
  t.equal((await app.inject({ method: 'DELETE', url: '/', headers: auth })).statusCode, 405)

  t.equal(errorCode(await app.inject({ method: 'GET', url: '/photos/%E0%A4%A', headers: auth })), 40001)
  t.equal(errorCode(await app.inject({ method: 'PUT', url: '/photos/a', headers: { ...auth, expires: 'someday' }, payload: 'x' })), 40003)
  t.equal(errorCode(await app.inject({ method: 'PUT', url: '/photos/a', headers: { ...auth, 'x-meta-big': 'v'.repeat(3000) }, payload: 'x' })), 10012)
  const longKey = await app.inject({ method: 'PUT', url: `/photos/${'k'.repeat(1025)}`, headers: auth, payload: 'x' })
  t.equal(longKey.statusCode, 400)
  t.equal(errorCode(longKey), 10020)

  // Keys that look like paths stay keys: nothing is written outside the bucket.
  const before = await fsp.readdir(path.dirname(dataDir))
  for (const raw of ['..%2F..%2Fescape', '%2E%2E/%2E%2E/escape2', 'a/../../../escape3', '..', '.', 'nul%00byte', '%2Fleading']) {
    const put = await app.inject({ method: 'PUT', url: `/photos/${raw}`, headers: auth, payload: raw })
    t.not(put.statusCode, 500, `PUT ${raw}`)
    if (put.statusCode === 200) {
      const key = envelope(put).result.key
      const get = await app.inject({ method: 'GET', url: `/photos/${encodeURIComponent(key)}`, headers: auth })
      t.equal(get.body, raw, `${raw} reads back as itself`)
    }
  }
  t.same(await fsp.readdir(path.dirname(dataDir)), before, 'no file appeared beside the data directory')
  t.same((await fsp.readdir(dataDir)).filter(n => !n.startsWith('.')).sort(), ['photos', 'site'], 'nor in it')
})

t.test('public routes by host and by path prefix', async t => {
  const { app } = await gateway(t, { routes: parseRouteList('cdn.localhost=photos, /assets/=photos') })
  await app.inject({ method: 'PUT', url: '/photos/css/app.css', headers: auth, payload: 'body{}' })
  const byHost = await app.inject({ method: 'GET', url: '/css/app.css', headers: { host: 'cdn.localhost:8787' } })
  t.equal(byHost.statusCode, 200, 'a private bucket is public on its route')
  t.equal(byHost.body, 'body{}')
  t.equal(byHost.headers['content-type'], 'text/css')
  const byPrefix = await app.inject({ method: 'GET', url: '/assets/css/app.css' })
  t.equal(byPrefix.body, 'body{}')
  const ranged = await app.inject({ method: 'GET', url: '/assets/css/app.css', headers: { range: 'bytes=0-3' } })
  t.equal(ranged.statusCode, 206)
  t.equal((await app.inject({ method: 'GET', url: '/assets/css/missing.css' })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/assets/' })).statusCode, 404)

  const write = await app.inject({ method: 'PUT', url: '/assets/css/app.css', headers: auth, payload: 'hacked' })
  t.equal(write.statusCode, 405, 'routes are read-only, even with a token')
  t.equal(write.headers.allow, 'GET, HEAD, OPTIONS')
  t.equal((await app.inject({ method: 'DELETE', url: '/x', headers: { ...auth, host: 'cdn.localhost' } })).statusCode, 405)
  t.equal((await app.inject({ method: 'GET', url: '/photos/css/app.css' })).statusCode, 401, 'the path-style URL stays private')
})

t.test('custom domains from the registry', async t => {
  const { app, registry } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/logo.svg', headers: auth, payload: '<svg/>' })
  // Unattached, the Host means nothing: the path is path-style and anonymous, so 401 (existence is not revealed).
  t.equal((await app.inject({ method: 'GET', url: '/logo.svg', headers: { host: 'img.example.test' } })).statusCode, 401, 'not attached yet')
  await registry.updateSettings('photos', { domains: ['img.example.test'] })
  const res = await app.inject({ method: 'GET', url: '/logo.svg', headers: { host: 'IMG.example.test:8787' } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '<svg/>')
  t.equal((await app.inject({ method: 'PUT', url: '/logo.svg', headers: { ...auth, host: 'img.example.test' }, payload: 'x' })).statusCode, 405)
  await registry.updateSettings('photos', { domains: [] })
  t.equal((await app.inject({ method: 'GET', url: '/logo.svg', headers: { host: 'img.example.test' } })).statusCode, 401, 'detached at once')
})

t.test('CORS', async t => {
  const { app, registry } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/site/a.txt', headers: auth, payload: 'A' })
  await app.inject({ method: 'PUT', url: '/photos/a.txt', headers: auth, payload: 'A' })
  const origin = 'https://app.example.test'

  const preflight = await app.inject({ method: 'OPTIONS', url: '/site/a.txt', headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' } })
  t.equal(preflight.statusCode, 204)
  t.match(preflight.headers, { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, HEAD', 'access-control-allow-headers': 'range' })
  const get = await app.inject({ method: 'GET', url: '/site/a.txt', headers: { origin } })
  t.equal(get.headers['access-control-allow-origin'], '*')
  t.match(get.headers['access-control-expose-headers'], /ETag.*Content-Range.*Content-Length/)
  t.equal((await app.inject({ method: 'OPTIONS', url: '/site/a.txt', headers: { origin, 'access-control-request-method': 'PUT' } })).statusCode, 403, 'default CORS allows reads only')

  t.equal((await app.inject({ method: 'GET', url: '/photos/a.txt', headers: { ...auth, origin } })).headers['access-control-allow-origin'], undefined, 'private bucket without rules: no CORS')
  const refused = await app.inject({ method: 'OPTIONS', url: '/photos/a.txt', headers: { origin, 'access-control-request-method': 'GET' } })
  t.equal(refused.statusCode, 403)
  t.equal(errorCode(refused), 40302)

  await registry.updateSettings('photos', { cors: [{ allowedOrigins: [origin], allowedMethods: ['GET', 'PUT'], allowedHeaders: ['authorization', 'content-type'], exposeHeaders: ['ETag'], maxAgeSeconds: 600 }] })
  const allowed = await app.inject({ method: 'OPTIONS', url: '/photos/a.txt', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, content-type' } })
  t.equal(allowed.statusCode, 204, 'preflight needs no token')
  t.match(allowed.headers, { 'access-control-allow-origin': origin, 'access-control-allow-methods': 'GET, PUT', 'access-control-max-age': '600' })
  const put = await app.inject({ method: 'PUT', url: '/photos/b.txt', headers: { ...auth, origin }, payload: 'B' })
  t.equal(put.headers['access-control-allow-origin'], origin)
  t.equal(put.headers['access-control-expose-headers'], 'ETag')
  const denied = await app.inject({ method: 'GET', url: '/photos/a.txt', headers: { ...auth, origin: 'https://other.test' } })
  t.equal(denied.headers['access-control-allow-origin'], undefined)
  const unauthorised = await app.inject({ method: 'GET', url: '/photos/a.txt', headers: { origin } })
  t.equal(unauthorised.statusCode, 401)
  t.equal(unauthorised.headers['access-control-allow-origin'], origin, 'a browser can read the error too')
})

t.test('bodies are not limited by Fastify\'s body limit and are not parsed', async t => {
  const { app } = await gateway(t)
  const big = Buffer.alloc(3 * 1024 * 1024, 7)
  const put = await app.inject({ method: 'PUT', url: '/photos/big.json', headers: { ...auth, 'content-type': 'application/json' }, payload: big })
  t.equal(put.statusCode, 200, 'a non-JSON body sent as application/json is stored as is')
  t.equal(envelope(put).result.size, big.length)
  t.equal(envelope(put).result.etag, md5Hex(big))
})

t.test('a private read made with the token is kept by no cache, unless the object says otherwise', async t => {
  const { app } = await gateway(t)
  await app.inject({ method: 'PUT', url: '/photos/plain', headers: auth, payload: 'private' })
  await app.inject({ method: 'PUT', url: '/photos/cached', headers: { ...auth, 'cache-control': 'max-age=60' }, payload: 'private' })
  await app.inject({ method: 'PUT', url: '/site/page', headers: auth, payload: 'public' })
  // A browser's cache is keyed by URL alone: a body it kept would answer a later request without the token.
  for (const method of ['GET', 'HEAD'] as const) {
    t.equal((await app.inject({ method, url: '/photos/plain', headers: auth })).headers['cache-control'], 'private, no-store', method)
    t.equal((await app.inject({ method, url: '/photos/cached', headers: auth })).headers['cache-control'], 'max-age=60', `${method}: the object's own wins`)
    t.equal((await app.inject({ method, url: '/site/page' })).headers['cache-control'], undefined, `${method}: a public read is left to the object`)
  }
  const etag = (await app.inject({ method: 'GET', url: '/photos/plain', headers: auth })).headers.etag as string
  const revalidated = await app.inject({ method: 'GET', url: '/photos/plain', headers: { ...auth, 'if-none-match': etag } })
  t.equal(revalidated.statusCode, 304)
  t.equal(revalidated.headers['cache-control'], 'private, no-store')
  const listing = await app.inject({ method: 'GET', url: '/photos', headers: auth })
  t.equal(listing.headers['cache-control'], 'private, no-store', 'a private listing too')
  t.equal((await app.inject({ method: 'GET', url: '/', headers: auth })).headers['cache-control'], 'private, no-store', 'and the list of buckets')
  const { app: open } = await gateway(t, { token: null })
  await open.inject({ method: 'PUT', url: '/photos/plain', payload: 'open' })
  t.equal((await open.inject({ method: 'GET', url: '/photos/plain' })).headers['cache-control'], undefined, 'without a token there is nothing to keep private')
})

t.test('any Content-Type is stored as given (empty, malformed, a list): put, multipart create and parts', async t => {
  const { app, registry } = await gateway(t)
  const bucket = (await registry.open('photos'))!
  for (const [i, type] of ['', ';;;', 'a/b/c', 'text/plain, text/html', 'text/plain;'].entries()) {
    const put = await app.inject({ method: 'PUT', url: `/photos/ct-${i}`, headers: { ...auth, 'content-type': type }, payload: 'body' })
    t.equal(put.statusCode, 200, `put ${JSON.stringify(type)}`)
    t.equal((await bucket.head(`ct-${i}`))?.httpMetadata.contentType, type, 'stored as given')
    const head = await app.inject({ method: 'HEAD', url: `/photos/ct-${i}`, headers: auth })
    t.equal(head.statusCode, 200)

    const create = await app.inject({ method: 'POST', url: `/photos/mp-${i}?action=mpu-create`, headers: { ...auth, 'content-type': type } })
    t.equal(create.statusCode, 200, `mpu-create ${JSON.stringify(type)}`)
    const { uploadId } = envelope(create).result
    const part = await app.inject({ method: 'PUT', url: `/photos/mp-${i}?action=mpu-uploadpart&uploadId=${encodeURIComponent(uploadId)}&partNumber=1`, headers: { ...auth, 'content-type': type }, payload: 'part' })
    t.equal(part.statusCode, 200, `mpu-uploadpart ${JSON.stringify(type)}`)
    const done = await app.inject({ method: 'POST', url: `/photos/mp-${i}?action=mpu-complete&uploadId=${encodeURIComponent(uploadId)}`, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ parts: [envelope(part).result] }) })
    t.equal(done.statusCode, 200)
    t.equal((await bucket.head(`mp-${i}`))?.httpMetadata.contentType, type, 'the upload\'s type, as given')
    // A JSON body must still say so (readJsonBody): the type is refused with the door's 415, not Fastify's.
    const deleted = await app.inject({ method: 'POST', url: '/photos?delete', headers: { ...auth, 'content-type': type }, payload: '{"keys":[]}' })
    t.equal(deleted.statusCode, 415)
    t.equal(errorCode(deleted), 41500)
  }
})
