/**
 * The console's files under conditional requests whose dates `Date.parse`
 * reads and RFC 9110 does not (`2099`, 30 February, a five-digit year), and
 * If-Range dates, which hold only when they are the file's Last-Modified
 * exactly. A console of its own, on a file whose mtime is set, so that each
 * date falls where the test needs it.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { mkdir, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { conditionsForSend, webConsole, type ConsoleRefusal } from '../../src/console/serve.js'
import { testdir } from '../testdir.js'

const statusOf: Record<ConsoleRefusal, number> = { NoSuchFile: 404, PreconditionFailed: 412, RangeNotSatisfiable: 416 }
const mtime = new Date('2026-03-10T10:20:30.500Z')
const lastModified = 'Tue, 10 Mar 2026 10:20:30 GMT'
const body = 'abcdefghij'
const url = '/_console/app-ABCDEFGH.js'

async function consoleOn (t: Test): Promise<{ app: FastifyInstance, faults: unknown[] }> {
  const root = path.join(testdir(t), 'console')
  await mkdir(root)
  await writeFile(path.join(root, 'index.html'), '<title>{{nonce}}</title>')
  await writeFile(path.join(root, 'app-ABCDEFGH.js'), body)
  await utimes(path.join(root, 'app-ABCDEFGH.js'), mtime, mtime)
  const faults: unknown[] = []
  const app = Fastify()
  await app.register(webConsole, {
    root,
    refuse: async (reply, refusal) => {
      if (typeof refusal === 'object') faults.push(refusal.fault)
      await reply.code(typeof refusal === 'object' ? 500 : statusOf[refusal]).send(refusal)
    }
  })
  t.teardown(async () => { await app.close() })
  return { app, faults }
}

t.test('the file\'s Last-Modified', async t => {
  const { app } = await consoleOn(t)
  const answer = await app.inject({ method: 'GET', url })
  t.equal(answer.statusCode, 200)
  t.equal(answer.headers['last-modified'], lastModified, 'whole seconds of the mtime')
})

t.test('If-Modified-Since: an HTTP-date not earlier than the Last-Modified answers 304; anything else that is no HTTP-date is ignored', async t => {
  const { app, faults } = await consoleOn(t)
  const cases: Array<[string, number]> = [
    [lastModified, 304],
    ['Thu, 01 Jan 2099 00:00:00 GMT', 304],
    ['Tuesday, 10-Mar-26 10:20:30 GMT', 304], // RFC 850
    ['Tue Mar 10 10:20:30 2026', 304], // asctime: UTC, whatever the process's zone
    ['Tue, 10 Mar 2026 10:20:29 GMT', 200],
    ['2099', 200],
    ['Sat, 01 Jan 10000 00:00:00 GMT', 200],
    ['Thu, 31 Apr 2026 00:00:00 GMT', 200], // Date.parse: 1 May
    ['2099-01-01T00:00:00Z', 200],
    ['Thu, 01 Jan 2099 00:00:00 GMT, Fri, 02 Jan 2099 00:00:00 GMT', 200]
  ]
  for (const [since, status] of cases) {
    const answer = await app.inject({ method: 'GET', url, headers: { 'if-modified-since': since } })
    t.equal(answer.statusCode, status, `If-Modified-Since: ${since}`)
    if (status === 200) t.equal(answer.body, body)
  }
  const withTag = await app.inject({ method: 'GET', url, headers: { 'if-modified-since': 'Thu, 01 Jan 2099 00:00:00 GMT', 'if-none-match': '"other"' } })
  t.equal(withTag.statusCode, 200, 'If-None-Match present: If-Modified-Since is not looked at')
  t.equal((await app.inject({ method: 'HEAD', url, headers: { 'if-modified-since': '2099' } })).statusCode, 200, 'HEAD too')
  t.same(faults, [])
})

t.test('If-Unmodified-Since: fails only on an HTTP-date earlier than the Last-Modified', async t => {
  const { app, faults } = await consoleOn(t)
  const cases: Array<[string, number]> = [
    [lastModified, 200],
    ['Thu, 01 Jan 2099 00:00:00 GMT', 200],
    ['Tue, 10 Mar 2026 10:20:29 GMT', 412],
    ['Monday, 09-Mar-26 10:20:30 GMT', 412],
    ['Mon, 30 Feb 2026 02:10:54 GMT', 200], // Date.parse: 2 March, before the file
    ['0', 200], // Date.parse: the year 2000
    ['1970', 200],
    ['Sat, 01 Jan 0000 00:00:00 GMT, x', 200]
  ]
  for (const [since, status] of cases) {
    const answer = await app.inject({ method: 'GET', url, headers: { 'if-unmodified-since': since } })
    t.equal(answer.statusCode, status, `If-Unmodified-Since: ${since}`)
  }
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-match': '*', 'if-unmodified-since': 'Tue, 10 Mar 2026 10:20:29 GMT' } })).statusCode, 200,
    'If-Match: * holds, and If-Unmodified-Since is not looked at')
  t.same(faults, [], 'a failed condition is a refusal, not a fault')
})

t.test('If-Range: a date holds only when it is the Last-Modified exactly; otherwise the whole file', async t => {
  const { app, faults } = await consoleOn(t)
  const partial = await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-3', 'if-range': lastModified } })
  t.equal(partial.statusCode, 206, 'the Last-Modified itself: the range')
  t.equal(partial.body, body.slice(0, 4))
  t.equal(partial.headers['content-range'], `bytes 0-3/${body.length}`)
  t.equal((await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-3', 'if-range': 'Tuesday, 10-Mar-26 10:20:30 GMT' } })).statusCode, 206,
    'the same instant in the RFC 850 form')
  t.equal((await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-3' } })).statusCode, 206, 'no If-Range: the range')
  for (const ifRange of ['Thu, 01 Jan 2099 00:00:00 GMT', 'Tue, 10 Mar 2026 10:20:31 GMT', 'Tue, 10 Mar 2026 10:20:29 GMT', '2099',
    'Sat, 01 Jan 10000 00:00:00 GMT', 'Tue, 31 Mar 2026 10:20:30 GMT, x', 'garbage']) {
    const answer = await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-3', 'if-range': ifRange } })
    t.equal(answer.statusCode, 200, `If-Range: ${ifRange}: the whole file`)
    t.equal(answer.body, body)
    t.equal(answer.headers['content-range'], undefined)
  }
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-range': '2099' } })).statusCode, 200, 'If-Range without a Range: the whole file')
  t.same(faults, [])
})

t.test('conditionsForSend: what `send` sees', async t => {
  const seen = (headers: Record<string, string>): unknown => conditionsForSend(headers, mtime)
  t.same(seen({ 'if-modified-since': '2099', accept: '*/*' }), { accept: '*/*' }, 'a date that is no HTTP-date: as if absent')
  t.same(seen({ 'if-modified-since': 'Thu, 01 Jan 2099 00:00:00 GMT' }), { 'if-modified-since': lastModified }, 'not modified: the Last-Modified itself')
  t.same(seen({ 'if-none-match': '"x"', 'if-modified-since': 'Thu, 01 Jan 2099 00:00:00 GMT' }), { 'if-none-match': '"x"' })
  t.same(seen({ range: 'bytes=0-1', 'if-range': lastModified }), { range: 'bytes=0-1' })
  t.same(seen({ range: 'bytes=0-1', 'if-range': 'W/"a-b"' }), {})
  t.equal(seen({ 'if-match': '"a"' }), 'PreconditionFailed')
  t.same(seen({ 'if-match': '*', 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }), {})
  t.equal(seen({ 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }), 'PreconditionFailed')
})
