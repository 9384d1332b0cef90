/**
 * `fsbucket serve --memory` as a process: one process whatever the number
 * of cores, both ports serving the same buckets, a start-up line saying
 * nothing is kept, nothing written in the working directory, and clear
 * refusals of what memory cannot honour (workers, a data directory, a
 * catalog), by flag or by variable.
 */
import t from 'tap'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within } from './serve-process.js'

t.test('serve --memory: both ports over real sockets, nothing on disk, one process', async t => {
  const cwd = path.join(testdir(t, { cwd: {} }), 'cwd')
  const [port, s3Port] = [await freePort(), await freePort()]
  // No --workers: the default (one per core) must not fork workers that would each hold buckets of their own.
  const served = run(['serve', '--memory', '--port', String(port), '--s3-port', String(s3Port), '--log-level', 'info'], { cwd })
  t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
  await answering(port, served)

  const put = await call(port, 'PUT', '/default/kept-nowhere.txt', 'in memory')
  t.equal(put.status, 200, put.body)
  t.equal((await call(port, 'GET', '/default/kept-nowhere.txt')).body, 'in memory')
  const s3 = new S3Client({ endpoint: `http://127.0.0.1:${s3Port}`, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: 'fsbucket-dev', secretAccessKey: 'fsbucket-dev-secret' } })
  t.teardown(() => { s3.destroy() })
  const got = await s3.send(new GetObjectCommand({ Bucket: 'default', Key: 'kept-nowhere.txt' }))
  t.equal(await got.Body?.transformToString(), 'in memory', 'the S3 port serves the same buckets')

  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0, 'SIGTERM drains and exits 0')
  const lines = served.stdout().trim().split('\n').map(line => JSON.parse(line) as { msg: string, pid: number, level: number })
  t.ok(lines.some(l => l.level === 40 && /^memory mode: nothing is kept/.test(l.msg)), 'a start-up line says nothing is kept')
  t.same([...new Set(lines.map(l => l.pid))], [served.child.pid], 'every line from the one process: no workers')
  t.same(readdirSync(cwd), [], 'nothing written in the working directory (no ./data)')
})

t.test('serve --memory refuses what memory cannot honour, with one line each', async t => {
  const cwd = testdir(t)
  const cases: Array<{ args: string[], env?: NodeJS.ProcessEnv, message: string }> = [
    { args: ['--workers', '2'], message: '--memory keeps the buckets in one process: it cannot be used with --workers 2 (workers are separate processes and cannot share that memory)' },
    { args: [], env: { FSBUCKET_WORKERS: '3' }, message: '--memory keeps the buckets in one process: it cannot be used with FSBUCKET_WORKERS=3 (workers are separate processes and cannot share that memory)' },
    { args: ['--data', './data'], message: '--memory keeps nothing on disk: it cannot be used with --data ./data' },
    { args: [], env: { FSBUCKET_DATA: '/srv/data' }, message: '--memory keeps nothing on disk: it cannot be used with FSBUCKET_DATA=/srv/data' },
    { args: ['--catalog', 'postgres://localhost/none'], message: '--memory keeps nothing on disk: it cannot be used with --catalog' },
    { args: [], env: { FSBUCKET_CATALOG: 'postgres://localhost/none' }, message: '--memory keeps nothing on disk: it cannot be used with FSBUCKET_CATALOG' }
  ]
  await Promise.all(cases.map(async ({ args, env, message }) => {
    const served = run(['serve', '--memory', '--port', String(await freePort()), '--s3-port', '0', ...args], { env, cwd })
    t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
    t.equal(await within(served.exited, 30_000, 'exit'), 1, `${args.join(' ')} ${JSON.stringify(env ?? {})}: exit 1`)
    t.equal(served.stderr().trim(), message)
  }))
  t.same(readdirSync(cwd), [], 'nothing was created')
})

t.test('serve --memory --workers 1 is fine, and so are FSBUCKET_DATA and FSBUCKET_CATALOG set empty (empty is none)', async t => {
  for (const env of [{}, { FSBUCKET_DATA: '', FSBUCKET_CATALOG: '' }]) {
    const port = await freePort()
    const served = run(['serve', '--memory', '--workers', '1', '--port', String(port), '--s3-port', '0', '--log-level', 'warn'], { cwd: testdir(t), env })
    t.teardown(() => { if (served.child.exitCode === null) served.child.kill('SIGKILL') })
    await answering(port, served)
    t.equal((await call(port, 'PUT', '/default/k', 'v')).status, 200, JSON.stringify(env))
    served.child.kill('SIGTERM')
    t.equal(await within(served.exited, 30_000, 'exit'), 0)
  }
})
