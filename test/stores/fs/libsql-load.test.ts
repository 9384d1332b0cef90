/**
 * Loading libsql asks no diagnostic report of the process: its loader would
 * (`process.report.getReport()`, to tell glibc from musl), which cost every
 * process that opens a catalog 7 ms and almost a MiB for good
 * (src/stores/fs/sqlite-libsql.ts answers it from detect-libc instead).
 * Nothing else in this process has loaded libsql before the test.
 */
import { createRequire } from 'node:module'
import t from 'tap'
import { loadLibsql } from '../../../src/stores/fs/sqlite-libsql.js'

const require = createRequire(import.meta.url)
let installed = true
try {
  require.resolve('libsql')
} catch {
  installed = false
}
if (process.platform !== 'linux' || !installed) t.plan(0, 'libsql on Linux only')

t.test('libsql loads and works without a report of the process, and the report API is left as it was', t => {
  const report = process.report
  const original = report.getReport
  let reports = 0
  const counting = function (this: unknown, ...args: Parameters<typeof original>): ReturnType<typeof original> { reports++; return original.apply(this, args) }
  report.getReport = counting
  try {
    const Database = loadLibsql()
    const db = new Database(':memory:')
    t.same(db.prepare('SELECT 1 + 1 AS two').get(), { two: 2 }, 'the driver works')
    db.close()
    t.equal(reports, 0, 'no report was made')
    t.equal(report.getReport, counting, 'getReport is the one in place before')
  } finally {
    report.getReport = original
  }
  t.end()
})
