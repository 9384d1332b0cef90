/**
 * Fault injection for the filesystem store (issue 8 §4): a full disk
 * (ENOSPC, SQLITE_FULL), an I/O error (EIO, SQLITE_IOERR) or a read-only
 * file system (EROFS, SQLITE_READONLY) at each write step of a put, an
 * upload's part and a completion. Each must answer the catalogue's error
 * (10901, 10906, 10903), leave no partial object and no file that the
 * sweeper would not remove, and let later writes succeed. A deletion on a
 * full disk frees the store's spare file and succeeds.
 *
 * node:fs's promise functions, FileHandle's methods and the catalog's write
 * are wrapped to fail while a fault is armed.
 */
import { existsSync, promises as fsp, readdirSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { BucketEngine, openBucket, type Bucket, type BucketUploadedPart } from '../../../src/index.js'
import { Catalog } from '../../../src/stores/fs/catalog.js'
import { FsStore } from '../../../src/stores/fs/store.js'
import { testdir } from '../../testdir.js'

interface Fault { fn: string, where: (file: string) => boolean, code: string }
let fault: Fault | null = null
const handlePaths = new WeakMap<object, string>()

function injected (fn: string, file: string): Error | null {
  if (fault === null || fault.fn !== fn || !fault.where(file)) return null
  if (fault.code.startsWith('SQLITE_')) return Object.assign(new Error(`${fault.code}: injected`), { code: fault.code })
  return Object.assign(new Error(`${fault.code}: injected, ${fn} '${file}'`), { code: fault.code, syscall: fn, path: file })
}

async function installWrappers (): Promise<() => void> {
  const restore: Array<() => void> = []
  const wrap = (target: Record<string, any>, name: string, fn: string, fileOf: (self: unknown, args: unknown[]) => string, after?: (result: unknown, args: unknown[]) => void): void => {
    const original = target[name]
    target[name] = async function (this: unknown, ...args: unknown[]) {
      const err = injected(fn, fileOf(this, args))
      if (err !== null) throw err
      const result = await original.apply(this, args)
      after?.(result, args)
      return result
    }
    restore.push(() => { target[name] = original })
  }
  const promises = fsp as unknown as Record<string, any>
  wrap(promises, 'open', 'open', (_, args) => String(args[0]), (handle, args) => { handlePaths.set(handle as object, String(args[0])) })
  wrap(promises, 'rename', 'rename', (_, args) => String(args[1]))
  wrap(promises, 'link', 'link', (_, args) => String(args[1]))
  const probe = await fsp.open(import.meta.filename ?? process.argv[1], 'r')
  const handleProto = Object.getPrototypeOf(probe) as Record<string, any>
  await probe.close()
  for (const name of ['writev', 'write', 'datasync', 'sync']) wrap(handleProto, name, name, self => handlePaths.get(self as object) ?? '')
  const write = Catalog.prototype.write
  Catalog.prototype.write = async function <T>(this: Catalog, fn: () => T): Promise<T> {
    const err = injected('commit', 'catalog')
    if (err !== null) throw err
    return await write.call(this, fn) as T
  }
  restore.push(() => { Catalog.prototype.write = write })
  return () => { for (const undo of restore.reverse()) undo() }
}

const inBlobs = (file: string): boolean => file.includes(`${path.sep}blobs${path.sep}`)
const inTmp = (file: string): boolean => file.includes(`${path.sep}tmp${path.sep}`)
const inUploads = (file: string): boolean => file.includes(`${path.sep}uploads${path.sep}`)
const isWal = (file: string): boolean => file.endsWith('-wal')
const always = (): boolean => true

type Step = [name: string, operation: 'put' | 'small put' | 'part' | 'complete', fn: string, where: (file: string) => boolean, kind: 'fs' | 'sqlite']
const steps: Step[] = [
  ['put: opening the body file', 'put', 'open', inBlobs, 'fs'],
  ['put: writing the body', 'put', 'write', inBlobs, 'fs'],
  ['put: flushing the body', 'put', 'datasync', inBlobs, 'fs'],
  ['put: flushing its directory', 'put', 'sync', inBlobs, 'fs'],
  ['put: committing the row', 'put', 'commit', always, 'sqlite'],
  ['put: flushing the catalog', 'put', 'datasync', isWal, 'fs'],
  // A small body goes in its catalog row: the commit and the catalog's flush are its only steps.
  ['small put: committing the row', 'small put', 'commit', always, 'sqlite'],
  ['small put: flushing the catalog', 'small put', 'datasync', isWal, 'fs'],
  ['part: opening the part file', 'part', 'open', inTmp, 'fs'],
  ['part: writing the part', 'part', 'write', inTmp, 'fs'],
  ['part: placing it in its upload', 'part', 'rename', inUploads, 'fs'],
  ['part: flushing its upload\'s directory', 'part', 'sync', inUploads, 'fs'],
  ['part: committing its row', 'part', 'commit', always, 'sqlite'],
  ['complete: linking the parts', 'complete', 'link', inBlobs, 'fs'],
  ['complete: committing the object', 'complete', 'commit', always, 'sqlite']
]
const failures: Array<[fs: string, sqlite: string, code: number]> = [
  ['ENOSPC', 'SQLITE_FULL', 10901],
  ['EIO', 'SQLITE_IOERR', 10906],
  ['EROFS', 'SQLITE_READONLY', 10903]
]

async function text (bucket: Bucket, key: string): Promise<string | null> {
  const object = await bucket.get(key)
  return object === null || !('body' in object) ? null : await object.text()
}

/** Files under the store's directory `sub`, relative to it. */
function filesUnder (root: string, sub: string): string[] {
  const dir = path.join(root, sub)
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter(e => e.isFile()).map(e => path.relative(dir, path.join(e.parentPath, e.name)))
}

/** The body files no object names (a live object's files start with its version). */
async function orphans (bucket: Bucket, root: string): Promise<string[]> {
  const versions = new Set((await bucket.list({ limit: 1000 })).objects.map(o => o.version))
  return filesUnder(root, 'blobs').filter(file => !versions.has(path.basename(file).split('.')[0]))
}

t.test('faults at every write step', async t => {
  const unwrap = await installWrappers()
  t.teardown(() => { fault = null; unwrap() })
  for (const [label, operation, fn, where, kind] of steps) {
    for (const [fsCode, sqliteCode, expected] of failures) {
      const code = kind === 'sqlite' ? sqliteCode : fsCode
      await t.test(`${label}, ${code}`, async t => {
        const dir = path.join(testdir(t), 'bucket')
        const root = path.join(dir, '.fsbucket')
        const bucket = new BucketEngine(await FsStore.open(dir, { fsync: true }), { minPartSize: 1 })
        t.teardown(async () => { fault = null; await bucket.close() })
        await bucket.put('k', 'old')
        const upload = await bucket.createMultipartUpload('m')
        let parts: BucketUploadedPart[] = []
        if (operation === 'complete') parts = [await upload.uploadPart(1, 'part one '), await upload.uploadPart(2, 'part two')]
        const large = 'x'.repeat(300_000)
        const small = 'y'.repeat(1000)
        const written = operation === 'small put' ? small : large

        fault = { fn, where, code }
        const attempt = operation === 'put' || operation === 'small put'
          ? bucket.put('k', written)
          : operation === 'part' ? upload.uploadPart(1, large) : upload.complete(parts)
        const err = await attempt.then(() => null, (e: unknown) => e as { code?: unknown, message: string })
        fault = null
        t.equal(err?.code, expected, `answers ${expected}: ${err?.message ?? 'no error'}`)

        if (operation === 'put' || operation === 'small put') {
          const now = await text(bucket, 'k')
          if (label.endsWith('flushing the catalog')) t.ok(now === 'old' || now === written, 'the old object or the whole new one')
          else t.equal(now, 'old', 'the old object stays, whole')
        }
        if (operation === 'complete') t.equal(await bucket.head('m'), null, 'no object from a failed completion')
        if (!label.endsWith('flushing the catalog')) {
          t.same(await orphans(bucket, root), [], 'nothing half-stored stays, even before a sweep')
        }
        if (operation !== 'complete') t.same(filesUnder(root, 'tmp'), [], 'no part left in tmp/')
        if (operation === 'part') t.same(filesUnder(root, 'uploads'), [], 'no part file left in its upload, even before it ends')

        // Later writes succeed, and the sweeper leaves only live files.
        await bucket.put('later', 'written after the fault')
        t.equal(await text(bucket, 'later'), 'written after the fault')
        if (operation !== 'put' && operation !== 'small put') {
          const done = await upload.complete(operation === 'complete' ? parts : [await upload.uploadPart(1, 'retried part')])
          t.equal(await text(bucket, 'm'), operation === 'complete' ? 'part one part two' : 'retried part', `the upload completes after the fault (${done.size} bytes)`)
        }
        await bucket.sweep({ leftoverGraceMs: -60_000 })
        t.same(await orphans(bucket, root), [], 'no orphan after a sweep')
        t.same(filesUnder(root, 'tmp'), [])
        t.same(filesUnder(root, 'uploads'), [], 'no part left over')
      })
    }
  }
})

t.test('a deletion on a full disk frees the spare file and succeeds', async t => {
  const unwrap = await installWrappers()
  t.teardown(() => { fault = null; unwrap() })
  const dir = path.join(testdir(t), 'bucket')
  const spare = path.join(dir, '.fsbucket', 'spare')
  const bucket = new BucketEngine(await FsStore.open(dir, { fsync: true }))
  t.teardown(async () => { fault = null; await bucket.close() })
  await bucket.put('big', 'x'.repeat(100_000))
  t.ok(existsSync(spare), 'the store keeps a spare file')
  // SQLite refuses every write while the disk is full; once the spare is gone, there is room.
  fault = { fn: 'commit', where: () => existsSync(spare), code: 'SQLITE_FULL' }
  t.equal(await bucket.put('more', 'y').catch((e: { code?: number }) => e.code), 10901, 'writes are refused with 10901')
  await bucket.delete('big')
  fault = null
  t.equal(await bucket.head('big'), null, 'the deletion went through')
  t.same(await orphans(bucket, path.join(dir, '.fsbucket')), [], 'and freed the body')
  await new Promise(resolve => setTimeout(resolve, 50))
  t.ok(existsSync(spare), 'the spare is made again once there is room')
})

t.test('a damaged catalog answers the I/O error (10906), never an unknown one', async t => {
  const dir = path.join(testdir(t), 'damaged')
  const catalog = path.join(dir, '.fsbucket', 'catalog.db')
  const fill = async (): Promise<void> => {
    const bucket = await openBucket(dir)
    for (let i = 0; i < 50; i++) await bucket.put(`k${i}`, 'v'.repeat(3000))
    await bucket.close()
    for (const suffix of ['-wal', '-shm']) await fsp.rm(catalog + suffix, { force: true })
  }
  await fill()
  // Pages past the first overwritten: SQLite reads it as malformed (SQLITE_CORRUPT).
  const bytes = await fsp.readFile(catalog)
  await fsp.writeFile(catalog, bytes.fill(0x55, 4096))
  const damaged = await openBucket(dir)
  t.teardown(() => damaged.close())
  const ops: Array<[string, () => Promise<unknown>]> = [
    ['get', async () => await damaged.get('k1')],
    ['head', async () => await damaged.head('k1')],
    ['list', async () => await damaged.list()],
    ['put', async () => await damaged.put('new', 'v')],
    ['listMultipartUploads', async () => await damaged.listMultipartUploads()]
  ]
  for (const [name, op] of ops) await t.rejects(op(), { code: 10906 }, name)

  // A file that is not SQLite's at all (SQLITE_NOTADB): the bucket does not open.
  await fsp.rm(path.dirname(path.dirname(catalog)), { recursive: true })
  await fill()
  await fsp.writeFile(catalog, Buffer.alloc(8192, 7))
  await t.rejects(openBucket(dir), { code: 10906 }, 'open')

  // A catalog SQLite cannot open at all (SQLITE_CANTOPEN: a directory in its place), on either driver.
  await fsp.rm(catalog)
  await fsp.mkdir(catalog)
  await t.rejects(openBucket(dir), { code: 10906, cause: { code: 'SQLITE_CANTOPEN' } }, 'open a catalog that cannot be opened')
})
