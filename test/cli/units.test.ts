/** The parts of the object commands, mostly by tables: locations, local paths of keys, sizes, part sizes, etags; the local transport's one registry. */
import t from 'tap'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { Readable } from 'node:stream'
import { parsePartSize, parseSize } from '../../src/cli/context.js'
import { bytesMatchEtag } from '../../src/cli/etag.js'
import { describeError, fromCode } from '../../src/cli/errors.js'
import { directoryPrefix, isFolderMarker, keyBaseName, keyUnderPrefix, localPathFor, parseLocation } from '../../src/cli/paths.js'
import { nameUnder, shownName } from '../../src/console/ui/names.js'
import { jsonLine, shownText } from '../../src/cli/terminal-text.js'
import { partSizeFor } from '../../src/cli/transfer.js'
import { LocalTransport } from '../../src/cli/transport-local.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

const MiB = 1024 * 1024

t.test('parseLocation', async t => {
  t.same(parseLocation('fsb://photos/a/b.jpg'), { kind: 'remote', bucket: 'photos', key: 'a/b.jpg' })
  t.same(parseLocation('fsb://photos'), { kind: 'remote', bucket: 'photos', key: '' })
  t.same(parseLocation('fsb://photos/'), { kind: 'remote', bucket: 'photos', key: '' })
  t.same(parseLocation('fsb://photos/a//b/../c'), { kind: 'remote', bucket: 'photos', key: 'a//b/../c' }, 'keys are opaque')
  t.same(parseLocation('-'), { kind: 'stdio' })
  t.same(parseLocation('./fsb://x'), { kind: 'local', path: './fsb://x' })
  t.throws(() => parseLocation('fsb://'), /no bucket named/)
  t.throws(() => parseLocation('fsb:///key'), /no bucket named/)
})

t.test('localPathFor keeps every key inside the directory', async t => {
  const dir = path.resolve('/tmp/out')
  const table: Array<[string, string | null]> = [
    ['a.txt', path.join(dir, 'a.txt')],
    ['a/b/c.txt', path.join(dir, 'a', 'b', 'c.txt')],
    ['..', null],
    ['../x', null],
    ['a/../../x', null],
    ['a/./b', null],
    ['a//b', null],
    ['/etc/passwd', null],
    ['a/', null],
    ['', null],
    ['a\0b', null],
    ['..a/b..', path.join(dir, '..a', 'b..')]
  ]
  for (const [key, expected] of table) t.equal(localPathFor(dir, key), expected, JSON.stringify(key))
})

t.test('prefixes and names', async t => {
  t.equal(directoryPrefix(''), '')
  t.equal(directoryPrefix('photos'), 'photos/')
  t.equal(directoryPrefix('photos/'), 'photos/')
  t.equal(keyBaseName('a/b/c.jpg'), 'c.jpg')
  t.equal(keyBaseName('c.jpg'), 'c.jpg')
  t.equal(keyBaseName('a/b/'), 'b')
  t.ok(isFolderMarker({ key: 'a/b/', size: 0 }))
  t.notOk(isFolderMarker({ key: 'a/b/', size: 1 }), 'an object with bytes is not a marker')
  t.notOk(isFolderMarker({ key: 'a/b', size: 0 }))
})

t.test('keyUnderPrefix and the console\'s nameUnder: the part under a prefix, found by NFC form, in the key\'s spelling', async t => {
  const nfc = 'r\u00e9sum\u00e9/'
  const nfd = 're\u0301sume\u0301/'
  const table: Array<[prefix: string, key: string, under: string]> = [
    ['photos/', 'photos/a.jpg', 'a.jpg'],
    ['', 're\u0301sume\u0301/one.txt', 're\u0301sume\u0301/one.txt'],
    [nfc, `${nfc}two.txt`, 'two.txt'],
    [nfc, `${nfd}one.txt`, 'one.txt'],
    [nfd, `${nfc}two.txt`, 'two.txt'],
    [nfd, `${nfd}one.txt`, 'one.txt'],
    [nfc, `${nfd}cafe\u0301.txt`, 'cafe\u0301.txt'],
    ['r\u00e9sum', `${nfd}x`, 'e\u0301/x'],
    ['e\u0323', '\u1eb9\u0301x', '\u0301x'],
    // No start of the key is the prefix in NFC (the prefix ends inside a composed character): the rest of the NFC form.
    ['\u1eb9', 'e\u0301\u0323/x', '\u0301/x'],
    ['other/', 'photos/a.jpg', 'photos/a.jpg']
  ]
  for (const [prefix, key, under] of table) {
    t.equal(keyUnderPrefix(prefix, key), under, `CLI: ${JSON.stringify(prefix)} in ${JSON.stringify(key)}`)
    t.equal(nameUnder(prefix, key), under, `console: ${JSON.stringify(prefix)} in ${JSON.stringify(key)}`)
  }
})

