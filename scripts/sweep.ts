/**
 * Runs the sweeper by hand: carries out lifecycle rules, aborts uploads
 * older than their bucket's limit (7 days unless a lifecycle rule says
 * otherwise) and removes leftovers of interrupted writes.
 *
 *   npm run sweep -- [directory ...]
 *
 * A directory is a data directory (every bucket in it is swept) or a bucket.
 * A bucket a data directory made (its settings are in
 * `.fsbucket/settings.json`) is swept through that data directory, with its
 * own rules; a bucket opened alone by the library (its `.fsbucket/` holds a
 * catalog, not a data directory's `stamp`) has none. Default: ./data.
 */
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { openBucket, openRegistry, type SweepReport } from '../src/index.js'

async function exists (file: string): Promise<boolean> {
  return await stat(file).then(() => true, () => false)
}

function described (report: SweepReport): string {
  return `${report.expiredObjects ?? 0} objects expired, ${report.transitionedObjects ?? 0} moved to InfrequentAccess, ` +
    `${report.abortedUploads} uploads aborted, ${report.removedLeftovers} leftovers removed`
}

const dirs = process.argv.slice(2)
for (const dir of dirs.length > 0 ? dirs : ['./data']) {
  if (await exists(path.join(dir, '.fsbucket', 'settings.json'))) {
    const registry = await openRegistry(path.dirname(path.resolve(dir)))
    const report = await registry.sweep({ buckets: [path.basename(path.resolve(dir))] })
    await registry.close()
    console.log(`${dir}: ${described(report)}`)
  } else if (await exists(path.join(dir, '.fsbucket', 'format.json')) && !await exists(path.join(dir, '.fsbucket', 'stamp'))) {
    const bucket = await openBucket(dir)
    const report = await bucket.sweep()
    await bucket.close()
    console.log(`${dir}: ${described(report)}`)
  } else {
    const registry = await openRegistry(dir)
    const report = await registry.sweep()
    await registry.close()
    console.log(`${dir}: every bucket swept: ${described(report)}`)
  }
}
