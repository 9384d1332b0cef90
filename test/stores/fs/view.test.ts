import fs from 'node:fs'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { openBucket } from '../../../src/index.js'
import { viewPath } from '../../../src/stores/fs/view.js'
import { testdir } from '../../testdir.js'

t.test('viewPath shows plain keys only', async t => {
  const table: Array<[string, string | null]> = [
    ['photos/cat.jpg', path.join('photos', 'cat.jpg')],
    ['a b/%20/ünï', path.join('a b', '%20', 'ünï')],
    ['..', null], ['a/../b', null], ['./a', null], ['a//b', null], ['/a', null], ['a/', null],
    ['a\u0000b', null], ['tab\there', null], ['x'.repeat(256), null], ['x'.repeat(255), 'x'.repeat(255)],
    ['.fsbucket/catalog.db', null], ['.fsbucket', null],
    ['.0123456789ab1.view', null], ['docs/.0123456789abz9.view', null], ['.0123456789ab1.view/x', path.join('.0123456789ab1.view', 'x')]
  ]
  for (const [key, expected] of table) t.equal(viewPath(key), expected, JSON.stringify(key))
})

t.test('viewPath never names the store\'s directory on a case-insensitive file system, nor climbs out on Windows', async t => {
  for (const key of ['.FSBUCKET/settings.json', '.FsBucket/catalog.db', '.f\u017fbucket/catalog.db', '\uff0efsbucket/x']) {
    t.equal(viewPath(key), null, JSON.stringify(key))
  }
  t.equal(viewPath('a\\..\\..\\secret\\x'), 'a\\..\\..\\secret\\x', 'a backslash is a plain character of a name here')
  const windows: Array<[string, string | null]> = [
    ['a\\..\\..\\secret\\x', null], ['c:/x', null], ['a/file.txt:stream', null], ['a/b*', null], ['a/what?', null],
    ['trailing./x', null], ['a/trailing ', null], ['FSBUCK~1/catalog.db', null], ['photos/cat.jpg', 'photos\\cat.jpg'], ['a b/ünï', 'a b\\ünï']
  ]
  for (const [key, expected] of windows) t.equal(viewPath(key, '\\'), expected, `on Windows: ${JSON.stringify(key)}`)
})

t.test('the view follows puts, overwrites and deletes', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: false, minPartSize: 1 })
  t.teardown(async () => await bucket.close())
  await bucket.put('docs/readme.txt', 'first')
  t.equal(await readFile(path.join(dir, 'docs', 'readme.txt'), 'utf8'), 'first')
  await bucket.put('docs/readme.txt', 'second')
  t.equal(await readFile(path.join(dir, 'docs', 'readme.txt'), 'utf8'), 'second', 'an overwrite replaces the file')
  await bucket.put('docs', 'a key that is also a directory')
  const docs = await bucket.get('docs')
  t.equal(docs !== null && 'body' in docs ? await docs.text() : null, 'a key that is also a directory', 'a key not shown is still readable through the binding')
  await bucket.put('../escape', 'x')
  t.same((await readdir(path.dirname(dir))).filter(name => name === 'escape'), [], 'nothing outside the bucket')
  await bucket.delete('docs/readme.txt')
  t.same((await readdir(dir)).filter(name => !name.startsWith('.')), [], 'a delete removes the file and its empty directories')
  const upload = await bucket.createMultipartUpload('big.bin')
  await bucket.put('big.bin', 'small first')
  const part = await upload.uploadPart(1, 'multipart bytes')
  await upload.complete([part])
  t.same((await readdir(dir)).filter(name => name === 'big.bin'), [], 'multipart objects are not shown')
})

