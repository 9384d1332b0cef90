/**
 * How the object commands fail: one line on stderr naming the command and
 * its target, exit code 1, a stack only with --debug; keys that cannot be
 * local paths are skipped, never written outside the destination; the
 * transport chosen by flags and variables; --version.
 */
import t, { type Test } from 'tap'
import { existsSync, promises as fsp } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { openRegistry } from '../../src/index.js'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { type Result, bin, cleanEnv, httpCli, localCli, root, runBin, token } from './fixture.js'

const exec = promisify(execFile)

const invalidName = '"Bad_Name" is not a valid bucket name: The specified bucket name is not valid. (3 to 63 lowercase letters, digits and hyphens)'

/** A missing bucket or an invalid name is said to be that, not blamed on the local file of the command line: local and over HTTP alike. */
const bucketCases: Array<[string[], string]> = [
  [['cp', 'a.txt', 'fsb://nosuchbucket/'], 'fsbucket: cp a.txt: bucket "nosuchbucket" does not exist\n'],
  [['cp', 'a.txt', 'fsb://Bad_Name/'], `fsbucket: cp a.txt: ${invalidName}\n`],
  [['cp', 'fsb://Bad_Name/x', 'out.txt'], `fsbucket: cp fsb://Bad_Name/x: ${invalidName}\n`],
  [['stat', 'fsb://nosuchbucket'], 'fsbucket: stat fsb://nosuchbucket: bucket "nosuchbucket" does not exist\n']
]

/** A bad flag value: its one line and a hint, not the whole help after it. */
async function badFlagValue (t: Test, run: (args: string[]) => Promise<Result>): Promise<void> {
  const badParallel = await run(['cp', '--parallel', 'lots', 'a.txt', 'fsb://photos/a'])
  t.equal(badParallel.code, 1)
  t.equal(badParallel.stderr, "error: option '--parallel <n>' argument 'lots' is invalid. expected an integer from 1 to 64\n(add --help for usage)\n", 'one line and a hint, no help')
}

// Dozens of child processes, each starting Node and the program: on a loaded
// machine that can outlast tap's default 300 s per file.
t.setTimeout(15 * 60 * 1000)

t.test('over the library', async t => {
  const cli = await localCli(t)
  const { run, work, dataDir } = cli
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const odd = await registry.open('photos')
  await odd!.put('ok/a.txt', 'a')
  await odd!.put('ok/../../escape.txt', 'evil')
  await odd!.put('ok//double', 'x')
  await odd!.put('ok/folder/', '')
  await odd!.put('large.bin', Buffer.alloc(4 * 1024 * 1024, 1))
  await registry.close()
  await fsp.mkdir(path.join(work, 'dir'))
  await fsp.writeFile(path.join(work, 'a.txt'), 'a')

  const cases: Array<[string[], string]> = [
    [['cat', 'fsb://photos/missing'], 'fsbucket: cat fsb://photos/missing: no such key\n'],
    [['cat', 'fsb://nobucket/x'], 'fsbucket: cat fsb://nobucket/x: bucket "nobucket" does not exist\n'],
    [['stat', 'fsb://photos/missing'], 'fsbucket: stat fsb://photos/missing: no such key\n'],
    [['cp', 'missing.txt', 'fsb://photos/x'], 'fsbucket: cp missing.txt: no such file or directory\n'],
    [['cp', 'dir', 'fsb://photos/'], 'fsbucket: cp dir: is a directory (use -r)\n'],
    [['cp', 'a.txt', 'b.txt'], 'fsbucket: cp a.txt: copy needs an fsb:// location on one side at least (and - only opposite one)\n'],
    [['cp', 'fsb://photos', 'here'], 'fsbucket: cp fsb://photos: fsb://photos names a bucket, not a key (use -r to copy its objects)\n'],
    [['mb', 'fsb://Bad_Name'], `fsbucket: mb fsb://Bad_Name: ${invalidName}\n`],
    [['ls', 'fsb://nobucket'], 'fsbucket: ls fsb://nobucket: bucket "nobucket" does not exist\n'],
    ...bucketCases
  ]
  for (const [args, line] of cases) {
    const result = await run(args)
    t.equal(result.stderr, line, args.join(' '))
    t.equal(result.code, 1, `${args.join(' ')} exits 1`)
    t.equal(result.out, '', 'nothing on stdout')
  }

  const debug = await run(['cat', '--debug', 'fsb://photos/missing'])
  t.match(debug.stderr, /^fsbucket: cat fsb:\/\/photos\/missing: no such key\n.*\n\s+at /, '--debug adds the stack')

  await badFlagValue(t, run)
  const badSize = await run(['cp', '--part-size', '5x', 'a.txt', 'fsb://photos/a'])
  t.equal(badSize.code, 1)
  t.match(badSize.stderr, /option '--part-size <size>' argument '5x' is invalid\. expected a size such as 8MiB/)

  const unsafe = await run(['cp', '-r', 'fsb://photos/ok', 'out'])
  t.equal(unsafe.code, 1, 'a skipped key fails the command')
  t.same(unsafe.stderr.trim().split('\n').sort(), [ // and the folder marker ok/folder/ is skipped without a word
    'fsbucket: cp fsb://photos/ok/../../escape.txt: not a safe local path, skipped',
    'fsbucket: cp fsb://photos/ok//double: not a safe local path, skipped'
  ])
  t.equal(unsafe.out, 'download: fsb://photos/ok/a.txt -> out/a.txt\n', 'the other keys are copied')
  await t.rejects(fsp.stat(path.join(work, 'escape.txt')), 'nothing written outside the destination')
  await t.rejects(fsp.stat(path.join(work, '..', 'escape.txt')))

  const head = await exec('bash', ['-c', `'${process.execPath}' '${bin}' cat fsb://photos/large.bin --data '${dataDir}' | head -c 10; echo " rc=\${PIPESTATUS[0]}"`], { cwd: work, env: cleanEnv() })
  t.equal(head.stdout, `${'\u0001'.repeat(10)} rc=0\n`, 'cat into a reader that goes away (| head) ends quietly')
  t.equal(head.stderr, '')

  if (existsSync('/dev/full')) {
    for (const args of [['cat', 'fsb://photos/large.bin'], ['ls', 'fsb://photos']]) {
      const full = await exec('bash', ['-c', `'${process.execPath}' '${bin}' ${args.join(' ')} --data '${dataDir}' > /dev/full; echo "rc=$?"`], { cwd: work, env: cleanEnv() })
      t.equal(full.stdout, 'rc=1\n', `${args[0]} onto a full disk exits 1`)
      t.equal(full.stderr, `fsbucket: ${args.join(' ')}: cannot write to standard output: no space left on the device\n`, 'with one line, no stack')
    }
  }

  const noData = await runBin(['ls', '--data', 'nowhere'], { cwd: work })
  t.equal(noData.stderr, 'fsbucket: ls: no data directory nowhere (set --data or FSBUCKET_DATA, or --endpoint for a server)\n')
  await t.rejects(fsp.stat(path.join(work, 'nowhere')), 'a mistyped --data is not created')

  const version = await runBin(['--version'], { cwd: work })
  const pkg = JSON.parse(await fsp.readFile(path.join(root, 'package.json'), 'utf8')) as { version: string }
  t.equal(version.out, `${pkg.version}\n`)
})

