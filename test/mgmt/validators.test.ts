import t from 'tap'
import { isArgumentError } from '../../src/bucket/index.js'
import { ManagementError, toManagementError } from '../../src/mgmt/errors.js'
import { parseIPv4, parseIPv6, isProxiableAddress } from '../../src/mgmt/validate/ip.js'
import { parseHostname, parseZoneName, recordFqdn } from '../../src/mgmt/validate/names.js'
import { checkFreeFormContent, findRecordConflict, parseSrvData, parseTtl, txtWireLength } from '../../src/mgmt/validate/records.js'
import { parseListQuery, paginate, textFilters, applyFilters } from '../../src/mgmt/query.js'
import { corsFromApi, corsToApi, parseLifecycle } from '../../src/mgmt/validate/bucket-config.js'

function codeOf (fn: () => unknown): number | null {
  try {
    fn()
    return null
  } catch (err) {
    if (err instanceof ManagementError) return err.code
    // The engine's argument errors (lifecycle rules are the engine's to judge), as the door answers them.
    if (isArgumentError(err)) return toManagementError(err).code
    throw err
  }
}

t.test('IPv4', async t => {
  const table: Array<[string, string | null]> = [
    ['192.0.2.1', '192.0.2.1'], ['0.0.0.0', '0.0.0.0'], ['255.255.255.255', '255.255.255.255'],
    ['256.0.0.1', null], ['1.2.3', null], ['01.2.3.4', null], ['1.2.3.4 ', null], ['::1', null], ['', null]
  ]
  for (const [input, want] of table) t.equal(parseIPv4(input), want, JSON.stringify(input))
})

t.test('IPv6, stored compressed', async t => {
  const table: Array<[string, string | null]> = [
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::', '::'], ['::1', '::1'],
    ['fe80::1%eth0', null], ['1::2::3', null], ['2001:db8::g', null], ['192.0.2.1', null], ['', null]
  ]
  for (const [input, want] of table) t.equal(parseIPv6(input), want, input)
})

t.test('addresses a proxied record may point at', async t => {
  const table: Array<[string, boolean]> = [
    ['192.0.2.1', true], ['8.8.8.8', true], ['127.0.0.1', false], ['10.1.2.3', false], ['172.16.0.1', false],
    ['192.168.1.1', false], ['169.254.1.1', false], ['100.64.0.1', false], ['0.0.0.0', false],
    ['2001:db8::1', true], ['::1', false], ['fd00::1', false], ['fe80::1', false]
  ]
  for (const [address, want] of table) t.equal(isProxiableAddress(address), want, address)
})

t.test('hostnames and zone names', async t => {
  const hosts: Array<[string, string | null]> = [
    ['Example.COM', 'example.com'], ['example.com.', 'example.com'], ['_dmarc.example.com', '_dmarc.example.com'],
    ['a-b.example', 'a-b.example'], ['-a.example', null], ['a-.example', null], ['a..example', null],
    ['a b.example', null], [`${'x'.repeat(63)}.example`, `${'x'.repeat(63)}.example`], [`${'x'.repeat(64)}.example`, null],
    ['', null], ['a.example\n', null], ['a.example\r\n', null], ['\ta.example', null], ['a.exam\u0085ple', null], ['a.example\u007f', null]
  ]
  for (const [input, want] of hosts) t.equal(parseHostname(input), want, JSON.stringify(input))
  t.equal(parseZoneName('example.test'), 'example.test')
  t.equal(parseZoneName('localhost'), null)
  t.equal(parseZoneName('10.0.0.1'), null)
})

t.test('record names become FQDNs in the zone', async t => {
  const table: Array<[string, string | null]> = [
    ['@', 'example.test'], ['', 'example.test'], ['www', 'www.example.test'], ['WWW.Example.Test', 'www.example.test'],
    ['www.example.test.', 'www.example.test'], ['a.b', 'a.b.example.test'], ['*', '*.example.test'], ['*.a', '*.a.example.test'],
    ['a.*', null], ['_sip._tcp', '_sip._tcp.example.test'], ['1st', '1st.example.test'],
    ['x'.repeat(63), `${'x'.repeat(63)}.example.test`], ['x'.repeat(64), null], ['a!', null], ['-a', null],
    ['www\n', null], ['www\r\nevil', null], ['\u009bwww', null],
    // 253 characters is the most a name written as text can have (255 bytes on the wire).
    [Array(4).fill('x'.repeat(59)).join('.'), `${Array(4).fill('x'.repeat(59)).join('.')}.example.test`],
    [Array(5).fill('x'.repeat(59)).join('.'), null]
  ]
  for (const [input, want] of table) t.equal(recordFqdn(input, 'example.test'), want, JSON.stringify(input))
})

