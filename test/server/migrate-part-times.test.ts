/** `fsbucket migrate` imports an upload's parts with the time each was uploaded. */
import t from 'tap'
import { buildCli } from '../../src/main.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { startPostgres } from '../stores/pg/server.js'

const server = await startPostgres()
t.teardown(async () => { await server.destroy() })

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
  const log = console.log
  console.log = () => {}
  try {
    await buildCli().parseAsync(['node', 'fsbucket', 'migrate', '--from', dataDir, '--catalog', server.url()])
  } finally {
    console.log = log
  }
  const after = await openRegistry(dataDir, { catalog: server.url(), fsync: false, minPartSize: 5 })
  t.teardown(async () => { await after.close() })
  const parts = await (await after.open('site'))!.resumeMultipartUpload('later', upload.uploadId).listParts()
  t.same(parts.parts.map(p => p.uploaded.toISOString()), ['2024-06-01T08:01:00.125Z', '2024-06-01T08:02:00.125Z'])
})
