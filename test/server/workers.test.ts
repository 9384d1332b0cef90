/**
 * `fsbucket serve --workers 2`: two processes on one port over one data
 * directory. A write answered by one worker is read by the other at once,
 * also while both are busy serving other connections (then each worker
 * shares one look at the catalog among the requests of a turn of its event
 * loop), and SIGTERM stops both and exits 0.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { createInterface } from 'node:readline'
import { testdir } from '../testdir.js'
import { bin, freePort } from './serve-process.js'

const token = 'workers-token'

/** One request on a fresh connection, so that successive requests may land on different workers. */
async function call (port: number, method: string, urlPath: string, body?: string, agent?: Agent): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (agent === undefined) headers.connection = 'close'
    const req = request({ host: '127.0.0.1', port, method, path: urlPath, agent: agent ?? false, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('read-after-write across two worker processes', async t => {
  const dataDir = testdir(t)
  const port = await freePort()
  const server = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', String(port), '--workers', '2', '--token', token, '--fsync', 'off', '--s3-port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const exited = new Promise<number | null>(resolve => server.once('exit', code => resolve(code)))
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })

  const requestPids = new Set<number>()
  const serving = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: server.stdout! })
    lines.on('line', line => {
      const entry = JSON.parse(line) as { msg?: string, pid?: number, method?: string }
      if (entry.msg === 'serving') resolve()
      if (entry.msg === 'request' && entry.pid !== undefined) requestPids.add(entry.pid)
    })
    setTimeout(() => reject(new Error('server did not start within 60 s')), 60_000).unref() // workers load slowly on a busy machine
  })
  await serving

  for (let i = 0; i < 30; i++) {
    const value = `value-${i}-${Math.random()}`
    const put = await call(port, 'PUT', `/default/key-${i % 5}`, value)
    t.equal(put.status, 200)
    const get = await call(port, 'GET', `/default/key-${i % 5}`)
    if (get.body !== value) t.fail(`round ${i}: read ${get.body}, wrote ${value}`)
  }
  t.pass('every read saw the write before it')
  t.equal(requestPids.size, 2, 'both workers answered requests')

  // Busy workers: 16 keep-alive connections read another key without pause.
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  await call(port, 'PUT', '/default/busy', 'busy', agent)
  let busy = true
  let served = 0
  const readers = Array.from({ length: 16 }, async () => {
    while (busy) {
      await call(port, 'GET', '/default/busy', undefined, agent)
      served++
    }
  })
  for (let i = 0; i < 40; i++) {
    const key = `/default/loaded-${i % 3}`
    if (i % 4 === 3) {
      t.equal((await call(port, 'DELETE', key)).status, 204)
      const gone = await call(port, 'GET', key)
      if (gone.status !== 404) t.fail(`round ${i}: a deleted key read ${gone.status}`)
      continue
    }
    const value = `loaded-${i}-${Math.random()}`
    t.equal((await call(port, 'PUT', key, value)).status, 200)
    const get = await call(port, 'GET', key)
    if (get.body !== value) t.fail(`round ${i} under load: read ${get.body}, wrote ${value}`)
  }
  busy = false
  await Promise.all(readers)
  agent.destroy()
  t.ok(served > 100, `the busy readers were served meanwhile (${served} reads)`)
  t.pass('under load too, every read saw the write or delete before it')

  server.kill('SIGTERM')
  t.equal(await exited, 0, 'graceful stop exits 0')
})