t.test('TTL', async t => {
  const table: Array<[unknown, number | null]> = [
    [undefined, 1], [1, 1], [60, 60], [86400, 86400], [0, null], [2, null], [59, null], [86401, null], [120.5, null], ['300', null]
  ]
  for (const [input, want] of table) {
    if (want === null) t.equal(codeOf(() => parseTtl(input)), 9021, String(input))
    else t.equal(parseTtl(input), want, String(input))
  }
})

t.test('SRV data', async t => {
  t.same(parseSrvData({ priority: 0, weight: 65535, port: 443, target: 'Host.Example.' }), { priority: 0, weight: 65535, port: 443, target: 'host.example' })
  t.same(parseSrvData({ priority: 1, weight: 1, port: 0, target: '.' }).target, '.')
  const bad = [null, {}, { priority: 1, weight: 1, port: 65536, target: 'a.b' }, { priority: -1, weight: 1, port: 1, target: 'a.b' },
    { priority: 1.5, weight: 1, port: 1, target: 'a.b' }, { priority: 1, weight: 1, port: 1, target: 'a b' }, { priority: '1', weight: 1, port: 1, target: 'a.b' }]
  for (const data of bad) t.equal(codeOf(() => parseSrvData(data)), 9101, JSON.stringify(data))
})

t.test('TXT content in wire format', async t => {
  const table: Array<[string, number]> = [
    ['v=spf1 -all', 12],
    ['x'.repeat(255), 256], ['x'.repeat(256), 258], ['x'.repeat(4080), 4096], ['x'.repeat(4081), 4098],
    ['"v=spf1 -all"', 12], ['"a" "bc"', 5], ['""', 1], ['"a\\"b"', 4], ['"\\065"', 2],
    [`"${'x'.repeat(300)}"`, 302],
    // Not only quoted strings: one text, quotes and all.
    ['"a" b', 6], ['"unclosed', 10]
  ]
  for (const [input, want] of table) t.equal(txtWireLength(input), want, JSON.stringify(input.length > 40 ? `${input.slice(0, 20)}... (${input.length})` : input))
})

t.test('content of the types stored as given', async t => {
  const table: Array<[string, string, number | null]> = [
    ['TXT', 'v=spf1 include:_spf.example.test ~all', null],
    ['TXT', '"v=DKIM1; k=rsa; p=MIGf" "MA0GCSqGSIb3"', null],
    ['TXT', 'x'.repeat(4080), null],
    ['TXT', 'x'.repeat(4081), 9015],
    ['TXT', 'x'.repeat(100 * 1024), 9015],
    ['TXT', 'line one\nline two', 9051],
    ['TXT', 'carriage\r', 9051],
    ['TXT', 'tab\there', 9051],
    ['TXT', '\u001b]0;title\u0007', 9051],
    ['TXT', 'del\u007f', 9051],
    ['TXT', 'c1 \u009b31m', 9051],
    ['TXT', 'caf\u00e9', 9051],
    ['MX', 'mail.example.test', null],
    ['MX', 'mail.example.test\r\n', 9007],
    ['CAA', '0 issue "ca.example"\u0000', 9007],
    ['NS', 'ns1.example.test\u0085', 9007],
    ['CAA', '0 issue "ca.example\u00e9"', null],
    ['PTR', 'h.example.test', null],
    ['PTR', `${'h'.repeat(4097)}`, 9015],
    ['SSHFP', '1 1 ' + 'ab'.repeat(2048), 9015]
  ]
  for (const [type, content, want] of table) {
    const what = `${type} ${JSON.stringify(content.length > 40 ? `${content.slice(0, 20)}... (${content.length})` : content)}`
    if (want === null) t.equal(checkFreeFormContent(type as 'TXT', content), content, what)
    else t.equal(codeOf(() => checkFreeFormContent(type as 'TXT', content)), want, what)
  }
  try {
    checkFreeFormContent('MX', 'a\nb')
  } catch (err) {
    t.equal((err as Error).message, 'Content for MX record is invalid.', 'the message names the type')
  }
})

