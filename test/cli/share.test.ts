/**
 * `fsbucket share` against a running `fsbucket serve` on the same data
 * directory, the links used by the real curl: a download link gives the
 * object's bytes, an upload link stores a file; a link edited to name
 * another key, tampered with, past its `--expires`, or whose token was
 * revoked answers 403. And the pure parts: the expiry's forms and its limit,
 * the endpoint's forms, shell quoting.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { parseS3Endpoint, s3EndpointOrigin, shareSeconds } from '../../src/cli/share.js'
import { curlCommand as commandFor, shellQuote } from '../../src/doors/share-links.js'
import { localAccount } from '../../src/mgmt/routes/accounts.js'
import { testdir } from '../testdir.js'
import { answering, bin, call, freePort, run, within } from '../server/serve-process.js'

interface Ran { code: number | string, stdout: string, stderr: string }

async function cli (args: string[]): Promise<Ran> {
  const served = run(args)
  const code = await within(served.exited, 30_000, args.join(' '))
  return { code, stdout: served.stdout(), stderr: served.stderr() }
}

/** curl's HTTP status for `args` (the body goes where args say, or nowhere). */
async function curl (args: string[]): Promise<number> {
  return await new Promise((resolve, reject) => {
    execFile('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', ...args], (err, stdout) => {
      if (stdout === '') reject(err ?? new Error('curl printed no status'))
      else resolve(Number(stdout))
    })
  })
}

/** curl run as the printed command line says, with -w for the status. */
async function curlCommand (line: string, cwd: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', `${line} -s -w '%{http_code}'`], { cwd }, (err, stdout) => {
      if (stdout === '') reject(err ?? new Error('curl printed no status'))
      else resolve(Number(stdout.slice(-3)))
    })
  })
}

