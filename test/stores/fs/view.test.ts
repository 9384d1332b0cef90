import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
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

t.test('a view entry the file system refuses is warned of, and the request stands', async t => {
  const { execFileSync } = await import('node:child_process')
  const dir = testdir(t)
  const bucket = await openBucket(dir, { fsync: false })
  t.teardown(async () => await bucket.close())
  await bucket.put('docs/kept.txt', 'a file in the view')
  const docs = path.join(dir, 'docs')
  try {
    execFileSync('chattr', ['+i', docs], { stdio: 'ignore' })
  } catch {
    t.pass('skipped: chattr +i is not available here (it needs root, on a file system that has it)')
    return
  }
  t.teardown(() => { execFileSync('chattr', ['-i', docs]) })
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { if (warning.name === 'FsbucketWarning') warnings.push(warning) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  await bucket.put('docs/new.txt', 'not shown')
  await bucket.put('docs/inline.txt', 'x'.repeat(10))
  await bucket.delete('docs/kept.txt')
  await new Promise(resolve => setImmediate(resolve))
  const kept = await bucket.get('docs/new.txt')
  t.equal(kept !== null && 'body' in kept ? await kept.text() : null, 'not shown', 'the put stands (the catalog holds it)')
  t.equal(await bucket.head('docs/kept.txt'), null, 'the delete stands')
  t.same(warnings.map(w => w.message.replace(/: [A-Z]+: .*/, '')), [
    `the readable view could not show a key: ${path.join(docs, 'new.txt')}`,
    `the readable view could not show a key: ${path.join(docs, 'inline.txt')}`,
    `the readable view could not remove a deleted key's file: ${path.join(docs, 'kept.txt')}`
  ], 'one warning per refusal, naming the path')
  t.match(warnings[0].message, /EPERM/, 'and the reason')
})