t.test('the view follows a key whose body moves between its catalog row and a file', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: true })
  t.teardown(async () => await bucket.close())
  const file = path.join(dir, 'notes', 'n.txt')
  const small = 'kept in the catalog row'
  const large = 'a body file '.repeat(20_000)
  await bucket.put('notes/n.txt', small)
  t.equal(await readFile(file, 'utf8'), small, 'a small body is written out as a plain file')
  await bucket.put('notes/n.txt', large)
  t.equal(await readFile(file, 'utf8'), large, 'then replaced by the link to the body file')
  await bucket.put('notes/n.txt', small + '!')
  t.equal(await readFile(file, 'utf8'), small + '!', 'then by a plain file again')
  t.same((await readdir(path.join(dir, 'notes'))), ['n.txt'], 'no temporary file left beside it')
  await bucket.delete('notes/n.txt')
  t.same((await readdir(dir)).filter(name => !name.startsWith('.')), [], 'a delete removes it')
})

t.test('a view entry is made in the scratch directory and renamed into place; without one, beside its place', async t => {
  const { KeyView } = await import('../../../src/stores/fs/view.js')
  const { mkdir } = await import('node:fs/promises')
  const bucketDir = testdir(t)
  const storeDir = path.join(bucketDir, '.fsbucket')
  const scratch = path.join(storeDir, 'tmp')
  await mkdir(scratch, { recursive: true })
  const view = new KeyView(bucketDir, storeDir)
  t.ok(view.write('docs/a.txt', Buffer.from('one')), 'shown')
  t.equal(await readFile(path.join(bucketDir, 'docs', 'a.txt'), 'utf8'), 'one')
  t.ok(view.write('docs/a.txt', Buffer.from('two')), 'replaced')
  t.equal(await readFile(path.join(bucketDir, 'docs', 'a.txt'), 'utf8'), 'two')
  t.same(await readdir(path.join(bucketDir, 'docs')), ['a.txt'], 'no temporary entry beside the key')
  t.same(await readdir(scratch), [], 'none left in the scratch directory')
  t.same(await readdir(storeDir), ['tmp'], 'and no marker of temporaries beside keys')

  const otherStore = path.join(bucketDir, 'other-store')
  await mkdir(otherStore)
  const unusable = new KeyView(bucketDir, otherStore) // no tmp/ there
  t.ok(unusable.write('docs/b.txt', Buffer.from('three')), 'a scratch directory that cannot serve: made beside its place')
  t.equal(await readFile(path.join(bucketDir, 'docs', 'b.txt'), 'utf8'), 'three')
  t.same((await readdir(path.join(bucketDir, 'docs'))).sort(), ['a.txt', 'b.txt'], 'and nothing else left there')
  t.same(await readdir(otherStore), ['view-strays'], 'the marker that sends the sweeper through the view is made')

  const unmarkable = path.join(bucketDir, 'unmarkable-store')
  await mkdir(path.join(unmarkable, 'view-strays'), { recursive: true }) // a directory where the marker file goes
  t.notOk(new KeyView(bucketDir, unmarkable).write('docs/c.txt', Buffer.from('four')), 'no marker can be made: the key is not shown')
  t.same((await readdir(path.join(bucketDir, 'docs'))).sort(), ['a.txt', 'b.txt'], 'and no temporary is left beside its place')
})

t.test('showing a key again with the body it already links (two processes publishing one version) leaves no temporary', async t => {
  const { KeyView } = await import('../../../src/stores/fs/view.js')
  const { mkdir, writeFile } = await import('node:fs/promises')
  const bucketDir = testdir(t)
  const storeDir = path.join(bucketDir, '.fsbucket')
  const scratch = path.join(storeDir, 'tmp')
  await mkdir(scratch, { recursive: true })
  const body = path.join(storeDir, 'body')
  await writeFile(body, 'the same version')
  const first = new KeyView(bucketDir, storeDir)
  const second = new KeyView(bucketDir, storeDir)
  t.ok(first.show('k.txt', body))
  t.ok(second.show('k.txt', body), 'shown again: rename over a link to the same file')
  t.equal(await readFile(path.join(bucketDir, 'k.txt'), 'utf8'), 'the same version')
  t.same(await readdir(scratch), [], 'no temporary left in the scratch directory')
})

/** The package entry as built, for `t.mockImport` (which would resolve a relative path from the test's source, where no .js is). */
const built = new URL('../../../src/index.js', import.meta.url).href

