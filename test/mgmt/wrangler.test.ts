/**
 * Cloudflare's CLI, wrangler, unchanged, against a running fsbucket server:
 * each command runs the real binary in a child process (pointed at the
 * server by CLOUDFLARE_API_BASE_URL, no network, telemetry and update check
 * off), and its effect is checked through the server's own routes.
 *
 * Independent groups (buckets, objects, CORS, lifecycle, bucket locks,
 * custom domains, a wrong token) run side by side, two wrangler processes at a time: each
 * wrangler start parses a 12 MB bundle, which is nearly all of the test's
 * time.
 */
import { execFile } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { BucketRegistry } from '../../src/index.js'
import { auth as gatewayAuth, gateway } from '../http/gateway-fixture.js'
import { testdir } from '../testdir.js'

// Twenty-five wrangler starts cost about 35 s of CPU; on a machine shared with
// other work that stretches past the suite's default 300 s per file.
t.setTimeout(900_000)

const apiToken = 'wrangler-test-token-6a0e9f'
const accountId = '0f1e2d3c4b5a69788796a5b4c3d2e1f0'
const wranglerBin = path.join(path.dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin', 'wrangler.js')

interface Run { code: number, stdout: string, stderr: string, output: string }

interface Harness {
  app: FastifyInstance
  registry: BucketRegistry
  /** Runs `wrangler ...args` with the server's credentials (or `token`), optionally feeding stdin. */
  wrangler: (args: string[], options?: { input?: string, token?: string }) => Promise<Run>
  /** A management API request, as the server answers it. */
  api: (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => Promise<{ status: number, body: any }>
  work: string
}

async function harness (t: Test): Promise<Harness> {
  const { app, registry } = await gateway(t, { management: { tokens: [apiToken], keys: [] } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  const work = testdir(t)
  const home = path.join(work, 'home')
  const tmp = path.join(work, 'tmp')
  await fsp.mkdir(tmp, { recursive: true })
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    TMPDIR: tmp,
    CLOUDFLARE_API_BASE_URL: `http://127.0.0.1:${port}/client/v4`,
    CLOUDFLARE_ACCOUNT_ID: accountId,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_LOG_PATH: path.join(work, 'logs'),
    // The update check asks the npm registry: point it at a closed port so nothing leaves the machine.
    npm_config_registry: 'http://127.0.0.1:9/',
    CI: '1',
    FORCE_COLOR: '0',
    NO_COLOR: '1'
  }
  // At most two wrangler processes at once: each start parses a large bundle, and more would only thrash the cores.
  let running = 0
  const waiting: Array<() => void> = []
  const slot = async (): Promise<void> => {
    if (running < 2) { running++; return }
    await new Promise<void>(resolve => waiting.push(resolve))
  }
  const release = (): void => {
    const next = waiting.shift()
    if (next === undefined) running--
    else next()
  }
  const run = async (args: string[], options: { input?: string, token?: string }): Promise<Run> => await new Promise(resolve => {
    const env = { ...baseEnv, CLOUDFLARE_API_TOKEN: options.token ?? apiToken }
    const child = execFile(process.execPath, [wranglerBin, ...args], { cwd: work, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1
      resolve({ code, stdout, stderr, output: stdout + stderr })
    })
    child.stdin?.end(options.input ?? '')
  })
  const wrangler: Harness['wrangler'] = async (args, options = {}) => {
    await slot()
    try {
      return await run(args, options)
    } finally {
      release()
    }
  }
  const api: Harness['api'] = async (method, url, body) => {
    const res = await app.inject({ method, url: `/client/v4${url}`, headers: { authorization: `Bearer ${apiToken}` }, ...(body === undefined ? {} : { payload: body as object }) })
    return { status: res.statusCode, body: res.json() }
  }
  return { app, registry, wrangler, api, work }
}

function ok (t: Test, run: Run, what: string): void {
  t.equal(run.code, 0, `${what}: exits 0${run.code === 0 ? '' : `\n${run.output}`}`)
}

t.test('wrangler against fsbucket', async t => {
  const { app, registry, wrangler, api, work } = await harness(t)
  const object = async (bucket: string, key: string): Promise<{ status: number, body: string, headers: Record<string, unknown> }> => {
    const res = await app.inject({ method: 'GET', url: `/${bucket}/${key}`, headers: gatewayAuth })
    return { status: res.statusCode, body: res.body, headers: res.headers }
  }
  const bucketPath = (name: string, rest = ''): string => `/accounts/${accountId}/r2/buckets/${name}${rest}`

  async function whoamiAndBuckets (): Promise<void> {
    const whoami = await wrangler(['whoami'])
    ok(t, whoami, 'whoami')
    t.match(whoami.stdout, /logged in with an User API Token/, 'whoami: a user token')
    const accounts = (await api('GET', '/accounts')).body.result as Array<{ id: string }>
    t.match(whoami.stdout, accounts[0].id, 'whoami lists the account /accounts answers')

    ok(t, await wrangler(['r2', 'bucket', 'create', 'wr-bucket']), 'r2 bucket create')
    t.equal((await api('GET', bucketPath('wr-bucket'))).status, 200, 'the bucket exists')
    const listed = await wrangler(['r2', 'bucket', 'list'])
    ok(t, listed, 'r2 bucket list')
    t.match(listed.stdout, /name:\s+wr-bucket/, 'the bucket is listed')
    await api('PUT', bucketPath('wr-bucket', '/objects/one'), 'twelve bytes')
    await api('PUT', bucketPath('wr-bucket', '/objects/two'), 'x')
    const info = await wrangler(['r2', 'bucket', 'info', 'wr-bucket'])
    ok(t, info, 'r2 bucket info')
    t.match(info.stdout, /object_count:\s+2/, 'info counts the objects')
    t.match(info.stdout, /bucket_size:\s+\d+ B/, 'and sizes them')
    await api('DELETE', bucketPath('wr-bucket', '/objects/one'))
    await api('DELETE', bucketPath('wr-bucket', '/objects/two'))
    ok(t, await wrangler(['r2', 'bucket', 'delete', 'wr-bucket']), 'r2 bucket delete')
    t.equal((await api('GET', bucketPath('wr-bucket'))).status, 404, 'the bucket is gone')
  }

  async function objects (): Promise<void> {
    await fsp.writeFile(path.join(work, 'in.txt'), 'hello from a file\n')
    ok(t, await wrangler(['r2', 'object', 'put', 'photos/dir/a.txt', '--file', 'in.txt', '--content-type', 'text/plain', '--cache-control', 'max-age=60', '--remote']), 'r2 object put --file')
    const a = await object('photos', 'dir/a.txt')
    t.equal(a.body, 'hello from a file\n', 'put --file: the bytes')
    t.equal(a.headers['content-type'], 'text/plain', 'put --content-type')
    t.equal(a.headers['cache-control'], 'max-age=60', 'put --cache-control')

    ok(t, await wrangler(['r2', 'object', 'put', 'photos/b c.json', '--pipe', '--content-type', 'application/json', '--content-disposition', 'attachment', '--remote'], { input: '{"piped":true}' }), 'r2 object put --pipe')
    const b = await object('photos', 'b%20c.json')
    t.equal(b.body, '{"piped":true}', 'put --pipe: the bytes of stdin, under a key with a space')
    t.equal(b.headers['content-type'], 'application/json', 'a JSON object is stored as bytes, not parsed')
    t.equal(b.headers['content-disposition'], 'attachment', 'put --content-disposition')

    ok(t, await wrangler(['r2', 'object', 'get', 'photos/dir/a.txt', '--file', 'out.txt', '--remote']), 'r2 object get --file')
    t.equal(await fsp.readFile(path.join(work, 'out.txt'), 'utf8'), 'hello from a file\n', 'get --file writes the bytes')
    const piped = await wrangler(['r2', 'object', 'get', 'photos/b c.json', '--pipe', '--remote'])
    ok(t, piped, 'r2 object get --pipe')
    t.equal(piped.stdout, '{"piped":true}', 'get --pipe writes the bytes alone to stdout')

    ok(t, await wrangler(['r2', 'object', 'delete', 'photos/b c.json', '--remote']), 'r2 object delete')
    t.equal((await object('photos', 'b%20c.json')).status, 404, 'the object is gone')
    t.equal((await object('photos', 'dir/a.txt')).status, 200, 'the other one stays')
  }

  async function cors (): Promise<void> {
    t.equal((await api('POST', `/accounts/${accountId}/r2/buckets`, { name: 'wr-cors' })).status, 200)
    await fsp.writeFile(path.join(work, 'cors.json'), JSON.stringify({
      rules: [{ allowed: { origins: ['https://app.example.test'], methods: ['GET', 'PUT'], headers: ['x-custom'] }, exposeHeaders: ['etag'], maxAgeSeconds: 300 }]
    }))
    ok(t, await wrangler(['r2', 'bucket', 'cors', 'set', 'wr-cors', '--file', 'cors.json', '-y']), 'r2 bucket cors set')
    const stored = await api('GET', bucketPath('wr-cors', '/cors'))
    t.same(stored.body.result.rules[0].allowed.origins, ['https://app.example.test'], 'the CORS rules are stored')
    const listed = await wrangler(['r2', 'bucket', 'cors', 'list', 'wr-cors'])
    ok(t, listed, 'r2 bucket cors list')
    t.match(listed.stdout, /allowed_origins:\s+https:\/\/app\.example\.test/, 'cors list shows the rule')
    ok(t, await wrangler(['r2', 'bucket', 'cors', 'delete', 'wr-cors', '-y']), 'r2 bucket cors delete')
    t.equal((await api('GET', bucketPath('wr-cors', '/cors'))).body.errors[0].code, 10059, 'the CORS rules are gone')
  }

  async function lifecycle (): Promise<void> {
    t.equal((await api('POST', `/accounts/${accountId}/r2/buckets`, { name: 'wr-lifecycle' })).status, 200)
    ok(t, await wrangler(['r2', 'bucket', 'lifecycle', 'add', 'wr-lifecycle', 'expire-logs', 'logs/', '--expire-days', '30', '-y']), 'r2 bucket lifecycle add')
    const rules = (await api('GET', bucketPath('wr-lifecycle', '/lifecycle'))).body.result.rules as Array<Record<string, any>>
    const added = rules.find(r => r.id === 'expire-logs')
    t.equal(added?.conditions?.prefix, 'logs/', 'the rule is stored with its prefix')
    t.equal(added?.deleteObjectsTransition?.condition?.maxAge, 30 * 86400, 'and its expiry')
    t.ok(rules.some(r => r.id !== 'expire-logs'), 'beside the rules the bucket had')
    ok(t, await wrangler(['r2', 'bucket', 'lifecycle', 'remove', 'wr-lifecycle', '--name', 'expire-logs']), 'r2 bucket lifecycle remove')
    const after = (await api('GET', bucketPath('wr-lifecycle', '/lifecycle'))).body.result.rules as Array<Record<string, any>>
    t.notOk(after.some(r => r.id === 'expire-logs'), 'the rule is gone')

    // Without a prefix wrangler sends `conditions: {}`: a rule for the whole bucket, carried out by the sweep.
    ok(t, await wrangler(['r2', 'bucket', 'lifecycle', 'add', 'wr-lifecycle', 'ia-docs', 'docs/', '--ia-transition-days', '1', '-y']), 'lifecycle add --ia-transition-days')
    ok(t, await wrangler(['r2', 'bucket', 'lifecycle', 'add', 'wr-lifecycle', 'expire-all', '--expire-days', '2', '-y']), 'lifecycle add without a prefix')
    const listed = await wrangler(['r2', 'bucket', 'lifecycle', 'list', 'wr-lifecycle'])
    ok(t, listed, 'r2 bucket lifecycle list')
    t.match(listed.stdout, /expire-all[\s\S]*\(all prefixes\)[\s\S]*Expire objects after 2 days/, 'list shows the whole-bucket rule')
    for (const key of ['docs/a.txt', 'notes.txt']) {
      const put = await app.inject({ method: 'PUT', url: `/wr-lifecycle/${key}`, headers: gatewayAuth, payload: `bytes of ${key}` })
      t.equal(put.statusCode, 200, `PUT ${key}`)
    }
    const lifecycleObject = async (key: string): Promise<{ status: number, body: string, headers: Record<string, unknown> }> => await object('wr-lifecycle', key)
    const before = await lifecycleObject('docs/a.txt')
    await registry.sweep({ now: new Date(Date.now() + 36 * 3600_000) })
    const moved = await lifecycleObject('docs/a.txt')
    t.equal(moved.headers['x-storage-class'], 'InfrequentAccess', 'after a day and a half docs/ is in InfrequentAccess')
    t.equal(moved.headers.etag, before.headers.etag, 'with its etag')
    t.equal(moved.body, 'bytes of docs/a.txt', 'and its bytes')
    t.equal((await lifecycleObject('notes.txt')).headers['x-storage-class'], 'Standard', 'the rest of the bucket stays Standard')
    await registry.sweep({ now: new Date(Date.now() + 3 * 86400_000) })
    t.equal((await lifecycleObject('docs/a.txt')).status, 404, 'after three days the whole-bucket rule has expired everything')
    t.equal((await lifecycleObject('notes.txt')).status, 404)
  }

  async function locks (): Promise<void> {
    t.equal((await api('POST', `/accounts/${accountId}/r2/buckets`, { name: 'wr-lock' })).status, 200)
    const route = async (method: 'PUT' | 'DELETE', key: string, payload?: string): Promise<{ status: number, code?: number }> => {
      const res = await app.inject({ method, url: `/wr-lock/${key}`, headers: gatewayAuth, ...(payload === undefined ? {} : { payload }) })
      return { status: res.statusCode, code: res.body === '' ? undefined : res.json().errors?.[0]?.code }
    }
    t.equal((await route('PUT', 'logs/a', 'kept')).status, 200)
    ok(t, await wrangler(['r2', 'bucket', 'lock', 'add', 'wr-lock', 'keep-logs', 'logs/', '--retention-indefinite', '-y']), 'r2 bucket lock add --retention-indefinite')
    ok(t, await wrangler(['r2', 'bucket', 'lock', 'add', 'wr-lock', 'keep-tmp', 'tmp/', '--retention-days', '1', '-y']), 'r2 bucket lock add --retention-days')
    t.same((await api('GET', bucketPath('wr-lock', '/lock'))).body.result.rules, [
      { id: 'keep-logs', enabled: true, prefix: 'logs/', condition: { type: 'Indefinite' } },
      { id: 'keep-tmp', enabled: true, prefix: 'tmp/', condition: { type: 'Age', maxAgeSeconds: 86400 } }
    ], 'the rules are stored as wrangler sent them, in order')
    const listed = await wrangler(['r2', 'bucket', 'lock', 'list', 'wr-lock'])
    ok(t, listed, 'r2 bucket lock list')
    t.match(listed.stdout, /name:\s+keep-logs[\s\S]*prefix:\s+logs\/[\s\S]*condition:\s+indefinitely/, 'lock list shows the indefinite rule')
    t.match(listed.stdout, /name:\s+keep-tmp[\s\S]*condition:\s+after 1 day/, 'and the rule by age')

    t.same(await route('PUT', 'logs/a', 'overwritten'), { status: 403, code: 10913 }, 'an overwrite of a retained object is refused')
    t.same(await route('DELETE', 'logs/a'), { status: 403, code: 10913 }, 'and so is its deletion')
    t.equal((await object('wr-lock', 'logs/a')).body, 'kept', 'the object is unchanged')
    t.equal((await route('PUT', 'logs/new', 'fresh')).status, 200, 'a new key under the prefix is created')

    ok(t, await wrangler(['r2', 'bucket', 'lock', 'remove', 'wr-lock', '--name', 'keep-logs']), 'r2 bucket lock remove')
    t.same((await api('GET', bucketPath('wr-lock', '/lock'))).body.result.rules.map((r: { id: string }) => r.id), ['keep-tmp'], 'the rule is gone, the other stays')
    t.equal((await route('DELETE', 'logs/a')).status, 204, 'the object can be deleted now')

    await fsp.writeFile(path.join(work, 'lock.json'), JSON.stringify({ rules: [{ id: 'until', enabled: true, condition: { type: 'Date', date: '2999-01-01T00:00:00Z' } }] }))
    ok(t, await wrangler(['r2', 'bucket', 'lock', 'set', 'wr-lock', '--file', 'lock.json', '-y']), 'r2 bucket lock set')
    t.same((await api('GET', bucketPath('wr-lock', '/lock'))).body.result.rules, [{ id: 'until', enabled: true, condition: { type: 'Date', date: '2999-01-01T00:00:00.000Z' } }], 'set replaces every rule')
    t.same(await route('DELETE', 'logs/new'), { status: 403, code: 10913 }, 'a rule without a prefix covers every key')
  }

  async function domains (): Promise<void> {
    const zone = (await api('POST', '/zones', { name: 'example.test', account: { id: accountId } })).body.result
    ok(t, await wrangler(['r2', 'bucket', 'domain', 'add', 'photos', '--domain', 'cdn.example.test', '--zone-id', zone.id, '-y']), 'r2 bucket domain add')
    t.equal((await api('GET', bucketPath('photos', '/domains/custom/cdn.example.test'))).body.result?.enabled, true, 'the domain is attached and enabled')
    ok(t, await wrangler(['r2', 'bucket', 'domain', 'update', 'photos', '--domain', 'cdn.example.test', '--min-tls', '1.2']), 'r2 bucket domain update')
    t.equal((await api('GET', bucketPath('photos', '/domains/custom/cdn.example.test'))).body.result?.minTLS, '1.2', 'the minimum TLS version changed')
    ok(t, await wrangler(['r2', 'bucket', 'domain', 'remove', 'photos', '--domain', 'cdn.example.test', '-y']), 'r2 bucket domain remove')
    t.equal((await api('GET', bucketPath('photos', '/domains/custom/cdn.example.test'))).status, 404, 'the domain is detached')
  }

  async function wrongToken (): Promise<void> {
    const put = await wrangler(['r2', 'object', 'put', 'photos/intruder', '--pipe', '--remote'], { input: 'x', token: 'not-the-token' })
    t.not(put.code, 0, 'a put with a wrong token fails')
    t.match(put.output, /Authentication error \[code: 10000\]/, 'wrangler reports an authentication error')
    t.match(put.output, /custom API token set in an environment variable/, 'and points at the token')
    t.equal((await object('photos', 'intruder')).status, 404, 'nothing was stored')
  }

  // Independent groups side by side: each wrangler start costs seconds of CPU.
  async function queuesAndNotifications (): Promise<void> {
    await api('POST', `/accounts/${accountId}/r2/buckets`, { name: 'wr-notes' })
    ok(t, await wrangler(['queues', 'create', 'wr-events']), 'queues create')
    const listed = await wrangler(['queues', 'list'])
    ok(t, listed, 'queues list')
    t.match(listed.stdout, /wr-events/, 'the queue is listed')
    ok(t, await wrangler(['queues', 'consumer', 'http', 'add', 'wr-events', '--batch-size', '5', '--visibility-timeout-secs', '20']), 'queues consumer http add')
    const queue = (await api('GET', `/accounts/${accountId}/queues?name=wr-events`)).body.result[0]
    t.match(queue.consumers, [{ type: 'http_pull', settings: { batch_size: 5, visibility_timeout_ms: 20_000 } }], 'the consumer and its settings')

    ok(t, await wrangler(['r2', 'bucket', 'notification', 'create', 'wr-notes', '--event-type', 'object-create', '--queue', 'wr-events', '--prefix', 'img/']), 'r2 bucket notification create')
    const overlapping = await wrangler(['r2', 'bucket', 'notification', 'create', 'wr-notes', '--event-type', 'object-create', '--queue', 'wr-events', '--prefix', 'img/cats/'])
    t.not(overlapping.code, 0, 'an overlapping rule is refused')
    t.match(overlapping.output, /10091/, 'with its code')
    const rules = await wrangler(['r2', 'bucket', 'notification', 'list', 'wr-notes'])
    ok(t, rules, 'r2 bucket notification list')
    t.match(rules.stdout, /wr-events/, 'the rule names its queue')
    t.match(rules.stdout, /img\//, 'and its prefix')
    t.match(rules.stdout, /PutObject,CompleteMultipartUpload,CopyObject/, 'and its actions')

    // An object written through the API reaches a pull loop.
    await api('PUT', bucketPath('wr-notes', '/objects/img/tom.jpg'), 'meow')
    const pulled = await api('POST', `/accounts/${accountId}/queues/${queue.queue_id as string}/messages/pull`, {})
    t.equal(pulled.body.result.messages.length, 1, 'one message')
    t.match(JSON.parse(pulled.body.result.messages[0].body), { action: 'PutObject', bucket: 'wr-notes', object: { key: 'img/tom.jpg', size: 4 } })

    const mistyped = await wrangler(['r2', 'bucket', 'notification', 'delete', 'wr-notes', '--queue', 'wr-events', '--rule', 'no-such-rule'])
    t.not(mistyped.code, 0, 'a rule id the queue has no rule of is refused')
    t.match(mistyped.output, /no-such-rule[^]*10092/, 'naming the id, with the code')
    t.notMatch(mistyped.output, /deleted successfully/, 'not reported as deleted')
    ok(t, await wrangler(['r2', 'bucket', 'notification', 'delete', 'wr-notes', '--queue', 'wr-events']), 'r2 bucket notification delete')
    t.same((await api('GET', `/accounts/${accountId}/event_notifications/r2/wr-notes/configuration`)).body.result.queues, [], 'no rules left')
    ok(t, await wrangler(['queues', 'consumer', 'http', 'remove', 'wr-events']), 'queues consumer http remove')
    ok(t, await wrangler(['queues', 'delete', 'wr-events']), 'queues delete')
    t.same((await api('GET', `/accounts/${accountId}/queues`)).body.result, [], 'the queue is gone')
  }

  await Promise.all([whoamiAndBuckets(), objects(), cors(), lifecycle(), locks(), domains(), wrongToken(), queuesAndNotifications()])
})
