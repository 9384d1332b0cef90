/**
 * The start's write probe (server/preflight.ts): a start killed between
 * writing its probe and removing it leaves the file, and the next start
 * takes it away, so nothing of a probe stays in the data directory or in a
 * bucket (where it would show in the readable view). And the management
 * API's state directory, which holds its credentials: one an older version
 * left open to others is made 0700, and a `credentials.json` others may
 * read is warned about, once, at every start, naming the file and its mode.
 */
import t from 'tap'
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { checkWritable, privateManagementState } from '../../src/server/preflight.js'
import { testdir } from '../testdir.js'
import { run, within } from './serve-process.js'

t.test('a probe a killed start left is removed by the next start', async t => {
  const data = testdir(t)
  mkdirSync(path.join(data, 'photos', '.fsbucket'), { recursive: true })
  const left = ['', 'photos', path.join('photos', '.fsbucket')].map(dir => path.join(data, dir, '.fsbucket-write-probe'))
  for (const file of left) writeFileSync(file, '')
  await checkWritable(data)
  for (const file of left) t.notOk(existsSync(file), `${path.relative(data, file)} is gone`)
  t.same(readdirSync(data), ['photos'], 'nothing else is left either')
})

const modeOf = (file: string): number => statSync(file).mode & 0o777

/** A data directory whose `.mgmt/` an older version made 0755, with a `credentials.json` the operator left 0644. */
function openManagementState (data: string, secret: string): { dir: string, file: string } {
  const dir = path.join(data, '.mgmt')
  mkdirSync(dir, { recursive: true })
  chmodSync(dir, 0o755)
  const file = path.join(dir, 'credentials.json')
  writeFileSync(file, JSON.stringify({ tokens: [secret] }))
  chmodSync(file, 0o644)
  return { dir, file }
}

t.test('the management API\'s state: an open directory is made 0700; a credentials file others may read is a warning', async t => {
  const data = testdir(t)
  t.same(await privateManagementState(data), [], 'no .mgmt: nothing to say')
  const secret = 'mgmt-secret-in-file'
  const { dir, file } = openManagementState(data, secret)
  const warnings = await privateManagementState(data)
  t.equal(modeOf(dir), 0o700, 'the directory is tightened')
  t.same(warnings, [`${file} is readable or writable by group or others (mode 0644); it holds the management API's credentials: chmod 600 it`])
  t.notOk(warnings.join('\n').includes(secret), 'never the content')
  t.equal(modeOf(file), 0o644, 'the file is left to its owner')
  chmodSync(file, 0o600)
  t.same(await privateManagementState(data), [], 'a private file: nothing to say')
})

t.test('the management API\'s state or the tokens\' records behind a symbolic link: the start is refused, nothing changed through it', async t => {
  for (const name of ['.mgmt', '.tokens']) {
    const data = testdir(t)
    const elsewhere = path.join(data, 'state-elsewhere')
    mkdirSync(elsewhere, { mode: 0o755 })
    chmodSync(elsewhere, 0o755)
    symlinkSync(elsewhere, path.join(data, name))
    await t.rejects(privateManagementState(data), {
      name: 'Error',
      message: `${path.resolve(data, name)} is a symbolic link: fsbucket writes its state only inside the data directory; replace it with a directory`
    }, name)
    t.equal(modeOf(elsewhere), 0o755, 'the link\'s target is left as it was')
  }
})

t.test('a server warns at start of a credentials file others may read, in one line, with or without workers', async t => {
  for (const workers of ['1', '2']) {
    const data = testdir(t)
    const secret = `mgmt-secret-${workers}`
    const { dir, file } = openManagementState(data, secret)
    // Port 0: the system's pick; the test reads the log, not answers.
    const served = run(['serve', '--data', data, '--port', '0', '--s3-port', '0', '--workers', workers, '--fsync', 'off', '--log-level', 'info'])
    t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
    const deadline = Date.now() + 60_000
    // The last start-up line, with or without workers.
    while (!served.stdout().includes('web console:')) {
      if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`not started: ${served.stderr()}`)
      await new Promise(resolve => setTimeout(resolve, 20))
    }
    const lines = served.stdout().split('\n').filter(line => line.includes('credentials.json'))
    t.equal(lines.length, 1, `--workers ${workers}: one line`)
    t.match(JSON.parse(lines[0] ?? '{}'), { level: 40, msg: `${file} is readable or writable by group or others (mode 0644); it holds the management API's credentials: chmod 600 it` }, `--workers ${workers}: a warning naming the file and its mode`)
    t.notOk(served.stdout().includes(secret) || served.stderr().includes(secret), `--workers ${workers}: the content is never shown`)
    t.equal(modeOf(dir), 0o700, `--workers ${workers}: the directory is made 0700`)
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0)
  }
})
