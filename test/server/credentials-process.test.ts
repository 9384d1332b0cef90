/**
 * Scoped tokens against a running `fsbucket serve` (two workers): a token
 * made by `fsbucket token create` works within seconds without a restart,
 * one revoked by `fsbucket token revoke` or past its `--expires` stops
 * working within seconds, on the HTTP routes and on the S3 port; and no
 * token value or secret ever reaches the server's log, even at debug level.
 */
import t from 'tap'
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { testdir } from '../testdir.js'
import { answering, call, freePort, run, within } from './serve-process.js'

interface Made { id: string, token: string, accessKeyId: string, secretAccessKey: string }

async function cli (args: string[]): Promise<string> {
  const served = run(args)
  const code = await within(served.exited, 30_000, args.join(' '))
  if (code !== 0) throw new Error(`${args.join(' ')}: exit ${code}: ${served.stderr()}`)
  return served.stdout()
}

/** Polls `check` until it returns true (every 100 ms, for at most `ms`); whether it did. */
async function eventually (check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

async function s3Outcome (client: S3Client, command: any): Promise<string> {
  try {
    await client.send(command)
    return 'ok'
  } catch (err) {
    return (err as { name: string }).name
  }
}

t.test('a new token works at once, revoke and expiry reach a running server within seconds; no secret is logged', async t => {
  const data = testdir(t)
  const port = await freePort()
  const s3Port = await freePort()
  const server = run(['serve', '--data', data, '--port', String(port), '--s3-port', String(s3Port), '--workers', '2', '--fsync', 'off',
    '--log-level', 'debug', '--token', 'admin-token-of-the-test', '--s3-access-key-id', 'admin-key', '--s3-secret-access-key', 'admin-secret-of-the-test'])
  t.teardown(async () => { server.child.kill('SIGKILL'); await server.exited })
  await answering(port, server)
  await answering(s3Port, server)
  const clients: S3Client[] = []
  t.teardown(() => { for (const c of clients) c.destroy() })
  const s3 = (made: Made): S3Client => {
    const client = new S3Client({ endpoint: `http://127.0.0.1:${s3Port}`, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: made.accessKeyId, secretAccessKey: made.secretAccessKey } })
    clients.push(client)
    return client
  }
  const put = async (made: Made, key: string): Promise<number> => (await call(port, 'PUT', `/default/${key}`, 'x', { authorization: `Bearer ${made.token}` })).status
  const secrets: string[] = []

  // Each worker (a connection per request, dealt in turn) reads the tokens and keeps them for TOKEN_CACHE_MS: none holds the next one.
  const unknown: Made = { id: '0'.repeat(32), token: 'not-a-token-of-this-server-0123456789abcd', accessKeyId: '0'.repeat(32), secretAccessKey: 'x' }
  for (let i = 0; i < 4; i++) t.equal(await put(unknown, 'z.txt'), 403, 'an unknown token is refused')
  const made = JSON.parse(await cli(['token', 'create', '--data', data, '--name', 'uploader', '--permission', 'object-read-write', '--bucket', 'default'])) as Made
  secrets.push(made.token, made.secretAccessKey)
  // A lookup that misses reads the tokens again: the new token works at once on every worker.
  for (let i = 0; i < 4; i++) t.equal(await put(made, 'a.txt'), 200, `a new token works over HTTP at once (request ${i + 1})`)
  t.equal(await s3Outcome(s3(made), new PutObjectCommand({ Bucket: 'default', Key: 'b.txt', Body: 'b' })), 'ok', 'and its key pair over S3')
  t.equal(await s3Outcome(s3(made), new GetObjectCommand({ Bucket: 'default', Key: 'a.txt' })), 'ok')

  t.match(await cli(['token', 'list', '--data', data]), made.id)
  t.notMatch(await cli(['token', 'list', '--data', data]), made.secretAccessKey, 'the list shows no secret')
  await cli(['token', 'revoke', made.id, '--data', data])
  t.ok(await eventually(async () => await put(made, 'c.txt') === 403), 'a revoked token is refused over HTTP within seconds')
  t.ok(await eventually(async () => await s3Outcome(s3(made), new GetObjectCommand({ Bucket: 'default', Key: 'a.txt' })) === 'InvalidAccessKeyId'), 'and over S3')

  const brief = JSON.parse(await cli(['token', 'create', '--data', data, '--name', 'brief', '--permission', 'object-read-only', '--expires', '4s'])) as Made
  secrets.push(brief.token, brief.secretAccessKey)
  const read = async (): Promise<number> => (await call(port, 'GET', '/default/a.txt', undefined, { authorization: `Bearer ${brief.token}` })).status
  t.ok(await eventually(async () => await read() === 200), 'a token with --expires works until then')
  t.ok(await eventually(async () => await read() === 403, 10_000), 'and is refused once expired')
  // Each worker learns of a token on its own: a 403 may come from one that has not seen it yet, so the key pair is asked until refused too.
  t.ok(await eventually(async () => await s3Outcome(s3(brief), new GetObjectCommand({ Bucket: 'default', Key: 'a.txt' })) === 'InvalidAccessKeyId', 10_000), 'its key pair too')

  // A refusal and a wrong key pair are logged too: none of them may carry a secret.
  await call(port, 'GET', '/default/a.txt', undefined, { authorization: `Bearer ${made.token}` })
  const log = server.stdout() + server.stderr()
  t.match(log, /"status":403/, 'the log holds the refused requests')
  for (const secret of [...secrets, 'admin-token-of-the-test', 'admin-secret-of-the-test']) t.notOk(log.includes(secret), 'no token value or secret in the log')
})
