/**
 * No request input can stall the server: each parser of the S3 door fed the
 * worst bodies and headers we know for it (unclosed comments and CDATA
 * sections repeated, deep nesting, long runs of the characters a search
 * stops on, names repeated thousands of times) takes no more than a few
 * times what a benign input of the same size takes, measured in the same
 * test, and a request on another connection is answered while such a body
 * is being read.
 *
 * The bounds are relative on purpose: a quadratic parser misses them by a
 * factor of tens to thousands at these sizes, a loaded machine slows the
 * baseline and the worst case alike.
 */
import t, { type Test } from 'tap'
import { Readable } from 'node:stream'
import { readXmlBody, XML_BODY_LIMITS, type XmlDocumentRoot } from '../../src/s3/xml.js'
import { verifySignature } from '../../src/s3/sigv4.js'
import { parseRawQuery } from '../../src/s3/uri-encoding.js'
import { AwsChunkedDecoder } from '../../src/s3/payload.js'
import { parseConditional } from '../../src/bucket/conditional.js'
import { parseRangeHeader } from '../../src/bucket/range.js'
import { parseHttpDate } from '../../src/bucket/http-date.js'
import { raw, s3Server } from './fixture.js'

/**
 * Worst case at most K times the benign baseline, plus SLACK ms (timer and
 * GC noise on tiny baselines): a body with markup in every few bytes costs
 * more than one of mostly text, but by a constant factor; the quadratic
 * searches these tests were written against took 100 to 1,000 times the
 * baseline at these sizes.
 */
const K = 10
const SLACK_MS = 50
/** How much longer a body four times the size may take: 4 for a linear parser, 16 for a quadratic one. */
const GROWTH = 8

async function elapsed (run: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now()
  try {
    await run()
  } catch {
    // Refusals are answers too: what is timed is how long the answer takes.
  }
  return performance.now() - start
}

async function best (run: () => Promise<unknown> | unknown, runs: number): Promise<number> {
  let min = Infinity
  for (let i = 0; i < runs; i++) min = Math.min(min, await elapsed(run))
  return min
}

/**
 * Asserts `worst` runs within K × `benign` + SLACK_MS. A run over the bound
 * is tried twice more (the best counts), unless it is far over: a
 * quadratic parser is not given three chances to take seconds.
 */
async function linear (t: Test, name: string, benign: () => unknown, worst: () => unknown, quarter?: () => unknown): Promise<void> {
  let baseline = await best(benign, 3)
  // A body dense in elements costs more per byte than the benign document, by a constant: its own
  // quarter-size version, times GROWTH, bounds it too (a quadratic parser takes 16 times as long).
  if (quarter !== undefined) baseline = Math.max(baseline, GROWTH * await best(quarter, 3) / K)
  const bound = K * baseline + SLACK_MS
  let taken = await elapsed(worst)
  if (taken > bound && taken < 20 * bound) taken = Math.min(taken, await best(worst, 2))
  t.ok(taken <= bound, `${name}: ${taken.toFixed(1)} ms, bound ${bound.toFixed(1)} ms (benign ${baseline.toFixed(1)} ms)`)
}

/** `unit` repeated to `size` characters, between `head` and `tail`. */
function padded (head: string, unit: string, tail: string, size: number): string {
  const room = size - head.length - tail.length
  return head + unit.repeat(Math.floor(room / unit.length)) + 'x'.repeat(room % unit.length) + tail
}

/** A document a client would send, of about `size` characters. */
function benignDocument (root: XmlDocumentRoot, size: number): string {
  const fill = (count: number, item: (i: number, pad: string) => string): string => {
    const bare = item(count - 1, '').length
    const pad = 'p'.repeat(Math.max(0, Math.floor(size / count) - bare))
    return Array.from({ length: count }, (_, i) => item(i, pad)).join('')
  }
  switch (root) {
    case 'Delete':
      return `<Delete>${fill(1000, (i, pad) => `<Object><Key>photos/${pad}${i}</Key></Object>`)}<Quiet>true</Quiet></Delete>`
    case 'CompleteMultipartUpload':
      return `<CompleteMultipartUpload>${fill(Math.min(10_000, Math.floor(size / 100)), (i, pad) =>
        `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${pad}0123456789abcdef0123456789abcdef"</ETag></Part>`)}</CompleteMultipartUpload>`
    case 'LifecycleConfiguration':
      return `<LifecycleConfiguration>${fill(1000, (i, pad) =>
        `<Rule><ID>r${i}${pad}</ID><Filter><Prefix>logs/${i}/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule>`)}</LifecycleConfiguration>`
    case 'CORSConfiguration':
      return `<CORSConfiguration>${fill(100, (i, pad) =>
        `<CORSRule><AllowedOrigin>https://${pad}${i}.test</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>*</AllowedHeader></CORSRule>`)}</CORSConfiguration>`
    case 'CreateBucketConfiguration':
      return padded('<CreateBucketConfiguration><LocationConstraint>', ' ', 'auto</LocationConstraint></CreateBucketConfiguration>', size)
  }
}

