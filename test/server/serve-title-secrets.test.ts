/**
 * `fsbucket serve` given secrets as flags: once its arguments are parsed,
 * the primary's command line (/proc/<pid>/cmdline, what `ps` shows every
 * local user) is `fsbucket serve` alone; the workers' never held any
 * (test/server/early-fork.test.ts).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { testdir } from '../testdir.js'
import { run, type Served } from './serve-process.js'

if (process.platform !== 'linux') t.plan(0, 'Linux only: the test reads /proc/<pid>/cmdline')

const commandLine = (pid: number): string => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(s => s !== '').join(' ')

async function serving (served: Served): Promise<void> {
  const deadline = Date.now() + 60_000
  // Several workers: the primary says `serving`; one process: it says where the gateway listens.
  while (!/"msg":"(serving|HTTP gateway listening)/.test(served.stdout())) {
    if (served.child.exitCode !== null || Date.now() > deadline) throw new Error(`no serving line: ${served.stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

const secrets = {
  token: 'TITLESECRET-token',
  apiToken: 'TITLESECRET-api-token',
  apiKey: 'TITLESECRET-api-key',
  s3Secret: 'TITLESECRET-s3-secret',
  push: 'TITLESECRET-push'
}

for (const workers of [1, 2]) {
  t.test(`--workers ${workers}: the primary's command line shows the command, not the secrets`, async t => {
    // Port 0: the system's pick, shared by the workers; the test reads processes, not answers.
    const served = run(['serve', '--data', testdir(t), '--port', '0', '--s3-port', '0', '--workers', String(workers),
      '--token', secrets.token, `--api-token=${secrets.apiToken}`, '--api-email', 'me@example.com', '--api-key', secrets.apiKey,
      '--s3-access-key-id', 'TITLEKEYID', '--s3-secret-access-key', secrets.s3Secret,
      '--queue-push', `events=http://127.0.0.1:9/hook?token=${secrets.push}`, '--log-level', 'info'])
    t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
    await serving(served)
    const shown = commandLine(served.child.pid!)
    for (const [name, secret] of Object.entries(secrets)) t.notOk(shown.includes(secret), `no ${name} in ${JSON.stringify(shown)}`)
    t.equal(shown, 'fsbucket serve', 'the command alone')
    served.child.kill('SIGTERM')
    t.equal(await served.exited, 0)
  })
}

t.test('without a secret flag the command line stays as it was', async t => {
  const dataDir = testdir(t)
  const served = run(['serve', '--data', dataDir, '--port', '0', '--s3-port', '0', '--workers', '1', '--log-level', 'info'])
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await serving(served)
  t.match(commandLine(served.child.pid!), new RegExp(`fsbucket\\.js serve --data ${dataDir} --port 0`), 'ps shows the flags')
  served.child.kill('SIGTERM')
  t.equal(await served.exited, 0)
})