/**
 * `node:fs` where the directory `dir` can be made immutable, as `chattr +i`
 * makes it (which needs root, on a file system that has it): while
 * `frozen.on`, adding, renaming or removing an entry in it fails with
 * EPERM, for root too. Given to the store's modules with `t.mockImport`,
 * so the failure is the same wherever the test runs, as whichever user.
 */
function immutable (t: Test, dir: string): { fs: Record<string, unknown>, frozen: { on: boolean } } {
  const frozen = { on: false }
  const guarded = <A extends unknown[], R>(syscall: string, call: (...args: A) => R, files: (...args: A) => string[]) =>
    (...args: A): R => {
      const named = files(...args)
      if (frozen.on && named.some(file => path.dirname(path.resolve(file)) === dir)) {
        const message = `EPERM: operation not permitted, ${syscall} ${named.map(file => `'${file}'`).join(' -> ')}`
        throw Object.assign(new Error(message), { errno: -1, code: 'EPERM', syscall, path: named[0], ...(named.length > 1 ? { dest: named[1] } : {}) })
      }
      return call(...args)
    }
  return {
    frozen,
    fs: t.createMock(fs, {
      linkSync: guarded('link', fs.linkSync, (existing, file) => [String(existing), String(file)]),
      renameSync: guarded('rename', fs.renameSync, (from, to) => [String(from), String(to)]),
      unlinkSync: guarded('unlink', fs.unlinkSync, file => [String(file)]),
      rmdirSync: guarded('rmdir', fs.rmdirSync, file => [String(file)]),
      mkdirSync: guarded('mkdir', fs.mkdirSync, file => [String(file)]),
      writeFileSync: guarded('open', fs.writeFileSync, file => typeof file === 'number' ? [] : [String(file)])
    })
  }
}