t.test('over HTTP', async t => {
  const cli = await httpCli(t)
  const endpoint = cli.flags[cli.flags.indexOf('--endpoint') + 1]
  t.equal((await cli.run(['mb', 'fsb://photos'])).code, 0)
  await fsp.writeFile(path.join(cli.work, 'a.txt'), 'a')
  for (const [args, line] of bucketCases) {
    const result = await cli.run(args)
    t.equal(result.stderr, line, `over HTTP: ${args.join(' ')}`)
    t.equal(result.code, 1)
  }
  t.equal((await cli.run(['mb', 'fsb://Bad_Name'])).stderr, `fsbucket: mb fsb://Bad_Name: ${invalidName}\n`, 'over HTTP: mb of an invalid name')
  await badFlagValue(t, cli.run)

  const wrong = await runBin(['ls', 'fsb://photos', '--endpoint', endpoint, '--token', 'wrong'], { cwd: cli.work })
  t.equal(wrong.stderr, 'fsbucket: ls fsb://photos: the server refused the token\n')
  t.equal(wrong.code, 1)
  const none = await runBin(['ls', 'fsb://photos', '--endpoint', endpoint], { cwd: cli.work })
  t.equal(none.stderr, 'fsbucket: ls fsb://photos: the server needs a token (--token or FSBUCKET_TOKEN)\n')

  const server = net.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  await new Promise(resolve => server.close(resolve))
  const closed = await runBin(['ls', '--endpoint', `http://user:secret@127.0.0.1:${port}`], { cwd: cli.work })
  t.equal(closed.stderr, `fsbucket: ls: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`, 'no password of the URL in the line')

  const fromEnv = await runBin(['ls'], { cwd: cli.work, env: { FSBUCKET_ENDPOINT: endpoint, FSBUCKET_TOKEN: token } })
  t.match(fromEnv.out, /fsb:\/\/photos\n$/, 'FSBUCKET_ENDPOINT and FSBUCKET_TOKEN select the server')
  const dataFlag = await runBin(['ls', '--data', cli.work], { cwd: cli.work, env: { FSBUCKET_ENDPOINT: `http://127.0.0.1:${port}` } })
  t.equal(dataFlag.code, 0, '--data given as a flag beats FSBUCKET_ENDPOINT')
  t.equal(dataFlag.out, '', 'the scratch directory has no buckets')
  const both = await runBin(['rm', 'fsb://photos/a', 'fsb://photos/b', '--data', cli.work, '--endpoint', endpoint, '--token', token], { cwd: cli.work })
  t.equal(both.code, 1, '--data and --endpoint both given as flags are refused')
  t.equal(both.stderr, 'error: option \'--endpoint\' cannot be used with option \'--data\' (one names a running gateway, the other a data directory: give one)\n(add --help for usage)\n', 'in one line, once')
  t.equal(both.out, '', 'and nothing is done')
})

t.test('an endpoint that is no fsbucket gateway (200 and {} or HTML to everything) is named, not a JavaScript error', async t => {
  const cli = await localCli(t)
  for (const [what, body] of [['an empty envelope', '{}'], ['a page', '<html>not JSON</html>']]) {
    const server = http.createServer((_request, response) => { response.writeHead(200, { 'content-type': 'application/json' }).end(body) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
    for (const args of [['ls'], ['ls', 'fsb://b'], ['cp', '-', 'fsb://b/k']]) {
      const result = await runBin([...args, '--endpoint', endpoint], { cwd: cli.work, input: Buffer.from('x') })
      t.equal(result.code, 1, `${what}: ${args.join(' ')} exits 1`)
      t.match(result.stderr, `${endpoint} answered without`, `${what}: ${args.join(' ')} names the endpoint`)
      t.notMatch(result.stderr, /Cannot read properties|TypeError|Unexpected token/, `${what}: ${args.join(' ')}: no JavaScript error`)
    }
    await new Promise(resolve => server.close(resolve))
  }
})