t.test('conflicts between records', async t => {
  const a = { type: 'A', name: 'x.t', content: '192.0.2.1' }
  t.equal(findRecordConflict(a, [{ ...a }]), 'IdenticalRecord')
  t.equal(findRecordConflict(a, [{ ...a, content: '192.0.2.2' }]), null)
  t.equal(findRecordConflict(a, [{ type: 'CNAME', name: 'x.t', content: 'y.t' }]), 'RecordHostConflict')
  t.equal(findRecordConflict({ type: 'CNAME', name: 'x.t', content: 'y.t' }, [{ type: 'AAAA', name: 'x.t', content: '::1' }]), 'RecordHostConflict')
  t.equal(findRecordConflict({ type: 'CNAME', name: 'x.t', content: 'y.t' }, [{ type: 'TXT', name: 'x.t', content: 'hi' }]), null)
  t.equal(findRecordConflict(a, [{ ...a, name: 'other.t' }]), null)
  // The records of one name and type hold 8192 characters of content together.
  const txt = (content: string, name = 'x.t'): { type: string, name: string, content: string } => ({ type: 'TXT', name, content })
  t.equal(findRecordConflict(txt('c'.repeat(192)), [txt('a'.repeat(4000)), txt('b'.repeat(4000))]), null)
  t.equal(findRecordConflict(txt('c'.repeat(193)), [txt('a'.repeat(4000)), txt('b'.repeat(4000))]), 'CombinedContentTooLong')
  t.equal(findRecordConflict(txt('c'.repeat(193)), [txt('a'.repeat(4000), 'y.t'), txt('b'.repeat(4000))]), null, 'another name')
  t.equal(findRecordConflict(txt('c'.repeat(193)), [{ ...txt('a'.repeat(4000)), type: 'SPF' }, txt('b'.repeat(4000))]), null, 'another type')
})

t.test('list queries', async t => {
  const spec = { orders: ['name'], defaultPerPage: 20, minPerPage: 5, maxPerPage: 50 }
  t.same(parseListQuery({}, spec), { page: 1, perPage: 20, order: undefined, direction: 'asc', match: 'all' })
  t.same(parseListQuery({ page: '3', per_page: '1000', direction: 'DESC', match: 'any', order: 'name' }, spec), { page: 3, perPage: 50, order: 'name', direction: 'desc', match: 'any' })
  t.equal(parseListQuery({ per_page: '1' }, spec).perPage, 5)
  t.equal(parseListQuery({ page: '1000000' }, spec).page, 1000000, 'the highest page')
  t.equal(parseListQuery({ per_page: '99999999999999999999' }, spec).perPage, 50, 'a huge per_page is clamped')
  for (const query of [{ page: '0' }, { page: '-1' }, { page: 'x' }, { page: '1000001' }, { page: '99999999999999999999' }, { page: ['1', '2'] }, { per_page: '0' }, { per_page: '2.5' }, { per_page: ['5', '50'] }, { order: 'size' }, { order: ['name', 'name'] }, { direction: 'up' }, { match: 'some' }]) {
    t.equal(codeOf(() => parseListQuery(query, spec)), 1198, JSON.stringify(query))
  }
  t.same(paginate([1, 2, 3, 4, 5, 6, 7], { page: 2, perPage: 3 }), { result: [4, 5, 6], resultInfo: { page: 2, per_page: 3, count: 3, total_count: 7, total_pages: 3 } })
  t.same(paginate([], { page: 1, perPage: 3 }).resultInfo, { page: 1, per_page: 3, count: 0, total_count: 0, total_pages: 0 })

  const items = ['alpha.test', 'beta.test', 'gamma.example']
  const filter = (query: Record<string, string | string[]>): string[] => applyFilters(items, textFilters<string>(query, 'name', s => s), 'all')
  t.same(filter({ name: 'beta.test' }), ['beta.test'])
  t.same(filter({ name: ['beta.test', 'alpha.test'] }), ['alpha.test', 'beta.test'])
  t.same(filter({ 'name.endswith': '.example' }), ['gamma.example'])
  t.same(filter({ 'name.contains': 'ET' }), ['beta.test'])
  t.same(filter({ name: 'contains:mm' }), ['gamma.example'])
  t.same(filter({ name: 'ends_with:.test', 'name.startswith': 'b' }), ['beta.test'])
})