t.test('a view entry the file system refuses is warned of, and the request stands', async t => {
  const dir = testdir(t)
  const docs = path.join(dir, 'docs')
  const chattr = immutable(t, docs)
  const { openBucket } = await t.mockImport<typeof import('../../../src/index.js')>(built, { 'node:fs': chattr.fs })
  const bucket = await openBucket(dir, { fsync: false })
  t.teardown(async () => await bucket.close())
  await bucket.put('docs/kept.txt', 'a file in the view')
  t.same(await readdir(docs), ['kept.txt'], 'shown while the directory takes it')
  chattr.frozen.on = true // chattr +i docs
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { if (warning.name === 'FsbucketWarning') warnings.push(warning) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const large = 'a body file '.repeat(2_000)
  await bucket.put('docs/new.txt', large) // a body file: linked
  await bucket.put('docs/inline.txt', 'x'.repeat(10)) // kept in the catalog row: written out
  await bucket.delete('docs/kept.txt')
  await new Promise(resolve => setImmediate(resolve))
  const kept = await bucket.get('docs/new.txt')
  t.equal(kept !== null && 'body' in kept ? await kept.text() : null, large, 'the put stands (the catalog holds it)')
  t.equal(await bucket.head('docs/kept.txt'), null, 'the delete stands')
  t.same(await readdir(docs), ['kept.txt'], 'and the view is as the file system left it')
  t.same(warnings.map(w => w.message.replace(/: [A-Z]+: .*/, '')), [
    `the readable view could not show a key: ${path.join(docs, 'new.txt')}`,
    `the readable view could not show a key: ${path.join(docs, 'inline.txt')}`,
    `the readable view could not remove a deleted key's file: ${path.join(docs, 'kept.txt')}`
  ], 'with no warn given: one process warning per refusal, naming the path')
  t.match(warnings[0].message, /: EPERM: operation not permitted, link '.*' -> '.*new\.txt'$/, 'and the reason')
})

t.test("a registry's warn hears of the view's refusals, once a minute for one file and reason", async t => {
  const dataDir = testdir(t)
  const docs = path.join(dataDir, 'photos', 'docs')
  const chattr = immutable(t, docs)
  const { openRegistry } = await t.mockImport<typeof import('../../../src/index.js')>(built, { 'node:fs': chattr.fs })
  const heard: Array<[Record<string, unknown>, string]> = []
  const registry = await openRegistry(dataDir, { fsync: false, warn: (fields, message) => { heard.push([fields, message]) } })
  t.teardown(async () => await registry.close())
  await registry.create('photos')
  const bucket = await registry.open('photos')
  if (bucket === null) throw new Error('no bucket')
  await fs.promises.mkdir(docs)
  chattr.frozen.on = true
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { if (warning.name === 'FsbucketWarning') warnings.push(warning) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  for (let i = 0; i < 5; i++) await bucket.put('docs/hot.txt', `write ${i}`)
  await bucket.put('docs/other.txt', 'another file')
  await new Promise(resolve => setImmediate(resolve))
  t.same(heard.map(([fields, message]) => [fields.bucket, fields.path, message]), [
    ['photos', path.join(docs, 'hot.txt'), 'the readable view could not show a key'],
    ['photos', path.join(docs, 'other.txt'), 'the readable view could not show a key']
  ], 'five refusals of one file in a row: warned of once; another file: once more')
  t.match(heard[0][0].reason, /^EPERM: operation not permitted/, 'with the reason')
  t.same(warnings, [], 'and no process warning')
  const got = await bucket.get('docs/hot.txt')
  t.equal(got !== null && 'body' in got ? await got.text() : null, 'write 4', 'every put stands')
})

t.test("a warn that throws fails no write: the catalog holds the object", async t => {
  const dataDir = testdir(t)
  const docs = path.join(dataDir, 'photos', 'docs')
  const chattr = immutable(t, docs)
  const { openRegistry } = await t.mockImport<typeof import('../../../src/index.js')>(built, { 'node:fs': chattr.fs })
  let calls = 0
  const registry = await openRegistry(dataDir, { fsync: false, warn: () => { calls++; throw new Error('the log is gone') } })
  t.teardown(async () => await registry.close())
  await registry.create('photos')
  const bucket = await registry.open('photos')
  if (bucket === null) throw new Error('no bucket')
  await bucket.put('docs/kept.txt', 'shown before')
  chattr.frozen.on = true
  await bucket.put('docs/new.txt', 'refused by the view') // kept in its catalog row: written out, refused
  await bucket.put('docs/large.txt', 'a body file '.repeat(2_000)) // a body file: linked, refused
  await bucket.delete('docs/kept.txt') // removal refused
  await new Promise(resolve => setImmediate(resolve))
  t.equal(calls, 3, 'each refusal reached the warn')
  const got = await bucket.get('docs/new.txt')
  t.equal(got !== null && 'body' in got ? await got.text() : null, 'refused by the view', 'the put stands')
  t.equal((await bucket.head('docs/large.txt'))?.size, 24_000, 'the large put stands')
  t.equal(await bucket.head('docs/kept.txt'), null, 'the delete stands')
})

t.test('a view warns of one file and reason again once the interval has passed', async t => {
  const { KeyView, WARN_INTERVAL_MS } = await import('../../../src/stores/fs/view.js')
  const bucketDir = testdir(t)
  const storeDir = path.join(bucketDir, '.fsbucket')
  await fs.promises.mkdir(storeDir)
  await fs.promises.mkdir(path.join(storeDir, 'view-strays')) // the marker cannot be made: a key needing a temporary beside it is refused, with EISDIR
  let now = 1_000
  const heard: string[] = []
  const view = new KeyView(bucketDir, storeDir, { warn: (fields, message) => { heard.push(`${message}: ${fields.path}: ${fields.reason.replace(/:.*/, '')}`) }, now: () => now })
  const refused = `the readable view could not show a key: ${path.join(bucketDir, 'a.txt')}: EISDIR`
  t.notOk(view.write('a.txt', Buffer.from('one')))
  now += WARN_INTERVAL_MS - 1
  t.notOk(view.write('a.txt', Buffer.from('two')))
  t.same(heard, [refused], 'not again within the interval')
  now += 1
  t.notOk(view.write('a.txt', Buffer.from('three')))
  t.same(heard, [refused, refused], 'again once it has passed')
})