t.test('parseSize', async t => {
  const table: Array<[string, number]> = [
    ['5242880', 5 * MiB], ['5MiB', 5 * MiB], ['5M', 5 * MiB], ['5mb', 5 * MiB], ['64KiB', 64 * 1024], ['1GiB', 1024 * MiB], ['1.5MiB', 1.5 * MiB]
  ]
  for (const [text, bytes] of table) t.equal(parseSize(text), bytes, text)
  for (const bad of ['', 'five', '5 parsecs', '-1', '0', '6GiB']) t.throws(() => parseSize(bad), /expected a size/, JSON.stringify(bad))
})

t.test('parsePartSize: 5 MiB at least, the smallest part the store takes', async t => {
  t.equal(parsePartSize('5MiB'), 5 * MiB)
  t.equal(parsePartSize('1GiB'), 1024 * MiB)
  for (const bad of ['1MiB', '1', '4.9MiB']) t.throws(() => parsePartSize(bad), /expected a part size from 5MiB/, bad)
})

t.test('partSizeFor stays within 10,000 parts', async t => {
  const tuning = { partSize: 8 * MiB, parallel: 4 }
  t.equal(partSizeFor(40 * MiB, tuning), 8 * MiB)
  t.equal(partSizeFor(10_000 * 8 * MiB, tuning), 8 * MiB)
  const huge = 5 * 1024 * 1024 * MiB // 5 TiB
  const size = partSizeFor(huge, tuning)
  t.ok(Math.ceil(huge / size) <= 10_000)
  t.equal(size % MiB, 0, 'whole MiB')
})

t.test('bytesMatchEtag', async t => {
  const data = Buffer.alloc(11 * MiB, 7)
  const md5 = (b: Buffer): Buffer => createHash('md5').update(b).digest()
  const chunks = async function * (): AsyncGenerator<Buffer> {
    for (let i = 0; i < data.length; i += 100_000) yield data.subarray(i, i + 100_000)
  }
  t.ok(await bytesMatchEtag(chunks(), data.length, md5(data).toString('hex'), 8 * MiB))
  const parts = [md5(data.subarray(0, 5 * MiB)), md5(data.subarray(5 * MiB, 10 * MiB)), md5(data.subarray(10 * MiB))]
  const etag = `${md5(Buffer.concat(parts)).toString('hex')}-3`
  t.ok(await bytesMatchEtag(chunks(), data.length, etag, 8 * MiB), 'parts of 5 MiB found though 8 MiB is ours')
  t.notOk(await bytesMatchEtag(chunks(), data.length, etag.replace(/^./, c => c === '0' ? '1' : '0'), 8 * MiB))
  t.notOk(await bytesMatchEtag(chunks(), data.length, `${'0'.repeat(32)}-9999`, 8 * MiB), 'no part size gives that count')
})

t.test('describeError', async t => {
  t.equal(describeError(fromCode(10007, 'x')), 'no such key')
  t.equal(describeError(fromCode(99999, 'something else (99999)')), 'something else (99999)')
  t.equal(describeError(Object.assign(new Error('x'), { code: 10006 })), 'no such bucket')
  t.equal(describeError(Object.assign(new Error('x'), { code: 'ENOENT', path: 'a.txt' })), 'no such file or directory: a.txt')
})

