/**
 * Model test: random puts and deletes of hard keys against a sorted in-memory
 * model, then random list walks (prefix, delimiter, limit, cursor) whose every
 * page must equal the model's page exactly.
 *
 * The model orders keys by their UTF-8 bytes, groups delimited prefixes where
 * their first key sorts, counts prefixes toward the limit, and resumes a
 * cursor strictly after the last key or prefix returned. Keys are kept in NFC
 * so that the model need not know about normalization (the conformance suite
 * covers that).
 *
 * The bucket lives a few directories deep in the test directory, so a key
 * that escaped with `..` would show up as a stray file on the way.
 */
import { createHash } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { openBucket, type Bucket, type BucketListOptions } from '../../../src/index.js'
import { mulberry32 } from './children/payload.js'
import { testdir } from '../../testdir.js'

const seed = Number(process.env.MODEL_SEED ?? 20240607)

const random = mulberry32(seed)
const int = (below: number): number => Math.floor(random() * below)
const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T

const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8')

/** Keys that are hard to map onto a file system (U+0000 aside: it names no object). */
const hardKeys = [
  '.', '..', '...', './a', 'a/.', 'a/..', 'a/./b', 'a/../b', '../escape', '../../../../escape', '/..', '../',
  'a//b', '/a', 'a/', '/', '//', '///x', 'a', 'a/b', 'a/b/c', 'a/b/', 'ab', 'a-b', 'a.b',
  '%', '%2F', 'a%2Fb', '%00', '%2e%2e', '%%', '\x01', 'a\x01b', '\x01/\x01', '\x01\x02\x1f\x7f', 'tab\there', 'new\nline', 'cr\r',
  'x'.repeat(255), 'x'.repeat(256), `seg/${'y'.repeat(300)}/z`, '\u00e9'.repeat(200), `${'\u00e9'.repeat(128)}/x`,
  '\u00e9', '\u65e5\u672c\u8a9e/\u30ad\u30fc', '\u{1F600}', '\uFFFD', 'a\uFFFD', 'a\u{1F600}', '\u{1F600}/\u{1F600}',
  // Code points above the surrogates sort before astral ones in UTF-8, after them in JavaScript.
  '\uE000', '\uFF01/x', '\u{10000}', '\u{1F600}x', '\uFFFDx', 'a/\uFFFD', 'a/\u{1F600}', 'a/\uE000/b',
  'k'.repeat(1024), `${'\u20ac'.repeat(341)}a`, 'z/'.repeat(512), `${'\u{1F600}'.repeat(255)}abcd`,
  '.fsbucket', '.fsbucket/tmp/x', '.fsbucket/x', '.fsbucket/', 'A', 'a.', 'a ', ' ', '~', '*?<>|:"', '\\', 'a\\b', '..\\..\\x',
  'CON', 'nul', 'aux.txt', '.git', '.tmp', 'x.tmp', 'x~', '.DS_Store', 'a/b.json', 'a/b/c.json'
]

// No U+0000: it names no object (10020, tested with the keys' rules).
const segments = ['a', 'b', 'ab', 'A', '.', '..', '', '%', '%2F', '\x01', '\t', '\u00e9', '\u{1F600}', '\uFFFD', 'x'.repeat(256), '-', '~', '.fsbucket', 'tmp']

function randomKey (): string {
  if (random() < 0.35) return pick(hardKeys)
  for (;;) {
    const parts = Array.from({ length: 1 + int(5) }, () => pick(segments))
    const key = parts.join(pick(['/', '/', '/', '']))
    if (key !== '' && byteLength(key) <= 1024) return key
  }
}

