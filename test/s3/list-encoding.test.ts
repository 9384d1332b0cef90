import t from 'tap'
import { s3UrlEncode } from '../../src/s3/list-encoding.js'
import { raw, s3Server } from './fixture.js'

t.test('s3UrlEncode: RFC 3986 unreserved characters and / kept, everything else percent-encoded', async t => {
  const cases: Array<[string, string]> = [
    ['quux ab/', 'quux%20ab/'],
    ['a+b', 'a%2Bb'],
    ['AZaz09-._~', 'AZaz09-._~'],
    ["!'()*", '%21%27%28%29%2A'],
    ['a&b=c?d#e%f', 'a%26b%3Dc%3Fd%23e%25f'],
    ['\r\n', '%0D%0A'],
    ['é/☃', '%C3%A9/%E2%98%83']
  ]
  for (const [value, encoded] of cases) t.equal(s3UrlEncode(value), encoded, JSON.stringify(value))
})

t.test('encoding-type=url: keys, prefixes, delimiter and markers as S3 encodes them; tokens verbatim', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  for (const key of ['run books/x+y', 'run books/z', 'run-c(1)']) await bucket.put(key, 'x')
  const get = async (query: string): Promise<string> => {
    const answer = await server.app.inject({ method: 'GET', url: `/photos?${query}` })
    t.equal(answer.statusCode, 200, query)
    return answer.body
  }
  const v2 = await get('list-type=2&encoding-type=url&delimiter=/&start-after=a%20b&prefix=run')
  t.match(v2, '<Prefix>run</Prefix><Delimiter>/</Delimiter>')
  t.match(v2, '<StartAfter>a%20b</StartAfter>')
  t.match(v2, '<Key>run-c%281%29</Key>')
  t.match(v2, '<CommonPrefixes><Prefix>run%20books/</Prefix></CommonPrefixes>')
  const page = await get('list-type=2&encoding-type=url&max-keys=1&prefix=run%20books/')
  t.match(page, '<Key>run%20books/x%2By</Key>')
  const token = /<NextContinuationToken>([^<]*)</.exec(page)?.[1] ?? ''
  t.not(token, '')
  const next = await get(`list-type=2&encoding-type=url&max-keys=1&prefix=run%20books/&continuation-token=${encodeURIComponent(token)}`)
  t.match(next, `<ContinuationToken>${token}</ContinuationToken>`)
  t.match(next, '<Key>run%20books/z</Key>')
  const v1 = await get('encoding-type=url&max-keys=1&marker=run%20books/x%2By&prefix=run')
  t.match(v1, '<Marker>run%20books/x%2By</Marker>')
  t.match(v1, '<NextMarker>run%20books/z</NextMarker>')
  await bucket.createMultipartUpload('up load/a+b')
  await bucket.createMultipartUpload('up load/z')
  const uploads = await get('uploads&encoding-type=url&key-marker=up%20&prefix=up%20&max-uploads=1')
  t.match(uploads, '<KeyMarker>up%20</KeyMarker>')
  t.match(uploads, '<Prefix>up%20</Prefix>')
  t.match(uploads, '<Key>up%20load/a%2Bb</Key>')
  t.match(uploads, '<NextKeyMarker>up%20load/a%2Bb</NextKeyMarker>')
})

