/**
 * The expiry a new token is given, on both doors that make tokens: the
 * management API's `expires_on` and `fsbucket token create --expires`.
 * A day the calendar lacks (February 30) is refused, not moved into March;
 * a date and time needs a zone; a date alone is midnight UTC; and text
 * that is no ISO date is refused, even when JavaScript's Date reads it.
 */
import t, { type Test } from 'tap'
import { Command, CommanderError } from 'commander'
import { registerTokenCommands } from '../../src/cli/tokens.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { run, within } from '../server/serve-process.js'
import { buildApp, call } from './helpers.js'

t.test('POST /user/tokens: expires_on', async t => {
  const { app, registry } = await buildApp(t)
  const made = async (expiresOn: string): Promise<{ status: number, code?: number, message?: string, expiresOn?: string }> => {
    const answer = await call(app, 'POST', '/user/tokens', { name: 'x', permission: 'object-read-only', expires_on: expiresOn })
    return { status: answer.status, code: answer.body.errors[0]?.code, message: answer.body.errors[0]?.message, expiresOn: answer.body.result?.expires_on }
  }
  t.match(await made('2099-12-31T00:00:00Z'), { status: 200, expiresOn: '2099-12-31T00:00:00.000000Z' })
  t.match(await made('2099-12-31'), { status: 200, expiresOn: '2099-12-31T00:00:00.000000Z' }, 'a date alone: midnight UTC')
  t.match(await made('2099-12-31T00:00:00-05:00'), { status: 200, expiresOn: '2099-12-31T05:00:00.000000Z' })
  for (const text of ['2099-02-30T00:00:00Z', '2099-02-30', '2099-04-31', '2099-12-31T24:00:00Z', '2099-12-31T00:00:00', 'Thu, 31 Dec 2099 00:00:00 GMT', '2099', 'soon', '30d']) {
    const answer = await made(text)
    t.match(answer, { status: 400, code: 1199, message: /expires_on must be an ISO 8601 date and time with a zone/ }, `expires_on: ${text}`)
  }
  t.match(await made('2020-02-30'), { status: 400, code: 1199 }, 'an impossible date in the past: invalid, not "in the past"')
  t.match(await made('2020-02-28'), { status: 400, code: 10040, message: /the expiry must be in the future/ }, 'a real date in the past: the engine refuses it')
  t.equal((await registry.tokens.list()).length, 3, 'only the good ones were made')
})

/** `fsbucket token create --expires <when>` in process: its JSON, or the message commander printed. */
async function tokenCreate (t: Test, expires: string): Promise<{ expiresOn?: string, error?: string, exitCode?: number }> {
  const dir = testdir(t)
  const printed: string[] = []
  // The subcommands inherit both settings.
  const program = new Command().exitOverride().configureOutput({ writeErr: text => { printed.push(text) }, writeOut: () => {} })
  registerTokenCommands(program, { openRegistry: async data => await openRegistry(data, { fsync: false }) })
  const log = console.log
  const out: string[] = []
  console.log = (...args: unknown[]) => { out.push(args.join(' ')) }
  try {
    await program.parseAsync(['token', 'create', '--data', dir, '--name', 'n', '--permission', 'object-read-only', '--expires', expires], { from: 'user' })
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err
    return { error: printed.join(''), exitCode: err.exitCode }
  } finally {
    console.log = log
  }
  return { expiresOn: (JSON.parse(out.join('\n')) as { expiresOn: string }).expiresOn }
}

t.test('fsbucket token create --expires', async t => {
  t.match(await tokenCreate(t, '2099-12-31'), { expiresOn: '2099-12-31T00:00:00.000Z' }, 'a date alone: midnight UTC')
  t.match(await tokenCreate(t, '2099-12-31T00:00:00+02:00'), { expiresOn: '2099-12-30T22:00:00.000Z' })
  for (const text of ['2099-02-30', '2099-02-30T00:00:00Z', '2099-12-31T00:00:00', 'Thu, 31 Dec 2099 00:00:00 GMT', '2020-02-30']) {
    t.match(await tokenCreate(t, text), { exitCode: 1, error: /argument '.*' is invalid\. expected a date \(2026-12-31, midnight UTC\), a date and time with a zone/ }, `--expires ${text}`)
  }
  t.match(await tokenCreate(t, '2020-02-28'), { exitCode: 1, error: /is invalid\. the expiry must be in the future/ })
})

t.test('the command refuses a date and time without a zone, whatever the process\'s zone', async t => {
  const data = testdir(t)
  const served = run(['token', 'create', '--data', data, '--name', 'n', '--permission', 'object-read-only', '--expires', '2099-12-31T00:00:00'], { env: { TZ: 'America/New_York' } })
  t.equal(await within(served.exited, 30_000, 'token create'), 1)
  t.match(served.stderr(), /a date and time with a zone/)
  t.equal(served.stdout(), '', 'no token printed')
})
