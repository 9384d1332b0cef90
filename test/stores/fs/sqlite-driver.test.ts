/**
 * The catalogs' SQLite driver: node:sqlite where Node has it, better-sqlite3
 * 12 elsewhere, behind one interface that both meet alike (BLOBs as Buffers,
 * row shapes, SQLite's code names on errors, transactions). The package
 * smoke runs this file under Node 22 and 24, the suite under Node 20, so each
 * driver passes it. And statements and databases the garbage collector
 * frees do no harm (better-sqlite3 12 compiled against Node 24.19's headers
 * or later aborts the process there).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { Database, sqliteCodeName, sqliteDriver } from '../../../src/stores/fs/sqlite.js'
import { testdir } from '../../testdir.js'

const require = createRequire(import.meta.url)
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src')
const sqliteModule = pathToFileURL(path.join(src, 'stores', 'fs', 'sqlite.js')).href

/** Whether this Node has node:sqlite without a flag (Node 22.13 and later). */
function nodeHasSqlite (): boolean {
  const { status } = spawnSync(process.execPath, ['--no-warnings', '-e', 'require("node:sqlite")'])
  return status === 0
}

t.test('the driver is node:sqlite where Node has it, better-sqlite3 12 elsewhere', async t => {
  const driver = sqliteDriver()
  if (nodeHasSqlite()) {
    t.equal(driver.name, 'node:sqlite')
    t.equal(driver.version, process.version.slice(1))
  } else {
    t.equal(driver.name, 'better-sqlite3', `${process.version}: no node:sqlite`)
    t.match(driver.version, /^12\./)
  }
  t.match(driver.sqlite, /^3\.\d+\.\d+$/, 'it runs SQLite')
})

