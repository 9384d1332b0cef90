import type { Test } from 'tap'

/**
 * `t.testdir()` made safe for tests that hold the directory open.
 *
 * tap removes a fixture directory before running teardowns registered after
 * it was created, so a bucket closed in a teardown would still be writing
 * (a sweep, a flush) while its files are removed. Registering a teardown first
 * makes every teardown of the test run before the removal. The name carries
 * the process id, so two runs of the suite in one checkout never share, and
 * wipe, each other's directories.
 */
export function testdir (t: Test, content?: Parameters<Test['testdir']>[0]): string {
  t.teardown(() => {})
  t.testdirName = `${t.testdirName}-${process.pid}`
  return t.testdir(content)
}
