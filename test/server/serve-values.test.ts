/**
 * `fsbucket serve`'s refusals of values it cannot serve with, each one line
 * naming the flag, and never repeating a secret: an empty --host, a token
 * with whitespace (an empty one is none), credentials in a --queue-push or
 * --s3-endpoint URL, a bad --default-bucket, the same port twice, half a
 * management key pair, a routes.json that is a directory, a --host name
 * under localhost that resolves to a network address; and `migrate --from`
 * a directory that does not exist.
 */
import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { answering, bin, call, freePort, run, within } from './serve-process.js'

const quiet = ['--fsync', 'off', '--log-level', 'warn', '--s3-port', '0']

/** Runs `serve` with `args` (and `env`), expecting a refusal: exit 1 and stderr, before anything is made in `data`. */
async function refused (t: Test, args: string[], env: NodeJS.ProcessEnv = {}, workers = '1'): Promise<string> {
  const data = path.join(testdir(t), 'data')
  const served = run(['serve', '--data', data, '--port', String(await freePort()), '--workers', workers, ...quiet, ...args], { env })
  t.teardown(() => { served.child.kill('SIGKILL') })
  t.equal(await within(served.exited, 30_000, `${args.join(' ')}: exit`), 1, `${args.join(' ')}: refused`)
  t.notOk(existsSync(path.join(data, 'default')), 'no bucket was made')
  return served.stderr()
}

t.test('an empty --host (or FSBUCKET_HOST=) is refused: it would listen on every interface', async t => {
  t.match(await refused(t, [], { FSBUCKET_HOST: '' }), /option '-H, --host <address>' value '' from env 'FSBUCKET_HOST' is invalid\. expected an address or host name/)
  t.match(await refused(t, ['--host', ' ']), /option '-H, --host <address>' argument ' ' is invalid/)
})

t.test('a token with whitespace is refused without being shown; an empty one is none', async t => {
  for (const [args, env] of [[['--token', 'tok en-SECRET']], [[], { FSBUCKET_TOKEN: 'token-SECRET\n' }]] as Array<[string[], NodeJS.ProcessEnv?]>) {
    const stderr = await refused(t, args, env)
    t.match(stderr, "error: option '--token' (or FSBUCKET_TOKEN) is invalid: the token must not contain whitespace")
    t.notMatch(stderr, 'SECRET', 'the token is not repeated')
  }
  const port = await freePort()
  const served = run(['serve', '--data', path.join(testdir(t), 'data'), '--port', String(port), '--workers', '1', ...quiet], { env: { FSBUCKET_TOKEN: '' } })
  t.teardown(() => { served.child.kill('SIGKILL') })
  await answering(port, served)
  t.match(served.stdout(), 'no token configured: accepting writes and private reads without credentials')
  t.equal((await call(port, 'PUT', '/default/k', 'x')).status, 200, 'on loopback, no token: writes are accepted')
  served.child.kill('SIGTERM')
  t.equal(await within(served.exited, 30_000, 'exit'), 0)
})

t.test('credentials in a --queue-push or --s3-endpoint URL are refused, and never repeated', async t => {
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [['--queue-push', 'evq=http://app:PUSHSECRET@127.0.0.1:9/hook'], {}, 'queue "evq": the URL must not hold credentials (user:password@)'],
    [[], { FSBUCKET_QUEUE_PUSH: 'evq=https://app:PUSHSECRET@127.0.0.1:9/hook' }, 'the URL must not hold credentials'],
    [['--queue-push', 'evq=http://app:PUSH SECRET@[bad/hook'], {}, 'queue "evq": what follows = is not a URL'],
    [['--queue-push', 'http://app:PUSHSECRET@127.0.0.1:9/hook'], {}, 'expected <queue>=<url>'],
    [['--s3-endpoint', 'http://key:S3SECRET@127.0.0.1:8788'], {}, "option '--s3-endpoint' (or FSBUCKET_S3_ENDPOINT) is invalid: the URL must not hold credentials"],
    [[], { FSBUCKET_S3_ENDPOINT: 'http://key:S3SECRET@[bad' }, 'the URL must not hold credentials']
  ]
  for (const [args, env, message] of cases) {
    const stderr = await refused(t, args, env)
    t.match(stderr, message)
    t.notMatch(stderr, /SECRET/, 'the password is not repeated')
  }
})