async function eventually (check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

t.test('--expires: the token forms, at most 7 days', async t => {
  const now = new Date('2027-01-01T00:00:00Z')
  const cases: Array<[string, number | RegExp]> = [
    ['1h', 3600],
    ['90s', 90],
    ['15m', 900],
    ['7d', 604_800],
    ['2027-01-02T00:00:00Z', 86_400],
    ['8d', /at most 7 days/],
    ['2027-01-09T00:00:00Z', /at most 7 days/],
    ['0s', /expected a duration/],
    ['soon', /expected a duration/],
    ['2026-12-31T00:00:00Z', /expected a duration/]
  ]
  for (const [text, want] of cases) {
    const got = shareSeconds(text, now)
    if (typeof want === 'number') t.equal(got, want, text)
    else t.match(got, want, text)
  }
})

t.test('--s3-endpoint: an http(s) origin', async t => {
  t.equal(parseS3Endpoint('http://127.0.0.1:8788').origin, 'http://127.0.0.1:8788')
  t.equal(parseS3Endpoint('https://s3.example.test/').origin, 'https://s3.example.test')
  t.equal(s3EndpointOrigin('https://s3.example.test:8443/'), 'https://s3.example.test:8443')
  for (const bad of ['http://u:p@a', 'http://u@a', 'http://u:p@[bad']) t.throws(() => s3EndpointOrigin(bad), { message: /must not hold credentials/ }, bad)
  for (const bad of ['ftp://x', 'not a url', 'http://a/b', 'http://u:p@a', 'http://a/?x=1']) t.throws(() => parseS3Endpoint(bad), bad)
})

t.test('shell quoting', async t => {
  t.equal(shellQuote('a b'), "'a b'")
  t.equal(shellQuote("it's"), "'it'\\''s'")
  // Control characters are written as escapes, never raw: the printed command recolours no terminal and fakes no line.
  const keys = ['\u001b[31mred\nline.txt', "tab\tand 'quote' and \\back", 'c1\u0085x', 'del\u007f']
  for (const key of keys) {
    const quoted = shellQuote(key)
    t.notMatch(quoted, /[\u0000-\u001f\u007f-\u009f]/, `${JSON.stringify(key)}: printed as plain text`)
    const printed = await new Promise<string>((resolve, reject) => {
      execFile('bash', ['-c', `printf '%s' ${quoted}`], (err, stdout) => { if (err !== null) reject(new Error(err.message)); else resolve(stdout) })
    })
    t.equal(printed, key, `${JSON.stringify(key)}: bash reads back the same key`)
  }
  t.equal(commandFor('GET', 'a/nul\u0000x', 'http://h/b/k'), "curl -o 'download' 'http://h/b/k'", 'no file name holds U+0000')
})

t.test('the curl command of a key with dot segments sends the path as signed', async t => {
  const url = 'http://127.0.0.1:8788/b/k?X-Amz-Signature=0'
  t.equal(commandFor('GET', 'dir/photo.jpg', url), `curl -o 'photo.jpg' '${url}'`, 'no flag for a plain key')
  t.equal(commandFor('GET', 'a/../b.txt', url), `curl --path-as-is -o 'b.txt' '${url}'`)
  t.equal(commandFor('PUT', './c', url), `curl --path-as-is -T 'c' '${url}'`)
  t.equal(commandFor('GET', 'a/..', url), `curl --path-as-is -o 'download' '${url}'`, 'never a file named ..')
  t.equal(commandFor('GET', 'a/.', url), `curl --path-as-is -o 'download' '${url}'`)
  t.equal(commandFor('GET', 'a/..b/c', url), `curl -o 'c' '${url}'`, 'dots inside a segment are no dot segment')
  t.equal(commandFor('GET', 'a/-', url), `curl -o 'download' '${url}'`, 'never -o - (stdout)')
  t.equal(commandFor('PUT', '-', url), `curl -T 'download' '${url}'`, 'never -T - (stdin)')
  const slashed = 'http://127.0.0.1:8788/b/a/./d/?X-Amz-Signature=0'
  t.equal(commandFor('PUT', 'a/./d/', slashed), `curl --path-as-is --request-target '/b/a/./d/?X-Amz-Signature=0' -T 'd' '${slashed}'`, 'an upload to a key ending in / names its target, dots kept')
  t.equal(commandFor('GET', 'a/d/', slashed), `curl -o 'd' '${slashed}'`, 'a download needs no target')
  for (const origin of ['http://[::1]:8788', 'https://s3.example.test', 'https://s3.example.test:8443']) {
    const at = `${origin}/b/d/?X-Amz-Credential=k%2F20270101%2Fauto%2Fs3%2Faws4_request`
    t.equal(commandFor('PUT', 'd/', at), `curl --request-target '/b/d/?X-Amz-Credential=k%2F20270101%2Fauto%2Fs3%2Faws4_request' -T 'd' '${at}'`, `the target behind ${origin}`)
  }
})

t.test('share links against a running server, used by curl', async t => {
  const data = testdir(t)
  const port = await freePort()
  const s3Port = await freePort()
  const server = run(['serve', '--data', data, '--port', String(port), '--s3-port', String(s3Port), '--workers', '1', '--fsync', 'off',
    '--log-level', 'warn', '--token', 'admin-token-of-the-test'])
  t.teardown(async () => { server.child.kill('SIGKILL'); await server.exited })
  await answering(port, server)
  await answering(s3Port, server)
  const admin = { authorization: 'Bearer admin-token-of-the-test' }
  const body = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251))
  t.equal((await call(port, 'PUT', '/default/dir/photo%201.bin', body, admin)).status, 200)
  t.equal((await call(port, 'PUT', '/default/other.txt', 'other', admin)).status, 200)
  const endpoint = `http://127.0.0.1:${s3Port}`
  const share = async (key: string, ...more: string[]): Promise<{ url: string, command: string, id: string, stderr: string }> => {
    const ran = await cli(['share', `fsb://default/${key}`, '--data', data, ...more])
    t.equal(ran.code, 0, ran.stderr)
    const [url, command] = ran.stdout.trim().split('\n')
    return { url, command, id: /token ([0-9a-f]{32})/.exec(ran.stderr)?.[1] ?? '', stderr: ran.stderr }
  }

  // The endpoint comes from the variable when no flag names it.
  const ran = await cli(['share', 'fsb://default/dir/photo 1.bin', '--data', data, '--expires', '10m'])
  t.match(ran.stdout, /^http:\/\/127\.0\.0\.1:8788\/default\/dir\/photo%201\.bin\?/, 'the serve defaults by default')
  const viaEnv = run(['share', 'fsb://default/other.txt', '--data', data], { env: { FSBUCKET_S3_ENDPOINT: endpoint } })
  t.equal(await viaEnv.exited, 0)
  t.match(viaEnv.stdout(), `${endpoint}/default/other.txt?`, 'FSBUCKET_S3_ENDPOINT names the endpoint')

  const download = await share('dir/photo 1.bin', '--s3-endpoint', endpoint)
  t.match(download.url, /X-Amz-Expires=3600&/, 'an hour by default')
  t.match(download.command, /^curl -o 'photo 1\.bin' '/)
  const list = JSON.parse((await cli(['token', 'list', '--data', data])).stdout) as Array<{ id: string, name: string, permission: string, buckets: string[] }>
  t.match(list.find(token => token.id === download.id), { name: 'share default/dir/photo 1.bin', permission: 'object-read-only', buckets: ['default'] }, 'a read-only token for the bucket')
  const out = testdir(t)
  t.equal(await curlCommand(download.command, out), 200, 'the printed curl command downloads at once')
  t.same(await readFile(path.join(out, 'photo 1.bin')), body, 'the object\'s bytes')

  const otherKey = download.url.replace('/default/dir/photo%201.bin?', '/default/other.txt?')
  t.equal(await curl([otherKey]), 403, 'the link edited to name another key of the bucket fails its signature')
  const signature = /X-Amz-Signature=([0-9a-f]+)/.exec(download.url)?.[1] ?? ''
  const tampered = download.url.replace(signature, `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`)
  t.equal(await curl([tampered]), 403, 'a tampered signature')
  t.equal(await curl([download.url.replace('X-Amz-Expires=3600', 'X-Amz-Expires=3599')]), 403, 'a changed expiry')
  t.equal(await curl(['-X', 'PUT', '--data-binary', 'x', download.url]), 403, 'a download link does not upload')

  const upload = await share('new/upload.txt', '--upload', '--s3-endpoint', endpoint)
  t.match(upload.command, /^curl -T 'upload\.txt' '/)
  await writeFile(path.join(out, 'upload.txt'), 'uploaded through a share link\n')
  t.equal(await curlCommand(upload.command, out), 200, 'the printed curl -T command uploads')
  const stored = await call(port, 'GET', '/default/new/upload.txt', undefined, admin)
  t.equal(stored.status, 200)
  t.equal(stored.body, 'uploaded through a share link\n', 'the object is stored')
  t.equal(await curl([upload.url]), 403, 'an upload link does not download')

  // A key ending in `/` (which the management API and the console link, and `share` does not): plain `curl -T` appends
  // the file's name to the path, and the signature fails.
  const made = await call(port, 'POST', `/client/v4/accounts/${localAccount.id}/r2/buckets/default/share-links`,
    JSON.stringify({ key: 'new/folder/', method: 'PUT' }), { ...admin, 'content-type': 'application/json' })
  t.equal(made.status, 200, made.body)
  const { url: folderUrl, curl: folderCommand } = (JSON.parse(made.body) as { result: { url: string, curl: string } }).result
  const folder = { url: folderUrl, command: folderCommand }
  t.match(folder.command, /^curl --request-target '\/default\/new\/folder\/\?X-Amz-[^']+' -T 'folder' '/)
  await writeFile(path.join(out, 'folder'), 'a folder marker\n')
  t.equal(await curlCommand(folder.command, out), 200, 'the printed command uploads to the key ending in /')
  t.equal((await call(port, 'GET', '/default/new/folder/', undefined, admin)).body, 'a folder marker\n', 'under that key')
  t.equal(await curl(['-T', path.join(out, 'folder'), folder.url]), 403, 'plain curl -T asks for another path')

  // A key with dot segments: the printed command sends the path as signed, where plain curl would resolve it (403).
  t.equal((await call(port, 'PUT', '/default/dots/../x.bin', 'dotted', admin)).status, 200)
  const dotted = await share('dots/../x.bin', '--s3-endpoint', endpoint)
  t.match(dotted.command, /^curl --path-as-is -o 'x\.bin' '/)
  t.match(dotted.stderr, /"\." or "\.\." segment: curl needs --path-as-is/, 'stderr says why')
  t.notMatch(download.stderr, /segment/, 'and says nothing of a plain key')
  t.equal(await curlCommand(dotted.command, out), 200, 'the printed command downloads the dotted key')
  t.equal(await readFile(path.join(out, 'x.bin'), 'utf8'), 'dotted')
  t.equal(await curl([dotted.url]), 403, 'plain curl resolves the dots and asks for another path than the signed one')

  const brief = await share('other.txt', '--expires', '2s', '--s3-endpoint', endpoint)
  t.equal(await curl([brief.url]), 200, 'a 2-second link works at first (it lives 2 s from the next whole second: at least 2 s, at most 3)')
  await new Promise(resolve => setTimeout(resolve, 3100))
  t.equal(await curl([brief.url]), 403, 'and answers 403 once expired')

  t.equal((await cli(['token', 'revoke', download.id, '--data', data])).code, 0)
  t.ok(await eventually(async () => await curl([download.url]) === 403), 'revoking its token ends the link')
})

t.test('refusals', async t => {
  const data = testdir(t)
  t.equal((await cli(['bucket', 'create', 'photos', '--data', data])).code, 0)
  const cases: Array<[string[], RegExp]> = [
    [['fsb://nobucket/a'], /: bucket "nobucket" does not exist$/m],
    [['fsb://photos'], /expected an object/],
    [['fsb://photos/dir/'], /expected an object/],
    [['fsb://photos/a', '--expires', '8d'], /at most 7 days/],
    [['fsb://photos/a', '--expires', 'soon'], /expected a duration/],
    [['fsb://photos/a', '--s3-endpoint', 'ftp://x'], /expected an http/]
  ]
  for (const [args, message] of cases) {
    const ran = await cli(['share', ...args, '--data', data])
    t.not(ran.code, 0, args.join(' '))
    t.match(ran.stderr, message, args.join(' '))
    t.equal(ran.stdout, '', 'no link')
  }
  t.same(JSON.parse((await cli(['token', 'list', '--data', data])).stdout), [], 'and no token made')
})

t.test('credentials in --s3-endpoint (or FSBUCKET_S3_ENDPOINT) are refused without repeating the value', async t => {
  const data = testdir(t)
  t.equal((await cli(['bucket', 'create', 'photos', '--data', data])).code, 0)
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [['--s3-endpoint', 'http://key:S3SECRET@127.0.0.1:8788'], {}, "option '--s3-endpoint' (or FSBUCKET_S3_ENDPOINT) is invalid: the URL must not hold credentials (user:password@)"],
    [['--s3-endpoint', 'http://key:S3SECRET@[bad'], {}, 'the URL must not hold credentials'],
    [['--s3-endpoint', 'ftp://key:S3SECRET@x'], {}, 'the URL must not hold credentials'],
    [['--s3-endpoint', 'S3SECRET is no URL'], {}, "option '--s3-endpoint' (or FSBUCKET_S3_ENDPOINT) is invalid: expected an http"],
    [[], { FSBUCKET_S3_ENDPOINT: 'https://key:S3SECRET@s3.example.test' }, 'the URL must not hold credentials']
  ]
  for (const [args, env, message] of cases) {
    const served = run(['share', 'fsb://photos/a', '--data', data, ...args], { env })
    const code = await within(served.exited, 30_000, args.join(' '))
    const what = args.join(' ') || JSON.stringify(env)
    t.equal(code, 1, what)
    t.match(served.stderr(), message, what)
    t.notMatch(served.stderr(), /S3SECRET/, `${what}: the value is not repeated`)
    t.equal(served.stdout(), '', 'no link')
  }
  t.same(JSON.parse((await cli(['token', 'list', '--data', data])).stdout), [], 'and no token made')
})

