/**
 * The catalogs' SQLite driver: node:sqlite where Node has it, libsql
 * elsewhere, behind one interface that both meet alike (BLOBs as Buffers,
 * row shapes, SQLite's code names on errors, transactions, the open
 * options). The suite runs this file under Node 20 (libsql), the package
 * smoke under Node 22 and 24 (node:sqlite) and again with
 * FSBUCKET_SQLITE_DRIVER=libsql there, so each driver passes it. And
 * statements and databases the garbage collector frees do no harm.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { Database, sqliteCodeName, sqliteDriver, type SqliteDatabase } from '../../../src/stores/fs/sqlite.js'
import { testdir } from '../../testdir.js'

const require = createRequire(import.meta.url)
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src')
const sqliteModule = pathToFileURL(path.join(src, 'stores', 'fs', 'sqlite.js')).href

/** Whether this Node has node:sqlite without a flag (Node 22.13 and later). */
function nodeHasSqlite (): boolean {
  const { status } = spawnSync(process.execPath, ['--no-warnings', '-e', 'require("node:sqlite")'])
  return status === 0
}

t.test('the driver is node:sqlite where Node has it, libsql elsewhere', async t => {
  const driver = sqliteDriver()
  const forced = process.env.FSBUCKET_SQLITE_DRIVER
  if (forced !== undefined && forced !== '') {
    t.equal(driver.name, forced, 'the one FSBUCKET_SQLITE_DRIVER names')
  } else if (nodeHasSqlite()) {
    t.equal(driver.name, 'node:sqlite')
  } else {
    t.equal(driver.name, 'libsql', `${process.version}: no node:sqlite`)
  }
  if (driver.name === 'node:sqlite') t.equal(driver.version, process.version.slice(1))
  else t.match(driver.version, /^0\.5\./, 'libsql 0.5')
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
  t.match(wrong.stderr, /FSBUCKET_SQLITE_DRIVER must be node:sqlite or libsql, not "sqlite4"/)
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

t.test('rows, pragmas, parameters and open options look alike on every driver (libsql differs, adapted)', async t => {
  const dir = testdir(t)
  const file = path.join(dir, 'a.db')
  const db = new Database(file)
  t.teardown(() => db.close())
  t.equal(db.pragma('journal_mode = WAL', { simple: true }), 'wal', 'pragma with simple: the value, not a row')
  t.equal(db.pragma('synchronous = NORMAL', { simple: true }), undefined, 'a pragma that returns nothing')
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)')
  t.same(Object.keys(db.prepare('INSERT INTO t VALUES (?, ?)').run('a', Buffer.from('x'))).sort(), ['changes', 'lastInsertRowid'], 'run: what it did, nothing else')
  db.prepare('INSERT INTO t VALUES (?, ?)').run('b', new Uint8Array([1, 2]))
  const select = db.prepare<[string], { k: string, v: Buffer }>('SELECT k, v FROM t WHERE k >= ? ORDER BY k')
  t.same(Object.keys(select.get('a') ?? {}), ['k', 'v'], 'get: the columns, no other key')
  t.same(select.all('a').map(row => Object.keys(row)), [['k', 'v'], ['k', 'v']], 'all: the same')
  t.same([...select.iterate('a')].map(row => Object.keys(row)), [['k', 'v'], ['k', 'v']], 'iterate: the same')
  t.ok(Buffer.isBuffer(select.get('b')?.v), 'a BLOB bound from a Uint8Array is read as a Buffer')
  t.equal(db.prepare<[], string>('SELECT k FROM t ORDER BY k').pluck().get(), 'a', 'pluck applies to get')
  t.same([...db.prepare<[], string>('SELECT k FROM t ORDER BY k').pluck().iterate()], ['a', 'b'], 'and to iterate')
  // One Buffer or one null as the only parameter, and named parameters.
  t.equal(db.prepare<[Buffer], string>('SELECT k FROM t WHERE v = ?').pluck().get(Buffer.from('x')), 'a')
  t.equal(db.prepare<[null], null>('SELECT ? AS n').pluck().get(null), null)
  t.same(db.prepare<{ k: string }, { k: string }>('SELECT k FROM t WHERE k = @k').get({ k: 'b' }), { k: 'b' })
  // libsql's own binding aborts the process on a boolean: the adapter refuses it first, as better-sqlite3 did
  // (node:sqlite refuses it before Node 24 and binds it as 1 from then on).
  if (sqliteDriver().name === 'libsql') {
    t.throws(() => db.prepare('SELECT ?').get(true as never), TypeError)
    t.throws(() => db.prepare('SELECT @b').get({ b: true } as never), TypeError)
  }

  const missing = path.join(dir, 'missing.db')
  t.throws(() => new Database(missing, { fileMustExist: true }), 'fileMustExist: a missing file is refused')
  t.throws(() => new Database(missing, { readonly: true }), 'readonly: so is it')
  t.notOk(existsSync(missing), 'and not created')
  const reader = new Database(file, { readonly: true, fileMustExist: true })
  t.teardown(() => reader.close())
  t.same(reader.prepare<[], string>('SELECT k FROM t ORDER BY k').pluck().all(), ['a', 'b'], 'readonly: reads')
  t.throws(() => reader.prepare('INSERT INTO t VALUES (?, ?)').run('c', null), { code: /^SQLITE_READONLY/ }, 'readonly: no writes')
})

t.test('a write lock held by another process is waited for up to the timeout, on either driver', async t => {
  const dir = testdir(t)
  const file = path.join(dir, 'shared.db')
  const setup = new Database(file)
  setup.pragma('journal_mode = WAL')
  setup.exec('CREATE TABLE t (n INTEGER)')
  setup.close()
  // The other process runs the other driver where two load (Node 22.13+, 24): they share SQLite's locks.
  const here = sqliteDriver().name
  const other = ['node:sqlite', 'libsql'].find(driver => driver !== here && spawnSync(process.execPath,
    ['--input-type=module', '-e', `await import(${JSON.stringify(sqliteModule)})`], { env: { ...process.env, FSBUCKET_SQLITE_DRIVER: driver } }).status === 0) ?? here
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `
    const { Database } = await import(${JSON.stringify(sqliteModule)})
    const db = new Database(${JSON.stringify(file)})
    db.exec('BEGIN IMMEDIATE')
    db.prepare('INSERT INTO t VALUES (1)').run()
    console.log('held')
    // Let go half a second after the word: while this test waits on the lock.
    process.stdin.once('data', () => setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0) }, 500))`],
  { env: { ...process.env, FSBUCKET_SQLITE_DRIVER: other }, stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = once(holder, 'exit')
  const [held] = await once(holder.stdout, 'data') as [Buffer]
  t.equal(held.toString().trim(), 'held', `a ${other} process holds the write lock`)
  const impatient = new Database(file, { timeout: 0 })
  const patient = new Database(file, { timeout: 10_000 })
  t.teardown(() => { impatient.close(); patient.close() })
  const insert = (db: SqliteDatabase, n: number) => db.transaction(() => db.prepare('INSERT INTO t VALUES (?)').run(n)).immediate()
  t.throws(() => insert(impatient, 2), { code: /^SQLITE_BUSY/ }, `${here}, timeout 0: SQLITE_BUSY at once`)
  holder.stdin.write('go\n')
  t.doesNotThrow(() => insert(patient, 3), `${here}, timeout 10 s: waits, then writes`)
  t.same(patient.prepare<[], number>('SELECT n FROM t ORDER BY n').pluck().all(), [1, 3], 'after the other\'s row')
  t.equal((await exited)[0], 0)
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
