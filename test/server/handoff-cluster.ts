/**
 * A cluster of three node:http workers that replaces one at a time under
 * load, a new connection a request: what handoffs.test.ts runs. Each worker
 * told to stop closes its listener and, once its connections ended, exits:
 * after `settleHandoffs` when HANDOFF_SETTLE=1, at once otherwise (where
 * some connections are lost, in Node 20 to 24). Prints
 * the load's outcomes (status, error code or `hang`) counted, as JSON.
 */
import cluster, { type Worker } from 'node:cluster'
import { createServer, request } from 'node:http'
import { answerListenersClosed, settleHandoffs } from '../../src/server/worker-messages.js'

const port = Number(process.env.HANDOFF_PORT)
const stops = Number(process.env.HANDOFF_STOPS ?? 20)
/** How long a request may go unanswered before it counts as lost. */
const lostAfterMs = 3000

async function get (): Promise<string> {
  return await new Promise(resolve => {
    const req = request({ host: '127.0.0.1', port, agent: false }, res => {
      res.resume()
      res.on('end', () => { resolve(String(res.statusCode)) })
    })
    req.setTimeout(lostAfterMs, () => { resolve('hang'); req.destroy() })
    req.on('error', (err: NodeJS.ErrnoException) => { resolve(err.code ?? err.message) })
    req.end()
  })
}

if (cluster.isPrimary) {
  const listening = new Set<Worker>()
  const told = new WeakSet<Worker>()
  let ending = false
  cluster.on('fork', worker => { worker.on('error', () => {}) })
  cluster.on('listening', worker => { listening.add(worker) })
  cluster.on('exit', worker => { listening.delete(worker); if (!ending) cluster.fork() })
  cluster.on('message', (worker, message) => { answerListenersClosed(worker, message) })
  for (let i = 0; i < 3; i++) cluster.fork()
  while (listening.size < 3) await new Promise(resolve => setTimeout(resolve, 20))
  let running = true
  const outcomes: string[] = []
  const loops = Array.from({ length: 8 }, async () => { while (running) outcomes.push(await get()) })
  // One worker at a time, and only while two others listen: no connection is ever refused.
  for (let stopped = 0; stopped < stops;) {
    await new Promise(resolve => setTimeout(resolve, 100))
    const serving = [...listening].filter(worker => !told.has(worker) && worker.isConnected())
    if (serving.length < 3) continue
    told.add(serving[0])
    serving[0].send('stop')
    stopped++
  }
  running = false
  await Promise.all(loops)
  ending = true
  const counted: Record<string, number> = {}
  for (const outcome of outcomes) counted[outcome] = (counted[outcome] ?? 0) + 1
  console.log(JSON.stringify(counted))
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill()
} else {
  const server = createServer((_req, res) => { res.end('ok') }).listen(port)
  process.on('message', message => {
    if (message !== 'stop') return
    server.close(() => {
      if (process.env.HANDOFF_SETTLE === '1') void settleHandoffs().then(() => process.exit(0))
      else process.exit(0)
    })
    server.closeIdleConnections()
  })
}