t.test('an empty --data, or one that is a loop of symbolic links, is refused in one line naming it', async t => {
  for (const workers of ['1', '2']) {
    const empty = (await refused(t, ['--data', ''], {}, workers)).trim()
    t.equal(empty, '--data (FSBUCKET_DATA) must not be empty: give \'.\' for the working directory', `--workers ${workers}: the flag named, not a library function`)
  }
  const loop = path.join(testdir(t), 'loop')
  symlinkSync(loop, loop)
  const looped = (await refused(t, ['--data', loop])).trim().split('\n')
  t.equal(looped.length, 1, 'one line')
  t.match(looped[0], `${loop}: too many levels of symbolic links (ELOOP)`)
})

t.test('--public names buckets and --s3-domain domains: a value that is none is refused, naming it, where it would never match', async t => {
  t.match(await refused(t, ['--public', 'photos,,BAD']), /option '--public <buckets>' argument 'photos,,BAD' is invalid\. expected comma-separated bucket names .*: "BAD" is none/)
  t.match(await refused(t, [], { FSBUCKET_PUBLIC: 'photos,x' }), /"x" is none/, 'from the variable too')
  t.match(await refused(t, ['--s3-domain', 's3.example.test,bad domain']), /option '--s3-domain <domains>' argument 's3\.example\.test,bad domain' is invalid\. expected comma-separated domain names such as s3\.example\.test: "bad domain" is none/)
  t.match(await refused(t, ['--s3-domain', 'x..y']), /"x\.\.y" is none/)
})

t.test('a data directory inside another one (a bucket\'s directory, its readable view) is refused, naming the outer one', async t => {
  const outer = path.join(testdir(t), 'data')
  mkdirSync(path.join(outer, '.fsbucket'), { recursive: true })
  mkdirSync(path.join(outer, 'photos', '.fsbucket'), { recursive: true })
  for (const [inner, workers] of [[path.join(outer, 'photos'), '1'], [path.join(outer, 'photos', 'albums'), '2']]) {
    const served = run(['serve', '--data', inner, '--port', String(await freePort()), '--workers', workers, ...quiet])
    t.teardown(() => { served.child.kill('SIGKILL') })
    t.equal(await within(served.exited, 30_000, `${inner}: exit`), 1, `${inner}: refused`)
    t.equal(served.stderr().trim(), `the data directory ${inner} is inside fsbucket's data directory ${outer} (a bucket's directory or its readable view): serve ${outer}, or a directory outside it`)
    t.notOk(existsSync(path.join(inner, 'default')), 'no bucket was made in it')
  }
})

t.test('a bad --default-bucket names the flag, even when the data directory has buckets', async t => {
  const data = path.join(testdir(t), 'data')
  mkdirSync(path.join(data, 'photos'), { recursive: true })
  const served = run(['serve', '--data', data, '--port', String(await freePort()), ...quiet, '--default-bucket', 'Not_A_Bucket'])
  t.teardown(() => { served.child.kill('SIGKILL') })
  t.equal(await within(served.exited, 30_000, 'exit'), 1)
  t.match(served.stderr(), "option '--default-bucket <name>' argument 'Not_A_Bucket' is invalid. expected a bucket name")
})

