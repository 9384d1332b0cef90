/**
 * What `fsbucket migrate` carries over beside objects (test/stores/pg/catalog.test.ts):
 * the time each part was uploaded, a bucket's lock rules, and the event
 * messages its queues have not had acknowledged.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { buildCli } from '../../src/main.js'
import { migrateToCatalog } from '../../src/server/migrate.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { startPostgres } from '../stores/pg/server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

async function migrate (dataDir: string): Promise<void> {
  const log = console.log
  console.log = () => {}
  try {
    await buildCli().parseAsync(['node', 'fsbucket', 'migrate', '--from', dataDir, '--catalog', server.url()])
  } finally {
    console.log = log
  }
}

t.test('parts in progress keep their upload times through fsbucket migrate', async t => {
  let now = Date.UTC(2024, 5, 1, 8, 0, 0, 125)
  const clock = (): Date => new Date(now)
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false, minPartSize: 5, clock })
  await before.create('site')
  const upload = await (await before.open('site'))!.createMultipartUpload('later')
  for (const n of [1, 2]) {
    now += 60_000
    await upload.uploadPart(n, `part ${n}`)
  }
  await before.close()
  await migrate(dataDir)
  const after = await openRegistry(dataDir, { catalog: server.url(), fsync: false, minPartSize: 5 })
  t.teardown(async () => { await after.close() })
  const parts = await (await after.open('site'))!.resumeMultipartUpload('later', upload.uploadId).listParts()
  t.same(parts.parts.map(p => p.uploaded.toISOString()), ['2024-06-01T08:01:00.125Z', '2024-06-01T08:02:00.125Z'])
})

t.test('lock rules and unacknowledged event messages come through fsbucket migrate: a retained object stays retained', async t => {
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  await before.create('legal')
  await before.setLockRules('legal', [{ id: 'hold', enabled: true, prefix: 'cases/', condition: { type: 'Indefinite' } }])
  await before.changeNotifications('legal', () => [{ queueId: 'q1', account: 'acct', rules: [{ ruleId: 'r1', prefix: '', suffix: '', actions: ['PutObject'], createdAt: new Date(0).toISOString() }] }])
  const bucket = (await before.open('legal'))!
  for (const key of ['cases/one', 'cases/two', 'free']) await bucket.put(key, key)
  const outboxBefore = (await before.outbox('legal'))!
  const rules = { writtenBy: Date.now() + 60_000, maxDeliveries: 10 }
  // One message leased (delivered once, invisible for a minute), two waiting.
  t.equal((await outboxBefore.lease('q1', 1, Date.now(), 60_000, rules)).length, 1)
  await before.close()

  await migrate(dataDir)
  const after = await openRegistry(dataDir, { catalog: server.url(), fsync: false })
  t.teardown(async () => { await after.close() })
  t.same((await after.lockRules('legal')).map(rule => rule.id), ['hold'], 'the rules')
  const moved = (await after.open('legal'))!
  await t.rejects(moved.delete('cases/one'), { code: 10913 }, 'a retained object cannot be deleted')
  t.equal((await moved.get('cases/one'))?.size, 9, 'and is still there')
  await moved.delete('free')
  const outbox = (await after.outbox('legal'))!
  t.equal(await outbox.backlog('q1'), 3, 'every message, the leased one too')
  const waiting = await outbox.lease('q1', 10, Date.now(), 60_000, rules)
  t.same(waiting.map(m => JSON.parse(m.body).object.key), ['cases/two', 'free'], 'those waiting, in their order')
  t.same(await outbox.settle('q1', waiting.map(m => ({ seq: m.seq, lease: m.lease })), []), { acked: 2, retried: 0 }, 'their leases settle')
  const later = await outbox.lease('q1', 10, Date.now() + 61_000, 60_000, rules)
  t.same(later.map(m => [JSON.parse(m.body).object.key, m.attempts]), [['cases/one', 2]], 'the leased one once its visibility timeout passed, delivered once before')
})

t.test('a bucket whose settings are damaged stops fsbucket migrate before anything is imported, naming the file', async t => {
  const dataDir = testdir(t)
  const before = await openRegistry(dataDir, { fsync: false })
  await before.create('fine')
  await before.create('broken')
  await before.close()
  const file = path.join(dataDir, 'broken', '.fsbucket', 'settings.json')
  await writeFile(file, 'null')
  const imported: string[] = []
  await t.rejects(migrateToCatalog(dataDir, server.url(), line => { imported.push(line) }), { message: /^migrate: nothing was imported: the settings of 1 bucket\(s\) are damaged:\n {2}.*broken.*settings\.json is not a settings document/ })
  t.same(imported, [], 'not even the sound bucket: it never stops half done')
})