t.test('shownText: control characters made visible, unambiguously', async t => {
  const table: Array<[string, string]> = [
    ['photos/cat.jpg', 'photos/cat.jpg'],
    ['Zürich/日本/ü', 'Zürich/日本/ü'],
    ['a\nb', 'a\\nb'],
    ['tab\there', 'tab\\there'],
    ['cr\r', 'cr\\r'],
    ['\u001b]0;title\u0007', '\\x1b]0;title\\x07'],
    ['\u001b[31mred\u001b[0m', '\\x1b[31mred\\x1b[0m'],
    ['nul\u0000', 'nul\\x00'],
    ['\u001f', '\\x1f'],
    ['del\u007f', 'del\\x7f'],
    ['\u009b31m', '\\u009b31m'],
    ['\u0080\u0085\u009f', '\\u0080\\u0085\\u009f'],
    ['\u00a0nbsp', '\u00a0nbsp'],
    // A backslash is doubled, so the key "a\\nb" (backslash, n) and the key holding a line feed print apart.
    ['a\\nb', 'a\\\\nb'],
    ['C:\\x1b', 'C:\\\\x1b'],
    ['', '']
  ]
  for (const [input, want] of table) t.equal(shownText(input), want, JSON.stringify(input))
  const printable = /^[^\u0000-\u001f\u007f-\u009f]*$/
  for (let code = 0; code <= 0xa0; code++) t.match(shownText(String.fromCharCode(code)), printable, `U+${code.toString(16).padStart(4, '0')}`)
})

t.test('jsonLine: exact JSON without raw control characters', async t => {
  const values = [
    { key: 'a\nb\u001b]0;title\u0007\u007f\u009b31m\\ü' },
    { type: 'bucket', name: 'photos', creationDate: '2025-01-01T00:00:00.000Z' },
    ['\u0085', '\u2028']
  ]
  for (const [i, value] of values.entries()) {
    const line = jsonLine(value)
    t.same(JSON.parse(line), value, `value ${i} parses back to the same value`)
    t.notMatch(line, /[\u0000-\u001f\u007f-\u009f]/, `value ${i} holds no raw control character`)
  }
  t.equal(jsonLine({ k: '\u009b' }), '{"k":"\\u009b"}')
  t.equal(jsonLine({ k: 'plain' }), JSON.stringify({ k: 'plain' }), 'otherwise what JSON.stringify writes')
})

t.test('the local transport opens one registry however many commands ask for it at once, and closes it', async t => {
  const dataDir = testdir(t)
  let opened = 0
  let closed = 0
  const transport = new LocalTransport(dataDir, async dir => {
    opened++
    const registry = await openRegistry(dir, { fsync: false })
    const close = registry.close.bind(registry)
    registry.close = async () => { closed++; await close() }
    return registry
  })
  await transport.createBucket('photos')
  await transport.close()
  t.same([opened, closed], [1, 1])
  // As cp -r does: puts side by side, before any of them has the registry.
  const puts = Array.from({ length: 5 }, async (_, i) => await transport.put('photos', `k${i}`, Readable.from([Buffer.from(`v${i}`)]), 2, { httpMetadata: {}, customMetadata: {} }))
  t.equal((await Promise.all(puts)).length, 5)
  await transport.close()
  t.same([opened, closed], [2, 2], 'one more registry for the five puts, closed')
  await t.rejects(new LocalTransport(path.join(dataDir, 'none'), async dir => await openRegistry(dir)).listBuckets(), /no data directory/)
})

t.test('the console writes a key\'s bidirectional controls as the CLI prints them', async t => {
  t.equal(shownName('invoice\u202efdp.exe'), 'invoice\\u202efdp.exe')
  t.equal(shownName('a\u2066b\u2069c\u200f'), 'a\\u2066b\\u2069c\\u200f')
  t.equal(shownName('résumé/日本.txt'), 'résumé/日本.txt', 'letters as they are')
  for (const key of ['x\u202e', 'a\u061cb\u200e']) t.equal(shownName(key), shownText(key), `the same as the CLI: ${JSON.stringify(key)}`)
})
