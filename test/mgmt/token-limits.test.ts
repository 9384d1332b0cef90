/**
 * A token's bucket list is bounded (MAX_TOKEN_BUCKETS) on every door that
 * makes tokens: the management API (fsbucket's fields and the hosted
 * policies) answers its validation code, the command line `error: ...` and
 * exit 1; the engine refuses the same for any other caller.
 */
import t from 'tap'
import { Command } from 'commander'
import { MAX_TOKEN_BUCKETS, isArgumentError } from '../../src/bucket/index.js'
import { registerTokenCommands } from '../../src/cli/tokens.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { accountId, buildApp, call } from './helpers.js'

// Short names, so that 80,000 of them fit in a body the API reads (the report's case).
const names = (n: number): string[] => Array.from({ length: n }, (_, i) => `b${String(i).padStart(5, '0')}`)

t.test('the management API refuses a token scoped to too many buckets', async t => {
  const { app, registry } = await buildApp(t)
  t.equal(MAX_TOKEN_BUCKETS, 1000)
  const fits = await call(app, 'POST', '/user/tokens', { name: 'many', permission: 'object-read-only', buckets: names(MAX_TOKEN_BUCKETS) })
  t.equal(fits.status, 200, `${MAX_TOKEN_BUCKETS} buckets fit`)
  for (const n of [MAX_TOKEN_BUCKETS + 1, 80_000]) {
    const over = await call(app, 'POST', '/user/tokens', { name: 'too-many', permission: 'object-read-only', buckets: names(n) })
    t.same([over.status, over.body.errors[0]?.code], [400, 10040], `${n} buckets`)
    t.match(over.body.errors[0]?.message, new RegExp(`at most ${MAX_TOKEN_BUCKETS} buckets \\(got ${n}\\)`))
    if (n > MAX_TOKEN_BUCKETS + 1) continue
    const resources = Object.fromEntries(names(n).map(b => [`com.cloudflare.edge.r2.bucket.${accountId}_default_${b}`, '*']))
    const policies = [{ effect: 'allow', resources, permission_groups: [{ id: 'object-read-only' }] }]
    const hosted = await call(app, 'POST', '/user/tokens', { name: 'too-many', policies })
    t.same([hosted.status, hosted.body.errors[0]?.code], [400, 10040], `${n} buckets as policies`)
  }
  t.equal((await registry.tokens.list()).length, 1, 'nothing was made of the refused ones')
  const refused = await registry.tokens.create({ name: 'x', permission: 'object-read-only', buckets: names(MAX_TOKEN_BUCKETS + 1) }).then(() => null, (err: unknown) => err)
  t.ok(isArgumentError(refused), 'the engine refuses it to any caller')
})

t.test('the management API refuses an empty bucket list rather than read it as every bucket', async t => {
  const { app, registry } = await buildApp(t)
  const empty = await call(app, 'POST', '/user/tokens', { name: 'none', permission: 'object-read-only', buckets: [] })
  t.same([empty.status, empty.body.errors[0]?.code], [400, 1199], 'refused as the route refuses a malformed field')
  t.match(empty.body.errors[0]?.message, /leave it out for a token of every bucket/)
  t.same(await registry.tokens.list(), [], 'nothing made')
  const every = await call(app, 'POST', '/user/tokens', { name: 'all', permission: 'object-read-only' })
  t.equal(every.status, 200, 'left out: every bucket')
  t.equal(every.body.result.buckets, null)
})

t.test('fsbucket token create refuses too many --bucket', async t => {
  const dir = testdir(t)
  const errors: string[] = []
  const error = console.error
  const log = console.log
  console.error = (...args: unknown[]) => { errors.push(args.join(' ')) }
  console.log = () => {}
  t.teardown(() => { console.error = error; console.log = log; process.exitCode = undefined })
  const program = new Command().exitOverride()
  registerTokenCommands(program, { openRegistry: async data => await openRegistry(data, { fsync: false }) })
  const buckets = names(MAX_TOKEN_BUCKETS + 1).flatMap(b => ['--bucket', b])
  await program.parseAsync(['token', 'create', '--data', dir, '--name', 'many', '--permission', 'object-read-only', ...buckets], { from: 'user' })
  t.equal(process.exitCode, 1)
  t.match(errors.join('\n'), new RegExp(`^error: .*at most ${MAX_TOKEN_BUCKETS} buckets`))
  process.exitCode = undefined
  const registry = await openRegistry(dir, { fsync: false })
  t.teardown(async () => { await registry.close() })
  t.same(await registry.tokens.list(), [], 'no token was made')
})

t.test('the hosted policy shape: a group named by an id and a name must be one group, resources must be named and granted with "*"', async t => {
  const { app, registry } = await buildApp(t)
  const account = `com.cloudflare.api.account.${accountId}`
  const bodies: Array<[string, unknown]> = [
    ['an id and a name of two groups', { effect: 'allow', resources: { [account]: '*' }, permission_groups: [{ id: 'object-read-only', name: 'Workers R2 Storage Write' }] }],
    ['one of its ids beside a name of no group', { effect: 'allow', resources: { [account]: '*' }, permission_groups: [{ id: 'admin-read-write', name: 'Workers R2 Storage Typo' }] }],
    ['no resource', { effect: 'allow', resources: {}, permission_groups: [{ id: 'object-read-write' }] }],
    ['a resource granted with another value', { effect: 'allow', resources: { [account]: 'deny' }, permission_groups: [{ id: 'object-read-write' }] }]
  ]
  for (const [name, policy] of bodies) {
    const refused = await call(app, 'POST', '/user/tokens', { name: 'p', policies: [policy] })
    t.same([refused.status, refused.body.errors[0]?.code], [400, 1199], name)
  }
  t.same(await registry.tokens.list(), [], 'nothing was made')
  const agreeing = await call(app, 'POST', '/user/tokens', { name: 'p', policies: [{ effect: 'allow', resources: { [account]: '*' }, permission_groups: [{ id: 'object-read-only', name: 'Workers R2 Storage Bucket Item Read' }] }] })
  t.same([agreeing.status, agreeing.body.result.permission, agreeing.body.result.buckets], [200, 'object-read-only', null], 'an id and its own name make the token asked for')
  // The hosted API's clients send its hex group id beside the name: the name decides.
  const hosted = await call(app, 'POST', '/user/tokens', { name: 'h', policies: [{ effect: 'allow', resources: { [account]: '*' }, permission_groups: [{ id: '2efd5506f9c8494dacb1fa10a3e7d5b6', name: 'Workers R2 Storage Bucket Item Write' }] }] })
  t.same([hosted.status, hosted.body.result?.permission], [200, 'object-read-write'], 'a hosted id beside a name')
})