t.test('a data directory that does not exist is refused by the commands that read one, and never made', async t => {
  const typo = path.join(testdir(t), 'dta')
  const commands = [
    ['share', 'fsb://photos/a'], ['token', 'list'], ['token', 'create', '--name', 'n', '--permission', 'object-read-only'], ['token', 'revoke', 'abc'],
    ['bucket', 'list'], ['bucket', 'delete', 'photos'], ['sweep'], ['invite', 'list'], ['zone', 'list']
  ]
  for (const args of commands) {
    const ran = await cli([...args, '--data', typo])
    t.equal(ran.code, 1, args.join(' '))
    t.match(ran.stderr, `no data directory ${typo}`, args.join(' '))
    t.equal(ran.stdout, '', `${args.join(' ')}: prints nothing else (no token)`)
    t.notOk(existsSync(typo), `${args.join(' ')}: and makes no directory`)
  }
  t.equal((await cli(['bucket', 'create', 'photos', '--data', typo])).code, 0, 'bucket create makes it')
  t.equal((await cli(['token', 'list', '--data', typo])).code, 0, 'then the others work')
})

t.test('a reader that goes away (| head -c 0) ends share quietly', async t => {
  const data = testdir(t)
  t.equal((await cli(['bucket', 'create', 'photos', '--data', data])).code, 0)
  const piped = await new Promise<{ stdout: string, stderr: string }>((resolve, reject) => {
    execFile('bash', ['-c', `'${process.execPath}' '${bin}' share fsb://photos/a --data '${data}' | head -c 0; echo "rc=\${PIPESTATUS[0]}"`], (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`bash failed: ${err.message}`))
      else resolve({ stdout, stderr })
    })
  })
  t.equal(piped.stdout, 'rc=0\n', 'exit 0, as cat does')
  t.notMatch(piped.stderr, /Unhandled|EPIPE|at /, 'no stack trace')
  t.match(piped.stderr, /^signed with token [0-9a-f]{32} /, 'the token is still named, for revoking')
})
