/**
 * A command that reads a damaged document of the gateway's state (the
 * tokens, the management API's credentials) says what is wrong with it and
 * where, exit 1: run by hand, it has no server log to name the file in.
 */
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { testdir } from '../testdir.js'
import { runBin } from './fixture.js'

t.test('token list on a damaged tokens.json names the file and what is wrong', async t => {
  const cwd = testdir(t)
  const data = path.join(cwd, 'data')
  t.equal((await runBin(['bucket', 'create', 'photos', '--data', data], { cwd })).code, 0)
  t.equal((await runBin(['token', 'create', '--name', 'a', '--permission', 'admin-read-only', '--data', data], { cwd })).code, 0)
  const file = path.join(data, '.tokens', 'tokens.json')
  await writeFile(file, '{bad')
  const broken = await runBin(['token', 'list', '--data', data], { cwd })
  t.equal(broken.code, 1)
  t.ok(broken.stderr.startsWith(`${file} is not valid JSON: `), broken.stderr)
  t.ok(broken.stderr.endsWith(' (mend it, or restore it from a backup)\n'), 'and what to do')
  await writeFile(file, JSON.stringify({ format: 1, tokens: [{ id: 'x' }] }))
  const halfMade = await runBin(['token', 'list', '--data', data], { cwd })
  t.equal(halfMade.code, 1)
  // The file by its full path, as the not-JSON line above names it: one of several data directories' is told apart.
  t.ok(halfMade.stderr.startsWith(`${file} has a token record that is not one (tokens[0]: `), halfMade.stderr)
  t.ok(halfMade.stderr.endsWith(') (mend it, or restore it from a backup)\n'), 'and what to do')
})