t.test('loading node:sqlite prints no experimental warning', async t => {
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(sqliteModule)})`], { encoding: 'utf8' })
  t.equal(out.status, 0, out.stderr)
  t.equal(out.stderr, '')
})

t.test('FSBUCKET_SQLITE_DRIVER picks a driver, and a wrong one stops the start', async t => {
  const run = (driver: string): { status: number | null, stdout: string, stderr: string } =>
    spawnSync(process.execPath, ['--input-type=module', '-e',
      `const m = await import(${JSON.stringify(sqliteModule)}); console.log(m.sqliteDriver().name)`],
    { encoding: 'utf8', env: { ...process.env, FSBUCKET_SQLITE_DRIVER: driver } })
  const chosen = sqliteDriver().name
  t.equal(run(chosen).stdout.trim(), chosen)
  const wrong = run('sqlite4')
  t.not(wrong.status, 0)
  t.match(wrong.stderr, /FSBUCKET_SQLITE_DRIVER must be node:sqlite or better-sqlite3, not "sqlite4"/)
  if (!nodeHasSqlite()) {
    const missing = run('node:sqlite')
    t.not(missing.status, 0)
    t.match(missing.stderr, /No SQLite driver loads on Node v\d+.*\(FSBUCKET_SQLITE_DRIVER=node:sqlite\)/)
  }
})

t.test('rows: objects, arrays (raw), first values (pluck); BLOBs are Buffers in each', async t => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE t (id BLOB PRIMARY KEY, n INTEGER, s TEXT) WITHOUT ROWID')
  const insert = db.prepare<{ id: Buffer, n: number, s: string }>('INSERT INTO t VALUES (@id, @n, @s)')
  t.same(insert.run({ id: Buffer.from('a'), n: 1, s: 'x' }).changes, 1)
  insert.run({ id: Buffer.from('b'), n: 2, s: 'y' })
  const row = db.prepare<[Buffer], { id: Buffer, n: number, s: string }>('SELECT * FROM t WHERE id = ?').get(Buffer.from('a'))
  t.ok(Buffer.isBuffer(row?.id), 'get: a Buffer')
  t.same({ ...row }, { id: Buffer.from('a'), n: 1, s: 'x' })
  const all = db.prepare<[], { id: Buffer }>('SELECT id FROM t ORDER BY id').all()
  t.ok(all.every(r => Buffer.isBuffer(r.id)), 'all: Buffers')
  t.same(all.map(r => r.id.toString()), ['a', 'b'])
  const raw = db.prepare<[number], unknown[]>('SELECT id, n, s FROM t WHERE n >= ? ORDER BY id').raw().all(1)
  t.same(raw, [[Buffer.from('a'), 1, 'x'], [Buffer.from('b'), 2, 'y']])
  t.ok(Buffer.isBuffer(raw[0]?.[0]), 'raw: a Buffer')
  t.equal(db.prepare<[], number>('SELECT count(*) FROM t').pluck().get(), 2)
  const pluckedId = db.prepare<[], Buffer>('SELECT id FROM t ORDER BY id').pluck().get()
  t.ok(Buffer.isBuffer(pluckedId), 'pluck: a Buffer')
  t.same([...db.prepare<[], string>('SELECT s FROM t ORDER BY id').pluck().iterate()], ['x', 'y'])
  t.same([...db.prepare<[], { id: Buffer }>('SELECT id FROM t ORDER BY id').iterate()].map(r => Buffer.isBuffer(r.id)), [true, true])
  t.equal(db.prepare('SELECT 1 FROM t WHERE n = 9').get(), undefined, 'no row: undefined')
  t.equal(db.pragma('user_version', { simple: true }), 0)
  t.same(db.pragma('table_info(t)'), db.prepare('PRAGMA table_info(t)').all())
  const id = db.prepare('INSERT INTO t VALUES (?, ?, ?)').run(Buffer.from('c'), 3, 'z').lastInsertRowid
  t.ok(typeof id === 'number' || typeof id === 'bigint')
})

t.test('errors carry SQLite\'s code name', async t => {
  t.equal(sqliteCodeName(5), 'SQLITE_BUSY')
  t.equal(sqliteCodeName(517), 'SQLITE_BUSY_SNAPSHOT')
  t.equal(sqliteCodeName(778), 'SQLITE_IOERR_WRITE')
  t.equal(sqliteCodeName(13), 'SQLITE_FULL')
  t.equal(sqliteCodeName(26), 'SQLITE_NOTADB')
  t.equal(sqliteCodeName(2058 + 65536), 'SQLITE_IOERR', 'an extended code not in the table: its primary code')

  const dir = testdir(t)
  const file = path.join(dir, 'catalog.db')
  const a = new Database(file, { timeout: 0 })
  const b = new Database(file, { timeout: 0 })
  t.teardown(() => { a.close(); b.close() })
  a.pragma('journal_mode = WAL')
  a.exec('CREATE TABLE t (k TEXT PRIMARY KEY)')
  a.prepare('INSERT INTO t VALUES (?)').run('one')
  t.throws(() => a.prepare('INSERT INTO t VALUES (?)').run('one'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })
  t.throws(() => a.prepare('SELECT nonsense FROM t'), { code: 'SQLITE_ERROR' })
  // Another connection's write lock: SQLITE_BUSY at once (timeout 0), which the catalog's write loop waits out.
  const hold = a.transaction((fn: () => void) => fn())
  hold.immediate(() => {
    t.throws(() => b.transaction(() => 1).immediate(), { code: /^SQLITE_BUSY/ })
  })
  t.equal(b.transaction(() => 2).immediate(), 2, 'free again once the other commits')

  const notADatabase = path.join(dir, 'text.db')
  require('node:fs').writeFileSync(notADatabase, 'not a database, but long enough to be read as one '.repeat(40))
  t.throws(() => new Database(notADatabase).prepare('SELECT * FROM sqlite_master').all(), { code: 'SQLITE_NOTADB' })
  t.throws(() => new Database(path.join(dir, 'missing.db'), { readonly: true, fileMustExist: true }))
})

t.test('transactions: commit, roll back on a throw, nest in savepoints', async t => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE t (n INTEGER)')
  const insert = db.prepare<[number]>('INSERT INTO t VALUES (?)')
  const count = (): number => db.prepare<[], number>('SELECT count(*) FROM t').pluck().get() as number
  const tx = db.transaction((n: number) => { insert.run(n); return n * 2 })
  t.equal(tx(1), 2)
  t.equal(tx.immediate(2), 4)
  t.equal(tx.deferred(3), 6)
  t.equal(count(), 3)
  const failing = db.transaction(() => { insert.run(4); throw new Error('no') })
  t.throws(() => failing.immediate(), /no/)
  t.equal(count(), 3, 'rolled back')
  const outer = db.transaction(() => {
    insert.run(5)
    t.throws(() => failing(), /no/)
    insert.run(6)
  })
  outer.immediate()
  t.same(db.prepare<[], number>('SELECT n FROM t ORDER BY n').pluck().all(), [1, 2, 3, 5, 6], 'the inner one alone rolled back')
  t.equal(db.open, true)
  db.close()
  t.equal(db.open, false)
})

t.test('statements and catalogs freed by the garbage collector do not take the process down', async t => {
  const dir = testdir(t)
  // Collections that happen on their own, between turns (the abort needs
  // one that runs outside JavaScript's context; an explicit gc() does not).
  const script = `
    const { openBucket } = await import(${JSON.stringify(pathToFileURL(path.join(src, 'index.js')).href)})
    const { Database } = await import(${JSON.stringify(sqliteModule)})
    for (let i = 0; i < 200; i++) {
      if (i % 10 === 0) {
        const bucket = await openBucket(${JSON.stringify(dir)} + '/b' + (i % 4))
        await bucket.put('k' + i, 'v')
        await bucket.list()
        await bucket.close()
      }
      const db = new Database(':memory:')
      for (let j = 0; j < 200; j++) db.prepare('select ' + j).pluck().get()
      db.pragma('user_version')
      db.close()
      await new Promise(resolve => setImmediate(resolve))
      const garbage = []
      for (let k = 0; k < 20000; k++) garbage.push({ k })
    }
    console.log('alive')`
  t.equal(execFileSync(process.execPath, ['--max-semi-space-size=1', '--input-type=module', '-e', script], { encoding: 'utf8' }).trim(), 'alive')
})