function compareUtf8 (a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

interface ModelObject { etag: string, size: number, body: Buffer }
type Entry = { kind: 'object', key: string } | { kind: 'prefix', prefix: string }

/** What one list page must hold, computed from the model. */
function modelPage (model: Map<string, ModelObject>, options: { prefix: string, delimiter?: string, limit: number, after?: Entry }): { entries: Entry[], truncated: boolean } {
  const keys = [...model.keys()].filter(key => key.startsWith(options.prefix)).sort(compareUtf8)
  const entries: Entry[] = []
  for (const key of keys) {
    const rest = key.slice(options.prefix.length)
    const at = options.delimiter === undefined ? -1 : rest.indexOf(options.delimiter)
    if (at < 0) {
      entries.push({ kind: 'object', key })
      continue
    }
    const prefix = options.prefix + rest.slice(0, at + (options.delimiter as string).length)
    const previous = entries[entries.length - 1]
    if (previous?.kind !== 'prefix' || previous.prefix !== prefix) entries.push({ kind: 'prefix', prefix })
  }
  let start = 0
  if (options.after !== undefined) {
    const after = options.after
    start = entries.findIndex(entry =>
      after.kind === 'object'
        ? compareUtf8(entry.kind === 'object' ? entry.key : entry.prefix, after.key) > 0
        : (entry.kind === 'object' ? !entry.key.startsWith(after.prefix) && compareUtf8(entry.key, after.prefix) > 0 : compareUtf8(entry.prefix, after.prefix) > 0))
    if (start < 0) start = entries.length
  }
  const page = entries.slice(start, start + options.limit)
  return { entries: page, truncated: start + options.limit < entries.length }
}

function bodyFor (key: string, generation: number): Buffer {
  const size = int(48)
  return Buffer.from(`${generation}:${createHash('sha1').update(key).digest('hex').slice(0, size)}`)
}

async function strayFiles (root: string, bucketPath: string): Promise<string[]> {
  // Walks from the test directory down to the bucket: every level may hold only the next one.
  const stray: string[] = []
  let here = root
  for (const step of path.relative(root, bucketPath).split(path.sep)) {
    for (const name of await readdir(here)) if (name !== step) stray.push(path.join(here, name))
    here = path.join(here, step)
  }
  return stray
}

t.test(`random keys against a sorted model (seed ${seed})`, async t => {
  const root = testdir(t)
  const dir = path.join(root, 'outer', 'inner', 'bucket')
  let bucket: Bucket = await openBucket(dir, { fsync: false })
  t.teardown(() => bucket.close())
  const model = new Map<string, ModelObject>()
  for (const key of hardKeys) t.equal(key, key.normalize('NFC'), 'the model keeps keys in NFC')

  let generation = 0
  async function putAll (keys: string[]): Promise<void> {
    for (const key of keys) {
      const body = bodyFor(key, ++generation)
      await bucket.put(key, body)
      model.set(key, { etag: createHash('md5').update(body).digest('hex'), size: body.byteLength, body })
    }
  }
  async function mutate (count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const roll = random()
      if (roll < 0.7) {
        const key = randomKey()
        const body = bodyFor(key, ++generation)
        const put = await bucket.put(key, body)
        const etag = createHash('md5').update(body).digest('hex')
        if (put?.etag !== etag || put.key !== key) t.fail(`put ${JSON.stringify(key)} returned ${put?.key} ${put?.etag}`)
        model.set(key, { etag, size: body.byteLength, body })
      } else if (roll < 0.9 || model.size === 0) {
        const key = model.size > 0 && random() < 0.8 ? pick([...model.keys()]) : randomKey()
        await bucket.delete(key)
        model.delete(key)
      } else {
        const keys = Array.from({ length: 1 + int(6) }, () => random() < 0.7 ? pick([...model.keys()]) : randomKey())
        await bucket.delete(keys)
        for (const key of keys) model.delete(key)
      }
    }
  }

  async function walk (count: number): Promise<void> {
    const keys = [...model.keys()]
    for (let w = 0; w < count; w++) {
      const prefixSource = random()
      let prefix = ''
      if (prefixSource < 0.4 && keys.length > 0) {
        const chars = Array.from(pick(keys))
        prefix = chars.slice(0, int(Math.min(chars.length, 6) + 1)).join('')
      } else if (prefixSource < 0.7) {
        prefix = pick(['a', 'a/', '.', '..', '/', '%', '\0', '\u00e9', '\u{1F600}', 'x', 'z/z/', '.fsbucket', 'a/b'])
      }
      const delimiter = pick([undefined, undefined, '/', '/', 'b', '.', '//'])
      const limit = pick([undefined, 1, 2, 3, 5, 7, 13, 1000])
      const options: BucketListOptions = {}
      if (prefix !== '') options.prefix = prefix
      if (delimiter !== undefined) options.delimiter = delimiter
      if (limit !== undefined) options.limit = limit
      const label = JSON.stringify(options)

      let after: Entry | undefined
      let cursor: string | undefined
      for (let pageNumber = 0; pageNumber < 2000; pageNumber++) {
        const expected = modelPage(model, { prefix, delimiter, limit: limit ?? 1000, after })
        const page = await bucket.list(cursor === undefined ? options : { ...options, cursor })
        const expectedObjects = expected.entries.flatMap(e => e.kind === 'object' ? [e.key] : [])
        const expectedPrefixes = expected.entries.flatMap(e => e.kind === 'prefix' ? [e.prefix] : [])
        const actualObjects = page.objects.map(o => o.key)
        const same = JSON.stringify(actualObjects) === JSON.stringify(expectedObjects) &&
          JSON.stringify(page.delimitedPrefixes) === JSON.stringify(expectedPrefixes) &&
          page.truncated === expected.truncated &&
          (page.cursor !== undefined) === expected.truncated
        if (!same) {
          t.same({ objects: actualObjects, delimitedPrefixes: page.delimitedPrefixes, truncated: page.truncated, cursor: page.cursor !== undefined },
            { objects: expectedObjects, delimitedPrefixes: expectedPrefixes, truncated: expected.truncated, cursor: expected.truncated },
            `list ${label}, page ${pageNumber}`)
          return
        }
        for (const object of page.objects) {
          const known = model.get(object.key)
          if (object.etag !== known?.etag || object.size !== known.size) {
            t.fail(`list ${label}: ${JSON.stringify(object.key)} has etag ${object.etag} size ${object.size}, model ${known?.etag} ${known?.size}`)
            return
          }
        }
        if (!page.truncated) break
        after = expected.entries[expected.entries.length - 1]
        cursor = page.cursor
      }
    }
    t.pass(`${count} list walks match the model (${model.size} keys)`)
  }

  await putAll(hardKeys)
  await walk(40)
  await mutate(400)
  await walk(100)
  await mutate(400)
  await walk(100)

  let mismatched = 0
  for (const [key, expected] of model) {
    const head = await bucket.head(key)
    if (head?.etag !== expected.etag || head.size !== expected.size) {
      mismatched++
      t.fail(`head ${JSON.stringify(key)}: ${head?.etag} ${head?.size}, model ${expected.etag} ${expected.size}`)
    }
  }
  t.equal(mismatched, 0, 'head agrees with the model for every key')
  for (const [key, expected] of model) {
    const got = await bucket.get(key)
    const bytes = got !== null && 'body' in got ? Buffer.from(await got.arrayBuffer()) : undefined
    if (bytes === undefined || !bytes.equals(expected.body)) {
      mismatched++
      t.fail(`get ${JSON.stringify(key)} does not give the bytes last put`)
    }
  }
  t.equal(mismatched, 0, 'get gives every key its own bytes')
  for (const key of hardKeys.filter(k => !model.has(k)).slice(0, 20)) {
    if (await bucket.head(key) !== null) t.fail(`deleted or never written key ${JSON.stringify(key)} is still there`)
  }

  await bucket.close()
  bucket = await openBucket(dir, { fsync: false })
  await walk(30)

  t.same(await strayFiles(root, dir), [], 'no file was created outside the bucket directory')
})