t.test('--port and --s3-port the same, half a management key pair, a routes.json that is a directory: one line each, before anything is made', async t => {
  for (const workers of ['1', '2']) {
    const port = String(await freePort())
    const data = path.join(testdir(t), 'data')
    const same = run(['serve', '--data', data, '--port', port, '--workers', workers, '--fsync', 'off', '--s3-port', port])
    t.teardown(() => { same.child.kill('SIGKILL') })
    t.equal(await within(same.exited, 30_000, 'exit'), 1)
    t.equal(same.stderr().trim(), `cannot listen: the HTTP gateway and the S3 API ports are both ${port} (--port, --s3-port): each needs its own`)
    t.notOk(existsSync(data), `--workers ${workers}: the data directory was not even made`)
    for (const half of [['--api-email', 'ops@example.test'], ['--api-key', 'k'.repeat(37)]]) {
      t.equal((await refused(t, half, {}, workers)).trim(), '--api-email and --api-key (FSBUCKET_API_EMAIL, FSBUCKET_API_KEY) go together', `--workers ${workers}: ${half[0]} alone`)
    }
    const routed = path.join(testdir(t), 'routed')
    mkdirSync(path.join(routed, 'routes.json'), { recursive: true })
    const dir = run(['serve', '--data', routed, '--port', String(await freePort()), '--workers', workers, ...quiet])
    t.teardown(() => { dir.child.kill('SIGKILL') })
    t.equal(await within(dir.exited, 30_000, 'exit'), 1)
    t.equal(dir.stderr().trim(), `cannot read ${path.join(routed, 'routes.json')}: is a directory (EISDIR)`)
  }
})

t.test('migrate --from a directory that does not exist names it', async t => {
  const missing = path.join(testdir(t), 'missing')
  const migrate = run(['migrate', '--from', missing, '--catalog', 'postgres://fsbucket@127.0.0.1:9/fsbucket'])
  t.teardown(() => { migrate.child.kill('SIGKILL') })
  t.equal(await within(migrate.exited, 30_000, 'exit'), 1)
  t.equal(migrate.stderr().trim(), `migrate: cannot read the data directory ${missing} (--from): does not exist (ENOENT)`)
})

/** An address of this machine that is not loopback (the name is mapped to it in a private /etc/hosts). */
const networkAddress = Object.values(networkInterfaces()).flat().find(a => a !== undefined && !a.internal && a.family === 'IPv4')?.address

/** Whether this process may make a mount namespace (root, unshare(1)). */
function mayUnshare (): boolean {
  try {
    execFileSync('unshare', ['-m', 'true'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

t.test('a --host name under localhost that resolves to a network address is refused, not taken for loopback', { skip: networkAddress === undefined || !mayUnshare() ? 'needs a network address and unshare -m (root)' : false }, async t => {
  const dir = testdir(t)
  const hosts = path.join(dir, 'hosts')
  writeFileSync(hosts, `127.0.0.1 localhost\n${networkAddress ?? ''} files.localhost\n`)
  for (const workers of ['1', '2']) {
    const data = path.join(dir, `data-${workers}`)
    // `exec`: the signal and the exit status are the server's. NODE_OPTIONS unset as run() does (tap's hooks).
    const script = 'mount --bind "$1" /etc/hosts && shift && exec /usr/bin/env -u NODE_OPTIONS "$@"'
    const inNamespace = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', hosts, process.execPath, bin, 'serve', '--data', data,
      '--port', String(await freePort()), '--workers', workers, '--host', 'files.localhost', ...quiet], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    inNamespace.stderr.on('data', chunk => { stderr += String(chunk) })
    t.teardown(() => { inNamespace.kill('SIGKILL') })
    const code = await within(new Promise(resolve => inNamespace.once('exit', code => resolve(code))), 30_000, 'exit')
    t.equal(code, 1, `--workers ${workers}: refused`)
    t.equal(stderr.trim(), `--host files.localhost resolves to ${networkAddress ?? ''}, which is not loopback: a localhost name must name this machine's loopback interface; give the address to listen on instead (and --token for a network address)`)
    t.notOk(existsSync(path.join(data, 'default')), 'no bucket was made')
  }
})