t.test('a + in the query is a space, as S3 reads it: an unsigned listing as the AWS SDK for Go v1 sends it (rclone\'s anonymous remotes) finds the keys under a prefix with spaces', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  for (const key of ['dir with space/a.txt', 'dir with space/sub+plus/f.txt', 'dir+with+space/b.txt']) await bucket.put(key, 'x')
  const get = async (url: string): Promise<string> => {
    const answer = await raw(server, 'GET', url)
    t.equal(answer.status, 200, url)
    return answer.body
  }
  const spaced = await get('/photos?delimiter=%2F&max-keys=1000&prefix=dir+with+space%2F')
  t.match(spaced, '<Prefix>dir with space/</Prefix>')
  t.match(spaced, '<Key>dir with space/a.txt</Key>')
  t.match(spaced, '<CommonPrefixes><Prefix>dir with space/sub+plus/</Prefix></CommonPrefixes>')
  t.notMatch(spaced, 'b.txt')
  const after = await get('/photos?list-type=2&prefix=dir+with+space%2F&start-after=dir+with+space%2Fa.txt')
  t.notMatch(after, '<Key>dir with space/a.txt</Key>', 'start-after read with its spaces')
  t.match(after, '<StartAfter>dir with space/a.txt</StartAfter>')
  t.match(after, '<Key>dir with space/sub+plus/f.txt</Key>')
  const plus = await get('/photos?list-type=2&prefix=dir%2Bwith%2Bspace%2F')
  t.match(plus, '<Key>dir+with+space/b.txt</Key>', 'a plus sent as %2B is a plus')
  t.notMatch(plus, 'a.txt')
  t.equal((await raw(server, 'GET', '/photos/dir+with+space/b.txt')).body, 'x', 'in the path a + stays a plus')
  const named = await raw(server, 'GET', '/photos/dir+with+space/b.txt?response-content-disposition=attachment%3B+filename%3Db.txt')
  t.equal(named.headers['content-disposition'], 'attachment; filename=b.txt', 'a response-* value read as a form encoder wrote it')
})

t.test('an empty continuation-token is none: the first page', async t => {
  const server = await s3Server(t)
  await (await server.registry.open('photos'))!.put('a', 'x')
  const answer = await server.app.inject({ method: 'GET', url: '/photos?list-type=2&continuation-token=' })
  t.equal(answer.statusCode, 200)
  t.match(answer.body, '<Key>a</Key>')
})

t.test('keys written in another Unicode form than NFC: V1 and V2 pages follow the binding\'s order, each key once', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  // A-ring decomposed, the Angstrom sign and A-ring composed: one letter, whose NFC form sorts after B, though two are written before it.
  const written = ['A\u030a1', '\u212b2', '\u00c53', 'B']
  for (const key of written) await bucket.put(key, 'x')
  const keysOf = (body: string): string[] => [...body.matchAll(/<Key>([^<]*)<\/Key>/g)].map(match => decodeURIComponent(match[1]))
  for (const [what, first, next] of [
    ['V1', 'max-keys=2', (body: string) => `max-keys=2&marker=${/<NextMarker>([^<]*)</.exec(body)?.[1] ?? ''}`],
    ['V2', 'list-type=2&max-keys=2', (body: string) => `list-type=2&max-keys=2&continuation-token=${encodeURIComponent(/<NextContinuationToken>([^<]*)</.exec(body)?.[1] ?? '')}`]
  ] as const) {
    const listed: string[] = []
    let query: string = first
    for (let pages = 0; pages < 5; pages++) {
      const answer = await server.app.inject({ method: 'GET', url: `/photos?encoding-type=url&${query}` })
      t.equal(answer.statusCode, 200)
      listed.push(...keysOf(answer.body))
      if (!answer.body.includes('<IsTruncated>true</IsTruncated>')) break
      query = next(answer.body)
    }
    t.same(listed, ['B', 'A\u030a1', '\u212b2', '\u00c53'], `${what}: every key once, in the order of its NFC form, shown as written`)
  }
})

t.test('a listing parameter given twice is read by its first value: list-type=2 twice is still a V2 page', async t => {
  const server = await s3Server(t)
  const bucket = (await server.registry.open('photos'))!
  for (const key of ['a', 'b']) await bucket.put(key, 'x')
  const twice = await server.app.inject({ method: 'GET', url: '/photos?list-type=2&list-type=2&max-keys=1' })
  t.equal(twice.statusCode, 200)
  t.match(twice.body, '<KeyCount>1</KeyCount>', 'a V2 page')
  t.match(twice.body, '<NextContinuationToken>', 'with its continuation token')
  t.notMatch(twice.body, '<Marker>', 'not a V1 page')
})
