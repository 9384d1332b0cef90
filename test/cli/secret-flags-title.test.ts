/**
 * A secret given as a flag leaves the process's command line: once the
 * arguments are parsed, the title `ps` shows is the command's path alone
 * (src/main.ts `secretlessTitle`); a command line without one stays as it
 * was. What the title shows of a running server is in
 * test/server/serve-title-secrets.test.ts.
 */
import t from 'tap'
import type { Command, Option } from 'commander'
import { buildCli, secretFlags, secretlessTitle } from '../../src/main.js'

/** The title the command line `args` gives its process (the commands' actions replaced: nothing runs). */
async function titleOf (args: string[]): Promise<string | null> {
  const program = buildCli()
  let title: string | null | undefined
  const quiet = (c: Command): void => {
    c.exitOverride().action(() => {})
    c.commands.forEach(quiet)
  }
  quiet(program)
  program.hook('preAction', (_, command) => { title = secretlessTitle(command) })
  await program.parseAsync(['node', 'fsbucket.js', ...args])
  if (title === undefined) throw new Error(`no command ran for ${args.join(' ')}`)
  return title
}

t.test('a secret flag on the command line makes the title the command alone, in every spelling', async t => {
  for (const args of [
    ['serve', '--data', './data', '--token', 'TOK1', '--port', '8787'],
    ['serve', '--token=TOK1'],
    ['serve', '-tTOK1'],
    ['serve', '--api-token', 'TOK2', '--api-email', 'me@example.com', '--api-key', 'KEY3'],
    ['serve', '--s3-access-key-id', 'AKID', '--s3-secret-access-key', 'SECRET4'],
    ['serve', '--catalog', 'postgres://fsb:PASS5@db/fsb'],
    ['serve', '--queue-push', 'events=http://127.0.0.1:9/hook/TOKEN6'],
    ['serve', '--s3-endpoint', 'http://127.0.0.1:8788']
  ]) t.equal(await titleOf(args), 'fsbucket serve', args.join(' '))
  t.equal(await titleOf(['token', 'create', '--catalog', 'postgres://u:PW@db/x', '--name', 'n', '--permission', 'admin-read-only']), 'fsbucket token create', 'a subcommand: its whole path')
  t.equal(await titleOf(['cp', '-e', 'http://u:TOK9@127.0.0.1:1', 'a', 'fsb://b/']), 'fsbucket cp', 'an object command\'s endpoint')
})

t.test('without a secret flag the command line stays as it was', async t => {
  t.equal(await titleOf(['serve', '--data', './data', '--port', '8787', '--tls-key', 'key.pem', '--route', '/x/=site']), null)
  // `--token` here is the data directory's name: the flag before it takes it.
  t.equal(await titleOf(['serve', '--data', '--token', '--port', '1']), null, 'a value that looks like a flag')
  const saved = process.env.FSBUCKET_TOKEN
  process.env.FSBUCKET_TOKEN = 'FROM-THE-ENVIRONMENT'
  t.teardown(() => { if (saved === undefined) delete process.env.FSBUCKET_TOKEN; else process.env.FSBUCKET_TOKEN = saved })
  t.equal(await titleOf(['serve', '--data', './data']), null, 'a token from a variable is not on the command line')
})

t.test('every flag that holds a secret is one of secretFlags', async t => {
  // Named like a secret: a token, a key, a password, a catalog or an endpoint (a URL with credentials), a push URL.
  const secretish = /token|key|secret|password|catalog|endpoint|queue-push/
  // An id is half a key pair, not its secret; --tls-key names a file; --catalog-connections is a count.
  const notSecrets = new Set(['--s3-access-key-id', '--tls-key', '--catalog-connections'])
  const options: Option[] = []
  const walk = (c: Command): void => { options.push(...c.options); c.commands.forEach(walk) }
  walk(buildCli())
  const unlisted = options.filter(o => o.long !== undefined && secretish.test(o.long) && !notSecrets.has(o.long) && !secretFlags.has(o.attributeName()))
  t.same(unlisted.map(o => o.long), [], 'add it to secretFlags (src/main.ts), or to notSecrets here with a reason')
  t.ok(options.some(o => o.long === '--s3-secret-access-key'), 'serve\'s flags are walked')
})
