/**
 * A worker that exits loses no connection the primary handed it as it
 * closed its listener (settleHandoffs): a cluster replacing one worker at
 * a time under load (handoff-cluster.ts) answers every request.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort } from './serve-process.js'

const cluster = path.join(path.dirname(fileURLToPath(import.meta.url)), 'handoff-cluster.js')

async function replaced (): Promise<Record<string, number>> {
  const port = await freePort()
  const { stdout } = await promisify(execFile)(process.execPath, [cluster], { env: { ...process.env, HANDOFF_PORT: String(port), HANDOFF_SETTLE: '1' }, timeout: 60_000 })
  return JSON.parse(stdout) as Record<string, number>
}

t.test('workers replaced one at a time under load, each settling its handoffs before it exits: every request answered', async t => {
  const counted = await replaced()
  const answered = counted['200'] ?? 0
  t.ok(answered > 100, `requests answered: ${answered}`)
  t.same(Object.keys(counted), ['200'], `outcomes: ${JSON.stringify(counted)}`)
})
