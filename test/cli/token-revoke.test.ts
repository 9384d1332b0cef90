/**
 * `fsbucket token revoke <id>` with an argument that is no token's id says
 * so as the management API does ("no token with that id"), never repeating
 * it: it may be the bearer value itself, given for the id, which is then
 * said to look like one.
 */
import t from 'tap'
import { Command } from 'commander'
import { looksLikeTokenValue, openRegistry } from '../../src/index.js'
import { newTokenValue } from '../../src/bucket/tokens.js'
import { registerTokenCommands } from '../../src/cli/tokens.js'
import { testdir } from '../testdir.js'

/** Runs `token args` in this process: what it printed, and its exit code. */
async function token (args: string[]): Promise<{ out: string, err: string, code: number | string | undefined }> {
  const program = new Command('fsbucket').exitOverride()
  registerTokenCommands(program, { openRegistry: async (dataDir, catalog) => await openRegistry(dataDir, { catalog, fsync: false }) })
  let out = ''
  let err = ''
  const { log, error } = console
  const exitCode = process.exitCode
  process.exitCode = undefined
  console.log = (...parts: unknown[]) => { out += parts.join(' ') + '\n' }
  console.error = (...parts: unknown[]) => { err += parts.join(' ') + '\n' }
  try {
    await program.parseAsync(['token', ...args], { from: 'user' })
    return { out, err, code: process.exitCode }
  } finally {
    console.log = log
    console.error = error
    process.exitCode = exitCode
  }
}

t.test('revoking by the value, or by no id, answers without repeating it', async t => {
  const data = testdir(t)
  const registry = await openRegistry(data, { fsync: false })
  await registry.create('photos')
  await registry.close()
  const created = JSON.parse((await token(['create', '--name', 't1', '--permission', 'object-read-write', '-d', data])).out) as { id: string, token: string }

  const byValue = await token(['revoke', created.token, '-d', data])
  t.equal(byValue.code, 1)
  t.equal(byValue.err, 'error: no token with that id: that looks like a token\'s value (40 characters), not its id (32 hex digits); `fsbucket token list` shows the ids\n')
  t.notOk(byValue.err.includes(created.token) || byValue.err.includes(created.token.slice(0, 8)), 'the value is not repeated')

  const unknown = await token(['revoke', 'REVOKEsecretXYZ', '-d', data])
  t.equal(unknown.code, 1)
  t.equal(unknown.err, 'error: no token with that id\n')

  const byId = await token(['revoke', created.id, '-d', data])
  t.equal(byId.code, undefined)
  t.equal(byId.out, `revoked token ${created.id}\n`, 'the id revokes')
})

t.test('a token\'s value never begins with "-", which a command line reads as an option (and may print)', async t => {
  const draws = ['-dSecretThatWouldBeReadAsTheDataDirectory', '-USecretThatWouldBeAnUnknownOptionEchoed', 'A'.repeat(40)]
  t.equal(newTokenValue(() => draws.shift() ?? ''), 'A'.repeat(40), 'drawn again until it does not')
  for (let i = 0; i < 2000; i++) {
    const value = newTokenValue()
    if (value.startsWith('-') || !looksLikeTokenValue(value)) t.fail(`value ${i}: ${value}`)
  }
})
