/**
 * `fsbucket invite create` refuses what would make a broken invite, in the
 * command line's usual form (commander's "argument ... is invalid", exit
 * code 1, nothing stored): `--days` a whole number from 1 to 365,
 * `--account` an account id of 32 lowercase hex digits; `zone create`'s
 * zones belong to the local account unless `--account` names another.
 */
import t from 'tap'
import { testdir } from '../testdir.js'
import { runBin } from './fixture.js'

const account = '023e105f4ecef8ad9ca31a8372d0c353'

t.test('invite create validates --days and --account', async t => {
  const dataDir = testdir(t)
  const run = async (...args: string[]): Promise<{ code: number | null, out: string, stderr: string }> =>
    await runBin(['invite', ...args, '--data', dataDir], { cwd: dataDir })
  const create = async (...args: string[]): Promise<{ code: number | null, out: string, stderr: string }> =>
    await run('create', '--email', 'me@example.test', ...args)

  for (const days of ['abc', '99999999', '0', '-1', '1.5', '366', '']) {
    const result = await create('--account', account, `--days=${days}`)
    t.equal(result.code, 1, `--days ${days} exits 1`)
    t.equal(result.out, '', `--days ${days}: nothing on stdout`)
    t.match(result.stderr, /^error: option '--days <n>' argument '.*' is invalid\. expected a whole number of days from 1 to 365\n/, `--days ${days}`)
  }
  for (const id of ['../../x', 'x', account.toUpperCase(), `${account}0`, '']) {
    const result = await create(`--account=${id}`)
    t.equal(result.code, 1, `--account ${id} exits 1`)
    t.match(result.stderr, /^error: option '--account <id>' argument '.*' is invalid\. expected an account id of 32 lowercase hex digits\n/, `--account ${id}`)
  }
  t.equal((await run('list')).out, '', 'no invite was stored')

  const made = await create('--account', account, '--days', '365')
  t.equal(made.code, 0, made.stderr)
  t.match(made.out, /^[0-9a-f]{32}\n$/, 'prints the id')
  const listed = (await run('list')).out.trim().split('\t')
  t.equal(listed[0], made.out.trim())
  t.equal(listed[3], account)
  const days = (Date.parse(listed[4]) - Date.now()) / 86_400_000
  t.ok(days > 364.9 && days <= 365, '--days 365 expires in 365 days')
  const byDefault = await create('--account', account)
  t.equal(byDefault.code, 0, 'the default of 7 days')
})

t.test('zone create: owned by the local account unless --account names another; a malformed id is refused', async t => {
  const dataDir = testdir(t)
  const run = async (...args: string[]): Promise<{ code: number | null, out: string, stderr: string }> =>
    await runBin(['zone', ...args, '--data', dataDir], { cwd: dataDir })
  const { localAccount } = await import('../../src/mgmt/routes/accounts.js')
  t.equal((await run('create', 'one.test')).code, 0)
  t.equal((await run('create', 'two.test')).code, 0)
  t.equal((await run('create', 'three.test', '--account', account)).code, 0)
  const refused = await run('create', 'four.test', '--account', 'x')
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^error: option '--account <id>' argument 'x' is invalid\. expected an account id of 32 lowercase hex digits\n/)
  const owners = Object.fromEntries((await run('list')).out.trim().split('\n').map(line => line.split('\t')).map(([, name, owner]) => [name, owner]))
  t.same(owners, { 'one.test': localAccount.id, 'two.test': localAccount.id, 'three.test': account }, 'the same account every time, the one /accounts lists')
})