/** Bodies that made, or could make, a parser of XML search again from each of many starts. */
function worstDocuments (root: XmlDocumentRoot, size: number): Record<string, string> {
  const open = `<${root}>`
  const close = `</${root}>`
  let distinct = open
  for (let i = 0; distinct.length < size - close.length - 12; i++) distinct += `<n${i}/>`
  return {
    'unclosed comments': padded(open, '<!--', close, size),
    'unclosed CDATA sections': padded(open, '<![CDATA[', close, size),
    'unclosed processing instructions': padded(open, '<?a ', close, size),
    'closed comments': padded(open, '<!---->', close, size),
    'processing instructions': padded(open, '<?a?>', close, size),
    'ampersands': padded(open, '&', close, size),
    'unterminated references': padded(open, '&#11111', close, size),
    'references': padded(open, '&amp;&#x41;', close, size),
    'nesting, unclosed': padded(open, '<a>', '', size),
    'nesting, closed': open + padded('', '<a>', '', size / 2 - 10) + padded('', '</a>', '', size / 2 - 10) + close,
    'empty elements': padded(open, '<a/>', close, size),
    'distinct element names': distinct + close,
    'declarations': padded(open, '<!', close, size),
    'angle brackets': padded(open, '<', close, size),
    'closing tags': padded(open, '</', close, size),
    'attributes': padded(`<${root}`, ' a="1"', '>' + close, size),
    'an unclosed attribute value': padded(`<${root} a='`, '"', '', size),
    'white space in a tag': padded(`<${root}`, ' ', '', size),
    'text': padded(`${open}<Key>`, 'k', `</Key>${close}`, size)
  }
}

/** The largest body of each document, less a little room: the sizes a worst case may have. */
const sizes: Record<XmlDocumentRoot, number> = {
  Delete: 256 * 1024,
  CompleteMultipartUpload: 256 * 1024,
  LifecycleConfiguration: 256 * 1024,
  CORSConfiguration: XML_BODY_LIMITS.CORSConfiguration.bytes - 1024,
  CreateBucketConfiguration: XML_BODY_LIMITS.CreateBucketConfiguration.bytes - 1024
}

t.test('every XML body the S3 port reads is judged in time linear in its size', async t => {
  for (const root of Object.keys(sizes) as XmlDocumentRoot[]) {
    const read = (text: string) => async () => await readXmlBody(Readable.from([Buffer.from(text)]), root)
    const benign = benignDocument(root, sizes[root])
    t.ok(benign.length <= XML_BODY_LIMITS[root].bytes, `${root}: the benign body is within the cap`)
    await t.resolves(read(benign)(), `${root}: the benign body is read`)
    const quarters = worstDocuments(root, Math.floor(benign.length / 4))
    for (const [name, body] of Object.entries(worstDocuments(root, benign.length))) {
      await linear(t, `${root}, ${name} (${body.length} bytes)`, read(benign), read(body), read(quarters[name]))
    }
  }
})

t.test('a query string repeating one name is split in time linear in its length', async t => {
  // Node's 16 KiB header limit bounds a URL; the door's parse must not be quadratic within it.
  const size = 16 * 1024
  const benign = Array.from({ length: size / 8 }, (_, i) => `n${i.toString(36).padStart(4, '0')}=v`).join('&')
  await linear(t, 'one name repeated', () => parseRawQuery(benign), () => parseRawQuery('a&'.repeat(size / 2)))
  await linear(t, 'one name and value repeated', () => parseRawQuery(benign), () => parseRawQuery('a=b&'.repeat(size / 4)))
  await linear(t, 'empty parameters', () => parseRawQuery(benign), () => parseRawQuery('&'.repeat(size)))
  t.same(parseRawQuery('a=1&a=2&a=3&b=4'), { a: ['1', '2', '3'], b: '4' }, 'a repeated name still gathers its values in order')
})

