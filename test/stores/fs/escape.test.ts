/**
 * Nothing outside the data directory: links planted in a bucket directory
 * (as a view file, or as a directory on a view path) never make a PUT or a
 * DELETE write, replace or remove anything outside, nor a GET serve a file
 * that was not stored through fsbucket; a forged catalog row naming a file
 * outside the store is refused. Driven over HTTP (app.inject).
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { auth, gateway, restarted } from '../../http/gateway-fixture.js'
import { testdir } from '../../testdir.js'
import { Database } from '../../../src/stores/fs/sqlite.js'
import { openRegistry } from '../../../src/server/open.js'
import { toManagementError } from '../../../src/mgmt/errors.js'
import { BucketError } from '../../../src/bucket/index.js'

function outsideTree (t: Parameters<typeof testdir>[0]): { dir: string, file: string } {
  const dir = testdir(t) + '-outside'
  mkdirSync(dir, { recursive: true })
  const file = path.join(dir, 'secret.txt')
  writeFileSync(file, 'outside, not stored through fsbucket')
  return { dir, file }
}

t.test('planted links never lead a PUT, GET or DELETE outside the data directory', async t => {
  const { app, dataDir } = await gateway(t)
  const bucketDir = path.join(dataDir, 'photos')
  const outside = outsideTree(t)
  symlinkSync(outside.dir, path.join(bucketDir, 'evil')) // a directory on a view path
  symlinkSync(outside.file, path.join(bucketDir, 'f.txt')) // a view file
  symlinkSync(outside.file, path.join(bucketDir, 'secret.txt')) // a view file of a key never stored

  const put = async (key: string, body: string): Promise<number> =>
    (await app.inject({ method: 'PUT', url: `/photos/${key}`, headers: auth, payload: body })).statusCode
  t.equal(await put('evil/secret.txt', 'through a directory link'), 200)
  t.equal(await put('evil/new.txt', 'a new file through a directory link'), 200)
  t.equal(await put('f.txt', 'over a file link'), 200)

  t.equal(readFileSync(outside.file, 'utf8'), 'outside, not stored through fsbucket', 'the outside file is untouched')
  t.same(readdirSync(outside.dir).sort(), ['secret.txt'], 'nothing was created outside')
  t.ok(lstatSync(path.join(bucketDir, 'f.txt')).isSymbolicLink(), 'an entry that is not ours is left alone')

  const get = async (key: string): Promise<{ status: number, body: string }> => {
    const res = await app.inject({ method: 'GET', url: `/photos/${key}`, headers: auth })
    return { status: res.statusCode, body: res.body }
  }
  t.same(await get('evil/secret.txt'), { status: 200, body: 'through a directory link' }, 'GET serves what was stored')
  t.same(await get('f.txt'), { status: 200, body: 'over a file link' })
  t.equal((await get('secret.txt')).status, 404, 'a planted file is not an object')

  for (const key of ['evil/secret.txt', 'evil/new.txt', 'f.txt', 'secret.txt']) {
    t.equal((await app.inject({ method: 'DELETE', url: `/photos/${key}`, headers: auth })).statusCode, 204, `DELETE ${key}`)
  }
  t.ok(existsSync(outside.file), 'DELETE removed nothing outside')
  t.equal(readFileSync(outside.file, 'utf8'), 'outside, not stored through fsbucket')
  t.same(readdirSync(outside.dir).sort(), ['secret.txt'])
})

t.test('a forged catalog row cannot read or remove a file outside the store', async t => {
  const first = await gateway(t)
  const dataDir = first.dataDir
  const outside = outsideTree(t)
  t.equal((await first.app.inject({ method: 'PUT', url: '/photos/victim', headers: auth, payload: 'stored' })).statusCode, 200)
  await first.app.close()
  await first.registry.close()
  const relative = path.relative(path.join(dataDir, 'photos', '.fsbucket'), outside.file)
  const db = new Database(path.join(dataDir, 'photos', '.fsbucket', 'catalog.db'))
  // The row names the outside file as its body file (and keeps no body of its own, as a large object's row).
  db.prepare('UPDATE objects SET segments = ?, size = ?, body = NULL, body_ref = NULL').run(JSON.stringify([[relative, 36]]), 36)
  db.close()
  // Started again: nothing of the row is cached.
  const { app } = await restarted(t, dataDir)

  const res = await app.inject({ method: 'GET', url: '/photos/victim', headers: auth })
  t.equal(res.statusCode, 500)
  t.notMatch(res.body, /outside, not stored/, 'the outside file is not served')
  t.equal((await app.inject({ method: 'PUT', url: '/photos/victim', headers: auth, payload: 'replaced' })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: '/photos/victim', headers: auth })).statusCode, 204)
  t.equal(readFileSync(outside.file, 'utf8'), 'outside, not stored through fsbucket', 'replacing the row removed nothing outside')
})

t.test('a body file replaced by a link is not read through it', async t => {
  const first = await gateway(t)
  const dataDir = first.dataDir
  const outside = outsideTree(t)
  for (const [key, bytes] of [['large', 'L'.repeat(100_000)], ['small', 'S'.repeat(20_000)]] as const) {
    t.equal((await first.app.inject({ method: 'PUT', url: `/photos/${key}`, headers: auth, payload: bytes })).statusCode, 200)
  }
  await first.app.close()
  await first.registry.close()
  const blobs = path.join(dataDir, 'photos', '.fsbucket', 'blobs')
  for (const dir of readdirSync(blobs)) {
    for (const name of readdirSync(path.join(blobs, dir))) {
      const file = path.join(blobs, dir, name)
      rmSync(file)
      symlinkSync(outside.file, file)
    }
  }
  // Started again: no body is cached.
  const { app } = await restarted(t, dataDir)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/fresh', headers: auth, payload: 'fresh' })).statusCode, 200, 'the gateway started again serves')
  for (const key of ['large', 'small']) {
    const res = await app.inject({ method: 'GET', url: `/photos/${key}`, headers: auth })
    t.equal(res.statusCode, 500, key)
    t.notMatch(res.body, /outside, not stored/, `${key}: the outside file is not served`)
  }
})

t.test('links planted as a bucket\'s directory or the store\'s own directories are never written through', async t => {
  const first = await gateway(t)
  const dataDir = first.dataDir
  const outside = outsideTree(t)
  symlinkSync(outside.dir, path.join(dataDir, 'linked'))
  const put = await first.app.inject({ method: 'PUT', url: '/linked/k', headers: auth, payload: 'x' })
  t.equal(put.statusCode, 404, 'a linked directory is no bucket')
  t.same(readdirSync(outside.dir), ['secret.txt'], 'nothing written outside')

  t.equal((await first.app.inject({ method: 'PUT', url: '/photos/first', headers: auth, payload: 'x'.repeat(20_000) })).statusCode, 200)
  await first.app.close()
  await first.registry.close()
  const blobs = path.join(dataDir, 'photos', '.fsbucket', 'blobs')
  for (const dir of readdirSync(blobs)) rmSync(path.join(blobs, dir), { recursive: true })
  // Every two-letter directory a new version could need, planted as a link.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  for (const a of alphabet) for (const b of alphabet) symlinkSync(outside.dir, path.join(blobs, a + b))
  const second = await restarted(t, dataDir)
  const large = await second.app.inject({ method: 'PUT', url: '/photos/large', headers: auth, payload: 'y'.repeat(100_000) })
  t.equal(large.statusCode, 500, 'refused, not written through the link')
  t.same(readdirSync(outside.dir), ['secret.txt'], 'nothing written outside')
  rmSync(blobs, { recursive: true })
  symlinkSync(outside.dir, blobs)
  await second.app.close()
  await second.registry.close()
  const { app } = await restarted(t, dataDir)
  t.equal((await app.inject({ method: 'PUT', url: '/site/ok', headers: auth, payload: 'ok' })).statusCode, 200, 'the gateway started again serves its other bucket')
  const again = await app.inject({ method: 'PUT', url: '/photos/again', headers: auth, payload: 'z'.repeat(100_000) })
  t.equal(again.statusCode, 500, 'a linked blobs/ keeps the bucket from opening')
  t.same(readdirSync(outside.dir), ['secret.txt'], 'nothing written outside')
  t.ok(lstatSync(blobs).isSymbolicLink())
})

t.test('a file or link where a bucket\'s directory would be: create is refused, saying what holds the name, and the operator is warned', async t => {
  const dataDir = testdir(t)
  const warned: Array<{ fields: Record<string, unknown>, message: string }> = []
  const registry = await openRegistry(dataDir, { warn: (fields, message) => { warned.push({ fields, message }) } })
  t.teardown(async () => { await registry.close() })
  const outside = outsideTree(t)
  writeFileSync(path.join(dataDir, 'stray'), 'made by hand')
  symlinkSync(outside.dir, path.join(dataDir, 'linked'))
  for (const name of ['stray', 'linked']) {
    const err = await registry.create(name).catch((err: unknown) => err)
    t.match(err, { code: 10004, status: 409, message: /already exists\. A file or link that is not a bucket directory holds its name/ }, `${name}: refused with the reason`)
    t.equal(await registry.info(name), null, `${name}: still no bucket`)
  }
  t.match(warned, [
    { fields: { bucket: 'stray', path: path.join(dataDir, 'stray'), reason: 'not a directory' }, message: /a bucket cannot be created/ },
    { fields: { bucket: 'linked', path: path.join(dataDir, 'linked') } }
  ], 'one warn line each, naming the path')
  t.same(readdirSync(outside.dir), ['secret.txt'], 'nothing written through the link')
  t.equal(readFileSync(path.join(dataDir, 'stray'), 'utf8'), 'made by hand', 'the file is left alone')
  const mgmt = toManagementError(await registry.create('stray').catch((err: unknown) => err))
  t.match(mgmt, { code: 10004, status: 409, message: 'The bucket you tried to create already exists, and you own it. A file or link that is not a bucket directory holds its name in the data directory.' }, 'the management API says so too')
  for (const [name, detail] of [['ObjectLocked', '(key: "k")'], ['InvalidPart', 'Part 2 is listed twice.']] as const) {
    t.notMatch(toManagementError(new BucketError(name, 'put', detail)).message, detail, `${name}: the API's own sentence, as before`)
  }
  await registry.create('fine')
  t.ok((await registry.info('fine')) !== null, 'other names are created as before')
})
