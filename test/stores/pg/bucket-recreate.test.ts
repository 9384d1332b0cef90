/**
 * A bucket deleted through one gateway while another creates a bucket of
 * the same name, over one PostgreSQL catalog and one data directory: the
 * new bucket starts in a directory of its own, never the old one's (which
 * the delete moves away), so whatever it acknowledges stays readable.
 */
import { existsSync, promises as fsp } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../../src/app.js'
import { openRegistry, type BucketRegistry } from '../../../src/index.js'
import { filesUnder, heldBody } from '../../held-body.js'
import { testdir } from '../../testdir.js'
import { startPostgres } from './server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

/** Two registries over the catalog and one data directory, as two gateways. */
async function twoGateways (t: Test, dataDir = testdir(t)): Promise<[BucketRegistry, BucketRegistry]> {
  const open = async (): Promise<BucketRegistry> => {
    const registry = await openRegistry(dataDir, { catalog: server.url(), fsync: false })
    t.teardown(async () => { await registry.close() })
    return registry
  }
  return [await open(), await open()]
}

t.test('delete on one gateway racing a create of the same name on another: the new bucket keeps what it acknowledged', async t => {
  const [deleting, creating] = await twoGateways(t)
  // A busy gateway: moving a deleted bucket's directory away takes a while (and a random part of the rounds, none).
  const rename = fsp.rename
  t.teardown(() => { fsp.rename = rename })
  fsp.rename = async (from, to) => {
    if (path.basename(String(from)) === 'recreated' && Math.random() < 0.7) await sleep(30)
    await rename(from, to)
  }
  let recreated = 0
  for (let round = 0; round < 40; round++) {
    if (await deleting.info('recreated') === null) await deleting.create('recreated')
    await (await deleting.open('recreated'))!.put('old', 'old')
    await (await deleting.open('recreated'))!.delete('old')
    const created = (async (): Promise<boolean> => {
      // The create lands at a moment of the delete chosen at random: before, during or after its transaction.
      await sleep(Math.random() * 6)
      for (let tries = 0; tries < 50; tries++) {
        try {
          await creating.create('recreated')
          return true
        } catch (err) {
          if ((err as { code?: string }).code !== 'BucketAlreadyExists' && !/already exists/i.test((err as Error).message)) throw err
          await sleep(1)
        }
      }
      return false
    })()
    await deleting.delete('recreated').catch(() => {})
    if (!await created) continue
    recreated++
    const bucket = (await creating.open('recreated'))!
    const put = await bucket.put(`round-${round}`, 'kept').then(() => 'ok', (err: Error) => err.message)
    t.equal(put, 'ok', `round ${round}: the new bucket takes a write`)
    if (put !== 'ok') break
    const got = await bucket.get(`round-${round}`)
    t.equal(got !== null && 'text' in got ? await got.text() : null, 'kept', `round ${round}: and keeps it`)
    await bucket.delete(`round-${round}`)
  }
  t.ok(recreated > 0, `the bucket was created again ${recreated} times`)
  // The catalog is the next test's too, over another data directory.
  if (await deleting.info('recreated') !== null) await deleting.delete('recreated')
})

t.test('a bucket opened on another gateway while its delete is in flight: the directory the delete moved stays moved', async t => {
  const dataDir = testdir(t)
  const [deleting, opening] = await twoGateways(t, dataDir)
  await deleting.create('inflight')
  await (await deleting.open('inflight'))!.put('k', 'v')
  await (await deleting.open('inflight'))!.delete('k')
  // Right after the delete moves the directory, before it commits, the other gateway opens the bucket: it still sees the row.
  const rename = fsp.rename
  t.teardown(() => { fsp.rename = rename })
  const racing: { open?: Promise<unknown> } = {}
  fsp.rename = async (from, to) => {
    await rename(from, to)
    if (racing.open === undefined && path.basename(String(from)) === 'inflight') {
      racing.open = opening.open('inflight').catch((err: unknown) => err)
      await sleep(100)
    }
  }
  await deleting.delete('inflight')
  t.ok(racing.open !== undefined, 'the other gateway opened the bucket inside the delete')
  await racing.open
  fsp.rename = rename
  t.same((await deleting.list()).map(b => b.name), [], 'the bucket is gone')
  t.notOk(existsSync(path.join(dataDir, 'inflight')), 'and so is its directory: the open waited for the delete, then put nothing back')
})

t.test('a put whose body is still arriving when its bucket is deleted through one gateway and created again through another answers 404 (10006)', async t => {
  const dataDir = testdir(t)
  const app = await buildApp({
    dataDir, host: '127.0.0.1', token: 'recreate-token', publicBuckets: [], routes: [], fsync: false, logLevel: false, catalog: server.url()
  })
  t.teardown(async () => { await app.close() })
  const [deleting, creating] = await twoGateways(t, dataDir)
  await deleting.create('streamed')
  const large = Buffer.alloc(100_000, 'x') // a body received into a file, not kept in the catalog
  const { payload, release } = heldBody(large, 50_000)
  const answer = app.inject({ method: 'PUT', url: '/streamed/late', headers: { authorization: 'Bearer recreate-token', 'content-length': String(large.length) }, payload })
  const blobs = path.join(dataDir, 'streamed', '.fsbucket', 'blobs')
  for (const deadline = Date.now() + 5000; filesUnder(blobs).length === 0;) {
    if (Date.now() > deadline) throw new Error('the body file was never made')
    await sleep(5)
  }
  await deleting.delete('streamed') // the body file goes with the directory the delete moved away
  await creating.create('streamed') // and a directory of that name is there again, the new bucket's
  release()
  const put = await answer
  t.equal(put.statusCode, 404, put.body)
  t.equal(put.json().errors[0].code, 10006)
  t.same(filesUnder(blobs), [], 'nothing of the put in the new bucket')
  t.equal(await (await creating.open('streamed'))!.head('late'), null, 'nor an object')
  await creating.delete('streamed')
})
