/**
 * Text from a bucket reaches the terminal with its control characters made
 * visible: a key holding `ESC ] 0 ; title BEL` (retitles the terminal), a
 * line feed (fakes a line of output) and a C1 CSI (U+009B, recolours on
 * terminals that obey C1), run through every object command, over both
 * transports, and a hostile server's bucket names and error messages. No
 * line of stdout or stderr holds a raw control character; `--json` gives
 * the key back exactly.
 */
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { bin, cleanEnv, httpCli, localCli, runBin, type Cli, type Result } from './fixture.js'

const exec = promisify(execFile)

// Dozens of child processes, each starting Node and the program.
t.setTimeout(15 * 60 * 1000)

const title = '\u001b]0;pwned\u0007'
const fakeLine = '\nremove: everything'
const csi = '\u009b31m'
/** One key with all three; its last segment is also a file name a download can write. */
const key = `dir/evil${title}${fakeLine}${csi}.txt`
const shown = 'dir/evil\\x1b]0;pwned\\x07\\nremove: everything\\u009b31m.txt'
const shownName = shown.slice('dir/'.length)

/** Any C0 control but the line feeds that end lines, DEL, any C1 control. */
const rawControl = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

function clean (t: Test, result: Result, what: string): void {
  t.notMatch(result.out, rawControl, `${what}: no raw control character on stdout`)
  t.notMatch(result.stderr, rawControl, `${what}: no raw control character on stderr`)
}

async function commands (t: Test, cli: Cli): Promise<void> {
  const { run, work } = cli
  t.equal((await run(['mb', 'fsb://photos', 'fsb://backup'])).code, 0)
  await fsp.writeFile(path.join(work, 'note.txt'), 'hello')

  const up = await run(['cp', 'note.txt', `fsb://photos/${key}`])
  t.equal(up.code, 0, up.stderr)
  clean(t, up, 'cp up')
  t.equal(up.out, `upload: note.txt -> fsb://photos/${shown}\n`, 'one line, the key escaped')

  const grouped = await run(['ls', 'fsb://photos/dir/'])
  clean(t, grouped, 'ls')
  t.match(grouped.out, new RegExp(`^\\S+ +5 +[0-9a-f]{32} {2}${escapeRegExp(shownName)}\\n$`), 'ls: one row')
  const recursive = await run(['ls', '-r', 'fsb://photos'])
  clean(t, recursive, 'ls -r')
  t.equal(recursive.out.split('\n').length, 2, 'ls -r: one row')
  t.ok(recursive.out.includes(shown))
  const json = await run(['ls', '-r', '--json', 'fsb://photos'])
  clean(t, json, 'ls --json')
  t.equal(JSON.parse(json.out).key, key, 'ls --json gives the key exactly')

  const stat = await run(['stat', `fsb://photos/${key}`])
  clean(t, stat, 'stat')
  t.match(stat.out, new RegExp(`^key: +${escapeRegExp(shown)}$`, 'm'))
  const statJson = await run(['stat', '--json', `fsb://photos/${key}`])
  clean(t, statJson, 'stat --json')
  t.equal(JSON.parse(statJson.out).key, key, 'stat --json gives the key exactly')

  const down = await run(['cp', `fsb://photos/${key}`, 'down/'])
  t.equal(down.code, 0, down.stderr)
  clean(t, down, 'cp down')
  t.equal(down.out, `download: fsb://photos/${shown} -> down/${shownName}\n`)
  t.equal(await fsp.readFile(path.join(work, 'down', key.slice('dir/'.length)), 'utf8'), 'hello', 'the file has the key\'s name')

  const tree = await run(['cp', '-r', 'fsb://photos/dir', 'tree'])
  t.equal(tree.code, 0, tree.stderr)
  clean(t, tree, 'cp -r')
  t.equal(tree.out, `download: fsb://photos/${shown} -> tree/${shownName}\n`)

  const copy = await run(['cp', `fsb://photos/${key}`, 'fsb://backup/'])
  t.equal(copy.code, 0, copy.stderr)
  clean(t, copy, 'cp between buckets')
  t.equal(copy.out, `copy: fsb://photos/${shown} -> fsb://backup/${shownName}\n`)

  const dry = await run(['mirror', '--dry-run', 'fsb://photos', 'fsb://backup/m'])
  clean(t, dry, 'mirror --dry-run')
  t.equal(dry.out, `(dry run) copy: fsb://photos/${shown} -> fsb://backup/m/${shown}\n`)
  const mirror = await run(['mirror', 'fsb://photos', 'mirrored'])
  t.equal(mirror.code, 0, mirror.stderr)
  clean(t, mirror, 'mirror')
  t.equal(mirror.out, `download: fsb://photos/${shown} -> mirrored/${shown}\n`)

  const missing = await run(['cat', `fsb://photos/${key}.missing`])
  t.equal(missing.code, 1)
  clean(t, missing, 'an error quoting the key')
  t.equal(missing.stderr, `fsbucket: cat fsb://photos/${shown}.missing: no such key\n`)

  const rm = await run(['rm', `fsb://photos/${key}`])
  t.equal(rm.code, 0, rm.stderr)
  clean(t, rm, 'rm')
  t.equal(rm.out, `remove: fsb://photos/${shown}\n`, 'one line: no faked removal')
  const again = await run(['rm', `fsb://photos/${key}`])
  clean(t, again, 'rm of a missing key')
  t.equal(again.stderr, `fsbucket: rm fsb://photos/${shown}: no such key\n`)
}

