/**
 * Runs the sweeper by hand: aborts uploads older than their bucket's limit
 * (7 days unless a lifecycle rule says otherwise) and removes leftovers of
 * interrupted writes.
 *
 *   npm run sweep -- [directory ...]
 *
 * A directory is a bucket (it holds `.fsbucket/`) or a data directory (every
 * bucket in it is swept, honouring each bucket's lifecycle rules). Default:
 * ./data.
 */
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { openBucket, openRegistry } from '../src/index.js'

async function isBucket (dir: string): Promise<boolean> {
  return await stat(path.join(dir, '.fsbucket')).then(s => s.isDirectory(), () => false)
}

const dirs = process.argv.slice(2)
for (const dir of dirs.length > 0 ? dirs : ['./data']) {
  if (await isBucket(dir)) {
    const bucket = await openBucket(dir)
    const report = await bucket.sweep()
    await bucket.close()
    console.log(`${dir}: ${report.abortedUploads} uploads aborted, ${report.removedLeftovers} leftovers removed`)
  } else {
    const registry = await openRegistry(dir)
    await registry.sweep()
    await registry.close()
    console.log(`${dir}: every bucket swept`)
  }
}
