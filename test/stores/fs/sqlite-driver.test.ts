/**
 * The catalogs' SQLite driver: the build the running Node can load, and one
 * whose statements and databases the garbage collector may free. (better-sqlite3
 * 12 compiled against Node 24.19's headers or later aborts the process there.)
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { sqliteDriver } from '../../../src/stores/fs/sqlite.js'
import { testdir } from '../../testdir.js'

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src')

t.test('the driver is the one this Node\'s Node-API can load', async t => {
  const driver = sqliteDriver()
  const napi = Number(process.versions.napi)
  if (napi >= 10) {
    t.equal(driver.module, 'better-sqlite3', 'the Node-API build')
    t.match(driver.version, /^13\./)
  } else {
    t.equal(driver.module, 'better-sqlite3-node20', `Node-API ${napi}: the build for Node 20`)
    t.match(driver.version, /^12\./)
  }
  t.match(driver.sqlite, /^3\.\d+\.\d+$/, 'it runs SQLite')
})

t.test('statements and catalogs freed by the garbage collector do not take the process down', async t => {
  const dir = testdir(t)
  // Collections that happen on their own, between turns (the abort needs
  // one that runs outside JavaScript's context; an explicit gc() does not).
  const script = `
    const { openBucket } = await import(${JSON.stringify(pathToFileURL(path.join(src, 'index.js')).href)})
    const { Database } = await import(${JSON.stringify(pathToFileURL(path.join(src, 'stores', 'fs', 'sqlite.js')).href)})
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