function escapeRegExp (text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')
}

t.test('every object command over the library', async t => { await commands(t, await localCli(t)) })
t.test('every object command over a gateway', async t => { await commands(t, await httpCli(t)) })

t.test('metadata values and content types', async t => {
  const cli = await localCli(t)
  const registry = await openRegistry(cli.dataDir, { fsync: false })
  await registry.create('photos')
  const bucket = await registry.open('photos')
  await bucket!.put('k', 'x', {
    httpMetadata: { contentType: `text/plain${title}`, cacheControl: `no-cache${fakeLine}` },
    customMetadata: { [`note${csi}`]: `a${title}b${fakeLine}` }
  })
  await registry.close()
  const stat = await cli.run(['stat', 'fsb://photos/k'])
  t.equal(stat.code, 0, stat.stderr)
  clean(t, stat, 'stat')
  t.match(stat.out, /^content-type: +text\/plain\\x1b\]0;pwned\\x07$/m)
  t.match(stat.out, /^cache-control: +no-cache\\nremove: everything$/m)
  t.match(stat.out, /^meta note\\u009b31m: +a\\x1b\]0;pwned\\x07b\\nremove: everything$/m)
  t.notMatch(stat.out, /^remove:/m, 'no faked line')
  const json = await cli.run(['stat', '--json', 'fsb://photos/k'])
  clean(t, json, 'stat --json')
  t.match(JSON.parse(json.out), { httpMetadata: { contentType: `text/plain${title}` }, customMetadata: { [`note${csi}`]: `a${title}b${fakeLine}` } }, 'exact in JSON')
})

t.test("a hostile server's bucket names and error messages", async t => {
  const server = http.createServer((request, response) => {
    response.setHeader('content-type', 'application/json')
    if (request.url === '/') {
      response.end(JSON.stringify({ success: true, errors: [], result: [{ name: `b${title}${fakeLine}${csi}`, creationDate: '2025-01-01T00:00:00.000Z' }] }))
      return
    }
    response.statusCode = 400
    response.end(JSON.stringify({ success: false, errors: [{ code: 99999, message: `refused${title}${fakeLine}${csi}` }] }))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const work = testdir(t)

  const ls = await runBin(['ls', '--endpoint', endpoint], { cwd: work })
  t.equal(ls.code, 0, ls.stderr)
  clean(t, ls, 'ls of buckets')
  t.match(ls.out, /^\S+ {2}fsb:\/\/b\\x1b\]0;pwned\\x07\\nremove: everything\\u009b31m\n$/)
  const json = await runBin(['ls', '--json', '--endpoint', endpoint], { cwd: work })
  clean(t, json, 'ls --json of buckets')
  t.equal(JSON.parse(json.out).name, `b${title}${fakeLine}${csi}`)

  const refused = await runBin(['cat', 'fsb://photos/k', '--endpoint', endpoint], { cwd: work })
  t.equal(refused.code, 1)
  clean(t, refused, 'an error message from the server')
  t.equal(refused.stderr, 'fsbucket: cat fsb://photos/k: refused\\x1b]0;pwned\\x07\\nremove: everything\\u009b31m\n')
})

const hasScript = await exec('script', ['--version']).then(() => true, () => false)

t.test('the progress bar names the key escaped', { skip: hasScript ? false : 'util-linux script is not installed' }, async t => {
  const { run, work, dataDir } = await localCli(t)
  t.equal((await run(['mb', 'fsb://photos'])).code, 0)
  await fsp.writeFile(path.join(work, 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 7))
  const command = [process.execPath, bin, 'cp', 'big.bin', `fsb://photos/${key}`, '--data', dataDir].map(a => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
  const { stdout } = await exec('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: work, env: cleanEnv({ COLUMNS: '400' }) })
  t.ok(stdout.includes(`upload: big.bin -> fsb://photos/${shown} [`), 'the bar\'s label')
  t.notOk(stdout.includes('\u001b]'), 'no OSC sequence reaches the terminal')
  t.notOk(stdout.includes('\u0007'), 'no BEL')
  t.notOk(stdout.includes('\u009b'), 'no C1 CSI')
  t.notMatch(stdout, /^remove:/m, 'no faked line')
})
