/**
 * The text of `share` and of the token commands shows no raw control
 * character: a refusal's line escapes what it quotes, the token commands'
 * JSON writes C1 and bidirectional controls as `\uHHHH`, and the curl
 * command writes a bidirectional control of its file name as bytes in
 * `$'…'`, which a shell reads back as the same name.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, promises as fsp } from 'node:fs'
import path from 'node:path'
import { jsonText } from '../../src/cli/terminal-text.js'
import { curlCommand } from '../../src/doors/share-links.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { runBin } from './fixture.js'

/** The characters never printed raw (terminal-text.ts). */
const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

/** The words `shell` (bash by default) reads from `line`, each printed by printf as it is. */
async function wordsOf (line: string, shell = 'bash'): Promise<string[]> {
  return await new Promise((resolve, reject) => {
    execFile(shell, ['-c', `printf '%s\\0' ${line}`], (err, stdout) => {
      if (err !== null) reject(new Error(err.message))
      else resolve(stdout.split('\0').slice(0, -1))
    })
  })
}

t.test('the curl command (the CLI\'s line and the management API\'s field): bidirectional controls as bytes, the same words to bash', async t => {
  const url = 'http://h/b/k?X-Amz-Signature=0'
  const keys = ['invoice\u202efdp.exe', "it's\u2066x\u2069.txt", 'red\u001b[31m\u202e.txt', 'a\\b\u200f', 'plain.txt']
  for (const key of keys) {
    const line = curlCommand('GET', key, url)
    t.notMatch(line, raw, `${JSON.stringify(key)}: nothing raw`)
    t.same((await wordsOf(line.replace(/^curl /, ''))), ['-o', key, url], `${JSON.stringify(key)}: bash reads the same file name`)
  }
  t.equal(curlCommand('GET', 'invoice\u202efdp.exe', url), `curl -o $'invoice\\xe2\\x80\\xaefdp.exe' '${url}'`)
  t.equal(curlCommand('GET', 'plain.txt', url), `curl -o 'plain.txt' '${url}'`, 'a plain word in plain quotes')
})

t.test('a key with a quote and a control stays one word to a shell without $\'…\' (dash): nothing of the key runs', { skip: !existsSync('/bin/dash') && 'dash is not installed' }, async t => {
  const url = 'http://h/b/k?X-Amz-Signature=0'
  for (const key of ["x/\u202e'; echo ran #", "\u0007'; echo ran #", "back\\'\u202e"]) {
    const line = curlCommand('GET', key, url)
    t.notMatch(line, /\\'/, `${JSON.stringify(key)}: no \\' escape, which dash would read as the quote's end`)
    t.same(await wordsOf(line.replace(/^curl /, '')), ['-o', key.split('/').at(-1), url], `${JSON.stringify(key)}: bash reads the key's file name`)
    const words = await wordsOf(line.replace(/^curl /, ''), '/bin/dash')
    t.equal(words.length, 3, `${JSON.stringify(key)}: dash reads three words, no command (${JSON.stringify(words)})`)
  }
})

t.test('jsonText: indented, exact, nothing raw', async t => {
  const value = { name: 'x\u202e\u009b\u007fy', n: 1 }
  const text = jsonText(value)
  t.notMatch(text, raw)
  t.same(JSON.parse(text), value)
  t.equal(text, JSON.stringify(value, null, 2).replace('x\u202e\u009b\u007fy', 'x\\u202e\\u009b\\u007fy'))
})

t.test('share and token output through the command line', async t => {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  await registry.close()
  const work = path.join(dataDir, '..', `${path.basename(dataDir)}-work`)
  await fsp.mkdir(work, { recursive: true })
  t.teardown(async () => { await fsp.rm(work, { recursive: true, force: true }) })

  const named = await runBin(['token', 'create', '--name', 'ci\u202eevil', '--permission', 'object-read-only', '--data', dataDir], { cwd: work })
  t.equal(named.code, 0, named.stderr)
  t.notMatch(named.out, raw, 'token create: nothing raw')
  t.match(named.out, '"name": "ci\\u202eevil"')
  t.equal((JSON.parse(named.out) as { name: string }).name, 'ci\u202eevil', 'the same name to a JSON parser')
  const listed = await runBin(['token', 'list', '--data', dataDir], { cwd: work })
  t.notMatch(listed.out, raw, 'token list: nothing raw')
  t.equal((JSON.parse(listed.out) as Array<{ name: string }>)[0].name, 'ci\u202eevil')

  const shared = await runBin(['share', 'fsb://photos/dir/invoice\u202efdp.exe', '--data', dataDir], { cwd: work })
  t.equal(shared.code, 0, shared.stderr)
  t.notMatch(shared.out + shared.stderr, raw, 'share: nothing raw')
  t.match(shared.out, /\ncurl -o \$'invoice\\xe2\\x80\\xaefdp\.exe' 'http/)

  const refusals: Array<[string, string]> = [
    ['fsb://photos/dir\u202e/', 'fsbucket: share fsb://photos/dir\\u202e/: expected an object'],
    ['fsb://nob\u009bucket/a', 'fsbucket: share fsb://nob\\u009bucket/a: ']
  ]
  for (const [target, shown] of refusals) {
    const refused = await runBin(['share', target, '--data', dataDir], { cwd: work })
    t.equal(refused.code, 1, JSON.stringify(target))
    t.notMatch(refused.stderr, raw, `${JSON.stringify(target)}: the refusal shows nothing raw`)
    t.ok(refused.stderr.startsWith(shown), refused.stderr)
  }
})
