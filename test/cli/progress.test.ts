/**
 * The progress bar: drawn on stderr under a pseudo-terminal (util-linux
 * `script` gives the child one), one bar per file or one overall bar for
 * -r; absent with --quiet and whenever stderr is not a terminal.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { bin, cleanEnv, localCli } from './fixture.js'

const exec = promisify(execFile)

const hasScript = await exec('script', ['--version']).then(() => true, () => false)

t.test('progress bar', { skip: hasScript ? false : 'util-linux script is not installed' }, async t => {
  const { run, work, dataDir } = await localCli(t)
  await fsp.writeFile(path.join(work, 'big.bin'), randomBytes(3 * 1024 * 1024))
  await fsp.mkdir(path.join(work, 'tree'))
  await fsp.writeFile(path.join(work, 'tree', 'a.bin'), randomBytes(1024 * 1024))
  await fsp.writeFile(path.join(work, 'tree', 'b.bin'), randomBytes(1024 * 1024))
  t.equal((await run(['mb', 'fsb://photos'])).code, 0)

  /** Runs the command with a terminal for stdin, stdout and stderr; gives what the terminal showed. */
  const underTerminal = async (args: string[]): Promise<string> => {
    const command = [process.execPath, bin, ...args, '--data', dataDir].map(a => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
    const { stdout } = await exec('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: work, env: cleanEnv({ COLUMNS: '160' }) })
    return stdout
  }

  const one = await underTerminal(['cp', 'big.bin', 'fsb://photos/big.bin'])
  t.match(one, /upload: big\.bin -> fsb:\/\/photos\/big\.bin \[[█░]+\] 100% \| 3\.0 MiB\/3\.0 MiB \| [\d.]+ [KMG]?i?B\/s \| ETA/, 'a bar with bytes, rate and ETA')

  const tree = await underTerminal(['cp', '-r', 'tree', 'fsb://photos/tree'])
  t.match(tree, /2\/2 files \[[█░]+\] 100% \| 2\.0 MiB\/2\.0 MiB/, 'one overall bar for -r')

  const quiet = await underTerminal(['cp', '--quiet', 'big.bin', 'fsb://photos/quiet.bin'])
  t.equal(quiet, '', '--quiet draws nothing and prints nothing')

  const piped = await run(['cp', 'big.bin', 'fsb://photos/piped.bin'])
  t.equal(piped.stderr, '', 'no bar when stderr is a pipe')
  t.equal(piped.out, 'upload: big.bin -> fsb://photos/piped.bin\n')
})