t.test('lifecycle documents', async t => {
  const rule = { id: 'r', enabled: true, conditions: { prefix: '' }, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 3600 } } }
  t.same(parseLifecycle({ rules: [rule] }), { rules: [rule] })
  t.same(parseLifecycle({}), { rules: [] })
  // A rule for the whole bucket may leave the prefix out, as wrangler's `lifecycle add` without a prefix sends it.
  const wholeBucket = { id: 'all', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86400 } } }
  t.same(parseLifecycle({ rules: [wholeBucket] }), { rules: [wholeBucket] })
  const { conditions: _conditions, ...withoutConditions } = rule
  const bad = [
    { rules: 'x' }, { rules: [{ ...rule, id: '' }] }, { rules: [rule, rule] }, { rules: [{ ...rule, enabled: 'yes' }] },
    { rules: [withoutConditions] }, { rules: [{ ...rule, conditions: { prefix: 5 } }] }, { rules: [{ ...rule, conditions: 'logs/' }] },
    { rules: [{ ...rule, abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 0 } } }] },
    { rules: [{ ...rule, abortMultipartUploadsTransition: { condition: { type: 'Date', date: '2025-01-01' } } }] },
    { rules: [{ ...rule, deleteObjectsTransition: { condition: { type: 'Date', date: 'never' } } }] },
    { rules: [{ ...rule, storageClassTransitions: [{ storageClass: 'Glacier', condition: { type: 'Age', maxAge: 5 } }] }] }
  ]
  for (const body of bad) t.equal(codeOf(() => parseLifecycle(body)), 10040, JSON.stringify(body))
})

t.test('CORS documents translate both ways', async t => {
  const api = { rules: [{ id: 'web', allowed: { origins: ['https://a.test'], methods: ['GET', 'PUT'], headers: ['x-a'] }, exposeHeaders: ['etag'], maxAgeSeconds: 600 }] }
  const stored = corsFromApi(api)
  t.same(stored, [{ allowedOrigins: ['https://a.test'], allowedMethods: ['GET', 'PUT'], allowedHeaders: ['x-a'], exposeHeaders: ['etag'], maxAgeSeconds: 600, id: 'web' }])
  t.same(corsToApi(stored), api)
  const minimal = { rules: [{ allowed: { origins: ['*'], methods: ['GET'] } }] }
  t.same(corsToApi(corsFromApi(minimal)), minimal)
  const bad = [
    { rules: [{ allowed: { origins: [], methods: ['GET'] } }] },
    { rules: [{ allowed: { origins: ['*'], methods: ['PATCH'] } }] },
    { rules: [{ allowed: { origins: ['*'] } }] },
    { rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, maxAgeSeconds: -1 }] },
    { rules: [{}] }
  ]
  for (const body of bad) t.equal(codeOf(() => corsFromApi(body)), 10040, JSON.stringify(body))
  // What goes out in a response header, or in S3's XML, is named when it cannot.
  const named: Array<[unknown, string]> = [
    [{ rules: [{ allowed: { origins: ['*'], methods: ['GET'], headers: ['x-a', 'x-b\r\nx-c: 1'] } }] }, 'rules[0].allowed.headers[1]'],
    [{ rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, exposeHeaders: ['etag\n'] }] }, 'rules[0].exposeHeaders[0]'],
    [{ rules: [{ allowed: { origins: ['https://a.test', 'https://*.*.test'], methods: ['GET'] } }] }, 'rules[0].allowed.origins[1]'],
    [{ rules: [{ id: 'web\u0007', allowed: { origins: ['*'], methods: ['GET'] } }] }, 'rules[0].id']
  ]
  for (const [body, where] of named) {
    t.throws(() => corsFromApi(body), { message: new RegExp(where.replace(/[[\].]/g, '\\$&')) }, where)
  }
})