t.test('request headers are parsed in time linear in their length', async t => {
  // 16 KiB: all of a request's headers together are refused past that.
  const size = 16 * 1024
  const fill = (unit: string, head = '', tail = ''): string => padded(head, unit, tail, size)
  const etags = fill('"0123456789abcdef0123456789abcdef", ')
  const cases: Array<[string, (value: string) => unknown, string, string[]]> = [
    // As the doors hand a request's If-Match to the engine: in the binding's Headers form.
    ['If-Match', (value: string) => { try { return parseConditional(new Headers({ 'if-match': value })) } catch { return null } }, etags, [fill('a', '"'), fill(' '), fill(' ', '', 'x'), fill('W/'), fill(','), fill('" '), fill('"a"  ', '', 'x'), fill('a ')]],
    ['Range', parseRangeHeader, fill('0', 'bytes=', '-'), [fill(' ', 'bytes='), fill(' ', 'bytes=0', 'x'), fill('0', 'bytes=', 'x'), fill(' -', 'bytes=0')]],
    ['If-Modified-Since', parseHttpDate, fill('x', 'Sun, 06 Nov 1994 08:49:37 GMT'), [fill(' '), fill('Sun, '), fill('0'), fill(' ', 'Sun, 06 Nov 1994 08:49:37')]],
    ['Authorization', (value: string) => verifySignature({ method: 'GET', rawPath: '/k', rawQuery: '', headers: { authorization: value, 'x-amz-date': '20130524T000000Z' } }, {}, () => undefined, new Date('2013-05-24T00:00:00Z')),
      fill('a', 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, Signature='),
      [fill(',', 'AWS4-HMAC-SHA256 '), fill('=', 'AWS4-HMAC-SHA256 '), fill(' ', 'AWS4-HMAC-SHA256 Credential='), fill('Credential=a, ', 'AWS4-HMAC-SHA256 '), fill(';', 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders='), fill('/', 'AWS4-HMAC-SHA256 Credential=')]]
  ]
  for (const [name, parse, benign, worst] of cases) {
    for (const value of worst) await linear(t, `${name}: ${JSON.stringify(value.slice(0, 24))}…`, () => parse(benign), () => parse(value))
  }
})

t.test('aws-chunked framing is removed in time linear in the body', async t => {
  const size = 256 * 1024
  const decode = (framed: string) => async () => {
    const decoder = new AwsChunkedDecoder(null, undefined, new Set())
    decoder.resume()
    await new Promise<void>(resolve => {
      decoder.on('finish', resolve)
      decoder.on('error', () => resolve())
      // In pieces of 1 KiB, as a socket hands them over: a header line may be cut anywhere.
      for (let i = 0; i < framed.length; i += 1024) decoder.write(Buffer.from(framed.slice(i, i + 1024), 'latin1'))
      decoder.end()
    })
  }
  const benign = `${size.toString(16)}\r\n${'x'.repeat(size)}\r\n0\r\n\r\n`
  // Framing costs a little per chunk, not per byte, so a body of one-byte chunks is compared with itself
  // at an eighth of the size: a linear decoder takes 8 times as long for 8 times the body, a quadratic one 64.
  const ones = (bytes: number): string => `${'1\r\nx\r\n'.repeat(Math.floor(bytes / 6))}0\r\n\r\n`
  const eighth = await best(decode(ones(size / 8)), 3)
  const whole = await best(decode(ones(size)), 2)
  t.ok(whole <= 3 * 8 * eighth + SLACK_MS, `one-byte chunks: ${whole.toFixed(1)} ms, an eighth of the body ${eighth.toFixed(1)} ms`)
  const worst: Record<string, string> = {
    'long header lines': `${`1;${'e'.repeat(4000)}\r\nx\r\n`.repeat(size / 4008)}0\r\n\r\n`,
    'extensions': `${`1${';'.repeat(4000)}\r\nx\r\n`.repeat(size / 4008)}0\r\n\r\n`,
    'a header line that never ends': '1'.repeat(size),
    'trailer lines': `0\r\n${'x-a:b\r\n'.repeat(size / 7)}\r\n`
  }
  for (const [name, framed] of Object.entries(worst)) await linear(t, name, decode(benign), decode(framed))
})

t.test('another request is answered while the worst XML body is being read', async t => {
  const server = await s3Server(t)
  await raw(server, 'PUT', '/photos/alive', {}, 'yes')
  const get = async (): Promise<number> => {
    const start = performance.now()
    const answer = await raw(server, 'GET', '/photos/alive')
    t.equal(answer.body, 'yes')
    return performance.now() - start
  }
  const idle = Math.min(await get(), await get(), await get())
  // 256 KiB: a search from each unclosed comment stalled the server for about 10 s at this size.
  const worst = worstDocuments('Delete', 256 * 1024)
  for (const name of ['unclosed comments', 'unclosed CDATA sections', 'ampersands', 'nesting, unclosed']) {
    // GETs one after another on connections of their own until the Delete is answered: one of them is
    // waiting while the body is judged (they share one event loop with the server and this test).
    let answered = false
    const deleting = raw(server, 'POST', '/photos?delete', {}, [worst[name]]).finally(() => { answered = true })
    let slowest = 0
    do slowest = Math.max(slowest, await get()); while (!answered)
    const answer = await deleting
    t.equal(answer.status, 400, `${name}: refused`)
    t.match(answer.body, /<Code>MalformedXML<\/Code>/, name)
    t.ok(slowest < 20 * idle + 1000, `${name}: the slowest GET took ${slowest.toFixed(0)} ms (idle: ${idle.toFixed(1)} ms)`)
  }
})
